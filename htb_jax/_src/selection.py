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

import numbers
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.validation import check_real, concrete, given

_GROUP = 32
_GROUPED_MIN_SIZE = 2**14
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


def kth_smallest_keys(keys: jax.Array, k: jax.Array, axis: int = 0) -> jax.Array:
    """The k-th smallest key along ``axis``, by bisection.

    Counting vectorises when ``axis`` is not the minor (last) axis: put the
    selection axis first, or ahead of a wide enough trailing block.

    Args:
      keys: i32[...] or i64[...].
      k: int 1-based ranks in ``[1, keys.shape[axis]]``, broadcast against
        ``keys`` without ``axis``.
      axis: the selection axis.

    Returns:
      int[keys.shape without axis]: the k-th smallest key.
    """
    axis = axis % keys.ndim
    int_type = keys.dtype
    width = jnp.iinfo(int_type).bits
    rest = keys.shape[:axis] + keys.shape[axis + 1 :]
    size = keys.shape[axis]
    count_type = jnp.int16 if size < 2**15 else jnp.int32
    k = jnp.broadcast_to(jnp.asarray(k), rest).astype(count_type)
    lo = jnp.full(rest, jnp.iinfo(int_type).min, int_type)
    hi = jnp.full(rest, jnp.iinfo(int_type).max, int_type)
    # Large arrays: count in groups of 32 along the axis; XLA fuses a short
    # reduction with the comparison feeding it, where one long reduction is split
    # and materialised.  Small ones (a round of the engine): one reduction, fewer
    # kernels.  Padding with the largest key never changes the answer (k <= size).
    groups = -(-size // _GROUP) if keys.size >= _GROUPED_MIN_SIZE else 1
    group = _GROUP if groups > 1 else size
    pad = [(0, 0)] * keys.ndim
    pad[axis] = (0, groups * group - size)
    grouped = jnp.pad(keys, pad, constant_values=jnp.iinfo(int_type).max)
    grouped = grouped.reshape(*keys.shape[:axis], groups, group, *keys.shape[axis + 1 :])

    def step(_, bounds):
        lo, hi = bounds
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # floor((lo + hi) / 2), no overflow
        threshold = jnp.expand_dims(mid, axis)
        count = jnp.zeros(rest, count_type)
        for g in range(groups):
            part = jax.lax.index_in_dim(grouped, g, axis, keepdims=False)
            count = count + jnp.sum((part <= threshold).astype(count_type), axis=axis, dtype=count_type)
        enough = count >= k
        return jnp.where(enough, lo, mid + 1), jnp.where(enough, mid, hi)

    lo, _ = jax.lax.fori_loop(0, width, step, (lo, hi))
    return lo


def kth_smallest(x: jax.Array, k: jax.Array, axis: int = -1) -> jax.Array:
    """Exact k-th smallest (1-based) element along ``axis``: ``sort(x, axis)[k-1]``, but for the sign of a zero
    (``-0.0`` is ordered below ``+0.0``, which ``sort`` leaves in their input order).

    Args:
      x: f32[...] or f64[...].
      k: int ranks in ``[1, x.shape[axis]]``, broadcast against ``x`` without
        ``axis``.  Out-of-range ranks give NaN.
      axis: the axis to select along.

    Returns:
      ``x.dtype[x.shape without axis]``.

    Examples:
      >>> import jax.numpy as jnp
      >>> kth_smallest(jnp.array([3.0, -1.0, jnp.inf, 2.0], jnp.float32), 2)
      Array(2., dtype=float32)
    """
    check_real("x", x, "an array of real numbers")
    check_real("k", k, "integer ranks")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be an integer; got {given('axis', axis)}.")
    shape = np.shape(x)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"axis must be an axis of x, in [{-len(shape)}, {len(shape)}); got axis={axis} for x of shape "
                         f"{shape}.")
    if shape[axis] == 0:
        raise ValueError(f"x must hold at least one element along axis {axis}; got x of shape {shape}.")
    dtype = x.dtype if isinstance(x, jax.Array) else np.asarray(x).dtype
    if jnp.dtype(dtype) not in (jnp.dtype(jnp.float32), jnp.dtype(jnp.float64)):  # float16 has no order keys here
        raise TypeError(f"x must be a float32 or float64 array (its order keys are the floats'); got x of dtype {dtype}.")
    rest = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
    try:
        fits = np.broadcast_shapes(np.shape(k), rest) == rest
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"k must broadcast to x's shape without axis {axis}, {rest} (one rank per selection); got k "
                         f"of shape {np.shape(k)}.")
    ranks = concrete(k)
    if ranks is not None and np.any(ranks != np.floor(ranks)):  # a fraction was read as the rank below it
        raise ValueError(f"k must hold integer ranks; got k={float(ranks[ranks != np.floor(ranks)].flat[0]):g}.")
    return _kth_smallest(x, k, int(axis))


@partial(jax.jit, static_argnames="axis")
def _kth_smallest(x: jax.Array, k: jax.Array, axis: int) -> jax.Array:
    x = jnp.asarray(x)
    n = x.shape[axis]
    # Selection axis first, the rest flattened: [n, columns] counts best.
    moved = jnp.moveaxis(order_keys(x), axis, 0)
    rest = moved.shape[1:]
    k = jnp.asarray(k)
    columns = jnp.broadcast_to(jnp.clip(k, 1, n), rest).reshape(-1)
    picked = kth_smallest_keys(moved.reshape(n, -1), columns).reshape(rest)
    value = from_order_keys(picked, x.dtype)
    return jnp.where((k >= 1) & (k <= n), value, jnp.array(jnp.nan, x.dtype))
