"""AdaR-ETC simulation against a round-by-round loop, on the same reward table."""

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from conftest import adar_etc_loop, schedule_reference

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
    table, means = _tables()["student"]
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    compiled = htb.run_on_rewards(policy, jnp.asarray(table, jnp.float32), jnp.asarray(means), 400)
    with jax.disable_jit():
        eager = htb.run_on_rewards(policy, jnp.asarray(table, jnp.float32), jnp.asarray(means), 400)
    for field in ("regret", "pulls", "committed", "estimates"):
        np.testing.assert_array_equal(getattr(compiled, field), getattr(eager, field))


@pytest.fixture(scope="module")
def pareto_instance():
    return htb.equal_gap(htb.Pareto(loc=0.0, shape=1.8), num_arms=K, gap=0.2)


@pytest.fixture(scope="module")
def simulated(pareto_instance):
    key = jax.random.key(42)
    return key, htb.simulate(key, htb.AdaRETC(**GRID), pareto_instance, HORIZONS, num_seeds=5)


def test_simulate_reads_exactly_the_reward_table(simulated, pareto_instance):
    key, out = simulated
    assert out.regret.shape == (3, 2, 2, 5)
    keys = htb.seed_keys(key, 5)
    for s in range(5):
        table = htb.reward_table(keys[s], pareto_instance, 1100)
        ref = htb.run_on_rewards(htb.AdaRETC(**GRID), table, pareto_instance.mean(), HORIZONS)
        for field in ("regret", "pulls", "committed", "exploration", "estimates"):
            np.testing.assert_array_equal(getattr(out, field)[..., s, :] if field in ("pulls", "estimates")
                                          else getattr(out, field)[..., s], getattr(ref, field))


def test_pulls_and_regret_accounting(simulated, pareto_instance):
    _, out = simulated
    np.testing.assert_array_equal(out.pulls.sum(-1), np.broadcast_to(np.array(HORIZONS)[:, None], out.regret.shape))
    gaps = np.asarray(htb.gaps(pareto_instance))
    np.testing.assert_allclose(out.regret, (np.asarray(out.pulls) * gaps).sum(-1), rtol=1e-12)
    summary = htb.summarize(out)
    np.testing.assert_allclose(summary.mean, np.asarray(out.regret).mean(-1))
    np.testing.assert_allclose(summary.stderr, np.asarray(out.regret).std(-1, ddof=1) / np.sqrt(5), atol=1e-9)


def test_seed_chunks_and_offsets_are_bitwise_identical(pareto_instance):
    key = jax.random.key(7)
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    whole = htb.simulate(key, policy, pareto_instance, 3000, num_seeds=6, seed_chunk=3)
    one_by_one = htb.simulate(key, policy, pareto_instance, 3000, num_seeds=6, seed_chunk=1)
    first = htb.simulate(key, policy, pareto_instance, 3000, num_seeds=3, seed_chunk=3)
    rest = htb.simulate(key, policy, pareto_instance, 3000, num_seeds=3, first_seed=3, seed_chunk=3)
    np.testing.assert_array_equal(whole.regret, one_by_one.regret)
    np.testing.assert_array_equal(whole.estimates, one_by_one.estimates)
    np.testing.assert_array_equal(whole.estimates, np.concatenate([first.estimates, rest.estimates]))


def test_instance_family_output_axes():
    family = htb.equal_gap(htb.Gaussian(loc=0.0, scale=jnp.array([1.0, 3.0])), num_arms=K, gap=0.3)
    policy = htb.AdaRETC.calibrated(jnp.array([0.5, 1.0]))
    out = htb.simulate(jax.random.key(3), policy, family, [500, 2000], num_seeds=3)
    assert out.regret.shape == (2, 2, 2, 3)
    assert out.pulls.shape == (2, 2, 2, 3, K)
    assert out.estimates.shape == (2, 2, 2, 3, K)
    single = htb.simulate(jax.random.key(3), policy, family[1], [500, 2000], num_seeds=3)
    np.testing.assert_array_equal(out.regret[:, 1], single.regret)


def test_easy_instance_always_commits_to_the_best_arm():
    nu = htb.equal_gap(htb.Gaussian(loc=0.0, scale=0.1), num_arms=K, gap=1.0)
    policy = htb.AdaRETC(**GRID)
    out = htb.simulate(jax.random.key(5), policy, nu, HORIZONS, num_seeds=5)
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


@pytest.mark.parametrize(
    "instance",
    [
        htb.TwoPoint(low=jnp.array([0.0, 0.1]), high=jnp.array([20.0, 10.0]), p=jnp.array([0.03, 0.05])),
        htb.equal_gap(htb.Gaussian(loc=0.0, scale=2.0), num_arms=2, gap=0.2),
    ],
    ids=["two_point", "gaussian"],
)
def test_block_sums_equal_per_pull_in_law(instance):
    # Two-sample Kolmogorov-Smirnov on the MoM estimates of each arm (400 seeds per sampler,
    # independent keys), at level 1e-3 per arm; the laws are equal, so a failure has probability
    # below 2e-3 (KS is conservative for the discrete two-point estimates).
    policy = htb.AdaRETC.order_free()
    per_pull = htb.simulate(jax.random.key(21), policy, instance, 20_000, 400, sampler="per_pull")
    blocks = htb.simulate(jax.random.key(22), policy, instance, 20_000, 400, sampler="block_sums")
    np.testing.assert_array_equal(per_pull.exploration, blocks.exploration)
    for arm in range(2):
        assert _ks_pvalue(per_pull.estimates[:, arm], blocks.estimates[:, arm]) > 1e-3


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
    policy = htb.AdaRETC.order_free()
    gaussian = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.3)
    auto = htb.simulate(jax.random.key(24), policy, gaussian, 5000, 3)
    blocks = htb.simulate(jax.random.key(24), policy, gaussian, 5000, 3, sampler="block_sums")
    per_pull = htb.simulate(jax.random.key(24), policy, gaussian, 5000, 3, sampler="per_pull")
    np.testing.assert_array_equal(auto.estimates, blocks.estimates)
    assert not np.array_equal(auto.estimates, per_pull.estimates)
    auto = htb.simulate(jax.random.key(24), policy, pareto_instance, 5000, 3)
    per_pull = htb.simulate(jax.random.key(24), policy, pareto_instance, 5000, 3, sampler="per_pull")
    np.testing.assert_array_equal(auto.estimates, per_pull.estimates)
    with pytest.raises(ValueError, match=r"sampler must be one of auto, per_pull, block_sums; got 'exact'"):
        htb.simulate(jax.random.key(24), policy, gaussian, 5000, 3, sampler="exact")
    with pytest.raises(ValueError, match=r"sampler='block_sums' needs a family .*; got Pareto"):
        htb.simulate(jax.random.key(24), policy, pareto_instance, 5000, 3, sampler="block_sums")
    with pytest.raises(ValueError, match=r"per-sample simulation supports at most"):
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
