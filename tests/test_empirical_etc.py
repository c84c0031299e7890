"""Empirical-mean ETC: AdaR-ETC's schedule with the sample mean."""

import jax
import numpy as np
from reference_policies import explore_then_commit

import htb_jax as htb
from conftest import engine_arms


def test_fast_path_and_engine_equal_the_reference():
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.7), num_arms=3, gap=0.2)
    policy = htb.EmpiricalETC(eps=0.5, alpha=0.8, q=0.1)
    out, arms, tables = engine_arms(policy, nu, 900, 3, jax.random.key(8))
    fast = htb.simulate(jax.random.key(8), policy, nu, 900, 3)
    for s in range(3):
        reference, committed = explore_then_commit(tables[s], 900, 0.5, 0.8, 0.1, mean_only=True)
        np.testing.assert_array_equal(arms[s], reference)
        assert int(fast.committed[s]) == committed
    for field in ("regret", "pulls", "committed", "estimates", "regret_curve"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(out, field))


def test_shares_the_schedule_and_named_forms():
    assert int(htb.EmpiricalETC.order_free().exploration_length(10, 10**6)) == int(
        htb.AdaRETC.order_free().exploration_length(10, 10**6)
    )
    assert isinstance(htb.EmpiricalETC.calibrated(0.5), htb.EmpiricalETC)
