"""Memory budgets: the seed chunk fits the budget, and no budget changes a number."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import memory

K = 3
HORIZONS = [500, 3000]
SEEDS = 7
FIELDS = ("regret", "pulls", "committed", "exploration", "estimates", "regret_curve")


def _cases():
    pareto = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=K, gap=0.3)
    return {
        "fast path, per-pull": (htb.AdaRETC(1.0, jnp.array([0.7, 0.9]), 0.1), pareto),
        "engine": (htb.ForceMoM(jnp.array([0.5, 0.6])), pareto),
    }


def _tight_budget(plan: htb.MemoryPlan, chunk: int) -> int:
    """The least budget that admits ``chunk`` seeds per chunk."""
    per_seed_output = plan.output_bytes // plan.seeds_per_device
    return plan.fixed_bytes + chunk * plan.bytes_per_seed + per_seed_output * (SEEDS + chunk - 1)


@pytest.mark.parametrize("name", ["fast path, per-pull", "engine"])
def test_any_budget_gives_bitwise_the_default_results(name):
    policy, instance = _cases()[name]
    key, one = jax.random.key(5), jax.devices()[:1]
    default = htb.simulate(key, policy, instance, HORIZONS, SEEDS, devices=one)
    plan = htb.memory_plan(key, policy, instance, HORIZONS, SEEDS, devices=one)
    assert plan.seed_chunk == SEEDS and plan.num_chunks == 1
    budget = _tight_budget(plan, 2)
    tight = htb.memory_plan(key, policy, instance, HORIZONS, SEEDS, devices=one, memory_budget=budget)
    assert (tight.seed_chunk, tight.num_chunks) == (2, 4)  # 7 seeds: 4 chunks, the last padded
    assert tight.estimated_peak <= budget
    chunked = htb.simulate(key, policy, instance, HORIZONS, SEEDS, devices=one, memory_budget=budget)
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(chunked, field), getattr(default, field), err_msg=field)


@pytest.mark.parametrize("name", ["fast path, per-pull", "engine"])
def test_measured_peak_of_the_chosen_chunk_is_within_the_budget(name):
    # The compiled program's own memory_analysis (temp + outputs + arguments) against the budget,
    # at a budget tight enough to force chunks of 3 seeds.
    policy, instance = _cases()[name]
    key, one = jax.random.key(5), jax.devices()[:1]
    plan = htb.memory_plan(key, policy, instance, HORIZONS, SEEDS, devices=one)
    budget = _tight_budget(plan, 3)
    measured = htb.memory_plan(key, policy, instance, HORIZONS, SEEDS, devices=one, memory_budget=budget,
                               measure=True)
    assert measured.seed_chunk == 3
    if measured.measured_peak is None:
        pytest.skip("this backend reports no memory analysis")
    assert 0 < measured.measured_peak <= budget


def test_budget_errors_name_the_range_and_the_value():
    policy, instance = _cases()["fast path, per-pull"]
    key = jax.random.key(0)
    with pytest.raises(ValueError, match=r"memory_budget must be an integer >= 1; got memory_budget=0\."):
        htb.simulate(key, policy, instance, 500, 4, memory_budget=0)
    with pytest.raises(ValueError, match=r"memory_budget must be an integer >= 1; got memory_budget=1.5"):
        htb.simulate(key, policy, instance, 500, 4, memory_budget=1.5)
    with pytest.raises(ValueError, match=r"memory_budget must be at least \d+ bytes for this simulation .*"
                                         r"got memory_budget=1000\."):
        htb.simulate(key, policy, instance, 500, 4, memory_budget=1000)


def test_default_budget_per_backend():
    cpu = jax.devices("cpu")[0]
    assert htb.default_memory_budget(cpu) == memory.CPU_MEMORY_BUDGET == 2 * 2**30

    class FakeGPU:
        platform = "gpu"

        def memory_stats(self):
            return {"bytes_limit": 80 * 2**30}

    assert htb.default_memory_budget(FakeGPU()) == 40 * 2**30


def test_plan_never_exceeds_budget_or_seeds():
    for budget in (2**21, 2**24, 2**30):
        for seeds in (1, 10, 1000):
            plan = memory.plan_seed_chunk(seeds, 4096, 100, budget, preferred_bytes=2**40)
            assert 1 <= plan.seed_chunk <= seeds
            assert plan.estimated_peak <= budget
            assert plan.seed_chunk * plan.num_chunks == plan.seeds_per_device >= seeds
