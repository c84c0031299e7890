"""Simulation outcomes and their per-grid-point summaries."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from htb_jax._src import pytree


@pytree.dataclass
class Outcome:
    """What one run (or a batch of runs) of a policy produced.

    Leading axes ``...`` are the policy grid shape, then the instance batch
    shape (without the arm axis), then the horizon shape, then ``(num_seeds,)``
    when the run came from ``simulate``.

    Attributes:
      regret: f64[...] pseudo-regret at the horizon,
        ``sum_i Delta_i n_i + (T - L) Delta_committed``, exact from the means.
      pulls: i64[..., K] pulls of each arm over the whole horizon.
      committed: i32[...] the arm committed to after exploration, or -1 when
        exploration used the whole horizon (``L_T = T``).
      exploration: i64[...] the exploration length ``L_T``.
      estimates: f32[..., K] the policy's mean estimates: for ETC policies
        those it committed on (NaN when there was no commit), for index
        policies those of the last round.
      checkpoints: i64[..., C] the rounds of ``regret_curve``: ``C``
        log-spaced rounds from 1 to ``T`` (see ``rounding.log_spaced_rounds``).
      regret_curve: f64[..., C] cumulative pseudo-regret after each
        checkpoint round; its last entry is ``regret``.
      arms: i32[..., T] the arm played in each round, when asked for
        (``simulate(..., record_arms=True)``, engine only; -1 past ``T``),
        else None.
    """

    regret: jax.Array
    pulls: jax.Array
    committed: jax.Array
    exploration: jax.Array
    estimates: jax.Array
    checkpoints: jax.Array
    regret_curve: jax.Array
    arms: jax.Array | None = None


def pseudo_regret(gaps: jax.Array, pulls: jax.Array) -> jax.Array:
    """``sum_i Delta_i n_i``, summed arm by arm in a fixed order.

    Every simulator reports regret through this function, so that two of them
    that pull the arms equally often report bit-identical regrets.

    Args:
      gaps: f64[..., K].
      pulls: int[..., K] (broadcast against ``gaps``).

    Returns:
      f64[...].
    """
    gaps = jnp.asarray(gaps, jnp.float64)
    pulls = jnp.asarray(pulls).astype(jnp.float64)
    total = gaps[..., 0] * pulls[..., 0]
    for i in range(1, gaps.shape[-1]):
        total = total + gaps[..., i] * pulls[..., i]
    return total


@pytree.dataclass
class Summary:
    """Mean regret and its standard error over seeds, per grid point.

    Attributes:
      mean: f64[...] mean regret over seeds.
      stderr: f64[...] standard error of the mean, ``std(ddof=1) / sqrt(S)``.
      num_seeds: static number of seeds ``S``.
    """

    mean: jax.Array
    stderr: jax.Array
    num_seeds: int = pytree.static_field()


def summarize(outcome: Outcome) -> Summary:
    """Mean and standard error of the regret over the seed axis (the last axis).

    Args:
      outcome: an ``Outcome`` from ``simulate`` (regret f64[..., S]).

    Returns:
      ``Summary`` with f64[...] fields.
    """
    regret = jnp.asarray(outcome.regret)
    num_seeds = regret.shape[-1]
    mean = jnp.mean(regret, axis=-1)
    if num_seeds < 2:
        stderr = jnp.full(mean.shape, jnp.nan)
    else:
        stderr = jnp.std(regret, axis=-1, ddof=1) / jnp.sqrt(num_seeds)
    return Summary(mean=mean, stderr=stderr, num_seeds=num_seeds)
