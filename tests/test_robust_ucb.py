"""Robust UCB (three estimators) against the reference, and the misspecification failure."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_policies import robust_ucb

import htb_jax as htb
from conftest import engine_arms


@pytest.mark.parametrize(
    "estimator,scale,eps",
    [("truncated", 4.0, (1.0, 0.5, 0.25)), ("mom", 2.0, (1.0, 0.5, 0.25)), ("catoni", 2.0, (1.0,))],
)
def test_same_arms_as_the_reference_loop(estimator, scale, eps):
    # A grid of eps is one program; at eps < 1 the exponents 1/(1+eps) and eps/(1+eps) of the
    # index differ (at eps = 1 both are 1/2), and every eps plays its own sequence of arms.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=3.0), num_arms=3, gap=0.4)
    kwargs = dict(u=scale) if estimator == "truncated" else dict(v=scale)
    policy = htb.RobustUCB(jnp.array(eps), estimator=estimator, **kwargs)
    horizon = 400
    _, arms, tables = engine_arms(policy, nu, horizon, 2, jax.random.key(2))
    for g, e in enumerate(eps):
        for s in range(2):
            np.testing.assert_array_equal(arms[g, s], robust_ucb(tables[s], horizon, e, scale, estimator))
    for g in range(1, len(eps)):
        assert not np.array_equal(arms[g], arms[0])


def test_a_grid_of_moment_bounds_is_one_program():
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=3.0), num_arms=3, gap=0.4)
    v = jnp.array([0.5, 2.0, 8.0])
    grid = htb.simulate(jax.random.key(3), htb.RobustUCB(1.0, v=v, estimator="mom"), nu, 300, 2)
    assert grid.regret.shape == (3, 2)
    for i in range(3):
        single = htb.simulate(jax.random.key(3), htb.RobustUCB(1.0, v=v[i], estimator="mom"), nu, 300, 2)
        np.testing.assert_array_equal(grid.regret[i], single.regret)


def test_moment_bound_far_below_the_truth_fails_linearly():
    # Theorem 1's alternative instance: arm 0 is Dirac(gap); arm 1 spikes to 2 gap / beta with
    # probability beta (mean 2 gap, so it is optimal); u = E X^2 = (2 gap)^2 / beta.
    gap, beta, horizon, seeds = 0.5, 0.1, 4000, 30
    _, nu = htb.lower_bound_pair(num_arms=2, gap=gap, spike_prob=beta)
    true_u = float(nu.abs_moment(1.0)[1])
    assert true_u == pytest.approx((2 * gap) ** 2 / beta)
    policy = htb.RobustUCB(1.0, u=jnp.array([true_u / 1000, true_u]), estimator="truncated")
    out = htb.simulate(jax.random.key(4), policy, nu, horizon, seeds, num_checkpoints=5)
    rounds = np.asarray(out.checkpoints)[0, 0]  # 1, 8, 64, 503, 4000
    rate = np.asarray(out.regret_curve) / rounds / gap  # regret per round, in units of the gap
    mean, se = rate.mean(1), rate.std(1, ddof=1) / math.sqrt(seeds)
    # u / 1000: the spikes are truncated away, arm 0 is played almost always: regret ~ gap T.
    assert mean[0, -1] - 5 * se[0, -1] > 0.8
    # True u: the spike arm is found and the regret per round falls (0.51 -> 0.32 here).
    assert mean[1, -1] + 5 * se[1, -1] < 0.5
    assert mean[1, -1] + 5 * se[1, -1] < mean[1, -2] - 5 * se[1, -2]


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: htb.RobustUCB(1.0, v=1.0), r'RobustUCB\(estimator="truncated"\) takes u='),
        (lambda: htb.RobustUCB(1.0, u=1.0, estimator="mom"), r'RobustUCB\(estimator="mom"\) takes v='),
        (lambda: htb.RobustUCB(0.5, v=1.0, estimator="catoni"), r"eps must lie in \[1, 1\]"),
        (lambda: htb.RobustUCB(1.0, u=-1.0), r"u must lie in \(0, inf\); got u=-1"),
        (lambda: htb.RobustUCB(1.0, u=1.0, estimator="median"), "estimator must be one of"),
        (lambda: htb.RobustUCB(1.5, u=1.0), r"eps must lie in \(0, 1\]"),
    ],
)
def test_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()
