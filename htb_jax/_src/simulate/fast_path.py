"""The fast path: AdaR-ETC and Empirical ETC with only their exploration rewards drawn.

Exploration is round-robin and the commit phase exact
(:mod:`htb_jax._src.simulate.commit`), so a run costs its exploration
rewards alone, streamed into running Median-of-Means block sums once per
distinct block layout (:mod:`htb_jax._src.simulate.layouts`), or drawn by
one of the samplers that need no reward table (``block_sums``: one exact draw
per block, or for Stable arms one standard draw per block whatever its size;
``order_statistic``: one draw per estimate).  This module holds the
per-device program (:func:`_fast_path_kernel`), the samplers' estimates, the
program's memory estimates and the building of its seed-sharded program
(:func:`prepare_fast_path`); see :mod:`htb_jax._src.simulate` for the whole
picture.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp

from htb_jax._src import compiler_options as compiler_options_lib
from htb_jax._src import mom, order_statistic
from htb_jax._src.distributions.stable import SMALL_BLOCKS
from htb_jax._src.loop_hoisting import unhoisted
from htb_jax._src.memory import CURVE_BYTES, MemoryPlan, plan_seed_chunk
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.policies.empirical_etc import EmpiricalETC
from htb_jax._src.reward_table import (
    MAX_PULLS,
    block_words,
    expand_pulls,
    seed_keys,
    standard_words,
    table_words,
)
from htb_jax._src.rounding import log_spaced_rounds
from htb_jax._src.sharding import gather, program_args, seed_sharded_program
from htb_jax._src.simulate.commit import _commit
from htb_jax._src.simulate.layouts import _distinct_layouts, num_layouts
from htb_jax._src.simulate.outputs import _arrange_fast_path
from htb_jax._src.simulate.request import Request
from htb_jax._src.simulate.schedule import _schedule, _schedule_maxima

# Chunk working memory beyond which larger chunks run no faster (the memory budget may lower it).
_CPU_SEED_CHUNK_BYTES = 16 * 2**20
_ACCELERATOR_SEED_CHUNK_BYTES = 4 * 2**30
_FAST_PATH_TYPES = (AdaRETC, EmpiricalETC)


def takes_fast_path(policy: Any, engine: bool, record_arms: bool) -> bool:
    """Whether ``simulate`` runs ``policy`` on the fast path (else round by round, on the engine)."""
    return isinstance(policy, _FAST_PATH_TYPES) and not (engine or record_arms)
SAMPLERS = ("auto", "per_pull", "block_sums", "order_statistic")


@dataclasses.dataclass(frozen=True)
class _Static:
    """The fast path's static configuration: the program's hashable static argument."""

    num_arms: int
    pull_chunk: int
    max_blocks: int
    num_checkpoints: int
    num_seeds: int = 0
    seed_chunk: int = 1
    sampler: str = "per_pull"
    num_layouts: int = 1  # per arm: the distinct (B, s) block layouts streamed (see _distinct_layouts)
    max_block_size: int | None = None  # static bound on the block sizes (mom.static_block_sizes)
    min_block_size: int = 1  # static lower bound on the nonzero ones (mom.static_smallest_block_size)
    quantile_tables: tuple = ()  # Stable's order statistic: the standard quantile per (alpha, beta)


def _median(means, blocks):
    """f32[..., F, C, K] Median-of-Means estimates from block means f64[..., F, Bmax, K, C]."""
    return jnp.swapaxes(mom.median_of_blocks(jnp.moveaxis(means, -3, 0), blocks, jnp.float32), -1, -2)


def _streamed_estimates(draw_chunk, steps, block_size, blocks, static):
    """f32[..., F, C, K] Median-of-Means estimates from streamed samples, one computation per
    distinct layout of each arm."""
    size, count, index = _distinct_layouts(block_size, blocks, static.num_layouts)
    means = mom.stream_block_means(draw_chunk, steps, size, count, static.pull_chunk, static.max_blocks,
                                   static.max_block_size, static.min_block_size)
    lead = means.shape[3:]
    expand = (slice(None), slice(None)) + (None,) * len(lead)
    medians = mom.median_of_blocks(means, count[expand], jnp.float32)  # [K, U, ..., F]
    picked = jnp.take_along_axis(medians, jnp.broadcast_to(index[expand], (*index.shape, *lead)), axis=1)
    return jnp.moveaxis(picked, (0, 1), (-1, -2))  # [..., F, C, K]


def _fast_path_kernel(key, policy, instance, gaps, horizons, first_seed, *, static: _Static):
    """The per-device program: the Outcome's seven fields ``[S, F, C, ...]`` (``S =
    static.num_seeds``, ``C = G H`` configurations g-major) for a flat policy [G], instances
    [F, K], their gaps f64[F, K] and horizons i64[H], seeds from ``first_seed`` on."""
    k, chunk = static.num_arms, static.pull_chunk
    blocks, exploration, pulls, horizon = _schedule(policy, k, horizons)
    block_size = (pulls // blocks[:, None]).T  # [K, C]
    steps = mom.num_chunks(jnp.max(pulls), chunk)
    arms = expand_pulls(instance)  # params [F, K, 1]
    num_words = instance.num_words
    checkpoints = log_spaced_rounds(horizon, static.num_checkpoints)

    def seed_chunk(keys):
        if static.sampler == "order_statistic" and static.quantile_tables:
            estimates = _tabulated_estimates(keys, arms, block_size, blocks, horizons.shape[0],
                                             static.quantile_tables)
        elif static.sampler == "order_statistic":
            estimates = _order_statistic_estimates(keys, arms, block_size, blocks, horizons.shape[0])
        elif static.sampler == "block_sums" and type(instance).affine_block_means:
            estimates = _affine_block_estimates(keys, arms, block_size, blocks, horizons.shape[0], static.max_blocks)
        elif static.sampler == "block_sums":
            estimates = _median(_block_sum_means(keys, arms, block_size, blocks, static.max_blocks), blocks)
        else:

            def draw_chunk(j):
                words = jax.vmap(lambda key: table_words(key, k, j * chunk, chunk, num_words))(keys)
                return arms.from_bits(words[:, None])  # [c, F, K, chunk]

            estimates = _streamed_estimates(draw_chunk, steps, block_size, blocks, static)
        return _commit(estimates, exploration, horizon, pulls, gaps, checkpoints)

    keys = seed_keys(key, static.num_seeds, first_seed).reshape(-1, static.seed_chunk)
    parts = jax.lax.map(unhoisted(seed_chunk), keys)  # on a CPU, kept out of XLA's loop hoisting
    return [p.reshape(static.num_seeds, *p.shape[2:]) for p in parts]


def _block_sum_means(keys, arms, block_size, blocks, max_blocks: int):
    """Block means drawn one exact block sum at a time.

    Args:
      keys: key[c] seed keys.
      arms: the instance, parameters f64[F, K, 1].
      block_size: i64[K, C]; blocks: i64[C].
      max_blocks: static length of the block axis.

    Returns:
      f64[c, F, max_blocks, K, C] (blocks ``b >= B`` hold 0).
    """
    words = jax.vmap(lambda key: block_words(key, block_size, max_blocks))(keys)  # [c, Bmax, K, C]
    used = jnp.arange(max_blocks)[:, None, None] < blocks  # [Bmax, 1, C]
    size = jnp.where(used, block_size, 0)  # [Bmax, K, C]
    per_block = jax.tree.map(lambda p: p[:, None], arms)  # [F, 1, K, 1]
    sums = per_block.block_sums_from_bits(words[:, None], size)  # [c, F, Bmax, K, C]
    return sums / jnp.maximum(block_size, 1)


def _affine_block_estimates(keys, arms, block_size, blocks, num_horizons: int, max_blocks: int):
    """Median-of-Means estimates of ``affine_block_means`` families (:class:`Stable`).

    Block ``b`` of arm ``i`` has mean ``m_s(Z_b)``, an increasing map of one standard variate
    whose words (:func:`~htb_jax._src.reward_table.standard_words`) do not depend on the block
    size ``s``, so the ``ceil(B/2)``-th of the ``B`` block means is ``m_s`` of the
    ``ceil(B/2)``-th of ``Z_0 .. Z_(B-1)``: one selection per seed, instance, arm and horizon
    (``B = B_T`` depends on the horizon alone), shared by every grid point, and ``B`` draws per
    arm whatever ``s``.

    Args:
      keys: key[c] seed keys.
      arms: the instance, parameters f64[F, K, 1].
      block_size: i64[K, C]; blocks: i64[C], configurations g-major (``C = G H``).
      num_horizons: static ``H``.
      max_blocks: static length of the block axis.

    Returns:
      f32[c, F, C, K].
    """
    configs = block_size.shape[1]
    per_horizon = blocks.reshape(-1, num_horizons)[0]  # [H]
    medians = _standard_medians(keys, arms, per_horizon, max_blocks)  # [c, F, K, H]
    medians = jnp.tile(medians, (1, 1, 1, configs // num_horizons))  # [c, F, K, C], g-major
    means = arms.block_mean_from_standard(medians, block_size)  # [c, F, K, C]
    return jnp.swapaxes(means.astype(jnp.float32), -1, -2)


def _standard_medians(keys, arms, blocks, max_blocks: int):
    """f32[c, F, K, H]: the ``ceil(B/2)``-th of the standard variates ``Z_0 .. Z_(B-1)`` of each
    seed (keys key[c]) and arm (instance parameters [F, K, 1]), ``B`` = blocks i64[H] ``<= max_blocks``."""
    k = arms.batch_shape[-2]
    words = jax.vmap(lambda key: standard_words(key, k, max_blocks, arms.num_words))(keys)  # [c, Bmax, K, w]
    per_block = jax.tree.map(lambda p: p[:, None, :, 0], arms)  # [F, 1, K]
    z = per_block.standard_from_bits(words[:, None])  # f32[c, F, Bmax, K]
    z = jnp.broadcast_to(jnp.moveaxis(z, 2, 0)[..., None], (*z.shape[2:3], *z.shape[:2], k, blocks.shape[0]))
    return mom.median_of_blocks(z, blocks, jnp.float32)


def _tabulated_estimates(keys, arms, block_size, blocks, num_horizons: int, tables):
    """Median-of-Means estimates of :class:`Stable` arms as one order statistic each.

    ``loc + scale s^(1/a - 1) Q(U)`` with the level ``U`` of
    :func:`~htb_jax._src.order_statistic.median_levels` and the tabulated standard quantile
    ``Q`` where ``B > SMALL_BLOCKS``; the median of ``B`` standard variates (as the
    ``block_sums`` sampler draws them) where ``B <= SMALL_BLOCKS``.  ``B`` depends on the
    horizon alone, so both are drawn once per horizon and shared by the grid.

    Args:
      keys: key[c] seed keys.
      arms: the instance, parameters f64[F, K, 1].
      block_size: i64[K, C]; blocks: i64[C], configurations g-major (``C = G H``).
      num_horizons: static ``H``.
      tables: the instance's :meth:`Stable.quantile_tables`.

    Returns:
      f32[c, F, C, K].
    """
    k, configs = block_size.shape
    per_horizon = blocks.reshape(-1, num_horizons)[0]  # [H]
    u, v = jax.vmap(lambda key: order_statistic.median_levels(key, k, per_horizon))(keys)  # [c, K, H]
    quantiles = arms.standard_quantile(tables, u[:, None], v[:, None])  # f64[c, F, K, H]
    small = jnp.minimum(per_horizon, SMALL_BLOCKS)
    drawn = _standard_medians(keys, arms, small, SMALL_BLOCKS)  # [c, F, K, H]
    z = jnp.where(per_horizon <= SMALL_BLOCKS, drawn.astype(jnp.float64), quantiles)  # [c, F, K, H]
    z = jnp.tile(z, (1, 1, 1, configs // num_horizons))  # [c, F, K, C], g-major
    means = arms.block_mean_from_standard(z, block_size)  # [c, F, K, C]
    return jnp.swapaxes(means.astype(jnp.float32), -1, -2)


def _order_statistic_estimates(keys, arms, block_size, blocks, num_horizons: int):
    """Median-of-Means estimates drawn as one order statistic each (:mod:`order_statistic`).

    Args:
      keys: key[c] seed keys.
      arms: the instance, parameters f64[F, K, 1].
      block_size: i64[K, C]; blocks: i64[C], configurations g-major (``C = G H``).  ``B``
        depends on the horizon alone (``B_T``, or 1 for the empirical mean), so the levels are
        drawn once per horizon and shared by the grid.
      num_horizons: static ``H``.

    Returns:
      f32[c, F, C, K].
    """
    k, configs = block_size.shape
    per_horizon = blocks.reshape(-1, num_horizons)[0]  # [H]
    u, v = jax.vmap(lambda key: order_statistic.levels(key, k, per_horizon))(keys)  # [c, K, H]
    grid = configs // num_horizons
    u, v = jnp.tile(u, (1, 1, grid)), jnp.tile(v, (1, 1, grid))  # [c, K, C], g-major
    means = arms.block_mean_quantile(u[:, None], v[:, None], block_size)  # [c, F, K, C]
    return jnp.swapaxes(means.astype(jnp.float32), -1, -2)


def _fast_path_bytes_per_seed(instances, configs, static: _Static, words, horizons: int = 1,
                              affine: bool = False) -> int:
    """Working memory of one seed in a chunk: the drawn words and rewards of one streaming
    step plus the running block sums (per-pull), the block words and sums (block sums; for
    ``affine_block_means`` families the standard words and variates, their order keys per
    horizon, and the estimates), or the levels, quantiles and estimates, with the commit's
    per-configuration work that dominates them (order statistics; for Stable arms also the
    ``SMALL_BLOCKS`` standard draws)."""
    if static.sampler == "order_statistic":  # measured (Gaussian, two-point, Stable): 805 K C + 563 C
        draws = static.num_arms * SMALL_BLOCKS * (8 * words + 8 + 16 * horizons) if static.quantile_tables else 0
        return instances * (configs * (static.num_arms * 1024 + 640) + draws)
    if static.sampler == "block_sums" and affine:
        return instances * static.num_arms * (static.max_blocks * (8 * words + 8 + 16 * horizons) + configs * 64)
    if static.sampler == "block_sums":
        return instances * static.num_arms * configs * static.max_blocks * 160
    return instances * static.num_arms * (
        static.pull_chunk * (8 * words + 28) + static.num_layouts * (static.max_blocks + 1) * 48
    )


def _fast_path_output_bytes(instances, configs, num_arms, num_checkpoints) -> int:
    """Results of one seed: regret, exploration (8), committed (4), pulls (8K), estimates (4K),
    checkpoints and curve (16N) and the curve's copy as the chunks are joined (8N, measured: 1.5 times
    the results at 4096 checkpoints), per instance and configuration."""
    return instances * configs * (20 + 12 * num_arms + 24 * num_checkpoints)


def auto_sampler(family: type) -> str:
    """``sampler="auto"``: the order statistic where the family has a block-mean quantile (TwoPoint,
    Dirac, Gaussian), else exact block sums where it has their law (Stable), else per pull."""
    if family.has_block_quantile:
        return "order_statistic"
    return "block_sums" if family.has_block_sums else "per_pull"


def prepare_fast_path(request: Request, sampler: str) -> tuple[MemoryPlan, Any]:
    """The fast path's program for a validated simulation (see
    :func:`~htb_jax._src.simulate.program.prepare`).

    Args:
      request: the validated simulation, of an :class:`AdaRETC` or :class:`EmpiricalETC` grid.
      sampler: one of :data:`SAMPLERS`, checked against the family already.

    Returns:
      ``(plan, run)``: the :class:`MemoryPlan`; ``run()`` gives the Outcome
      with leading axes ``G + I + H + (S,)``, ``run.lower()`` the lowered program, ``run.trace()`` the
      traced one and ``run.arguments`` its arguments.  Paired, every
      grid point still runs on every instance (the draws are shared) and the Outcome keeps the
      pairs: ``G + H + (S,)``.
    """
    r = request
    k, flat, horizons, pull_chunk, devices = r.num_arms, r.flat, r.horizons, r.pull_chunk, r.devices
    chosen = auto_sampler(type(r.instance)) if sampler == "auto" else sampler
    needed, distinct, largest, smallest = (0, 1, 1, 1) if chosen != "per_pull" else (
        int(m) for m in _schedule_maxima(flat, jnp.asarray(horizons), k)
    )
    if math.ceil(needed / pull_chunk) * pull_chunk > MAX_PULLS:
        how = f"sampler={sampler!r}" + ("" if sampler == "per_pull" else f", per pull for {type(r.instance).__name__}")
        raise ValueError(
            f"the schedule needs {needed} pulls per arm at horizon={int(max(horizons))}; per-sample simulation "
            f"({how}) supports at most {MAX_PULLS - pull_chunk}: lower the horizon, or take a sampler of block "
            "laws where the arms have one (TwoPoint, Dirac, Gaussian and Stable arms, with no limit)."
        )
    configs = flat.eps.shape[0] * horizons.shape[0]
    instances = r.flat_instance.batch_shape[0]
    tables = r.instance.quantile_tables() if chosen == "order_statistic" and type(r.instance).tabulated_quantile else ()
    static = _Static(k, pull_chunk, r.max_blocks, r.num_checkpoints, sampler=chosen,
                     num_layouts=num_layouts(distinct, configs), max_block_size=mom.static_block_sizes(largest),
                     min_block_size=mom.static_smallest_block_size(smallest), quantile_tables=tables)
    preferred = _CPU_SEED_CHUNK_BYTES if devices[0].platform == "cpu" else _ACCELERATOR_SEED_CHUNK_BYTES
    plan = plan_seed_chunk(
        math.ceil(r.num_seeds / len(devices)),
        _fast_path_bytes_per_seed(instances, configs, static, r.instance.num_words, horizons.shape[0],
                                  type(r.instance).affine_block_means)
        + instances * configs * CURVE_BYTES * r.num_checkpoints * k,
        _fast_path_output_bytes(instances, configs, k, r.num_checkpoints),
        r.memory_budget,
        preferred,
        r.seed_chunk,
        r.threads,
        devices,
    )
    static = dataclasses.replace(static, num_seeds=plan.seeds_per_thread, seed_chunk=plan.seed_chunk)
    options = compiler_options_lib.known(devices[0], (compiler_options_lib.VECTOR_WIDTH,))
    program = seed_sharded_program(_fast_path_kernel, static, devices, 0, plan.threads, options)
    args = program_args(r.key, flat, r.flat_instance, horizons, r.first_seed)

    def run_fast():
        return _arrange_fast_path(gather(program(*args)), r.policy.batch_shape, r.instance.batch_shape[:-1],
                                  r.horizon_shape, (r.num_seeds,), r.paired)

    run_fast.lower = lambda: program.lower(*args)
    run_fast.trace = lambda: program.trace(*args)
    run_fast.arguments = args
    return plan, run_fast
