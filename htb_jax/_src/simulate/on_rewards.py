"""``run_on_rewards``: AdaR-ETC or Empirical ETC on a reward table the caller gives.

The fast path's streaming (:func:`~htb_jax._src.simulate.fast_path._streamed_estimates`)
and exact commit (:mod:`htb_jax._src.simulate.commit`) read a given table
``f32[K, N]`` instead of drawing one, so a run can be checked against a plain
reference on the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import mom
from htb_jax._src.outcome import Outcome
from htb_jax._src.policies import adar_etc as adar_etc_lib
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.protocol_checks import check_policy
from htb_jax._src.pytree import class_keyed_jit
from htb_jax._src.rounding import log_spaced_rounds
from htb_jax._src.simulate.checks import _check_pull_chunk, _horizons
from htb_jax._src.simulate.commit import _commit
from htb_jax._src.simulate.fast_path import _FAST_PATH_TYPES, _Static, _streamed_estimates
from htb_jax._src.simulate.layouts import num_layouts
from htb_jax._src.simulate.outputs import _arrange_fast_path
from htb_jax._src.simulate.schedule import (
    _flatten,
    _schedule,
    _schedule_maxima,
    default_pull_chunk,
    max_blocks,
)
from htb_jax._src.validation import FLOAT32_MAX, check_integer, check_untraced, real_array


def _run_on_rewards_kernel(policy, rewards, means, horizons, *, static: _Static):
    """The fast path's estimates and commit on ``rewards`` f32[K, N]: the Outcome's seven fields
    ``[1, C, ...]`` for a flat policy [G] and horizons i64[H] (``C = G H``, g-major)."""
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


_run_on_rewards_program = class_keyed_jit(_run_on_rewards_kernel, static_argnames=("static",))


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
        Read as float32, as every reward is: a float64 table is rounded to it,
        and a finite value beyond float32's range is refused (``inf`` is a reward).
      means: f[K] the true means, for the pseudo-regret.
      horizon: ``T``, or a sequence of horizons (shape ``H``).
      pull_chunk: static streaming step; by default the same as ``simulate``'s
        for this ``K`` and horizon, so both read the table identically.
      num_checkpoints: rounds of ``regret_curve``.

    Returns:
      Outcome with leading axes ``G + H``: one seed's, with no seed axis (not for
      :func:`summarize`, which averages over simulate's last axis, the seeds).
    """
    check_untraced("run_on_rewards sizes and runs its own program from the policy's schedule and the horizons",
                   ": call it outside jit (a grid of policies or horizons is one call already).",
                   policy=policy, horizon=horizon, pull_chunk=pull_chunk, num_checkpoints=num_checkpoints)
    check_policy("policy", policy, _FAST_PATH_TYPES, "run_on_rewards")
    table = real_array("rewards", rewards, "an array f32[K, N] of rewards")
    shape = table.shape if table is not None else np.shape(rewards)
    if len(shape) != 2:
        raise ValueError(f"rewards must have shape (K, N); got shape {shape}.")
    if table is not None and np.any(np.isnan(table)):
        at = [int(i) for i in np.argwhere(np.isnan(table))[0]]
        raise ValueError(
            f"rewards must not hold NaN (Median-of-Means would commit on a NaN estimate); got NaN at "
            f"rewards{at}."
        )
    if table is not None:  # read as float32, as every reward: 1e39 was read as inf (an infinite reward is one)
        big = np.isfinite(table) & (np.abs(np.asarray(table, np.float64)) > FLOAT32_MAX)
        if np.any(big):
            at = [int(i) for i in np.argwhere(big)[0]]
            raise ValueError(
                f"rewards must be float32 numbers, finite ones within +-{FLOAT32_MAX:.8g} (a larger one would be "
                f"read as inf); got rewards{at}={float(table[tuple(at)]):.6g}."
            )
    k, total = shape
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
    check_integer("num_checkpoints", num_checkpoints, 2, one=True)
    _check_pull_chunk(pull_chunk)
    num_checkpoints = int(num_checkpoints)  # a 0-d array as its int: static configuration
    pull_chunk = None if pull_chunk is None else int(pull_chunk)
    rewards = jnp.asarray(rewards)  # a device array once every argument is checked
    flat = _flatten(policy)
    with jax.ensure_compile_time_eval():  # concrete also where the table is traced (under an outer jit)
        needed, distinct, largest, smallest = (int(m) for m in _schedule_maxima(flat, jnp.asarray(horizons), k))
    if needed > total:
        raise ValueError(f"the reward table has {total} pulls per arm but the schedule needs {needed}.")
    chunk = pull_chunk or default_pull_chunk(k, int(horizons.max()))
    configs = flat.eps.shape[0] * horizons.shape[0]
    static = _Static(k, chunk, max_blocks(k, horizons), num_checkpoints,
                     num_layouts=num_layouts(distinct, configs), max_block_size=mom.static_block_sizes(largest),
                     min_block_size=mom.static_smallest_block_size(smallest))
    parts = _run_on_rewards_program(
        flat, rewards.astype(jnp.float32), jnp.asarray(means), jnp.asarray(horizons), static=static
    )
    return _arrange_fast_path(parts, policy.batch_shape, (), horizon_shape, ())
