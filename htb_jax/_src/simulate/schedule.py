"""The static schedule of a simulation: its flat policy grid, exploration schedule and static sizes.

:func:`_schedule` gives each configuration (grid point, horizon) its
Median-of-Means block count ``B``, exploration length ``L`` and exploration
pulls per arm, traced; :func:`_schedule_maxima` gives the concrete maxima that
fix static sizes (pulls drawn, distinct block layouts, block sizes), and
:func:`default_pull_chunk` and :func:`max_blocks` the streaming step and the
length of the block axis.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.policies import adar_etc as adar_etc_lib
from htb_jax._src.policies.adar_etc import ExploreThenCommit, exploration_pulls
from htb_jax._src.pytree import class_keyed_jit
from htb_jax._src.simulate.layouts import _layout_codes

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
    """Every parameter broadcast to the batch shape and flattened: leaves [G], f64; NumPy arrays
    where every parameter is concrete (no small program compiled for it), else jax arrays."""
    shape = policy.batch_shape
    xp = jnp if any(isinstance(p, jax.core.Tracer) for p in jax.tree.leaves(policy)) else np
    return jax.tree.map(lambda p: xp.broadcast_to(xp.asarray(p, xp.float64), shape).reshape(-1), policy)


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


@functools.partial(class_keyed_jit, static_argnames="num_arms")
def _schedule_maxima(policy: ExploreThenCommit, horizons: jax.Array, num_arms: int):
    """The most exploration pulls of an arm, the most distinct block layouts ``(B, s)`` of an arm
    over the configurations (see :func:`~htb_jax._src.simulate.layouts._distinct_layouts`), the
    largest block size ``s`` and the smallest nonzero one (``0`` if every ``s`` is 0)."""
    blocks, _, pulls, _ = _schedule(policy, num_arms, horizons)
    sizes = (pulls // blocks[:, None]).T
    codes = jnp.sort(_layout_codes(sizes, blocks), axis=-1)
    smallest = jnp.min(jnp.where(sizes > 0, sizes, jnp.iinfo(sizes.dtype).max))
    return (jnp.max(pulls), jnp.max(1 + jnp.sum(codes[:, 1:] != codes[:, :-1], axis=-1)), jnp.max(sizes),
            jnp.where(jnp.any(sizes > 0), smallest, 0))
