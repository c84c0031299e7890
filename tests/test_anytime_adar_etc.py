"""Anytime AdaR-ETC by the doubling trick."""

import jax
import numpy as np
import pytest
from reference_policies import anytime_adar_etc

import htb_jax as htb
from conftest import engine_arms


@pytest.mark.parametrize("growth", [2.0, 1.5, 16.0])
def test_same_arms_as_the_reference_loop(growth):
    # Growth 16: the epoch of 4096 rounds starts at round 274 and reaches past T = 2000; its schedule
    # is L(4096) = 560 rounds (B = 206), where a length cut to the run's T + 1 = 2001 would explore 472
    # rounds with 188 blocks and commit earlier.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=2, gap=0.3)
    policy = htb.AnytimeAdaRETC(eps=1.0, alpha=0.7, q=0.0, growth=growth)
    _, arms, tables = engine_arms(policy, nu, 2000, 2, jax.random.key(9))
    for s in range(2):
        np.testing.assert_array_equal(arms[s], anytime_adar_etc(tables[s], 2000, 1.0, 0.7, 0.0, growth))


def test_anytime_prefix_property():
    # The policy never looks at T: a shorter horizon sees a prefix of the same run.  The long run is
    # test_same_arms_as_the_reference_loop's (its program; growth 16: both runs stop inside the epoch
    # of 4096 rounds that starts at round 274, and both commit in it, at round 833); a policy that
    # read T, or cut that epoch at T + 1, would change its schedule, hence the arms, before round 1000.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=2, gap=0.3)
    policy = htb.AnytimeAdaRETC(eps=1.0, alpha=0.7, q=0.0, growth=16.0)
    long = htb.simulate(jax.random.key(9), policy, nu, 2000, 2, record_arms=True)
    short = htb.simulate(jax.random.key(9), policy, nu, 1000, 2, record_arms=True)
    np.testing.assert_array_equal(short.arms, long.arms[:, :1000])


def test_growth_range():
    with pytest.raises(ValueError, match=r"growth must lie in \[1.1, 16\]; got growth=1.05"):
        htb.AnytimeAdaRETC(eps=1.0, alpha=0.7, q=0.0, growth=1.05)


def test_commits_compile_block_sums_only_up_to_the_largest_epoch_block(monkeypatch):
    # eps = 0.2, alpha = 0.867 (beta = 0.798): the epochs' blocks grow with their length; the last
    # commit before T = 20000 (in the epoch of 16384 rounds that starts at round 16384, at round 19169)
    # sums blocks of 5 pulls, so the commit compiles the block-sum branches up to 8 instead of all 32
    # and the prefix-sum route.  A bound below a commit's block size would zero its block sums
    # (estimates of 0, another commit).
    from reference_policies import _adar_etc_schedule, _ceil_snapped

    from htb_jax._src.simulate import engine_path, schedule

    k, horizon, eps, alpha, q = 2, 20_000, 0.2, 0.867, 0.0
    policy = htb.AnytimeAdaRETC(eps=eps, alpha=alpha, q=q, growth=2.0)
    sizes, start, epoch = [], 0, 0
    while start < horizon:
        length = _ceil_snapped(2.0**epoch)
        blocks, explore = _adar_etc_schedule(k, length, eps, alpha, q)
        if explore < length and start + explore <= horizon:
            sizes.append(-(-explore // k) // blocks)
        start, epoch = start + length, epoch + 1
    assert max(sizes) == 5
    flat = schedule._flatten(policy)
    blocks = schedule.max_blocks(k, np.array([horizon]))  # the epochs run (up to 16384 rounds) need no more
    assert engine_path._commit_block_bounds(flat, np.array([horizon]), k, blocks) == (blocks, 8, 1)

    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=k, gap=0.3)
    bounded = htb.simulate(jax.random.key(14), policy, nu, horizon, 2, record_arms=True)
    monkeypatch.setattr(engine_path, "_commit_block_bounds", lambda *args: (args[-1], None, 1))
    every_size = htb.simulate(jax.random.key(14), policy, nu, horizon, 2, record_arms=True)
    for field in ("estimates", "committed", "arms", "regret"):
        np.testing.assert_array_equal(getattr(bounded, field), getattr(every_size, field), err_msg=field)
    assert np.all(np.isfinite(bounded.estimates)) and np.all(bounded.estimates != 0)
