"""ForceMoM against the reference loop; its exploration count is D_t.

One engine program serves every test (compilation dominates the cost): a rho grid on four
Frechet arms, horizons from K m0 to 8000, two seeds, arms recorded.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_policies import force_mom as force_mom_reference

import htb_jax as htb
from htb_jax._src.policies import force_mom
from htb_jax._src.policy_protocol import EngineSpec, RoundContext

K, SEEDS = 4, 2
M0 = 38  # ceil(16 log(2K + e)) at K = 4
RHOS = (0.55, 0.6, 0.75)
# D_T = max(K m0, ceil(K^(1 - rho) T^rho)): K m0 = 152 up to T = 1000 (and at rho = 0.75 up to
# T = 200); 153 at rho = 0.55, T = 3000 (152.5: a floor or a round gives 152), then the rate.
HORIZONS = (K * M0, 200, 1000, 3000, 8000)


@functools.cache
def _run():
    """``(outcome [G, H, S, ...], tables f32[S, K, 8000])`` of the rho grid, computed once."""
    nu = htb.equal_gap(htb.Frechet(loc=0.0, shape=2.5), num_arms=K, gap=0.4)
    key = jax.random.key(5)
    out = htb.simulate(key, htb.ForceMoM(rho=jnp.array(RHOS)), nu, list(HORIZONS), SEEDS, record_arms=True)
    keys = htb.seed_keys(key, SEEDS)
    tables = [np.asarray(htb.reward_table(keys[s], nu, max(HORIZONS))) for s in range(SEEDS)]
    return out, tables


def test_same_arms_as_the_reference_loop():
    # m0 = 38, so the first K m0 = 152 rounds are the initial forced pulls; at T = 8000,
    # D_T = 262 (rho = 0.55), 383 (0.6) and 1197 (0.75): the rate-driven forced pulls
    # interleaved with exploitation are most of the exploration at the larger rho.  The policy
    # is anytime: every horizon plays the first T rounds of the reference's run at T = 8000.
    out, tables = _run()
    arms = np.asarray(out.arms)
    for g, rho in enumerate(RHOS):
        for s in range(SEEDS):
            reference, forced = force_mom_reference(tables[s], HORIZONS[-1], rho)
            assert forced > K * M0
            for h, horizon in enumerate(HORIZONS):
                np.testing.assert_array_equal(arms[g, h, s, :horizon], reference[:horizon], err_msg=f"rho={rho} T={horizon}")
                np.testing.assert_array_equal(arms[g, h, s, horizon:], -1)
            assert int(out.exploration[g, -1, s]) == forced


def test_exploration_count_is_d_t_at_every_checkpoint():
    assert force_mom.initial_pulls(K) == math.ceil(16 * math.log(2 * K + math.e)) == M0
    out, _ = _run()
    expected = [[max(K * M0, math.ceil(K ** (1 - rho) * t**rho)) for t in HORIZONS] for rho in RHOS]
    assert expected[0][:4] == [152, 152, 152, 153]  # both sides of the max, and the ceil
    np.testing.assert_array_equal(out.exploration, np.array(expected)[:, :, None].repeat(SEEDS, 2))


def test_rho_grid_is_one_program():
    # The grid's points are one program's batch; a larger rho explores more (not a point
    # reading another point's rho).
    out, _ = _run()
    assert out.regret.shape == (len(RHOS), len(HORIZONS), SEEDS)
    assert np.all(np.diff(np.asarray(out.exploration[:, -1]), axis=0) > 0)


def test_block_counts():
    # q(n): the largest odd integer <= min(n, 2 ceil(log 2K + log log(e^e + n)) + 1).
    n = np.array([1, 2, 3, 10, 100, 10**6])
    cap = 2 * np.ceil(np.log(8) + np.log(np.log(np.exp(np.e) + n))) + 1
    expected = np.minimum(n, cap)
    expected = np.where(expected % 2 == 0, expected - 1, expected)
    np.testing.assert_array_equal(jax.jit(force_mom.num_blocks, static_argnums=1)(jnp.asarray(n), 4), expected)


@pytest.mark.parametrize("rho", [0.0, 1.0, -0.5])
def test_rho_range(rho):
    with pytest.raises(ValueError, match=r"rho must lie in \(0, 1\)"):
        htb.ForceMoM(rho)


def test_an_infinite_reward_reaches_the_later_blocks_as_documented():
    # The docstring's statement, round by round through the kernel: the forced sample 20 of arm 0 is +inf
    # among rewards of 1. Its prefix sums make the block holding it +inf and every later block NaN
    # (inf - inf), so the lower median of q(s) blocks of s // q samples is 1 while the clean blocks are at
    # least ceil(q/2), +inf when one short, NaN below. Catches a claim that the inf spoils only its own
    # block (the estimate would stay 1) and one that any spoiled block makes the estimate NaN at once.
    k, horizon, spike = 2, 300, 20
    policy = htb.ForceMoM(rho=0.9)
    kernel = policy.kernel(EngineSpec(num_arms=k, max_pulls=horizon, pull_chunk=64, max_blocks=64))
    act, update = jax.jit(kernel.act), jax.jit(kernel.update)
    pulls = np.zeros(k, np.int64)
    state = kernel.init(RoundContext(jnp.int64(1), jnp.asarray(pulls), jnp.int64(horizon), None))
    seen = {}
    for t in range(1, horizon + 1):
        ctx = RoundContext(jnp.int64(t), jnp.asarray(pulls), jnp.int64(horizon), None)
        arm = int(act(state, ctx))
        reward = np.inf if (arm == 0 and int(state[1][0]) == spike) else 1.0  # the forced sample's index
        state = update(state, ctx, jnp.int32(arm), jnp.float32(reward))
        pulls[arm] += 1
        seen[int(state[1][0])] = float(state[3][0])  # arm 0's estimate after its s-th forced sample
    assert max(seen) > 2 * spike  # the blocks of the later counts lie past the spike
    for s, got in seen.items():
        if s == 0:
            continue
        q = int(policy.num_blocks(k, s))
        size = s // q
        clean = sum((b + 1) * size <= spike for b in range(q))
        want = 1.0 if clean >= (q + 1) // 2 else (math.inf if clean == (q + 1) // 2 - 1 else math.nan)
        assert got == want or (math.isnan(got) and math.isnan(want)), (s, q, clean, got)
    values = list(seen.values())
    assert 1.0 in values and math.inf in values and any(math.isnan(v) for v in values)  # every case reached
