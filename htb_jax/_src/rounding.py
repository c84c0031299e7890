"""Integer ceilings of float64 expressions that are meant to be exact integers."""

from __future__ import annotations

import jax
import jax.numpy as jnp

# Exponents such as beta = (1 - alpha)(1 + eps)/eps carry float64 rounding, and
# T^beta amplifies an exponent error by log T <= 42.  A value within this
# relative distance of an integer is taken to be that integer, so that
# ceil(10^(9 * 2/3)) is 10^6 and not 10^6 + 1.
SNAP_RELATIVE = 2.0**-44


def snapped_ceil(v: jax.Array) -> jax.Array:
    """``ceil(v)``, after snapping ``v`` to an integer within ``2^-44`` (relative) of it."""
    nearest = jnp.round(v)
    close = jnp.abs(v - nearest) <= SNAP_RELATIVE * jnp.maximum(jnp.abs(v), 1.0)
    return jnp.ceil(jnp.where(close, nearest, v))


def log_spaced_rounds(horizon: jax.Array, count: int) -> jax.Array:
    """``count`` checkpoints ``ceil(T^(j / (count - 1)))``, ``j = 0 .. count - 1``: from 1 to T.

    Args:
      horizon: i64[...] ``T >= 1``.
      count: static number of checkpoints, ``>= 2``.

    Returns:
      i64[..., count], non-decreasing, first 1, last exactly ``T``; a round from ``2^43`` on is the
      float64 power rounded to the nearest integer (the snapping), off the exact ceiling by at most 1
      plus about ``1e-14`` of it.
    """
    t = jnp.asarray(horizon, jnp.int64)
    fraction = jnp.arange(count, dtype=jnp.float64) / (count - 1)
    rounds = snapped_ceil(jnp.exp(fraction * jnp.log(t.astype(jnp.float64))[..., None])).astype(jnp.int64)
    return jnp.clip(rounds, 1, t[..., None]).at[..., -1].set(t)
