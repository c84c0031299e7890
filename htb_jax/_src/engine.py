"""The round-by-round engine: any policy, one ``lax.scan``-style loop over rounds.

A policy reaches the engine as a :class:`PolicyKernel`, a small set of pure
functions closed over the policy's (traced) parameters: ``init`` a state,
``act`` (choose an arm in round ``t``), ``update`` (observe the reward) and
``summary`` (what to report at the end).  The engine runs rounds ``1..T``
with ``fori_loop`` segments between log-spaced checkpoints, recording the
cumulative pseudo-regret at each; it maps over grid points, instances and
horizons (so a policy's schedule is never batched and its branches stay real
branches) and ``vmap``s over seeds.  Rewards come from the reward table of
:mod:`htb_jax._src.reward_table`: the ``j``-th pull of arm ``i`` is the same
number the fast path reads.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import compiler_options as compiler_options_lib
from htb_jax._src import memory as memory_lib
from htb_jax._src.distributions import Distribution
from htb_jax._src.outcome import pseudo_regret
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, RoundContext, check_kernel
from htb_jax._src.reward_table import TableReader, seed_keys
from htb_jax._src.rounding import log_spaced_rounds
from htb_jax._src.sharding import program_args, seed_sharded_program

# Chunk working memory beyond which larger chunks run no faster (the memory budget may lower it).
_CPU_SEED_CHUNK_BYTES = 512 * 2**20
_ACCELERATOR_SEED_CHUNK_BYTES = 8 * 2**30
# On a CPU (compiler_options.py): region-analysis copy insertion, so that the round loop's carry is updated
# in place instead of being copied twice per round (UCB1 at 256 seeds on a 2-core CPU: 9 operations per round
# instead of 12), and 512-bit vectors where the CPU has them (see BENCHMARKS.md).
_CPU_COMPILER_OPTIONS = (compiler_options_lib.COPY_INSERTION, compiler_options_lib.VECTOR_WIDTH)


def out_of_range_unsigned(arm: jax.Array) -> jax.Array:
    """``arm`` as an unsigned index of its width, so that a negative arm indexes past the last one.

    ``act`` must return an arm in ``[0, K)``.  Indexed as it is, ``-1`` would be read as arm ``K - 1``
    (NumPy's negative indices); as an unsigned index, any arm outside ``[0, K)`` is past the end, its
    pull is dropped from the counts and the run's pulls sum to less than ``T``, which
    :func:`~htb_jax._src.simulate.engine_path.check_arms_in_range` reports after the run.  UCB1's rounds (10 arms, 1024 seeds, T = 10^5)
    took 3% longer with it on 2 cores of an AMD EPYC (1.72 to 1.78 s).
    """
    unsigned = jnp.uint64 if jnp.dtype(arm.dtype).itemsize > 4 else jnp.uint32
    return arm.astype(unsigned)


def run_rounds(
    kernel: PolicyKernel, table: TableReader, gaps: jax.Array, horizon, checkpoints, record: int = 0
):
    """One seed, rounds ``1..T``.

    Args:
      kernel: the policy.
      table: the seed's reward table.
      gaps: f64[K].
      horizon: i64[] ``T``.
      checkpoints: i64[C] non-decreasing rounds, the last ``T``.
      record: static length of the arm record (0: no record).

    Returns:
      ``(curve f64[C], pulls i64[K], summary, arms i32[record])``: cumulative
      pseudo-regret after each checkpoint round (from the pull counts, see
      ``pseudo_regret``), pulls per arm, the kernel's summary, and the arm
      played in each round (-1 past ``T``).
    """
    num_arms = gaps.shape[-1]
    pulls = jnp.zeros(num_arms, jnp.int64)
    start = RoundContext(jnp.int64(1), pulls, horizon, table)
    carry = (kernel.init(start), pulls, jnp.full(record, -1, jnp.int32))

    def round_step(t, carry):
        state, pulls, arms = carry
        ctx = RoundContext(t, pulls, horizon, table)
        arm = jnp.asarray(kernel.act(state, ctx))  # a Python int (an eval_shape'd int32[]) as an array
        index = out_of_range_unsigned(arm)
        reward = table.pull(index, pulls[index])
        state = kernel.update(state, ctx, arm, reward)
        if record:
            arms = arms.at[t - 1].set(arm)
        return state, pulls.at[index].add(1), arms

    def segment(carry, bounds):
        first, last = bounds
        carry = jax.lax.fori_loop(first, last + 1, round_step, carry)
        return carry, carry[1]

    firsts = jnp.concatenate([jnp.ones(1, jnp.int64), checkpoints[:-1] + 1])
    (state, pulls, arms), counts = jax.lax.scan(segment, carry, (firsts, checkpoints))
    end = RoundContext(horizon + 1, pulls, horizon, table)
    return pseudo_regret(gaps, counts), pulls, kernel.summary(state, end), arms


@dataclasses.dataclass(frozen=True)
class _Static:
    spec: EngineSpec
    num_checkpoints: int
    num_seeds: int
    seed_chunk: int
    record: int
    side_by_side: bool  # instances vmapped with the seeds (else mapped one after another)
    paired: bool  # grid point i runs on instance i alone


def _engine_kernel(key, policy, instance, gaps, horizons, first_seed, *, static: _Static):
    """Outputs ``[G, F, H, S, ...]`` for a flat policy [G], instances [F, K] and their gaps f64[F, K]
    (``static.paired``: ``[G, 1, H, S, ...]``, grid point ``i`` on instance ``i``, ``G = F``).

    Grid points and horizons run one after another (``lax.map``), so a branch on the policy's
    parameters or on ``T`` stays a branch.  Instances run one after another too, or with
    ``static.side_by_side`` side by side with the seeds (``vmap``; a branch on the rewards is
    already a select across seeds, and one on ``t`` or ``T`` stays a branch): see
    :func:`instances_side_by_side`.  Paired, the pairs run as the instances do: one after another,
    or side by side, where a branch on the policy's parameters becomes a select.
    """
    spec = static.spec
    grid = jax.tree.leaves(policy)[0].shape[0] if jax.tree.leaves(policy) else 1
    num_instances, num_horizons = instance.batch_shape[0], horizons.shape[0]
    paired, side = static.paired, static.side_by_side
    # the lax.map's configs: (grid points, instances, horizons), an axis of 1 where it is vmapped or paired
    shape = (1 if paired and side else grid, 1 if paired or side else num_instances, num_horizons)
    g_index, f_index, h_index = jnp.unravel_index(jnp.arange(math.prod(shape)), shape)
    keys = seed_keys(key, static.num_seeds, first_seed).reshape(-1, static.seed_chunk)

    def one_config(indices):
        g, f, h = indices
        horizon = horizons[h]
        checkpoints = log_spaced_rounds(horizon, static.num_checkpoints)

        def seeds(kernel, arms, arm_gaps):  # one chunk of seeds, vmapped
            def one_run(seed_key):
                table = TableReader.create(seed_key, arms)
                return run_rounds(kernel, table, arm_gaps, horizon, checkpoints, static.record)

            return jax.vmap(one_run)

        if side:  # [chunks, F, chunk, ...] -> [F, S, ...]
            if paired:  # each lane's kernel from its own grid point

                def runs(chunk):
                    def pair(params, arms, arm_gaps):
                        return seeds(params.kernel(spec), arms, arm_gaps)(chunk)

                    return jax.vmap(pair)(policy, instance, gaps)
            else:
                kernel = jax.tree.map(lambda p: p[g], policy).kernel(spec)

                def runs(chunk):
                    return jax.vmap(lambda arms, arm_gaps: seeds(kernel, arms, arm_gaps)(chunk))(instance, gaps)
            chunks = jax.lax.map(runs, keys)
            flat = lambda a: jnp.moveaxis(a, 0, 1).reshape(a.shape[1], static.num_seeds, *a.shape[3:])  # noqa: E731
        else:  # [chunks, chunk, ...] -> [1, S, ...]
            f = g if paired else f
            kernel = jax.tree.map(lambda p: p[g], policy).kernel(spec)
            chunks = jax.lax.map(seeds(kernel, jax.tree.map(lambda p: p[f], instance), gaps[f]), keys)
            flat = lambda a: a.reshape(1, static.num_seeds, *a.shape[2:])  # noqa: E731
        curve, pulls, summary, played = jax.tree.map(flat, chunks)
        checkpoints = jnp.broadcast_to(checkpoints, (*curve.shape[:2], static.num_checkpoints))
        return (curve, pulls, *summary, checkpoints, played)

    out = jax.lax.map(one_config, (g_index, f_index, h_index))  # [G * (1 or F) * H, F or 1, S, ...]
    target = (grid, 1 if paired else num_instances, num_horizons)
    return [a.reshape(*shape, *a.shape[1:]).swapaxes(2, 3).reshape(*target, *a.shape[2:]) for a in out]


def instances_side_by_side(device: jax.Device) -> bool:
    """Whether the engine runs a family's instances side by side with the seeds on ``device``: on an
    accelerator, not on a CPU.  Each run is the same per-lane program either way, so the numbers
    are the same up to how the compiler rounds a draw in a differently shaped program (as at
    another seed chunk: docs/guides/reproducibility.md; on a CPU, ForceMoM on three
    Pareto instances gives the same bits, ``tests/test_engine.py``); what differs is speed.  A
    GPU's round costs about the same for any number of lanes (ForceMoM on an H100: 0.6 to 0.8 ms a
    round at 93, 1623 and 4096 seeds), so a family of ``F`` instances takes one pass of rounds
    instead of ``F``: 12 instances at 1024 seeds and T = 1000 ran 12.1 (ForceMoM) and 2.50
    (AdaR-UCB) times as fast side by side on an H100.  A CPU's round costs about its lanes' work,
    and ``F`` times the working set leaves its caches: on 2 cores, 12 instances at 1024 seeds and
    T = 1000 took 3.3 (AdaR-UCB) and 1.6 (ForceMoM) times as long side by side
    (``benchmarks/bench_engine_rounds.py``, HISTORY.md)."""
    return device.platform != "cpu"


def _bytes_per_seed(policy: Any, instance: Distribution, spec: EngineSpec) -> int:
    """Working memory of one seed: twice the kernel's state (by abstract evaluation, which checks
    the kernel against the protocol: :func:`~htb_jax._src.policy_protocol.check_kernel`) plus its
    scratch (the round loop holds its carry in and out), and 8 KiB for the reward-table reader.
    Compiled CPU programs measure 1.9-2.0 times state plus scratch per seed."""
    params = jax.tree.map(lambda p: p[0], policy)
    arms = jax.tree.map(lambda p: p[0], instance)
    shapes, scratch = check_kernel(params, arms, spec)
    state_bytes = sum(int(np.prod(x.shape)) * x.dtype.itemsize for x in jax.tree.leaves(shapes))
    return 2 * (scratch + state_bytes) + 8192


def output_bytes_per_seed(num_configs: int, spec: EngineSpec, num_checkpoints: int, record: int) -> int:
    """Results of one seed: curve and checkpoints (f64/i64[N]), pulls i64[K], estimates f32[K],
    committed, exploration, and the arm record i32[record], per configuration."""
    k = spec.num_arms
    return num_configs * (16 * num_checkpoints + 12 * k + 12 + 4 * record)


def prepare_engine(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizons: np.ndarray,
    num_seeds: int,
    *,
    spec: EngineSpec,
    num_checkpoints: int,
    first_seed: int,
    seed_chunk: int | None,
    devices: Sequence[jax.Device],
    memory_budget: int,
    record_arms: bool = False,
    threads: int | None = None,
    paired: bool = False,
):
    """The engine program for a flat policy grid [G] on instances [F, K] and horizons [H]
    (``paired``: grid point ``i`` on instance ``i`` alone, ``G = F``).

    Returns:
      ``(program, args, plan)``: ``program(*args)`` gives ``[curve, pulls,
      committed, exploration, estimates, checkpoints, arms]``, each with leading
      axes ``(G, F, H, S_padded)`` (``(G, 1, H, S_padded)`` paired; ``arms`` has a trailing ``max_pulls`` axis
      when ``record_arms``, else length 0); ``plan`` is the
      :class:`~htb_jax._src.memory.MemoryPlan`; ``threads`` concurrent executions
      per device (``None``: :func:`~htb_jax._src.memory.default_threads`).
    """
    per_device = math.ceil(num_seeds / len(devices))
    record = spec.max_pulls if record_arms else 0
    grid = jax.tree.leaves(policy)[0].shape[0] if jax.tree.leaves(policy) else 1
    configs = grid * (1 if paired else instance.batch_shape[0]) * len(horizons)
    side_by_side = instance.batch_shape[0] > 1 and instances_side_by_side(devices[0])
    lanes = instance.batch_shape[0] if side_by_side else 1  # runs a seed holds at once (instances or pairs)
    plan = memory_lib.plan_seed_chunk(
        per_device,
        lanes * (_bytes_per_seed(policy, instance, spec) + 4 * record + memory_lib.CURVE_BYTES * num_checkpoints * spec.num_arms),
        output_bytes_per_seed(configs, spec, num_checkpoints, record),
        memory_budget,
        _CPU_SEED_CHUNK_BYTES if devices[0].platform == "cpu" else _ACCELERATOR_SEED_CHUNK_BYTES,
        seed_chunk,
        threads,
        devices,
    )
    static = _Static(spec, num_checkpoints, plan.seeds_per_thread, plan.seed_chunk, record, side_by_side,
                     paired)
    options = compiler_options_lib.known(devices[0], _CPU_COMPILER_OPTIONS)
    program = seed_sharded_program(_engine_kernel, static, tuple(devices), 3, plan.threads, options)
    return program, program_args(key, policy, instance, horizons, first_seed), plan
