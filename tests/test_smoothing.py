"""smoothed_regret: simulate's exact mean regret, gradients equal to CRN central differences of simulate."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src.smoothing import smoothed_regret

KEY = 7
S = 64
T = 20_000
POINTS = ((0.72, 0.1), (0.9, 0.2))  # (alpha, q), eps = 1
WIDTHS = (1e-3, 1e-2)


def _student():
    # Student-t(2.4): E|X|^2 finite, E|X|^2.4 infinite; three arms, means (0.25, 0, 0).
    return htb.StudentT(loc=jnp.array([0.25, 0.0, 0.0]), df=2.4, scale=1.0)


def _grid():
    """Every point, its alpha +- h and q +- h for both widths: one simulate program."""
    alphas, qs = [], []
    for a, q in POINTS:
        for h in WIDTHS:
            alphas += [a, a + h, a - h, a, a]
            qs += [q, q, q, q + h, q - h]
    return np.array(alphas), np.array(qs)


@pytest.fixture(scope="module")
def simulated():
    alphas, qs = _grid()
    policy = htb.AdaRETC(eps=1.0, alpha=alphas, q=qs)
    regret = htb.simulate(jax.random.key(KEY), policy, _student(), T, S, sampler="per_pull").regret
    return np.asarray(regret).reshape(len(POINTS), len(WIDTHS), 5, S)


def test_value_and_gradient_are_simulates_mean_and_crn_central_differences(simulated):
    # The value is simulate's mean on the same seeds; the gradient in (alpha, q) at width h is the
    # central difference of simulate's mean at h, on the same seeds: both exact (same integer
    # schedule, same float32 estimates, same pseudo-regret arithmetic), up to the association of
    # float64 prefix sums (rtol 1e-12).  A gradient through the relaxation, or one whose
    # perturbed schedule differed from Algorithm 1's by one pull, would miss by far more.
    def f(a, q, h):
        return smoothed_regret(jax.random.key(KEY), htb.AdaRETC(eps=1.0, alpha=a, q=q), _student(), T, S, h,
                               sampler="per_pull")

    traces = []

    def value_and_grad(a, q, h):
        traces.append(1)
        return jax.value_and_grad(f, argnums=(0, 1))(a, q, h)

    run = jax.jit(value_and_grad)
    significant = 0
    for p, (a, q) in enumerate(POINTS):
        for w, h in enumerate(WIDTHS):
            value, (g_alpha, g_q) = run(a, q, h)
            sim = simulated[p, w]
            np.testing.assert_allclose(float(value), sim[0].mean(), rtol=1e-12)
            for g, (plus, minus) in ((g_alpha, (1, 2)), (g_q, (3, 4))):
                diff = (sim[plus] - sim[minus]) / (2 * h)  # per-seed CRN differences
                np.testing.assert_allclose(float(g), diff.mean(), rtol=1e-12, atol=1e-9)
                se = diff.std(ddof=1) / np.sqrt(S)
                significant += bool(abs(diff.mean()) > 3 * se)
    # The comparison is not vacuous: most differences exceed 3 standard errors.
    assert significant >= 4
    assert len(traces) == 1  # a new alpha, q or width does not recompile


def test_instance_gradient_is_simulates_difference_in_the_spike_probability():
    # Theorem 1's two-point pair on the per-pull table (the order-statistic path is the doctest's).
    # d/d beta of the mean regret at relative width 0.1: simulate's CRN central difference,
    # computed on the family (beta (1 + 0.1), beta (1 - 0.1)) with the same key.  alpha = 0.7
    # gives blocks of one pull (L = 868, B_T = 244); beta = 0.45: the spike (block mean 2/beta > 1)
    # is in about half the blocks, so the median, hence the commit, moves with beta.
    key, horizon, beta, rel, seeds = jax.random.key(3), T, 0.45, 0.1, 128
    policy = htb.AdaRETC(eps=1.0, alpha=0.7, q=0.0)
    fam = htb.lower_bound_pair(2, 1.0, jnp.array([beta, beta * (1 + rel), beta * (1 - rel)]))[1]
    sim = np.asarray(htb.simulate(key, policy, fam, horizon, seeds, sampler="per_pull").regret)

    def f(b):
        return smoothed_regret(key, policy, htb.lower_bound_pair(2, 1.0, b)[1], horizon, seeds,
                               instance_width=rel, sampler="per_pull")

    value, grad = jax.jit(jax.value_and_grad(f))(beta)
    np.testing.assert_allclose(float(value), sim[0].mean(), rtol=1e-12)
    # lower_bound_pair moves both the spike's probability and its height 2 gap / beta; the chain
    # rule adds the two central differences, each at relative width 0.1: to first order the
    # difference of simulate between beta (1 +- 0.05).  Tolerance: 3 standard errors of that
    # difference plus 10% of it for the two-leaf chain rule against the joint difference (measured:
    # -9.17e4 against -7.97e4 +- 0.91e4).
    diff = (sim[1] - sim[2]) / (2 * rel * beta)
    se = diff.std(ddof=1) / np.sqrt(seeds)
    assert abs(diff.mean()) > 3 * se
    assert abs(float(grad) - diff.mean()) <= 3 * se + 0.1 * abs(diff.mean())


def test_bad_input_errors():
    key, nu = jax.random.key(0), _student()
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    with pytest.raises(ValueError, match=r"width must lie in \(0, 1\]; got width=0"):
        smoothed_regret(key, policy, nu, T, S, 0.0)
    with pytest.raises(ValueError, match=r"instance_width must lie in \(0, 1\]; got instance_width=2"):
        smoothed_regret(key, policy, nu, T, S, 0.01, instance_width=2.0)
    with pytest.raises(ValueError, match="sampler='order_statistic' needs a family with closed-form"):
        smoothed_regret(key, policy, nu, T, S, sampler="order_statistic")
    with pytest.raises(ValueError, match="sampler must be one of auto, per_pull, order_statistic"):
        smoothed_regret(key, policy, nu, T, S, sampler="exact")
    with pytest.raises(TypeError, match="AdaRETC"):
        smoothed_regret(key, htb.UCB1(), nu, T, S)
