"""Simulation outcomes and their per-grid-point summaries."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
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
      estimates: f32[..., K] the Median-of-Means estimates at the commit
        (NaN when there was no commit).
    """

    regret: jax.Array
    pulls: jax.Array
    committed: jax.Array
    exploration: jax.Array
    estimates: jax.Array


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Summary:
    """Mean regret and its standard error over seeds, per grid point.

    Attributes:
      mean: f64[...] mean regret over seeds.
      stderr: f64[...] standard error of the mean, ``std(ddof=1) / sqrt(S)``.
      num_seeds: static number of seeds ``S``.
    """

    mean: jax.Array
    stderr: jax.Array
    num_seeds: int = dataclasses.field(metadata=dict(static=True))


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
