"""Exact order statistics by bisection on order-preserving integer keys.

The Median-of-Means estimate is the ``ceil(B/2)``-th smallest of ``B`` block
means: an element of the sorted block means.  Sorting many short rows is slow
in XLA on CPU (a comparator call per comparison), so we select instead: map
every float to an integer key with the same order, then find the smallest key
``t`` with ``#{keys <= t} >= k`` by bisection over the key range -- 32 counting
passes for float32, 64 for float64.  Each pass is a compare-and-add over the
row, which vectorises; the result is exactly the k-th element of the sorted
row (ties and infinities included), not an approximation.

NaN is ordered after ``+inf``, as ``numpy.sort`` does.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

_KEY_TYPES = {
    jnp.dtype(jnp.float32): (jnp.int32, 32),
    jnp.dtype(jnp.float64): (jnp.int64, 64),
}


def order_keys(x: jax.Array) -> jax.Array:
    """Integer keys with the order of ``x`` (``-0.0`` just below ``+0.0``, NaN last).

    Args:
      x: f32[...] or f64[...].

    Returns:
      i32[...] or i64[...]: ``x < y  =>  key(x) < key(y)``.
    """
    int_type, width = _KEY_TYPES[jnp.dtype(x.dtype)]
    x = jnp.where(jnp.isnan(x), jnp.array(jnp.nan, x.dtype), x)  # canonical +NaN
    b = jax.lax.bitcast_convert_type(x, int_type)
    magnitude = jnp.array((1 << (width - 1)) - 1, int_type)
    return jnp.where(b < 0, b ^ magnitude, b)


def from_order_keys(keys: jax.Array, dtype) -> jax.Array:
    """Inverse of :func:`order_keys`."""
    int_type, width = _KEY_TYPES[jnp.dtype(dtype)]
    keys = keys.astype(int_type)
    magnitude = jnp.array((1 << (width - 1)) - 1, int_type)
    return jax.lax.bitcast_convert_type(jnp.where(keys < 0, keys ^ magnitude, keys), dtype)


def kth_smallest_keys(keys: jax.Array, k: jax.Array) -> jax.Array:
    """The k-th smallest key of each column, by bisection.

    Args:
      keys: i32[n, ...] or i64[n, ...] (the selection axis first: counting over
        a leading axis vectorises best).
      k: int[...] 1-based ranks in ``[1, n]``, broadcast against ``keys[0]``.

    Returns:
      int[...]: the k-th smallest key of each column.
    """
    int_type = keys.dtype
    width = jnp.iinfo(int_type).bits
    columns = keys.shape[1:]
    count_type = jnp.int16 if keys.shape[0] < 2**15 else jnp.int32
    # Counting over the leading axis of a 2-D [n, columns] array vectorises best.
    keys = keys.reshape(keys.shape[0], -1)
    k = jnp.broadcast_to(jnp.asarray(k), columns).astype(count_type).reshape(-1)
    lo = jnp.full(keys.shape[1:], jnp.iinfo(int_type).min, int_type)
    hi = jnp.full(keys.shape[1:], jnp.iinfo(int_type).max, int_type)

    def step(_, bounds):
        lo, hi = bounds
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # floor((lo + hi) / 2), no overflow
        count = jnp.sum((keys <= mid).astype(count_type), axis=0, dtype=count_type)
        enough = count >= k
        return jnp.where(enough, lo, mid + 1), jnp.where(enough, mid, hi)

    lo, _ = jax.lax.fori_loop(0, width, step, (lo, hi))
    return lo.reshape(columns)


def kth_smallest(x: jax.Array, k: jax.Array, axis: int = -1) -> jax.Array:
    """Exact k-th smallest (1-based) element along ``axis``: ``sort(x, axis)[k-1]``.

    Args:
      x: f32[...] or f64[...].
      k: int ranks in ``[1, x.shape[axis]]``, broadcast against ``x`` without
        ``axis``.  Out-of-range ranks give NaN.
      axis: the axis to select along.

    Returns:
      ``x.dtype[x.shape without axis]``.

    Examples:
      >>> import jax.numpy as jnp
      >>> kth_smallest(jnp.array([3.0, -1.0, jnp.inf, 2.0]), 2)
      Array(2., dtype=float32)
    """
    x = jnp.asarray(x)
    n = x.shape[axis]
    moved = jnp.moveaxis(order_keys(x), axis, 0)
    k = jnp.asarray(k)
    picked = kth_smallest_keys(moved, jnp.clip(k, 1, n))
    value = from_order_keys(picked, x.dtype)
    return jnp.where((k >= 1) & (k <= n), value, jnp.array(jnp.nan, x.dtype))
