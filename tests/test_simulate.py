"""AdaR-ETC simulation against a round-by-round loop, on the same reward table."""

import dataclasses
import functools
import logging
import math
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from conftest import adar_etc_loop, cpu_devices, mom_reference, schedule_reference

K = 3
HORIZONS = [400, 3000]
GRID = dict(eps=1.0, alpha=np.array([2 / 3, 0.8, 0.95])[:, None], q=np.array([0.0, 1 / 3])[None, :])


def _grid_points():
    for a, alpha in enumerate(GRID["alpha"][:, 0]):
        for b, q in enumerate(GRID["q"][0]):
            yield (a, b), alpha, q


def _tables():
    rng = np.random.default_rng(0)
    n = 1200
    return {
        "pareto": (rng.pareto(1.6, (K, n)) - 1 / 0.6 + np.array([[0.3], [0.0], [0.1]]), [0.3, 0.0, 0.1]),
        "student": (rng.standard_t(2.5, (K, n)) + np.array([[0.0], [0.2], [0.0]]), [0.0, 0.2, 0.0]),
        # Dirac arms with equal means: MoM ties, broken towards the lowest index.
        "ties": (np.tile(np.array([[0.0], [0.5], [0.5]]), (1, n)), [0.0, 0.5, 0.5]),
        "gaussian": (np.where(rng.random((K, n)) < 0.02, 40.0, 0.0) + np.array([[0.5], [0.0], [0.0]]), [1.3, 0.8, 0.8]),
    }


@pytest.mark.parametrize("name", list(_tables()))
def test_run_on_rewards_equals_round_by_round_loop(name):
    table, means = _tables()[name]
    table = table.astype(np.float32)
    out = htb.run_on_rewards(htb.AdaRETC(**GRID), jnp.asarray(table), jnp.asarray(means), HORIZONS)
    assert out.regret.shape == (3, 2, 2)
    for (a, b), alpha, q in _grid_points():
        for h, horizon in enumerate(HORIZONS):
            blocks, length = schedule_reference(K, horizon, 1.0, alpha, q)
            regret, pulls, committed = adar_etc_loop(table, means, horizon, length, blocks)
            assert int(out.exploration[a, b, h]) == length
            assert int(out.committed[a, b, h]) == committed
            np.testing.assert_array_equal(out.pulls[a, b, h], pulls)
            assert float(out.regret[a, b, h]) == pytest.approx(regret, rel=1e-12, abs=1e-9)


def test_exploring_the_whole_horizon_never_commits():
    table, means = _tables()["pareto"]
    out = htb.run_on_rewards(htb.AdaRETC.order_free(), jnp.asarray(table, jnp.float32), jnp.asarray(means), 300)
    assert int(out.exploration) == 300 and int(out.committed) == -1
    assert bool(jnp.all(jnp.isnan(out.estimates)))
    np.testing.assert_array_equal(out.pulls, [100, 100, 100])


def test_run_on_rewards_jit_equals_eager():
    # T = 10^5, alpha = 2/3: L = 3013 < T and B_T = 286, so the run commits after blocks of 3
    # pulls (a horizon where L = T would never reach the Median-of-Means or the commit).
    table, means = _tables()["student"]
    policy = htb.AdaRETC(eps=1.0, alpha=2 / 3, q=0.0)
    compiled = htb.run_on_rewards(policy, jnp.asarray(table, jnp.float32), jnp.asarray(means), 10**5)
    with jax.disable_jit():
        eager = htb.run_on_rewards(policy, jnp.asarray(table, jnp.float32), jnp.asarray(means), 10**5)
    # Inside a user's jit, the table traced (its schedule's sizes used to raise a ConcretizationTypeError).
    inside = jax.jit(lambda t: htb.run_on_rewards(policy, t, jnp.asarray(means), 10**5))(jnp.asarray(table, jnp.float32))
    assert int(compiled.exploration) == 3013 and int(compiled.committed) == 1
    assert schedule_reference(K, 10**5, 1.0, 2 / 3, 0.0) == (286, 3013)
    for field in ("regret", "pulls", "committed", "estimates"):
        np.testing.assert_array_equal(getattr(compiled, field), getattr(eager, field))
        np.testing.assert_array_equal(getattr(compiled, field), getattr(inside, field))
    # Counts given as 0-d arrays, as simulate takes them (they failed as unhashable static data).
    default = htb.run_on_rewards(policy, jnp.asarray(table, jnp.float32), jnp.asarray(means), 10**5, pull_chunk=64)
    arrays = htb.run_on_rewards(policy, jnp.asarray(table, jnp.float32), jnp.asarray(means), 10**5,
                                num_checkpoints=np.array(16), pull_chunk=jnp.array(64))
    for field in ("regret", "regret_curve"):
        np.testing.assert_array_equal(getattr(default, field), getattr(arrays, field))


@pytest.fixture(scope="module")
def pareto_instance():
    return htb.equal_gap(htb.Pareto(loc=0.0, shape=1.8), num_arms=K, gap=0.2)


@pytest.fixture(scope="module")
def simulated(pareto_instance):
    # The streaming tests' grid and horizons (below), per pull in chunks of 50 pulls (3 to 23 steps):
    # one program for three tests, read against run_on_rewards' program at the same chunk.
    key = jax.random.key(31)
    policy = htb.AdaRETC(**STREAM_GRID)
    return key, htb.simulate(key, policy, pareto_instance, STREAM_HORIZONS, 5, sampler="per_pull", pull_chunk=50)


def test_simulate_reads_exactly_the_reward_table(simulated, pareto_instance):
    key, out = simulated
    assert out.regret.shape == (2, 2, 2, 5)
    keys = htb.seed_keys(key, 5)
    for s in range(5):
        table = htb.reward_table(keys[s], pareto_instance, 1200)  # at most 1131 pulls per arm are read
        ref = htb.run_on_rewards(htb.AdaRETC(**STREAM_GRID), table, pareto_instance.mean(), STREAM_HORIZONS,
                                 pull_chunk=50)
        for field in ("regret", "pulls", "committed", "exploration", "estimates"):
            np.testing.assert_array_equal(getattr(out, field)[..., s, :] if field in ("pulls", "estimates")
                                          else getattr(out, field)[..., s], getattr(ref, field))


def test_pulls_and_regret_accounting(simulated, pareto_instance):
    _, out = simulated
    horizons = np.array(STREAM_HORIZONS)[:, None]
    np.testing.assert_array_equal(out.pulls.sum(-1), np.broadcast_to(horizons, out.regret.shape))
    gaps = np.asarray(htb.gaps(pareto_instance))
    np.testing.assert_allclose(out.regret, (np.asarray(out.pulls) * gaps).sum(-1), rtol=1e-12)
    summary = htb.summarize(out)
    np.testing.assert_allclose(summary.mean, np.asarray(out.regret).mean(-1))
    np.testing.assert_allclose(summary.stderr, np.asarray(out.regret).std(-1, ddof=1) / np.sqrt(5), atol=1e-9)
    # Equal regrets: a standard error of 0 exactly (about their rounded mean it was 2.9e-14 for 20 regrets of 145.6)
    same = htb.summarize(dataclasses.replace(out, regret=np.full((2, 20), 145.6)))
    assert np.all(np.asarray(same.stderr) == 0.0) and np.all(np.asarray(same.mean) == np.mean(np.full(20, 145.6)))


def test_seed_chunks_and_offsets_are_bitwise_identical(pareto_instance):
    # 16 seeds in one chunk (the per-pull program of the grid-layout test's single runs, shared)
    # against two halves of 8 seeds each run one seed per chunk, the second from first_seed = 8:
    # catches a seed drawn from its place in a chunk (or in the call) instead of its index, and a
    # first_seed ignored or applied twice.
    key = jax.random.key(7)
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    whole = htb.simulate(key, policy, pareto_instance, _LAYOUT_HORIZONS, 16, sampler="per_pull")
    halves = [htb.simulate(key, policy, pareto_instance, _LAYOUT_HORIZONS, 8, first_seed=f, seed_chunk=1,
                           sampler="per_pull") for f in (0, 8)]
    assert not np.array_equal(halves[0].estimates, halves[1].estimates)
    for field, seed_axis in (("regret", -1), ("estimates", -2), ("committed", -1)):
        joined = np.concatenate([getattr(h, field) for h in halves], seed_axis)
        np.testing.assert_array_equal(getattr(whole, field), joined, err_msg=field)


@functools.cache
def _gaussian_family_runs():
    """AdaR-ETC's grid [3, 2] on a family of two Gaussian instances (K = 3, gap 1: scale 3, then the
    easy scale 0.1), and on the easy instance alone (batch shape ()): two programs for two tests."""
    family = htb.equal_gap(htb.Gaussian(loc=0.0, scale=jnp.array([3.0, 0.1])), num_arms=K, gap=1.0)
    policy = htb.AdaRETC(**GRID)
    out = htb.simulate(jax.random.key(3), policy, family, HORIZONS, num_seeds=5)
    single = htb.simulate(jax.random.key(3), policy, family[1], HORIZONS, num_seeds=5)
    return out, single


def test_instance_family_output_axes():
    # Grid axes, then the family's, horizons and seeds; the family's second member equals the
    # instance run alone: catches the family and grid (or horizon) axes swapped, and a member
    # drawn from its place in the family.
    out, single = _gaussian_family_runs()
    assert out.regret.shape == (3, 2, 2, 2, 5)
    assert out.pulls.shape == (3, 2, 2, 2, 5, K)
    assert out.estimates.shape == (3, 2, 2, 2, 5, K)
    assert single.regret.shape == (3, 2, 2, 5)
    for field in ("regret", "estimates", "committed", "exploration"):
        np.testing.assert_array_equal(getattr(out, field)[:, :, 1], getattr(single, field), err_msg=field)
    assert not np.array_equal(out.estimates[:, :, 0], out.estimates[:, :, 1])


def test_paired_grid_points_on_the_fast_path_are_the_products_diagonal():
    # simulate(..., paired=True) on the fast path computes the whole product (its draws are shared)
    # and keeps grid point i on instance i: a grid [2, 3] of eps paired with a family [2, 3] of
    # Gaussian instances of distinct scales.  Catches the diagonal read along the wrong axes (a
    # transposed pairing, a row or column instead of the diagonal) and the pairs' axes misplaced.
    scale = jnp.array([[3.0, 1.0, 0.3], [2.0, 0.5, 0.1]])
    family = htb.equal_gap(htb.Gaussian(loc=0.0, scale=scale), num_arms=K, gap=1.0)
    policy = htb.AdaRETC(eps=jnp.array([[0.5, 0.6, 0.7], [0.8, 0.9, 1.0]]), alpha=0.9, q=0.0)
    product = htb.simulate(jax.random.key(5), policy, family, HORIZONS, num_seeds=5)
    paired = htb.simulate(jax.random.key(5), policy, family, HORIZONS, num_seeds=5, paired=True)
    assert product.regret.shape == (2, 3, 2, 3, 2, 5) and paired.regret.shape == (2, 3, 2, 5)
    i, j = np.unravel_index(np.arange(6), (2, 3))
    for field in ("regret", "pulls", "committed", "exploration", "estimates", "regret_curve"):
        np.testing.assert_array_equal(getattr(paired, field)[i, j], getattr(product, field)[i, j, i, j],
                                      err_msg=field)
    estimates = np.asarray(product.estimates)
    assert not np.array_equal(estimates[0, 1, 0, 1], estimates[0, 1, 1, 0])  # the member matters
    assert not np.array_equal(np.asarray(product.exploration)[0, 1], np.asarray(product.exploration)[1, 0])


def test_outputs_are_arranged_alike_by_numpy_and_by_the_programs():
    # On a CPU, NumPy arranges simulate's outputs; elsewhere (and under a transformation) jitted
    # programs do.  Both on the same padded outputs of every dtype, with trailing axes, unpaired and
    # paired (fast path), and the engine's with its recorded arms: the same shapes, dtypes and values.
    # Catches either path reading the axes in another order, keeping the padded seeds or changing a dtype.
    from htb_jax._src.simulate import outputs

    rng = np.random.default_rng(0)
    cpu = cpu_devices()[0]
    g, h, s = 3, 2, 5
    # (grid, instances, horizons, seeds, paired); the last as run_on_rewards of one schedule at one
    # horizon arranges its outputs (no leading axis), given as NumPy arrays (as several processes gather them).
    for shapes in (((g,), (2,), (h,), (s,), False), ((g,), (3,), (h,), (s,), True), ((), (), (), (), False)):
        grid, instances, horizons, seeds, paired = shapes
        lead = (*(s + 3 for _ in seeds), math.prod(instances), math.prod(grid) * math.prod(horizons))
        parts = [rng.normal(size=lead), rng.integers(0, 9, size=(*lead, K)), rng.integers(-1, K, size=lead, dtype=np.int32),
                 rng.integers(0, 9, size=lead), rng.normal(size=(*lead, K)).astype(np.float32),
                 rng.integers(0, 9, size=(*lead, 4)), rng.normal(size=(*lead, 4))]  # the Outcome's fields, in order
        given = [jax.device_put(a, cpu) for a in parts] if seeds else parts
        with mock.patch.object(outputs, "_arrange", side_effect=AssertionError("a program on a CPU")):
            host = outputs._arrange_fast_path(given, *shapes)
        expected_lead = (*grid, *(() if paired else instances), *horizons, *seeds)
        for a, got in zip(parts, jax.tree.leaves(host), strict=True):
            want = outputs._arrange(jax.device_put(a, cpu), *shapes)
            assert got.dtype == want.dtype and got.shape == want.shape == (*expected_lead, *a.shape[len(lead):])
            np.testing.assert_array_equal(got, want)
    shape = (g, 2, h, s)
    engine = [rng.normal(size=(g, 2, h, s + 3, 7)), rng.integers(0, 9, size=(g, 2, h, s + 3, K)),
              *(rng.integers(-1, 3, size=(g, 2, h, s + 3), dtype=np.int32) for _ in range(2)),
              rng.normal(size=(g, 2, h, s + 3, K)).astype(np.float32), rng.integers(0, 9, size=(g, 2, h, s + 3, 7)),
              rng.integers(-1, K, size=(g, 2, h, s + 3, 40), dtype=np.int32)]
    engine = [jax.device_put(a, cpu) for a in engine]
    with mock.patch.object(outputs, "_arrange_engine_program", side_effect=AssertionError("a program on a CPU")):
        host = outputs._arrange_engine(engine, shape, True)
    program = outputs._arrange_engine_program(engine, shape, True)
    assert program.arms is not None
    for got, want in zip(jax.tree.leaves(host), jax.tree.leaves(program), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_easy_instance_always_commits_to_the_best_arm():
    _, out = _gaussian_family_runs()  # Gaussian arms of scale 0.1, gap 1
    horizons = np.array(HORIZONS)[:, None]
    explored = np.asarray(htb.exploration_pulls(out.exploration, K))
    np.testing.assert_array_equal(out.committed, np.where(np.asarray(out.exploration) < horizons, 0, -1))
    np.testing.assert_allclose(out.regret, explored[..., 1:].sum(-1) * 1.0, rtol=1e-12)


def test_no_recompilation_for_new_hyperparameters(pareto_instance, caplog):
    def compiles(policy, horizons):
        caplog.clear()
        with caplog.at_level(logging.WARNING), jax.log_compiles():
            htb.simulate(jax.random.key(0), policy, pareto_instance, horizons, num_seeds=7)
        return sum(r.getMessage().startswith("Compiling jit(_fast_path_kernel") for r in caplog.records)

    assert compiles(htb.AdaRETC(eps=1.0, alpha=0.7, q=0.0), [3000]) == 1  # a fresh program is compiled
    assert compiles(htb.AdaRETC(eps=1.0, alpha=0.9, q=0.25), [3000]) == 0
    assert compiles(htb.AdaRETC(eps=0.5, alpha=0.8, q=0.1), [3000]) == 0
    assert compiles(htb.AdaRETC.calibrated(0.6), [3000]) == 0
    assert compiles(htb.AdaRETC.calibrated(0.9), [2900]) == 0  # same block-count bucket


_LAYOUT_HORIZONS = [20000, 100000]  # also the seed-chunk and sampler-choice tests' (one per-pull program)


def test_grid_points_sharing_a_block_layout_equal_their_own_runs(pareto_instance):
    # 12 configurations (3 alphas x 2 qs x horizons 2e4, 1e5) have 5 distinct Median-of-Means
    # layouts (B, s) per arm: (247, 1) (247, 2) (286, 2) (286, 3) (286, 4), streamed as 6 (the
    # bucket above 5, one layout repeated).  Every grid point equals its own simulation, bit for
    # bit: catches a configuration reading another layout's median (a wrong index), a repeated
    # layout that displaces one in use, and B and s swapped in their packed code.
    from htb_jax._src.simulate import layouts, schedule

    alphas, qs, horizons = np.array([2 / 3, 0.68, 0.7]), np.array([0.0, 1 / 3]), _LAYOUT_HORIZONS
    grid = htb.AdaRETC(eps=1.0, alpha=alphas[:, None], q=qs[None, :])
    flat = schedule._flatten(grid)
    assert int(schedule._schedule_maxima(flat, jnp.asarray(horizons), K)[1]) == 5
    assert layouts.num_layouts(5, 12) == 6
    key = jax.random.key(7)
    out = htb.simulate(key, grid, pareto_instance, horizons, 16, sampler="per_pull")
    assert len(np.unique(np.asarray(out.exploration))) == 12 and np.any(np.asarray(out.exploration) < 100000)
    for a, alpha in enumerate(alphas):
        for b, q in enumerate(qs):
            alone = htb.simulate(key, htb.AdaRETC(1.0, alpha, q), pareto_instance, horizons, 16, sampler="per_pull")
            for field in ("regret", "estimates", "committed", "pulls"):
                np.testing.assert_array_equal(getattr(out, field)[a, b], getattr(alone, field), err_msg=field)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda nu: htb.simulate(jax.random.key(0), htb.AdaRETC.order_free(), nu[..., :1], 100, 2),
         r"num_arms \(K\) must be an integer >= 2; got num_arms \(K\)=1"),
        (lambda nu: htb.simulate(jax.random.key(0), htb.AdaRETC.order_free(), nu, 0, 2),
         r"horizon \(T\) must be an integer in \[1, 1000000000000000000\]; got horizon \(T\)=0"),
        (lambda nu: htb.simulate(jax.random.key(0), htb.AdaRETC.order_free(), nu, 100, 0),
         "num_seeds must be an integer >= 1; got num_seeds=0"),
        (lambda nu: htb.simulate(jax.random.key(0, impl="rbg"), htb.AdaRETC.order_free(), nu, 100, 2),
         "threefry2x32"),
        (lambda nu: htb.run_on_rewards(htb.AdaRETC.order_free(), jnp.zeros((K, 10)), nu.mean(), 1000),
         "the reward table has 10 pulls per arm but the schedule needs"),
    ],
)
def test_errors(pareto_instance, call, message):
    with pytest.raises(ValueError, match=message):
        call(pareto_instance)


def test_non_policy_is_a_type_error(pareto_instance):
    with pytest.raises(TypeError, match="AdaRETC"):
        htb.simulate(jax.random.key(0), object(), pareto_instance, 100, 2)


# -- exact block sums ---------------------------------------------------------------------


def _ks_pvalue(a, b):
    from scipy import stats

    return stats.ks_2samp(np.ravel(a), np.ravel(b)).pvalue


@functools.cache
def _gaussian_run(seed, sampler):
    """AdaR-ETC's order-free form on two Gaussian arms, 400 seeds: three programs (one per sampler;
    ``"auto"`` is the order statistic's) for two tests."""
    instance = htb.equal_gap(htb.Gaussian(loc=0.0, scale=2.0), num_arms=2, gap=0.2)
    return htb.simulate(jax.random.key(seed), htb.AdaRETC.order_free(), instance, 20_000, 400, sampler=sampler)


def test_gaussian_samplers_equal_per_pull_in_law():
    # Two-sample Kolmogorov-Smirnov on the MoM estimates of each arm (400 seeds per sampler,
    # independent keys), at level 1e-3 per arm and sampler; the laws are equal, so a failure has
    # probability below 4e-3.  A wrong order statistic (the mean of the block means, or the
    # median's rank off by B/4) moves the law by far more than KS resolves at 400 seeds.
    per_pull = _gaussian_run(21, "per_pull")
    for i, sampler in enumerate(("block_sums", "order_statistic")):
        other = _gaussian_run(22 + 10 * i, sampler)
        np.testing.assert_array_equal(per_pull.exploration, other.exploration)
        for arm in range(2):
            assert _ks_pvalue(per_pull.estimates[:, arm], other.estimates[:, arm]) > 1e-3, (sampler, arm)


# Two spiky arms whose Median-of-Means a spike moves about half of the time.  At T = 10500,
# K = 2, AdaRETC.calibrated(0.25) explores L = 2975 rounds: B = 228 blocks of s = 6 pulls per
# arm.  Arm 0 is 0, or 6 with probability p0; arm 1 is 0.5, or 6.5 with probability p1; a block
# mean is low + Binomial(6, p), so arm 0's estimate is an integer and arm 1's an integer + 1/2
# (no ties).  P(no spike in a block) = (1 - p)^6 is 0.5 for arm 0 and 0.49 for arm 1, so each
# median is low or low + 1, each about half of the time.  Arm 1 is the best (means 0.65, 1.18).
_SPIKY_T, _SPIKY_BLOCKS, _SPIKY_SIZE = 10_500, 228, 6
_SPIKY_P = (1 - 0.5 ** (1 / 6), 1 - 0.49 ** (1 / 6))
_SPIKY = htb.TwoPoint(low=jnp.array([0.0, 0.5]), high=jnp.array([6.0, 6.5]), p=jnp.array(_SPIKY_P))


def _mom_law(p, size, blocks):
    """P(MoM = low + k (high - low) / size) for k = 0..size, exactly.

    The ceil(B/2)-th smallest of B i.i.d. block means is <= x exactly when at least ceil(B/2)
    block means are: P(MoM <= low + k (high - low) / size) = P(Binomial(B, F_k) >= ceil(B/2)),
    with F_k = P(Binomial(size, p) <= k).
    """
    from scipy import stats

    cdf = stats.binom.cdf(np.arange(size + 1), size, p)
    at_most = stats.binom.sf((blocks + 1) // 2 - 1, blocks, cdf)
    return np.diff(np.concatenate([[0.0], at_most]))


def test_two_point_commit_frequency_is_the_exact_binomial_law():
    policy = htb.AdaRETC.calibrated(0.25)
    assert schedule_reference(2, _SPIKY_T, 0.25, 5 / 6, 1 / 6) == (_SPIKY_BLOCKS, 2975)
    assert 2975 // 2 // _SPIKY_BLOCKS == _SPIKY_SIZE
    law = [_mom_law(p, _SPIKY_SIZE, _SPIKY_BLOCKS) for p in _SPIKY_P]
    # Commit to arm 0 (the wrong arm) iff its estimate k0 exceeds arm 1's k1 + 1/2: k0 > k1.
    wrong = sum(law[0][a] * law[1][b] for a in range(_SPIKY_SIZE + 1) for b in range(a))
    low_rates = [law[0][0], law[1][0]]  # P(MoM = low): no spike in the median block
    assert 0.15 < wrong < 0.25 and all(0.3 < r < 0.7 for r in low_rates)  # 0.19; 0.53 and 0.41
    seeds = 4000
    runs = {
        sampler: htb.simulate(jax.random.key(26 + i), policy, _SPIKY, _SPIKY_T, seeds, sampler=sampler)
        for i, sampler in enumerate(("block_sums", "per_pull", "order_statistic"))
    }
    for sampler, out in runs.items():
        np.testing.assert_array_equal(out.exploration, 2975)
        # Each frequency within 4 standard errors sqrt(P (1 - P) / seeds) of its exact value
        # (0.025 for the commit, 0.032 for P(MoM = low)): nine checks, each failing by chance
        # with probability 6e-5.
        observed = float(np.mean(np.asarray(out.committed) == 0))
        assert abs(observed - wrong) <= 4 * math.sqrt(wrong * (1 - wrong) / seeds), (sampler, observed, wrong)
        for arm, rate in enumerate(low_rates):
            low = float(np.mean(np.asarray(out.estimates[:, arm]) == float(_SPIKY.low[arm])))
            assert abs(low - rate) <= 4 * math.sqrt(rate * (1 - rate) / seeds), (sampler, arm, low, rate)
    # The three samplers against each other: a chi-square test of homogeneity of each arm's
    # estimates, at level 1e-3 (the laws are equal: a failure has probability 2e-3).
    from scipy import stats

    for arm in range(2):
        samples = [np.asarray(out.estimates[:, arm]) for out in runs.values()]
        values = np.unique(np.concatenate(samples))
        counts = np.array([[np.sum(x == v) for v in values] for x in samples])
        counts = counts[:, counts.sum(0) >= 10]  # values seen fewer than 10 times are left out
        assert counts.shape[1] >= 2  # not constant
        assert stats.chi2_contingency(counts).pvalue > 1e-3


def test_block_sums_of_dirac_arms_equal_per_pull_exactly():
    # Point masses leave nothing to chance: both samplers give the same estimates and regret,
    # ties included (broken towards the lowest index).
    nu = htb.Dirac(jnp.array([0.0, 0.5, 0.5, 0.25]))
    policy = htb.AdaRETC(**GRID)
    per_pull = htb.simulate(jax.random.key(23), policy, nu, HORIZONS, 2, sampler="per_pull")
    blocks = htb.simulate(jax.random.key(23), policy, nu, HORIZONS, 2)
    np.testing.assert_array_equal(per_pull.estimates, blocks.estimates)
    np.testing.assert_array_equal(per_pull.regret, blocks.regret)


def test_sampler_choice_and_errors(pareto_instance):
    # Gaussian arms: "auto" is the order statistic, whose draws differ from the other samplers' at
    # the same key (the programs of test_gaussian_samplers_equal_per_pull_in_law); Pareto arms:
    # "auto" is per pull (the per-pull program of the grid-layout test's single runs).
    auto = _gaussian_run(32, "auto")
    np.testing.assert_array_equal(auto.estimates, _gaussian_run(32, "order_statistic").estimates)
    assert not np.array_equal(auto.estimates, _gaussian_run(32, "per_pull").estimates)
    assert not np.array_equal(auto.estimates, _gaussian_run(32, "block_sums").estimates)
    policy = htb.AdaRETC.order_free()
    auto = htb.simulate(jax.random.key(24), policy, pareto_instance, _LAYOUT_HORIZONS, 16)
    per_pull = htb.simulate(jax.random.key(24), policy, pareto_instance, _LAYOUT_HORIZONS, 16, sampler="per_pull")
    np.testing.assert_array_equal(auto.estimates, per_pull.estimates)
    gaussian = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.3)
    with pytest.raises(ValueError, match=r"sampler must be one of auto, per_pull, block_sums, order_statistic; got sampler='exact'"):
        htb.simulate(jax.random.key(24), policy, gaussian, 5000, 3, sampler="exact")
    for sampler in ("block_sums", "order_statistic"):
        with pytest.raises(ValueError, match=rf"sampler='{sampler}' needs a family .*; got Pareto"):
            htb.simulate(jax.random.key(24), policy, pareto_instance, 5000, 3, sampler=sampler)
    # named by the sampler chosen and the horizon (it named neither, through the command line neither flag)
    with pytest.raises(ValueError, match=r"pulls per arm at horizon=1000000000000000; per-sample simulation "
                                         r"\(sampler='auto', per pull for Pareto\) supports at most \d+: lower"):
        htb.simulate(jax.random.key(24), policy, pareto_instance, 10**15, 1)


def test_horizons_to_ten_to_the_eighteen():
    # Exploration lengths near 10^12 pulls per arm and T - L near 10^18: no overflow, exact regret.
    gap = 0.1
    _, nu = htb.lower_bound_pair(num_arms=2, gap=gap, spike_prob=1e-9)
    policy = htb.AdaRETC(eps=1.0, alpha=jnp.array([2 / 3, 0.9]), q=0.0)
    horizons = [10**15, 10**18]
    out = htb.simulate(jax.random.key(25), policy, nu, horizons, 3)
    for a, alpha in enumerate([2 / 3, 0.9]):
        for h, t in enumerate(horizons):
            length = schedule_reference(2, t, 1.0, alpha, 0.0)[1]
            np.testing.assert_array_equal(out.exploration[a, h], length)
            n0 = -(-length // 2)  # arm 0 (the suboptimal Dirac arm) is pulled first
            committed = np.asarray(out.committed[a, h])
            expected = gap * n0 + (t - length) * gap * (committed == 0)
            np.testing.assert_allclose(out.regret[a, h], expected, rtol=1e-15)


# -- streaming over several pull chunks ------------------------------------------------------

# eps = 1/4 schedules at T = 3000 and 10500 (K = 3): B = 201 and 232 blocks; per arm 515 to
# 1131 pulls, so blocks of 1, 2 and 4 samples, and 3 to 162 streaming steps of the chunks below
# (7 and 50 are no multiples of the block sizes: blocks straddle chunk edges).
STREAM_GRID = dict(eps=0.25, alpha=np.array([5 / 6, 0.9])[:, None], q=np.array([0.0, 1 / 6])[None, :])
STREAM_HORIZONS = [3000, 10_500]


def _stream_table(name):
    rng = np.random.default_rng(1)
    means = np.array([0.0, 0.05, 0.1])
    table = rng.standard_t(2.5, (K, 1200)) + means[:, None]
    if name == "infinite":
        # An infinite sample spoils its own block only, whichever chunk carries it.
        table[0, [3, 340, 341]] = np.inf
        table[1, [49, 50, 700]] = -np.inf
        table[2, 665] = np.inf
        table[2, 666] = -np.inf  # both signs in one block: NaN there
    return table.astype(np.float32), means


def _stream_reference(table, means):
    """Per grid point and horizon: (regret, pulls, committed, estimates) of the round-by-round loop."""
    refs = {}
    for a, alpha in enumerate(STREAM_GRID["alpha"][:, 0]):
        for b, q in enumerate(STREAM_GRID["q"][0]):
            for h, horizon in enumerate(STREAM_HORIZONS):
                blocks, length = schedule_reference(K, horizon, 0.25, alpha, q)
                regret, pulls, committed = adar_etc_loop(table, means, horizon, length, blocks)
                n = [length // K + (i < length % K) for i in range(K)]
                estimates = [mom_reference(table[i, : n[i]], blocks) for i in range(K)]
                refs[a, b, h] = regret, pulls, committed, estimates, max(n) // blocks
    return refs


@pytest.mark.parametrize("name", ["student", "infinite"])
def test_streaming_over_several_chunks_equals_round_by_round_loop(name):
    table, means = _stream_table(name)
    refs = _stream_reference(table, means)
    assert sorted({size for *_, size in refs.values()}) == [1, 2, 4]
    policy = htb.AdaRETC(**STREAM_GRID)
    for chunk in (7, 50, None):  # None: the default, 512 here; 50: also simulate's (below)
        out = htb.run_on_rewards(policy, jnp.asarray(table), jnp.asarray(means), STREAM_HORIZONS, pull_chunk=chunk)
        for (a, b, h), (regret, pulls, committed, estimates, _) in refs.items():
            where = (chunk, a, b, h)
            assert int(out.committed[a, b, h]) == committed, where
            np.testing.assert_array_equal(out.pulls[a, b, h], pulls, err_msg=str(where))
            assert float(out.regret[a, b, h]) == pytest.approx(regret, rel=1e-12, abs=1e-9), where
            # float32 estimates of float64 prefix-sum block means: within 2 float32 ulps.
            np.testing.assert_allclose(out.estimates[a, b, h], estimates, rtol=2.0**-22, atol=1e-12,
                                       err_msg=str(where))


def test_simulate_streams_several_chunks_of_the_reward_table(simulated, pareto_instance):
    # Per-pull simulate with a 50-pull chunk (3 to 23 steps) reads the reward table as the loop does
    # (its first two seeds).
    key, out = simulated
    keys = htb.seed_keys(key, 2)
    means = np.asarray(pareto_instance.mean())
    for s in range(2):
        table = np.asarray(htb.reward_table(keys[s], pareto_instance, 1200))
        for (a, b, h), (regret, pulls, committed, estimates, _) in _stream_reference(table, means).items():
            assert int(out.committed[a, b, h, s]) == committed
            np.testing.assert_array_equal(out.pulls[a, b, h, s], pulls)
            assert float(out.regret[a, b, h, s]) == pytest.approx(regret, rel=1e-12, abs=1e-9)
            np.testing.assert_allclose(out.estimates[a, b, h, s], estimates, rtol=2.0**-22, atol=1e-12)


@pytest.mark.parametrize("policy", [htb.UCB1(), htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)], ids=["engine", "fast path"])
def test_integral_floats_run_as_the_integers_they_name(policy):
    # The checks take 4.0 seeds as 4; the run must too (it sliced its outputs by 4.0 and raised after running).
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=K, gap=0.2)
    sizes = dict(num_seeds=4, first_seed=1, num_checkpoints=4, seed_chunk=2)
    as_ints = htb.simulate(jax.random.key(0), policy, nu, 100, **sizes)
    as_floats = htb.simulate(jax.random.key(0), policy, nu, 1e2, **{k: float(v) for k, v in sizes.items()})
    for name in ("regret", "pulls", "regret_curve", "checkpoints"):
        np.testing.assert_array_equal(getattr(as_floats, name), getattr(as_ints, name), err_msg=name)
