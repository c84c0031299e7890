"""The engine benchmark's NumPy-over-seeds baselines (benchmarks/python_loop_bandits.py) play their policies.

A baseline that plays another policy than the engine's would make its speed ratio meaningless, so each
is run on reward tables and compared arm for arm with the tests' plain-Python reference
(tests/reference_policies.py), seed by seed.  Robust UCB (MoM) at K = 4, T = 400 on Pareto(1.8) arms
with gap 0.5 and ``v = 0.05`` (small enough that it exploits) reaches what its cached estimates could
get wrong: blocks of several samples (the best arm's 177 to 233 rewards in up to 96 blocks), rows of
one call with different block counts (its padded path), and 66 rounds where the block cap
``floor(1 + 16 log t)`` grows, the cap binding for the best arm; an estimate not recomputed when the
cap grows, the upper instead of the lower median, or block ends one reward off each change the arms
played.  The engine and the reference round each median of means to float32, the baseline keeps it in
float64: they can differ where two estimates round to one float32 (arms of constant rewards 1 and
1 + 1e-9), not on these tables.
"""

import math
import pathlib
import sys

import jax
import numpy as np
import pytest
import reference_policies

import htb_jax as htb

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
try:
    import python_loop_bandits
finally:
    sys.path.remove(str(BENCHMARKS))

K, T, SEEDS = 4, 400, 6


@pytest.fixture(scope="module")
def tables():
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.8), num_arms=K, gap=0.5)
    keys = htb.seed_keys(jax.random.key(3), SEEDS)
    table = np.stack([np.asarray(htb.reward_table(keys[s], nu, T), np.float64) for s in range(SEEDS)])
    return np.asarray(nu.mean(), np.float64), table


def test_robust_ucb_mom_over_seeds_plays_the_reference_arms(tables):
    means, table = tables
    regret, arms = python_loop_bandits.robust_ucb_mom_over_seeds(
        means, 0.7, 0.05, SEEDS, T, python_loop_bandits.table_over_seeds(table), record_arms=True)
    for s in range(SEEDS):
        expected = reference_policies.robust_ucb(table[s].tolist(), T, 0.7, 0.05, "mom")
        np.testing.assert_array_equal(arms[s], expected)
        assert regret[s] == pytest.approx(math.fsum(means.max() - means[a] for a in expected), rel=1e-12)
    pulls = np.stack([np.bincount(a, minlength=K) for a in arms])
    # The cap (96 blocks at t = 400) binds for the best arm while others have fewer blocks: padded rows.
    assert pulls.max() > 2 * 96 and pulls.min() < 50


def test_ucb1_over_seeds_plays_the_reference_arms(tables):
    means, table = tables
    regret, arms = python_loop_bandits.ucb1_over_seeds(means, SEEDS, T, python_loop_bandits.table_over_seeds(table),
                                                       record_arms=True)
    for s in range(SEEDS):
        expected = reference_policies.ucb1(table[s].tolist(), T)
        np.testing.assert_array_equal(arms[s], expected)
        assert regret[s] == pytest.approx(math.fsum(means.max() - means[a] for a in expected), rel=1e-12)
