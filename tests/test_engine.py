"""The round-by-round engine: AdaR-ETC equals the fast path bit for bit; mechanics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_policies import explore_then_commit

import htb_jax as htb
from conftest import mom_reference

FIELDS = ("regret", "pulls", "committed", "exploration", "estimates", "checkpoints", "regret_curve")


def test_adar_etc_through_the_engine_equals_the_fast_path_bit_for_bit():
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=jnp.array([1.6, 3.0])), num_arms=3, gap=0.3)
    policy = htb.AdaRETC(eps=0.5, alpha=jnp.array([0.75, 0.85, 0.95]), q=jnp.array([[0.0], [0.2]]))
    key = jax.random.key(11)
    fast = htb.simulate(key, policy, nu, [700, 4000], 3)
    slow = htb.simulate(key, policy, nu, [700, 4000], 3, engine=True)
    assert fast.regret.shape == (2, 3, 2, 2, 3)
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field), err_msg=field)


@pytest.mark.parametrize(
    "num_arms,horizon,eps_bar,pull_chunk",
    [
        (3, 1500, 0.5, None),  # B = 185 blocks of 1 pull, 291 pulls per arm in 2 steps of 256
        (2, 10_500, 0.25, 100),  # B = 228 blocks of 6 pulls, 1487 pulls in 15 steps of 100
    ],
)
def test_adar_etc_engine_equals_the_reference_loop(num_arms, horizon, eps_bar, pull_chunk):
    nu = htb.equal_gap(htb.StudentT(loc=0.0, df=2.5), num_arms=num_arms, gap=0.1)
    policy = htb.AdaRETC.calibrated(eps_bar)
    alpha, q = (1 + eps_bar) / (1 + 2 * eps_bar), eps_bar / (1 + 2 * eps_bar)
    key = jax.random.key(12)
    out = htb.simulate(key, policy, nu, horizon, 2, record_arms=True, pull_chunk=pull_chunk)
    keys = htb.seed_keys(key, 2)
    for s in range(2):
        table = np.asarray(htb.reward_table(keys[s], nu, horizon))
        reference, committed = explore_then_commit(table, horizon, eps_bar, alpha, q)
        np.testing.assert_array_equal(out.arms[s], reference)
        assert int(out.committed[s]) == committed
        # The estimates it committed on: MoM of each arm's exploration pulls, to 2 float32 ulps.
        blocks, length = int(policy.num_blocks(num_arms, horizon)), int(out.exploration[s])
        pulls = [length // num_arms + (i < length % num_arms) for i in range(num_arms)]
        want = [mom_reference(table[i, : pulls[i]], blocks) for i in range(num_arms)]
        np.testing.assert_allclose(out.estimates[s], want, rtol=2.0**-22)


def test_regret_curve_and_checkpoints():
    nu = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.5)
    out = htb.simulate(jax.random.key(13), htb.UCB1(), nu, 1000, 2, num_checkpoints=4, record_arms=True)
    np.testing.assert_array_equal(out.checkpoints[0], [1, 10, 100, 1000])
    gaps = np.asarray(htb.gaps(nu))
    for s in range(2):
        cumulative = np.cumsum(gaps[np.asarray(out.arms[s])])
        np.testing.assert_allclose(out.regret_curve[s], cumulative[[0, 9, 99, 999]], rtol=1e-12)
    np.testing.assert_array_equal(out.regret, out.regret_curve[:, -1])


def test_seed_chunks_and_first_seed_do_not_change_results():
    nu = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.5)
    policy = htb.ForceMoM(0.6)
    whole = htb.simulate(jax.random.key(14), policy, nu, 500, 5, seed_chunk=2)
    parts = [htb.simulate(jax.random.key(14), policy, nu, 500, n, first_seed=f, seed_chunk=1)
             for f, n in ((0, 3), (3, 2))]
    np.testing.assert_array_equal(whole.regret, np.concatenate([p.regret for p in parts]))
    np.testing.assert_array_equal(whole.estimates, np.concatenate([p.estimates for p in parts]))
