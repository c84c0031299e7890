"""The exact commit phase of an Explore-Then-Commit run, and its regret curve.

After ``L`` round-robin rounds the policy commits to the arm of largest
estimate for the other ``T - L`` rounds, so its regret is exact from the
estimates and the pull counts:
``R_T = sum_i Delta_i n_i + (T - L) Delta_committed``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from htb_jax._src.outcome import pseudo_regret
from htb_jax._src.policies.adar_etc import exploration_pulls


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
