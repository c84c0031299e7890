"""AdaR-ETC on the reward-table model (:mod:`htb_jax._src.reward_table`): a whole
sweep is one compiled program.

**Fast path.**  Exploration is round-robin, so after ``L`` rounds arm ``i``
has ``n_i = floor(L/K) + [i < L mod K]`` pulls.  Only those rewards are drawn
(never ``T`` of them), streamed in chunks of ``pull_chunk`` pulls into running
Median-of-Means block sums for every grid point at once; the commit phase is
exact: ``R_T = sum_i Delta_i n_i + (T - L) Delta_committed``.  Exploration
lengths, block counts and block sizes are traced, so a new ``alpha``, ``q``,
``eps_bar`` (or horizon within the same block-count bucket) never recompiles.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import adar_etc as adar_etc_lib
from htb_jax._src import mom
from htb_jax._src.adar_etc import AdaRETC, exploration_pulls
from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import gaps as instance_gaps
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.outcome import Outcome
from htb_jax._src.reward_table import MAX_PULLS, as_threefry_key, expand_pulls, seed_keys, table_words
from htb_jax._src.validation import check_integer, concrete

_CPU_SEED_CHUNK_BYTES = 16 * 2**20
_ACCELERATOR_SEED_CHUNK_BYTES = 4 * 2**30


# -- schedule ------------------------------------------------------------------------------


def default_pull_chunk(num_arms: int, max_horizon: int) -> int:
    """Pulls per arm drawn per streaming step: the order-free schedule's per-arm
    exploration, rounded up to a multiple of 256 and clipped to ``[256, 8192]``."""
    blocks = math.ceil(8.0 * (math.log(num_arms) + 3.0 * math.log(max_horizon)))
    per_arm = blocks + num_arms ** (1.0 / 3.0) * max_horizon ** (2.0 / 3.0) / num_arms
    per_arm = min(per_arm, max_horizon / num_arms + 1)
    return int(min(8192, max(256, 256 * math.ceil(per_arm / 256))))


@jax.jit(static_argnames=("num_arms",))
def _schedule_maxima(policy: AdaRETC, horizons: jax.Array, num_arms: int):
    """Largest per-arm exploration pulls and ``B_T`` over a flat policy and horizons."""
    blocks, _, pulls, _ = _schedule(policy, num_arms, horizons)
    return jnp.max(pulls), jnp.max(blocks)


def _static_sizes(policy: AdaRETC, num_arms: int, horizons: np.ndarray) -> tuple[int, int]:
    """``(needed, max_blocks)``: pulls per arm to draw, and the static block-axis length
    (the largest ``B_T`` rounded up to a multiple of 8, so nearby horizons share it)."""
    needed, blocks = _schedule_maxima(policy, jnp.asarray(horizons), num_arms)
    return int(needed), 8 * math.ceil(int(blocks) / 8)


@dataclasses.dataclass(frozen=True)
class _Static:
    num_arms: int
    pull_chunk: int
    max_blocks: int
    num_seeds: int = 0
    seed_chunk: int = 1


def _schedule(policy: AdaRETC, num_arms: int, horizons: jax.Array):
    """Per configuration (grid point, horizon), flattened g-major: B, L, n, T."""
    t = jnp.broadcast_to(horizons[None, :], (policy.eps.shape[0], horizons.shape[0]))
    flat = AdaRETC(*(f[:, None] for f in (policy.eps, policy.alpha, policy.q)))
    exploration = jnp.broadcast_to(flat.exploration_length(num_arms, t), t.shape).reshape(-1)
    blocks = jnp.broadcast_to(adar_etc_lib.num_blocks(num_arms, t), t.shape).reshape(-1)
    return blocks, exploration, exploration_pulls(exploration, num_arms), t.reshape(-1)


def _commit(means, blocks, exploration, horizon, pulls, gaps):
    """Median of block means, commit and exact regret.

    Args:
      means: f64[..., F, Bmax, K, C] block means (C = configurations).
      blocks, exploration, horizon: i64[C].
      pulls: i64[C, K] exploration pulls.
      gaps: f64[F, K].

    Returns:
      regret f64[..., F, C], pulls i64[..., F, C, K], committed i32[..., F, C],
      exploration i64[..., F, C], estimates f32[..., F, C, K].
    """
    estimates = mom.median_of_block_means(means, blocks, jnp.float32)  # [..., F, K, C]
    estimates = jnp.swapaxes(estimates, -1, -2)  # [..., F, C, K]
    explore_all = exploration >= horizon  # [C]
    best = jnp.argmax(estimates, axis=-1)  # first maximum: ties to the lowest index
    committed = jnp.where(explore_all, -1, best).astype(jnp.int32)
    commit_rounds = jnp.where(explore_all, 0, horizon - exploration)  # [C]
    gap_best = jnp.take_along_axis(
        jnp.broadcast_to(gaps[:, None, :], best.shape + (gaps.shape[-1],)), best[..., None], axis=-1
    )[..., 0]
    regret = jnp.einsum("fk,ck->fc", gaps, pulls.astype(jnp.float64)) + commit_rounds * gap_best
    one_hot = jax.nn.one_hot(best, gaps.shape[-1], dtype=jnp.int64)
    total_pulls = pulls + commit_rounds[:, None] * one_hot
    estimates = jnp.where(explore_all[:, None], jnp.nan, estimates)
    exploration = jnp.broadcast_to(exploration, regret.shape)
    return regret, total_pulls, committed, exploration, estimates


def _block_means(draw_chunk, num_chunks, block_size, blocks, static: _Static):
    """Streams chunks of pulls into block sums, then block means.

    Args:
      draw_chunk: ``j -> f32[*lead_shape, K, pull_chunk]``, pulls ``j C .. (j+1) C - 1``.
      num_chunks: traced number of chunks to stream.
      block_size: i64[K, C] ``s`` per arm and configuration.
      blocks: i64[C] ``B`` per configuration.

    Returns:
      f64[*lead_shape, Bmax, K, C].
    """
    chunk = static.pull_chunk

    def contribution(j):
        x = draw_chunk(j)
        return mom.chunk_block_sums(x, j * chunk, block_size, blocks[None, :], static.max_blocks)

    # Every configuration pulls each arm at least once, so there is a first chunk.
    sums = jax.lax.fori_loop(1, num_chunks, lambda j, sums: sums + contribution(j), contribution(0))
    return sums / jnp.maximum(block_size, 1)


def _num_chunks(pulls, chunk):
    return (jnp.max(pulls) + chunk - 1) // chunk


# -- run on a given table ----------------------------------------------------------------


def _run_on_rewards_kernel(policy, rewards, means, horizons, *, static: _Static):
    k, chunk = static.num_arms, static.pull_chunk
    blocks, exploration, pulls, horizon = _schedule(policy, k, horizons)
    block_size = (pulls // blocks[:, None]).T  # [K, C]
    num_chunks = _num_chunks(pulls, chunk)
    total = rewards.shape[-1]
    padded = jnp.pad(rewards, ((0, 0), (0, (-total) % chunk + chunk)), constant_values=jnp.nan)

    def draw_chunk(j):
        return jax.lax.dynamic_slice_in_dim(padded, j * chunk, chunk, axis=-1)[None]  # [1, K, C]

    block_means = _block_means(draw_chunk, num_chunks, block_size, blocks, static)
    means = jnp.asarray(means, jnp.float64)[None, :]
    gaps = jnp.max(means, axis=-1, keepdims=True) - means
    return _commit(block_means, blocks, exploration, horizon, pulls, gaps)


_run_on_rewards_program = jax.jit(_run_on_rewards_kernel, static_argnames=("static",))


def _flatten_policy(policy: AdaRETC) -> AdaRETC:
    if not isinstance(policy, AdaRETC):
        raise TypeError(f"simulate runs AdaRETC policies; got {type(policy).__name__}.")
    shape = policy.batch_shape
    return AdaRETC(
        *(jnp.broadcast_to(jnp.asarray(f, jnp.float64), shape).reshape(-1) for f in (policy.eps, policy.alpha, policy.q))
    )


def _horizons(horizon) -> tuple[np.ndarray, tuple[int, ...]]:
    h = concrete(horizon)
    if h is None:
        raise ValueError("horizon must be concrete (a Python int or a sequence of ints).")
    check_integer("horizon (T)", h, 1, maximum=10**18)
    h = np.asarray(h, np.int64)
    return h.reshape(-1), h.shape


def _reshape_outcome(parts, grid_shape, instance_shape, horizon_shape, seed_shape):
    """[*seed, F, G*H, ...] arrays -> grid + instance + horizon + seed (+ K)."""
    regret, pulls, committed, exploration, estimates = parts
    lead = len(seed_shape)
    f = int(np.prod(instance_shape, dtype=int))
    g = int(np.prod(grid_shape, dtype=int))
    h = int(np.prod(horizon_shape, dtype=int))

    def arrange(a, trailing):
        a = a.reshape(*seed_shape, f, g, h, *trailing)
        order = (lead + 1, lead, lead + 2, *range(lead), *range(lead + 3, a.ndim))
        a = jnp.transpose(a, order)
        return a.reshape(*grid_shape, *instance_shape, *horizon_shape, *seed_shape, *trailing)

    k = pulls.shape[-1]
    return Outcome(
        regret=arrange(regret, ()),
        pulls=arrange(pulls, (k,)),
        committed=arrange(committed, ()),
        exploration=arrange(exploration, ()),
        estimates=arrange(estimates, (k,)),
    )


def run_on_rewards(
    policy: AdaRETC,
    rewards: jax.Array,
    means: jax.Array,
    horizon: int | Sequence[int],
    *,
    pull_chunk: int | None = None,
) -> Outcome:
    """Runs AdaR-ETC (Algorithm 1) on a given reward table.

    Round ``t <= L_T`` pulls arm ``(t - 1) mod K`` and reads the next unread
    entry of its row; if ``L_T < T`` the policy commits to the arm with the
    largest Median-of-Means estimate (``B_T`` blocks, ties to the lowest index)
    for the remaining ``T - L_T`` rounds.

    Args:
      policy: an :class:`AdaRETC`, possibly batched (grid shape ``G``).
      rewards: f32[K, N] the reward table: ``rewards[i, j]`` is the reward of
        the ``j``-th pull of arm ``i``; ``N`` must cover the exploration pulls.
      means: f[K] the true means, for the pseudo-regret.
      horizon: ``T``, or a sequence of horizons (shape ``H``).
      pull_chunk: static streaming step; by default the same as ``simulate``'s
        for this ``K`` and horizon, so both read the table identically.

    Returns:
      Outcome with leading axes ``G + H``.
    """
    rewards = jnp.asarray(rewards)
    if rewards.ndim != 2:
        raise ValueError(f"rewards must have shape (K, N); got shape {rewards.shape}.")
    k, total = rewards.shape
    horizons, horizon_shape = _horizons(horizon)
    adar_etc_lib.check_arms_and_horizon(k, horizons)
    flat = _flatten_policy(policy)
    needed, max_blocks = _static_sizes(flat, k, horizons)
    if needed > total:
        raise ValueError(
            f"the reward table has {total} pulls per arm but the schedule needs {needed}."
        )
    chunk = pull_chunk or default_pull_chunk(k, int(horizons.max()))
    static = _Static(num_arms=k, pull_chunk=chunk, max_blocks=max_blocks)
    parts = _run_on_rewards_program(
        flat, rewards.astype(jnp.float32), jnp.asarray(means), jnp.asarray(horizons), static=static
    )
    parts = [p[0] for p in parts]  # drop the singleton instance axis
    return _reshape_outcome(parts, policy.batch_shape, (), horizon_shape, ())


# -- simulate ------------------------------------------------------------------------------


def _simulate_kernel(key, policy, instance, horizons, first_seed, *, static: _Static):
    k, chunk = static.num_arms, static.pull_chunk
    blocks, exploration, pulls, horizon = _schedule(policy, k, horizons)
    block_size = (pulls // blocks[:, None]).T  # [K, C]
    num_chunks = _num_chunks(pulls, chunk)
    gaps = instance_gaps(instance)  # [F, K]
    arms = expand_pulls(instance)  # params [F, K, 1]
    num_words = instance.num_words

    def seed_chunk(keys):
        def draw_chunk(j):
            words = jax.vmap(lambda key: table_words(key, k, j * chunk, chunk, num_words))(keys)
            return arms.from_bits(words[:, None])  # [c, F, K, chunk]

        means = _block_means(draw_chunk, num_chunks, block_size, blocks, static)
        return _commit(means, blocks, exploration, horizon, pulls, gaps)

    keys = seed_keys(key, static.num_seeds, first_seed).reshape(-1, static.seed_chunk)
    parts = jax.lax.map(seed_chunk, keys)
    return [p.reshape(static.num_seeds, *p.shape[2:]) for p in parts]


@functools.lru_cache(maxsize=64)
def _simulate_program(static: _Static, devices: tuple):
    """The compiled sweep: one device, or the seed axis sharded over a mesh of devices.

    Each device simulates ``static.num_seeds`` consecutive seeds, starting at
    ``first_seed + index * static.num_seeds``; a seed's numbers depend on its
    global index alone, so the result is the same on any number of devices.
    """
    if len(devices) == 1:
        return jax.jit(functools.partial(_simulate_kernel, static=static))
    mesh = jax.sharding.Mesh(np.asarray(devices), ("seeds",))

    def _simulate_kernel_on_devices(key, policy, instance, horizons, first_seed):
        index = jax.lax.axis_index("seeds").astype(jnp.int64)
        return _simulate_kernel(
            key, policy, instance, horizons, first_seed + index * static.num_seeds, static=static
        )

    replicated = jax.sharding.PartitionSpec()
    return jax.jit(
        jax.shard_map(
            _simulate_kernel_on_devices,
            mesh=mesh,
            in_specs=(replicated,) * 5,
            out_specs=jax.sharding.PartitionSpec("seeds"),
            check_vma=False,
        )
    )


def _seed_chunk(num_seeds, instances, configs, static: _Static, words) -> int:
    per_seed = instances * static.num_arms * (
        static.pull_chunk * (8 * words + 28) + configs * (static.max_blocks + 1) * 48
    )
    budget = _CPU_SEED_CHUNK_BYTES if jax.default_backend() == "cpu" else _ACCELERATOR_SEED_CHUNK_BYTES
    return int(max(1, min(num_seeds, budget // max(per_seed, 1))))


def simulate(
    key: jax.Array,
    policy: AdaRETC,
    instance: Distribution,
    horizon: int | Sequence[int],
    num_seeds: int,
    *,
    first_seed: int = 0,
    pull_chunk: int | None = None,
    seed_chunk: int | None = None,
    devices: Sequence[jax.Device] | None = None,
) -> Outcome:
    """Simulates AdaR-ETC over seeds, a policy grid, an instance family and horizons.

    The whole sweep is one ``jit``-compiled program; only exploration rewards
    are drawn, from the reward table of each seed (see :func:`reward_table`),
    and the commit phase is computed exactly.

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      policy: an :class:`AdaRETC` with grid shape ``G`` (its batch shape).
      instance: a distribution with batch shape ``I + (K,)``.
      horizon: ``T`` or a sequence of horizons (shape ``H``).
      num_seeds: ``S``.
      first_seed: index of the first seed (seeds ``first_seed .. + S - 1``),
        so that a sweep split into pieces equals the sweep in one piece.
      pull_chunk: static streaming step (pulls per arm per step).
      seed_chunk: seeds processed together inside the program (memory/cache).
      devices: devices to shard the seeds over (default: all of
        ``jax.devices()``; on a CPU, ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
        set before importing jax makes N cores N devices).  Results depend
        neither on the devices nor on the chunk sizes.

    Returns:
      Outcome with leading axes ``G + I + H + (S,)``.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
      >>> out = htb.simulate(jax.random.key(0), htb.AdaRETC.order_free(), nu, 10**5, num_seeds=100)
      >>> out.regret.shape
      (100,)
    """
    k = instance_num_arms(instance)
    horizons, horizon_shape = _horizons(horizon)
    adar_etc_lib.check_arms_and_horizon(k, horizons)
    check_integer("num_seeds", num_seeds, 1)
    check_integer("first_seed", first_seed, 0)
    flat = _flatten_policy(policy)
    instance_shape = instance.batch_shape[:-1]
    flat_instance = jax.tree.map(lambda p: p.reshape(-1, k), instance.broadcast())
    needed, max_blocks = _static_sizes(flat, k, horizons)
    chunk = pull_chunk or default_pull_chunk(k, int(horizons.max()))
    if math.ceil(needed / chunk) * chunk > MAX_PULLS:
        raise ValueError(
            f"the schedule needs {needed} pulls per arm; per-sample simulation supports at most "
            f"{MAX_PULLS - chunk}."
        )
    static = _Static(num_arms=k, pull_chunk=chunk, max_blocks=max_blocks)
    devices = tuple(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must name at least one device.")
    per_device = math.ceil(num_seeds / len(devices))
    configs = flat.eps.shape[0] * horizons.shape[0]
    instances = flat_instance.batch_shape[0]
    chunk_seeds = seed_chunk or _seed_chunk(per_device, instances, configs, static, instance.num_words)
    per_device = chunk_seeds * math.ceil(per_device / chunk_seeds)
    static = dataclasses.replace(static, num_seeds=per_device, seed_chunk=chunk_seeds)
    program = _simulate_program(static, devices)
    parts = program(
        as_threefry_key(key), flat, flat_instance, jnp.asarray(horizons), jnp.asarray(first_seed, jnp.int64)
    )
    parts = [p[:num_seeds] for p in parts]
    return _reshape_outcome(parts, policy.batch_shape, instance_shape, horizon_shape, (num_seeds,))
