"""``simulate``: every policy over seeds, a policy grid, an instance family and horizons.

Two ways to run a policy on the reward table of :mod:`htb_jax._src.reward_table`:

**Fast path** (:class:`AdaRETC`, :class:`EmpiricalETC`).  Exploration is
round-robin, so after ``L`` rounds arm ``i`` has ``n_i = floor(L/K) + [i < L
mod K]`` pulls.  Only those rewards are drawn (never ``T`` of them), streamed
in chunks of ``pull_chunk`` pulls into running block sums for every grid
point at once (one computation per distinct block layout ``(B, s)`` of an
arm: a sweep's grid points share ``B_T`` and have few distinct block sizes);
the commit phase is exact:
``R_T = sum_i Delta_i n_i + (T - L) Delta_committed``.  Exploration lengths,
block counts and block sizes are traced, so a new ``alpha``, ``q``, ``eps_bar``
(or horizon within the same block-count bucket) recompiles only where the
grid's number of distinct layouts per arm crosses 1, 2, 3, 4, 6, 8, 12, ...
or its largest block size crosses 4, 8, 16 or 32 (the static branches of
:func:`~htb_jax._src.mom.stream_block_sums`).

The exploration rewards come either pull by pull from the reward table
(``sampler="per_pull"``), or, for families whose sums have a closed-form law
(:class:`TwoPoint`, :class:`Dirac`, :class:`Gaussian`), one exact draw per
Median-of-Means block (``sampler="block_sums"``, O(K B_T) per run), or the
Median-of-Means estimate itself as one order statistic
(``sampler="order_statistic"``: one Beta level and one quantile per arm, O(K)
per run; see :mod:`htb_jax._src.order_statistic`), so horizons of 10^15 to
10^18 cost no more than 10^3.  ``sampler="auto"`` (the default) takes the
order statistic where it exists.  The three agree in law, not draw by draw.

**Engine** (every other policy, or any policy with ``engine=True``): the
round-by-round loop of :mod:`htb_jax._src.engine`.  AdaR-ETC through the
engine equals the fast path bit for bit.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import compiler_options as compiler_options_lib
from htb_jax._src import engine as engine_lib
from htb_jax._src import mom, order_statistic
from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_float32_resolution, check_instance
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.loop_hoisting import unhoisted
from htb_jax._src.memory import (
    MemoryPlan,
    check_memory_budget,
    default_memory_budget,
    plan_seed_chunk,
)
from htb_jax._src.outcome import Outcome, pseudo_regret
from htb_jax._src.policies import adar_etc as adar_etc_lib
from htb_jax._src.policies.adar_etc import AdaRETC, ExploreThenCommit, exploration_pulls
from htb_jax._src.policies.empirical_etc import EmpiricalETC
from htb_jax._src.reward_table import (
    MAX_PULLS,
    MAX_SEEDS,
    as_threefry_key,
    block_words,
    expand_pulls,
    seed_keys,
    table_words,
)
from htb_jax._src.rounding import log_spaced_rounds
from htb_jax._src.sharding import gather, program_args, seed_sharded_program
from htb_jax._src.validation import check_integer, concrete, real_array

# Chunk working memory beyond which larger chunks run no faster (the memory budget may lower it).
_CPU_SEED_CHUNK_BYTES = 16 * 2**20
_ACCELERATOR_SEED_CHUNK_BYTES = 4 * 2**30
_FAST_PATH_TYPES = (AdaRETC, EmpiricalETC)
SAMPLERS = ("auto", "per_pull", "block_sums", "order_statistic")
MAX_ENGINE_HORIZON = 2**31 - 1
MAX_PULL_CHUNK = 2**20  # pulls per arm per streaming step (the default is at most 8192)


def default_pull_chunk(num_arms: int, max_horizon: int) -> int:
    """Pulls per arm drawn per streaming step: the order-free schedule's per-arm
    exploration, rounded up to a multiple of 256 and clipped to ``[256, 8192]``."""
    blocks = math.ceil(8.0 * (math.log(num_arms) + 3.0 * math.log(max_horizon)))
    per_arm = blocks + num_arms ** (1.0 / 3.0) * max_horizon ** (2.0 / 3.0) / num_arms
    per_arm = min(per_arm, max_horizon / num_arms + 1)
    return int(min(8192, max(256, 256 * math.ceil(per_arm / 256))))


def max_blocks(num_arms: int, horizons: np.ndarray) -> int:
    """Static length of the block axis: the largest ``B_T``, rounded up to a
    multiple of 8 so that nearby horizons share it."""
    blocks = math.ceil(8.0 * (math.log(num_arms) + 3.0 * math.log(float(np.max(horizons)))))
    return 8 * math.ceil((blocks + 1) / 8)


def _flatten(policy: Any) -> Any:
    """Every parameter broadcast to the batch shape and flattened: leaves [G]."""
    shape = policy.batch_shape
    return jax.tree.map(lambda p: jnp.broadcast_to(jnp.asarray(p, jnp.float64), shape).reshape(-1), policy)


def _check_policy(policy: Any) -> None:
    if not (hasattr(policy, "kernel") and hasattr(policy, "batch_shape")):
        raise TypeError(
            "simulate takes a policy of htb_jax (AdaRETC, EmpiricalETC, AnytimeAdaRETC, ForceMoM, "
            f"RobustUCB, UCB1, ...); got {type(policy).__name__}."
        )


def _horizons(horizon) -> tuple[np.ndarray, tuple[int, ...]]:
    if isinstance(horizon, jax.core.Tracer):
        raise ValueError("horizon must be concrete (a Python int or a sequence of ints); got a traced value.")
    check_integer("horizon (T)", horizon, 1, maximum=10**18)
    h = concrete(horizon)
    if h is None:
        raise TypeError(
            f"horizon (T) must be an integer in [1, {10**18}] or a sequence of them; "
            f"got horizon (T)={horizon!r} ({type(horizon).__name__})."
        )
    if h.size == 0:
        raise ValueError(
            f"horizon (T) must be an integer in [1, {10**18}] or a non-empty sequence of them; "
            f"got horizon (T)={horizon!r}."
        )
    h = np.asarray(h, np.int64)
    return h.reshape(-1), h.shape


def _check_pull_chunk(pull_chunk) -> None:
    if pull_chunk is not None:
        check_integer("pull_chunk", pull_chunk, 1, maximum=MAX_PULL_CHUNK)


# -- fast path ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Static:
    num_arms: int
    pull_chunk: int
    max_blocks: int
    num_checkpoints: int
    num_seeds: int = 0
    seed_chunk: int = 1
    sampler: str = "per_pull"
    num_layouts: int = 1  # per arm: the distinct (B, s) block layouts streamed (see _distinct_layouts)
    max_block_size: int | None = None  # static bound on the block sizes (mom.static_block_sizes)


def _schedule(policy: ExploreThenCommit, num_arms: int, horizons: jax.Array):
    """Per configuration (grid point, horizon), flattened g-major.

    Args:
      policy: the flat schedule grid [G].
      num_arms: ``K``.
      horizons: i64[H], or i64[G, H] (horizons per grid point).

    Returns:
      ``(estimator_blocks, exploration, pulls, horizon)``: i64[C] blocks of the
      commit estimator, ``L``, i64[C, K] exploration pulls, and ``T``.
    """
    t = jnp.broadcast_to(horizons, (policy.eps.shape[0], horizons.shape[-1]))
    column = jax.tree.map(lambda f: f[:, None], policy)
    exploration = jnp.broadcast_to(column.exploration_length(num_arms, t), t.shape).reshape(-1)
    blocks = jnp.broadcast_to(column.estimator_blocks(adar_etc_lib.num_blocks(num_arms, t)), t.shape)
    return blocks.reshape(-1), exploration, exploration_pulls(exploration, num_arms), t.reshape(-1)


@jax.jit(static_argnames=("num_arms",))
def _schedule_maxima(policy: ExploreThenCommit, horizons: jax.Array, num_arms: int):
    """The most exploration pulls of an arm, the most distinct block layouts ``(B, s)`` of an arm
    over the configurations (see :func:`_distinct_layouts`), and the largest block size ``s``."""
    blocks, _, pulls, _ = _schedule(policy, num_arms, horizons)
    sizes = (pulls // blocks[:, None]).T
    codes = jnp.sort(_layout_codes(sizes, blocks), axis=-1)
    return jnp.max(pulls), jnp.max(1 + jnp.sum(codes[:, 1:] != codes[:, :-1], axis=-1)), jnp.max(sizes)


def _commit_block_size_bound(policy: Any, horizons: np.ndarray, num_arms: int) -> int | None:
    """The engine's static bound on an ETC commit's block sizes (``EngineSpec.max_block_size``):
    the largest block size over the flat policy's ``commit_horizons``, rounded by
    :func:`~htb_jax._src.mom.static_block_sizes`; ``None`` for a policy without such commits."""
    if not isinstance(policy, ExploreThenCommit):
        return None
    commits = policy.commit_horizons(horizons)
    return mom.static_block_sizes(int(_schedule_maxima(policy, commits, num_arms)[2]))


def _regret_curve(checkpoints, exploration, horizon, committed, gaps, num_arms):
    """Cumulative regret of an ETC run after each checkpoint round, from its pull counts.

    Args:
      checkpoints: i64[C, N] rounds per configuration.
      exploration, horizon: i64[C].
      committed: i32[..., F, C] (-1: none).
      gaps: f64[F, K].

    Returns:
      f64[..., F, C, N].
    """
    explored = jnp.minimum(checkpoints, exploration[:, None])  # [C, N]
    counts = exploration_pulls(explored, num_arms)  # [C, N, K]
    after = checkpoints - explored  # rounds after the commit, [C, N]
    committed_arm = jax.nn.one_hot(committed, num_arms, dtype=jnp.int64)  # zero row for -1
    pulls = counts + after[..., None] * committed_arm[..., None, :]  # [..., F, C, N, K]
    return pseudo_regret(gaps[:, None, None, :], pulls)


def _median(means, blocks):
    """f32[..., F, C, K] Median-of-Means estimates from block means f64[..., F, Bmax, K, C]."""
    return jnp.swapaxes(mom.median_of_blocks(jnp.moveaxis(means, -3, 0), blocks, jnp.float32), -1, -2)


_LAYOUT_SHIFT = 40  # (B, s) packed as B 2^40 + s: s <= MAX_PULLS = 2^32, B < 2^23


def _layout_codes(block_size, blocks):
    """i64[K, C]: configuration c's block layout ``(B, s)`` on arm ``k``, packed in one integer."""
    return (blocks[None, :] << _LAYOUT_SHIFT) + block_size


def _distinct_layouts(block_size, blocks, num_layouts: int):
    """The distinct block layouts of each arm, and where each configuration finds its own.

    Configurations with the same ``(B, s)`` on an arm read the same blocks of the
    same samples, so their Median-of-Means estimates are one computation: the
    grid points of a sweep share ``B_T`` and have few distinct block sizes
    (16 ``(alpha, q)`` points at ``K = 10``, ``T = 10^6``: 5), and streaming
    and selecting the distinct layouts alone gives bitwise the same estimates.

    Args:
      block_size: i64[K, C] ``s``; blocks: i64[C] ``B``.
      num_layouts: static ``U``, at least the most distinct layouts of an arm;
        an arm with fewer fills its other slots with empty layouts (``s = 0``,
        ``B = 1``: no work, never read).

    Returns:
      ``(size, count, index)``: i64[K, U] the layouts' ``s`` and ``B``, and
      i64[K, C] the layout of each configuration.
    """
    codes = _layout_codes(block_size, blocks)
    ordered = jnp.sort(codes, axis=-1)
    rank = jnp.cumsum(jnp.diff(ordered, axis=-1, prepend=ordered[:, :1]) != 0, axis=-1)  # [K, C]
    slot = jnp.arange(num_layouts)[:, None]
    # The u-th distinct code of each arm, or the arm's largest where it has fewer (order kept).
    distinct = jnp.min(jnp.where(rank[:, None, :] == slot, ordered[:, None, :], ordered[:, None, -1:]), axis=-1)
    index = jnp.sum(distinct[:, None, :] < codes[:, :, None], axis=-1)  # the first slot holding the code
    mask = (1 << _LAYOUT_SHIFT) - 1
    used = slot[:, 0] <= rank[:, -1:]  # [K, U]
    return jnp.where(used, distinct & mask, 0), jnp.where(used, distinct >> _LAYOUT_SHIFT, 1), index


def num_layouts(needed: int, configs: int) -> int:
    """Static number of block layouts streamed per arm: ``needed``, the most distinct ``(B, s)`` of
    an arm over the ``configs`` configurations, rounded up to 1, 2, 3, 4, 6, 8, 12, 16, ... (at
    most ``configs``), so that a new grid recompiles only when it crosses one of those."""
    if needed == 1:
        return 1
    bucket = next(b for e in itertools.count() for b in (2 << e, 3 << e) if b >= needed)  # 2, 3, 4, 6, 8, ...
    return min(bucket, configs)


def _streamed_estimates(draw_chunk, steps, block_size, blocks, static):
    """f32[..., F, C, K] Median-of-Means estimates from streamed samples, one computation per
    distinct layout of each arm."""
    size, count, index = _distinct_layouts(block_size, blocks, static.num_layouts)
    means = mom.stream_block_means(draw_chunk, steps, size, count, static.pull_chunk, static.max_blocks,
                                   static.max_block_size)
    lead = means.shape[3:]
    expand = (slice(None), slice(None)) + (None,) * len(lead)
    medians = mom.median_of_blocks(means, count[expand], jnp.float32)  # [K, U, ..., F]
    picked = jnp.take_along_axis(medians, jnp.broadcast_to(index[expand], (*index.shape, *lead)), axis=1)
    return jnp.moveaxis(picked, (0, 1), (-1, -2))  # [..., F, C, K]


def _commit(estimates, exploration, horizon, pulls, gaps, checkpoints):
    """Commit on the estimates and the exact regret (at the horizon and the checkpoints).

    Args:
      estimates: f32[..., F, C, K] the commit estimates (C = configurations).
      exploration, horizon: i64[C].
      pulls: i64[C, K] exploration pulls.
      gaps: f64[F, K].
      checkpoints: i64[C, N].

    Returns:
      regret f64[..., F, C], pulls i64[..., F, C, K], committed i32[..., F, C],
      exploration i64[..., F, C], estimates f32[..., F, C, K],
      checkpoints i64[..., F, C, N], regret_curve f64[..., F, C, N].
    """
    explore_all = exploration >= horizon  # [C]
    best = jnp.argmax(estimates, axis=-1)  # first maximum: ties to the lowest index
    committed = jnp.where(explore_all, -1, best).astype(jnp.int32)
    commit_rounds = jnp.where(explore_all, 0, horizon - exploration)  # [C]
    one_hot = jax.nn.one_hot(best, gaps.shape[-1], dtype=jnp.int64)
    total_pulls = pulls + commit_rounds[:, None] * one_hot
    curve = _regret_curve(checkpoints, exploration, horizon, committed, gaps, gaps.shape[-1])
    estimates = jnp.where(explore_all[:, None], jnp.nan, estimates)
    exploration = jnp.broadcast_to(exploration, committed.shape)
    checkpoints = jnp.broadcast_to(checkpoints, curve.shape)
    return curve[..., -1], total_pulls, committed, exploration, estimates, checkpoints, curve


def _run_on_rewards_kernel(policy, rewards, means, horizons, *, static: _Static):
    k, chunk = static.num_arms, static.pull_chunk
    blocks, exploration, pulls, horizon = _schedule(policy, k, horizons)
    block_size = (pulls // blocks[:, None]).T  # [K, C]
    steps = mom.num_chunks(jnp.max(pulls), chunk)
    total = rewards.shape[-1]
    padded = jnp.pad(rewards, ((0, 0), (0, (-total) % chunk + chunk)), constant_values=jnp.nan)

    def draw_chunk(j):
        return jax.lax.dynamic_slice_in_dim(padded, j * chunk, chunk, axis=-1)[None]  # [1, K, C]

    estimates = _streamed_estimates(draw_chunk, steps, block_size, blocks, static)
    means = jnp.asarray(means, jnp.float64)[None, :]
    gaps = jnp.max(means, axis=-1, keepdims=True) - means
    checkpoints = log_spaced_rounds(horizon, static.num_checkpoints)
    return _commit(estimates, exploration, horizon, pulls, gaps, checkpoints)


_run_on_rewards_program = jax.jit(_run_on_rewards_kernel, static_argnames=("static",))


def _fast_path_kernel(key, policy, instance, gaps, horizons, first_seed, *, static: _Static):
    k, chunk = static.num_arms, static.pull_chunk
    blocks, exploration, pulls, horizon = _schedule(policy, k, horizons)
    block_size = (pulls // blocks[:, None]).T  # [K, C]
    steps = mom.num_chunks(jnp.max(pulls), chunk)
    arms = expand_pulls(instance)  # params [F, K, 1]
    num_words = instance.num_words
    checkpoints = log_spaced_rounds(horizon, static.num_checkpoints)

    def seed_chunk(keys):
        if static.sampler == "order_statistic":
            estimates = _order_statistic_estimates(keys, arms, block_size, blocks, horizons.shape[0])
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


def _fast_path_bytes_per_seed(instances, configs, static: _Static, words) -> int:
    """Working memory of one seed in a chunk: the drawn words and rewards of one streaming
    step plus the running block sums (per-pull), the block words and sums (block sums), or
    the levels, quantile tiles and estimates (order statistics)."""
    if static.sampler == "order_statistic":
        return instances * static.num_arms * configs * 400
    if static.sampler == "block_sums":
        return instances * static.num_arms * configs * static.max_blocks * 160
    return instances * static.num_arms * (
        static.pull_chunk * (8 * words + 28) + static.num_layouts * (static.max_blocks + 1) * 48
    )


def _fast_path_output_bytes(instances, configs, num_arms, num_checkpoints) -> int:
    """Results of one seed: regret, exploration (8), committed (4), pulls (8K), estimates (4K),
    checkpoints and curve (16N), per instance and configuration."""
    return instances * configs * (20 + 12 * num_arms + 16 * num_checkpoints)


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _arrange_fast_path(parts, grid_shape, instance_shape, horizon_shape, seed_shape):
    """[*seed, F, G*H, ...] arrays -> grid + instance + horizon + seed (+ trailing), one program (a
    padded seed axis is cut to ``seed_shape`` here too, rather than by one slicing program per output)."""
    lead = len(seed_shape)
    f = int(np.prod(instance_shape, dtype=int))
    g = int(np.prod(grid_shape, dtype=int))
    h = int(np.prod(horizon_shape, dtype=int))

    def arrange(a):
        if lead:
            a = a[: seed_shape[0]]
        trailing = a.shape[lead + 2 :]
        a = a.reshape(*seed_shape, f, g, h, *trailing)
        order = (lead + 1, lead, lead + 2, *range(lead), *range(lead + 3, a.ndim))
        a = jnp.transpose(a, order)
        return a.reshape(*grid_shape, *instance_shape, *horizon_shape, *seed_shape, *trailing)

    return Outcome(*(arrange(a) for a in parts))


@functools.partial(jax.jit, static_argnums=(1, 2))
def _arrange_engine(outputs, shape, record_arms: bool):
    """The engine's ``[G, F, H, S_padded, ...]`` outputs -> the Outcome with leading axes ``shape``
    (grid + instance + horizon + seed), the padded seeds cut, one program."""
    num_seeds = shape[-1]
    curve, pulls, committed, exploration, estimates, checkpoints, arms = (a[:, :, :, :num_seeds] for a in outputs)
    parts = (curve[..., -1], pulls, committed, exploration, estimates, checkpoints, curve)
    outcome = Outcome(*(a.reshape(*shape, *a.shape[4:]) for a in parts))
    if record_arms:
        outcome = dataclasses.replace(outcome, arms=arms.reshape(*shape, arms.shape[-1]))
    return outcome


def run_on_rewards(
    policy: AdaRETC,
    rewards: jax.Array,
    means: jax.Array,
    horizon: int | Sequence[int],
    *,
    pull_chunk: int | None = None,
    num_checkpoints: int = 16,
) -> Outcome:
    """Runs AdaR-ETC (Algorithm 1) or Empirical ETC on a given reward table.

    Round ``t <= L_T`` pulls arm ``(t - 1) mod K`` and reads the next unread
    entry of its row; if ``L_T < T`` the policy commits to the arm with the
    largest estimate (Median-of-Means with ``B_T`` blocks, or the mean; ties
    to the lowest index) for the remaining ``T - L_T`` rounds.

    Args:
      policy: an :class:`AdaRETC` or :class:`EmpiricalETC`, possibly batched
        (grid shape ``G``).
      rewards: f32[K, N] the reward table: ``rewards[i, j]`` is the reward of
        the ``j``-th pull of arm ``i``; ``N`` must cover the exploration pulls.
      means: f[K] the true means, for the pseudo-regret.
      horizon: ``T``, or a sequence of horizons (shape ``H``).
      pull_chunk: static streaming step; by default the same as ``simulate``'s
        for this ``K`` and horizon, so both read the table identically.
      num_checkpoints: rounds of ``regret_curve``.

    Returns:
      Outcome with leading axes ``G + H``.
    """
    if not isinstance(policy, _FAST_PATH_TYPES):
        raise TypeError(f"run_on_rewards runs AdaRETC and EmpiricalETC; got {type(policy).__name__}.")
    table = real_array("rewards", rewards, "an array f32[K, N] of rewards")
    if table is not None and table.ndim != 2:
        raise ValueError(f"rewards must have shape (K, N); got shape {table.shape}.")
    if table is not None and np.any(np.isnan(table)):
        at = [int(i) for i in np.argwhere(np.isnan(table))[0]]
        raise ValueError(
            f"rewards must not hold NaN (Median-of-Means would commit on a NaN estimate); got NaN at "
            f"rewards{at}."
        )
    rewards = jnp.asarray(rewards)
    if rewards.ndim != 2:
        raise ValueError(f"rewards must have shape (K, N); got shape {rewards.shape}.")
    k, total = rewards.shape
    horizons, horizon_shape = _horizons(horizon)
    adar_etc_lib.check_arms_and_horizon(k, horizons)
    mu = real_array("means", means, f"an array f[K] of the {k} arms' means")
    if mu is not None:
        if mu.shape != (k,):
            raise ValueError(
                f"means must have shape (K,) = ({k},), one mean per row of rewards; got means of shape {mu.shape}."
            )
        if not np.all(np.isfinite(mu)):
            raise ValueError(f"means must be finite; got means={mu.tolist()}.")
    check_integer("num_checkpoints", num_checkpoints, 2)
    _check_pull_chunk(pull_chunk)
    flat = _flatten(policy)
    needed, distinct, largest = (int(m) for m in _schedule_maxima(flat, jnp.asarray(horizons), k))
    if needed > total:
        raise ValueError(f"the reward table has {total} pulls per arm but the schedule needs {needed}.")
    chunk = pull_chunk or default_pull_chunk(k, int(horizons.max()))
    configs = flat.eps.shape[0] * horizons.shape[0]
    static = _Static(k, chunk, max_blocks(k, horizons), num_checkpoints,
                     num_layouts=num_layouts(distinct, configs), max_block_size=mom.static_block_sizes(largest))
    parts = _run_on_rewards_program(
        flat, rewards.astype(jnp.float32), jnp.asarray(means), jnp.asarray(horizons), static=static
    )
    return _arrange_fast_path(parts, policy.batch_shape, (), horizon_shape, ())


# -- simulate -------------------------------------------------------------------------------


def simulate(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizon: int | Sequence[int],
    num_seeds: int,
    *,
    first_seed: int = 0,
    engine: bool = False,
    record_arms: bool = False,
    num_checkpoints: int = 16,
    pull_chunk: int | None = None,
    seed_chunk: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    sampler: str = "auto",
    memory_budget: int | None = None,
    threads: int | None = None,
) -> Outcome:
    """Simulates a policy over seeds, its parameter grid, an instance family and horizons.

    The whole sweep is one ``jit``-compiled program.  :class:`AdaRETC` and
    :class:`EmpiricalETC` take the fast path (only exploration rewards are
    drawn, the commit phase is exact); every other policy, or any policy
    with ``engine=True``, runs round by round.  Rewards come from the reward
    table of each seed (see :func:`reward_table`), so every policy, grid point
    and horizon sees the same ``j``-th pull of arm ``i``.

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      policy: a policy with grid shape ``G`` (its batch shape).
      instance: a distribution with batch shape ``I + (K,)``.
      horizon: ``T`` or a sequence of horizons (shape ``H``).
      num_seeds: ``S``.
      first_seed: index of the first seed (seeds ``first_seed .. + S - 1``),
        so that a sweep split into pieces equals the sweep in one piece.
      engine: run round by round even where the fast path applies.
      record_arms: also return the arm played in every round (``Outcome.arms``,
        i32[..., max(T)]); implies ``engine``.
      num_checkpoints: log-spaced rounds of ``regret_curve`` (from 1 to ``T``).
      pull_chunk: static streaming step (pulls per arm per step).
      seed_chunk: seeds processed together inside the program; by default
        the largest chunk that fits ``memory_budget`` (see :func:`memory_plan`).
        A given ``seed_chunk`` takes precedence over the budget.
      devices: devices to shard the seeds over (default: all of
        ``jax.devices()``, after ``jax.distributed.initialize()`` those of
        every host; on a CPU, ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
        set before importing jax makes N cores N devices).  The seed axis of
        every output is sharded over a one-axis ``Mesh`` of them.
      sampler: fast-path exploration rewards: ``"per_pull"`` (the reward
        table, at most ``2^32`` pulls per arm), ``"block_sums"`` (one exact
        draw per Median-of-Means block), ``"order_statistic"`` (each
        estimate drawn as the ``ceil(B/2)``-th of ``B`` block means, exactly
        in law: one Beta level per seed, arm and ``B``, shared by every grid
        point, instance and horizon with that ``B``, and the block mean's
        quantile there) or ``"auto"``: the order statistic where the family
        has it.  The last two take :class:`TwoPoint`, :class:`Dirac` and
        :class:`Gaussian` only.  The samplers agree in law, not draw by
        draw; the engine always reads the reward table.
      memory_budget: bytes per device the program may use (an integer
        ``>= 1``; default :func:`default_memory_budget`: 2 GiB on a CPU, half
        the memory of an accelerator).  The seeds run in chunks of the
        largest size whose working memory plus every seed's results fits it;
        a budget too small for one seed per chunk is a ``ValueError`` naming
        the minimum.  Seed ``s`` draws from ``fold_in(key, s)`` alone, so the
        results are bitwise identical for every budget, chunk size and
        number of devices.
      threads: executions of the compiled program run concurrently on each
        device, each on its own consecutive seeds (an integer ``>= 1``;
        default: on CPU devices one per usable core, shared out over the
        devices, or the environment variable ``HTB_JAX_THREADS``; 1 on an
        accelerator, and the only choice under several processes).  XLA runs the small kernels of a
        round or a seed chunk on one core, so on a CPU these threads are
        what puts the other cores to work; the budget is shared out over
        them.  The results are bitwise the same for every ``threads``.

    Returns:
      Outcome with leading axes ``G + I + H + (S,)``.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
      >>> out = htb.simulate(jax.random.key(0), htb.AdaRETC.order_free(), nu, 10**5, num_seeds=100)
      >>> out.regret.shape
      (100,)
    """
    plan, run = _prepare(
        key, policy, instance, horizon, num_seeds, first_seed=first_seed, engine=engine,
        record_arms=record_arms, num_checkpoints=num_checkpoints, pull_chunk=pull_chunk,
        seed_chunk=seed_chunk, devices=devices, sampler=sampler, memory_budget=memory_budget,
        threads=threads,
    )
    del plan
    return run()


def memory_plan(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizon: int | Sequence[int],
    num_seeds: int,
    *,
    measure: bool = False,
    **options,
) -> MemoryPlan:
    """How :func:`simulate` with the same arguments splits its seeds, without running it.

    Args:
      key, policy, instance, horizon, num_seeds: as for :func:`simulate`.
      measure: also compile the program and record its ``memory_analysis()``
        (``temp + output + argument`` bytes per device, times the concurrent
        executions ``threads``) as ``measured_peak``.
      **options: any keyword argument of :func:`simulate` (``memory_budget``,
        ``seed_chunk``, ``devices``, ``engine``, ...).

    Returns:
      The :class:`MemoryPlan`: seed chunk, chunks per device, the per-seed and
      output estimates, and their sum ``estimated_peak <= memory_budget``.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
      >>> plan = htb.memory_plan(jax.random.key(0), htb.AdaRETC.order_free(), nu, 10**5, 1000,
      ...                        memory_budget=2**23, devices=jax.devices()[:1], threads=2)
      >>> plan.threads, plan.seed_chunk, plan.num_chunks, plan.estimated_peak <= 2**23
      (2, 7, 72, True)
    """
    plan, run = _prepare(key, policy, instance, horizon, num_seeds, **options)
    if measure:
        analysis = run.lower().compile().memory_analysis()
        if analysis is not None:
            peak = analysis.temp_size_in_bytes + analysis.output_size_in_bytes + analysis.argument_size_in_bytes
            plan = dataclasses.replace(plan, measured_peak=int(peak) * plan.threads)
    return plan


def _prepare(
    key,
    policy,
    instance,
    horizon,
    num_seeds,
    *,
    first_seed: int = 0,
    engine: bool = False,
    record_arms: bool = False,
    num_checkpoints: int = 16,
    pull_chunk: int | None = None,
    seed_chunk: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    sampler: str = "auto",
    memory_budget: int | None = None,
    threads: int | None = None,
):
    """Validates a simulation and builds its program: ``(plan, run)``, ``run()`` gives the Outcome
    and ``run.lower()`` the lowered program."""
    _check_policy(policy)
    key = as_threefry_key(key)
    check_instance(instance)
    k = instance_num_arms(instance)
    horizons, horizon_shape = _horizons(horizon)
    adar_etc_lib.check_arms_and_horizon(k, horizons)
    check_integer("num_seeds", num_seeds, 1)
    check_integer("first_seed", first_seed, 0, maximum=MAX_SEEDS - 1)
    if first_seed + num_seeds > MAX_SEEDS:
        raise ValueError(
            f"first_seed + num_seeds must be at most 2^32 = {MAX_SEEDS} (seeds are uint32; seed "
            f"s + 2^32 would repeat seed s); got first_seed + num_seeds={first_seed} + {num_seeds}."
        )
    check_integer("num_checkpoints", num_checkpoints, 2)
    if seed_chunk is not None:
        check_integer("seed_chunk", seed_chunk, 1)
    if threads is not None:
        check_integer("threads", threads, 1)
        if threads > 1 and jax.process_count() > 1:
            raise ValueError(
                f"threads must be 1 under several processes (jax.distributed); got threads={threads} with "
                f"{jax.process_count()} processes."
            )
    _check_pull_chunk(pull_chunk)
    check_memory_budget(memory_budget)
    for name, flag in (("engine", engine), ("record_arms", record_arms)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False; got {name}={flag!r} ({type(flag).__name__}).")
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}; got {sampler!r}.")
    check_float32_resolution(instance)
    devices = tuple(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must name at least one device.")
    budget = default_memory_budget(devices[0]) if memory_budget is None else int(memory_budget)
    flat = _flatten(policy)
    instance_shape = instance.batch_shape[:-1]
    flat_instance = jax.tree.map(lambda p: p.reshape(-1, k), instance.broadcast())
    chunk = pull_chunk or default_pull_chunk(k, int(horizons.max()))
    blocks = max_blocks(k, horizons)
    has_block_sums = type(instance).has_block_sums
    if sampler in ("block_sums", "order_statistic") and not has_block_sums:
        raise ValueError(
            f"sampler={sampler!r} needs a family with closed-form block sums (TwoPoint, Dirac, "
            f"Gaussian); got {type(instance).__name__}."
        )
    if isinstance(policy, _FAST_PATH_TYPES) and not (engine or record_arms):
        chosen = ("order_statistic" if has_block_sums else "per_pull") if sampler == "auto" else sampler
        needed, distinct, largest = (0, 1, 1) if chosen != "per_pull" else (
            int(m) for m in _schedule_maxima(flat, jnp.asarray(horizons), k)
        )
        if math.ceil(needed / chunk) * chunk > MAX_PULLS:
            raise ValueError(
                f"the schedule needs {needed} pulls per arm; per-sample simulation supports at most "
                f"{MAX_PULLS - chunk} (TwoPoint, Dirac and Gaussian arms take exact block sums "
                "instead, with no limit)."
            )
        configs = flat.eps.shape[0] * horizons.shape[0]
        instances = flat_instance.batch_shape[0]
        static = _Static(k, chunk, blocks, num_checkpoints, sampler=chosen, num_layouts=num_layouts(distinct, configs),
                         max_block_size=mom.static_block_sizes(largest))
        preferred = _CPU_SEED_CHUNK_BYTES if devices[0].platform == "cpu" else _ACCELERATOR_SEED_CHUNK_BYTES
        plan = plan_seed_chunk(
            math.ceil(num_seeds / len(devices)),
            _fast_path_bytes_per_seed(instances, configs, static, instance.num_words),
            _fast_path_output_bytes(instances, configs, k, num_checkpoints),
            budget,
            preferred,
            seed_chunk,
            threads,
            devices,
        )
        static = dataclasses.replace(static, num_seeds=plan.seeds_per_thread, seed_chunk=plan.seed_chunk)
        options = compiler_options_lib.known(devices[0], (compiler_options_lib.VECTOR_WIDTH,))
        program = seed_sharded_program(_fast_path_kernel, static, devices, 0, plan.threads, options)
        args = program_args(key, flat, flat_instance, horizons, first_seed)

        def run_fast():
            return _arrange_fast_path(gather(program(*args)), policy.batch_shape, instance_shape, horizon_shape,
                                      (num_seeds,))

        run_fast.lower = lambda: program.lower(*args)
        return plan, run_fast
    check_integer("horizon (T)", horizons, 1, maximum=MAX_ENGINE_HORIZON)
    spec = engine_lib.EngineSpec(k, int(horizons.max()), chunk, blocks, _commit_block_size_bound(flat, horizons, k))
    program, args, plan = engine_lib.prepare_engine(
        key, flat, flat_instance, horizons, num_seeds, spec=spec, num_checkpoints=num_checkpoints,
        first_seed=first_seed, seed_chunk=seed_chunk, devices=devices, memory_budget=budget,
        record_arms=record_arms, threads=threads,
    )

    def run_engine():
        shape = (*policy.batch_shape, *instance_shape, *horizon_shape, num_seeds)
        return _arrange_engine(gather(program(*args)), shape, record_arms)

    run_engine.lower = lambda: program.lower(*args)
    return plan, run_engine
