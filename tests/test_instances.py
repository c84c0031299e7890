"""Instances: equal-gap, the Theorem 1 pair, the intrinsic moment scale."""

import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb


def test_equal_gap_means_and_gaps():
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=4, gap=0.5)
    assert nu.batch_shape == (4,)
    np.testing.assert_array_equal(nu.mean(), [0.5, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(htb.gaps(nu), [0.0, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(nu.shape, np.full(4, 1.5))
    assert htb.num_arms(nu) == 4


def test_equal_gap_family_of_gaps():
    nu = htb.equal_gap(htb.StudentT(loc=1.0, df=3.0, scale=2.0), num_arms=3, gap=jnp.array([0.1, 1.0]))
    assert nu.batch_shape == (2, 3)
    np.testing.assert_allclose(nu.mean(), [[1.1, 1.0, 1.0], [2.0, 1.0, 1.0]])
    two_point = htb.equal_gap(htb.TwoPoint(low=0.0, high=10.0, p=0.01), num_arms=2, gap=0.3)
    np.testing.assert_allclose(two_point.mean(), [0.4, 0.1])


def test_lower_bound_pair_matches_theorem_1():
    gap, beta, eps = 0.5, 1e-3, 0.6
    nu0, nu1 = htb.lower_bound_pair(num_arms=4, gap=gap, spike_prob=beta, arm=2)
    np.testing.assert_allclose(nu0.mean(), [gap, 0, 0, 0])
    np.testing.assert_allclose(nu1.mean(), [gap, 0, 2 * gap, 0], rtol=1e-12)
    np.testing.assert_array_equal(nu0.p, 0.0)
    # The spike arm: (1 - beta) delta_0 + beta delta_{2 gap / beta}; E|X|^(1+eps) = (2 gap)^(1+eps) beta^-eps.
    assert float(nu1.high[2]) == pytest.approx(2 * gap / beta)
    assert float(nu1.abs_moment(eps)[2]) == pytest.approx((2 * gap) ** (1 + eps) * beta**-eps, rel=1e-12)
    # U_eps: the spike arm dominates, U = 2 gap beta^(-eps/(1+eps)).
    assert float(htb.intrinsic_scale(nu1, eps)) == pytest.approx(2 * gap * beta ** (-eps / (1 + eps)), rel=1e-12)
    assert float(htb.intrinsic_scale(nu0, eps)) == pytest.approx(gap, rel=1e-12)


def test_lower_bound_pair_batch():
    _, nu1 = htb.lower_bound_pair(3, gap=jnp.array([0.1, 0.2]), spike_prob=jnp.array([[1e-2], [1e-4]]))
    assert nu1.batch_shape == (2, 2, 3)
    np.testing.assert_allclose(nu1.mean()[..., 1], 2 * np.array([[0.1, 0.2], [0.1, 0.2]]))


def test_intrinsic_scale_is_the_max_over_arms():
    nu = htb.Pareto(loc=jnp.array([0.0, 3.0]), shape=jnp.array([3.0, 4.0]))
    eps = 0.5
    each = np.asarray(nu.abs_moment(eps)) ** (1 / 1.5)
    assert float(htb.intrinsic_scale(nu, eps)) == pytest.approx(each.max(), rel=1e-14)
    assert float(htb.intrinsic_scale(htb.Pareto(jnp.zeros(2), 1.4), 0.5)) == np.inf
    family = htb.equal_gap(htb.Pareto(0.0, 3.0), 2, jnp.array([0.1, 2.0]))
    np.testing.assert_allclose(
        htb.intrinsic_scale(family, jnp.array([0.5, 1.0])),
        [float(htb.intrinsic_scale(family[0], 0.5)), float(htb.intrinsic_scale(family[1], 1.0))],
        rtol=1e-14,
    )


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: htb.equal_gap(htb.Gaussian(0.0), 1, 0.5), "num_arms must be an integer in \\[2, 4294967296\\]; got num_arms=1"),
        (lambda: htb.equal_gap(htb.Gaussian(0.0), 3, 0.0), r"gap must lie in \(0, inf\); got gap=0"),
        (lambda: htb.lower_bound_pair(3, 0.5, 0.0), r"spike_prob must lie in \(0, 1\]; got spike_prob=0"),
        (lambda: htb.lower_bound_pair(3, 0.5, 0.1, arm=0), r"arm must be an integer in \[1, 2\]; got arm=0"),
        (lambda: htb.intrinsic_scale(htb.Gaussian(jnp.zeros(2)), 1.5), r"eps must lie in \(0, 1\]"),
        (lambda: htb.num_arms(htb.Gaussian(0.0)), "needs a trailing arm axis"),
    ],
)
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
