"""Median-of-Means (Section 4): block sums from prefix sums, median by exact selection.

With ``n`` samples and ``B`` blocks, ``s = floor(n / B)``; block ``b`` (0-based)
holds samples ``b s .. (b+1) s - 1``, the ``n - B s`` leftover samples are
discarded, and the estimate is the ``ceil(B/2)``-th smallest block mean.

Block sums come from float64 prefix sums, so the block size ``s`` -- and hence
``n`` and ``B`` -- can be traced values: one compiled program serves a whole
grid of exploration lengths.  Infinite samples are kept out of the prefix sums
(which would turn ``inf - inf`` into NaN for every later block): the prefix
sums carry the finite part, and prefix counts of ``+inf`` and ``-inf`` samples
restore each block's own infinity.  A block holding ``+inf`` has mean
``+inf``, one holding both signs (or a NaN sample) has mean NaN, and no other
block is affected.  The median is then an exact order statistic
(:mod:`htb_jax._src.selection`), which orders NaN after ``+inf``.

Accuracy: a block sum is exact up to float64 rounding of the prefix sums,
``|error| <= n 2^-53 max_j |sum_{i<=j} x_i|``; the estimate is that block mean
rounded once to the output dtype.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from htb_jax._src import selection
from htb_jax._src.validation import check_integer, concrete, real_array


def _block_diff(cumsum: jax.Array, edges: jax.Array) -> jax.Array:
    """Block sums from a cumulative sum: f[..., A, C] and edges i32[Bmax + 1, A, G] -> [..., Bmax, A, G].

    The sum of samples ``edges[b] .. edges[b+1] - 1`` of arm row ``a`` is
    ``S(edges[b+1]) - S(edges[b])`` with ``S(e) = cumsum[a, e - 1]`` and
    ``S(0) = 0``.  One flat gather per leading row, producing the block axis
    ahead of the (arm, layout) axes: the layout the selection counts over.
    """
    lead, (arms, chunk) = cumsum.shape[:-2], cumsum.shape[-2:]
    flat = cumsum.reshape(-1, arms * chunk)
    index = jnp.arange(arms, dtype=jnp.int32)[:, None] * chunk + jnp.maximum(edges - 1, 0)
    at = jax.vmap(lambda row: row[index])(flat)
    at = jnp.where(edges > 0, at, jnp.zeros((), at.dtype))
    sums = at[:, 1:] - at[:, :-1]
    return sums.reshape(*lead, *sums.shape[1:])


def chunk_block_sums(
    x: jax.Array,
    offset: Any,
    block_size: jax.Array,
    num_blocks: jax.Array,
    max_blocks: int,
) -> jax.Array:
    """Contributions of samples ``offset .. offset + C - 1`` to every MoM block.

    Each row ``a`` of ``x`` (an arm) feeds ``G`` block layouts (one per grid
    point sharing the samples: the common random numbers of a sweep); block
    ``b`` of layout ``(a, g)`` holds samples ``b s .. (b+1) s - 1``,
    ``s = block_size[a, g]``, and exists for ``b < num_blocks[a, g]``.

    A contribution is the float64 sum of the block's finite samples, plus
    ``+inf`` if it holds a ``+inf`` sample, ``-inf`` for a ``-inf`` and NaN for
    both (or for a NaN sample).  Contributions of successive chunks add up
    with the same IEEE semantics, so a block's sum is infinite exactly when
    one of its own samples is.

    Args:
      x: f[..., A, C] chunks of consecutive samples of ``A`` rows (sample
        ``offset + j`` at position ``j``); leading axes share the layouts.
      offset: int, index of the chunk's first sample.
      block_size: int[A, G] ``s`` per row and layout.
      num_blocks: int[A, G] ``B`` per row and layout (broadcast).
      max_blocks: static ``Bmax >= B``, the length of the block axis.

    Returns:
      f64[..., max_blocks, A, G].
    """
    chunk = x.shape[-1]
    b = jnp.arange(max_blocks + 1, dtype=jnp.int64)[:, None, None]
    edges = jnp.minimum(b, jnp.asarray(num_blocks, jnp.int64)) * jnp.asarray(block_size, jnp.int64)
    edges = jnp.clip(edges - jnp.asarray(offset, jnp.int64), 0, chunk).astype(jnp.int32)

    def block_diff(v, dtype):
        return _block_diff(jnp.cumsum(v.astype(dtype), axis=-1), edges)

    finite = block_diff(jnp.where(jnp.isfinite(x), x, 0), jnp.float64)

    def with_infinities():
        nan = jnp.isnan(x)
        pos = block_diff((x == jnp.inf) | nan, jnp.int32) > 0
        neg = block_diff((x == -jnp.inf) | nan, jnp.int32) > 0
        return finite + (jnp.where(pos, jnp.inf, 0.0) + jnp.where(neg, -jnp.inf, 0.0))

    # A real branch when not under vmap: finite chunks (all our samplers) skip the counts.
    return jax.lax.cond(jnp.all(jnp.isfinite(x)), lambda: finite, with_infinities)


def num_chunks(pulls: jax.Array, chunk: int) -> jax.Array:
    """Streaming steps of ``chunk`` pulls needed to cover ``pulls`` pulls (at least 1)."""
    return jnp.maximum((pulls + chunk - 1) // chunk, 1)


def stream_block_means(draw_chunk, steps, block_size, num_blocks, chunk: int, max_blocks: int):
    """Streams chunks of pulls into block sums and returns block means.

    Args:
      draw_chunk: ``j -> f[..., A, chunk]``, samples ``j chunk .. (j+1) chunk - 1``
        of each row.
      steps: traced number of chunks to stream (>= 1).
      block_size: i64[A, G] ``s`` per row and layout.
      num_blocks: i64[G] (or [A, G]) ``B`` per layout.
      chunk: static chunk length.
      max_blocks: static length of the block axis.

    Returns:
      f64[..., max_blocks, A, G] block means (entries ``b >= B`` are meaningless).
    """

    def contribution(j):
        return chunk_block_sums(draw_chunk(j), j * chunk, block_size, num_blocks, max_blocks)

    sums = jax.lax.fori_loop(1, steps, lambda j, sums: sums + contribution(j), contribution(0))
    return sums / jnp.maximum(block_size, 1)


def median_of_block_means(
    means: jax.Array, num_blocks: jax.Array, dtype=jnp.float32
) -> jax.Array:
    """The ``ceil(B/2)``-th smallest of the first ``B`` block means, in ``dtype``.

    Rounding the float64 means to ``dtype`` first is monotone, so the result is
    exactly the float64 order statistic rounded to ``dtype``.

    Args:
      means: f64[..., Bmax, A, G] block means; entries ``b >= B`` are ignored.
      num_blocks: int[A, G] ``B`` per layout (broadcast), ``1 <= B <= Bmax``.
      dtype: float32 or float64.

    Returns:
      dtype[..., A, G].
    """
    lead, (max_blocks, arms, layouts) = means.shape[:-3], means.shape[-3:]
    num_blocks = jnp.broadcast_to(jnp.asarray(num_blocks), (arms, layouts))
    keys = selection.order_keys(means.astype(dtype))
    unused = jnp.arange(max_blocks)[:, None, None] >= num_blocks
    keys = jnp.where(unused, jnp.iinfo(keys.dtype).max, keys)
    # Count over the block axis of a 2-D [Bmax, rows * A * G] array: the counting passes
    # vectorise along every other axis at once (twice as fast as along A * G alone).
    rows = math.prod(lead)
    keys = jnp.moveaxis(keys.reshape(rows, max_blocks, arms * layouts), 1, 0).reshape(max_blocks, -1)
    ranks = jnp.tile(((num_blocks + 1) // 2).reshape(arms * layouts), rows)
    picked = selection.kth_smallest_keys(keys, ranks, axis=0)
    return selection.from_order_keys(picked, dtype).reshape(*lead, arms, layouts)


def median_of_means(
    x: jax.Array, num_blocks: Any, n: Any = None, *, max_blocks: int | None = None
) -> jax.Array:
    r"""Median-of-Means estimate exactly as in Section 4 of the paper.

    Uses the first ``B * floor(n / B)`` samples in ``B`` consecutive blocks of
    equal size ``floor(n / B)`` and returns the ``ceil(B/2)``-th smallest block
    mean.  ``n`` and ``num_blocks`` may be traced arrays (one compiled program
    for a grid of them); then ``max_blocks`` must bound ``num_blocks``.

    Args:
      x: f32[..., N] or f64[..., N] samples in arrival order.
      num_blocks: int ``B >= 1``, or an int array broadcast against
        ``x.shape[:-1]``.
      n: valid prefix length ``<= N`` (default ``N``), int or int array.
      max_blocks: static upper bound on ``num_blocks``; inferred when
        ``num_blocks`` is concrete.

    Returns:
      ``x.dtype[...]`` (float32 for non-float input); NaN in the rows of a
      grid (or traced) ``n`` with ``n < B`` (a block would be empty).  ``B > N``,
      a single estimate with ``n < B`` and ``N = 0`` are ``ValueError``\ s.  An infinite sample spoils only its own block:
      the estimate stays finite unless at least half the blocks are spoiled.
      float32 and float64 inputs agree to ``2^-24 (max_b mean_b|x| + |MoM|)``
      (input and output rounding; the order statistic is 1-Lipschitz in the
      block means).

    Examples:
      >>> import jax.numpy as jnp
      >>> x = jnp.array([1.0, 2.0, 100.0, 3.0, 4.0, 5.0, jnp.inf])
      >>> median_of_means(x, num_blocks=3)   # blocks (1, 2) (100, 3) (4, 5); inf discarded
      Array(4.5, dtype=float64)
      >>> median_of_means(x.astype(jnp.float32), num_blocks=3, n=6)
      Array(4.5, dtype=float32)
    """
    samples = real_array("x", x, "an array f[..., N] of samples")
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError(f"x must have a sample axis, shape (..., N); got a scalar x={x}.")
    dtype = jnp.float64 if x.dtype == jnp.float64 else jnp.float32
    x = x.astype(dtype)
    length = x.shape[-1]
    if length == 0 and samples is not None:
        raise ValueError(f"x must hold at least one sample (N >= 1); got x of shape {x.shape}.")
    check_integer("num_blocks", num_blocks, 1)
    if n is not None:
        check_integer("n", n, 0, maximum=length)
    # More blocks than samples is an error: B > N anywhere, or a single estimate with n < B.  A
    # grid of prefix lengths n may hold rows with n < B: NaN there (an empty block), as when traced.
    blocks, valid = concrete(num_blocks), concrete(n)
    if blocks is not None and blocks.size and blocks.max() > length:
        raise ValueError(
            f"num_blocks must be at most the number of samples N={length} (a block would be empty); "
            f"got num_blocks={int(blocks.max())}."
        )
    if blocks is not None and valid is not None and blocks.ndim == 0 and valid.ndim == 0 and valid < blocks:
        raise ValueError(
            f"num_blocks must be at most the number of samples n={int(valid)} (a block would be empty); "
            f"got num_blocks={int(blocks)}."
        )
    if max_blocks is None:
        if blocks is None:
            raise ValueError(
                "num_blocks is traced, so median_of_means needs a static max_blocks >= num_blocks."
            )
        max_blocks = int(blocks.max())
    check_integer("max_blocks", max_blocks, 1)
    n = jnp.asarray(length if n is None else n, jnp.int64)
    return _median_of_means(x, jnp.asarray(num_blocks, jnp.int64), n, max_blocks)


@partial(jax.jit, static_argnums=3)
def _median_of_means(x, num_blocks, n, max_blocks):
    dtype = x.dtype
    rows = jnp.broadcast_shapes(x.shape[:-1], n.shape, num_blocks.shape)
    x = jnp.broadcast_to(x, (*rows, x.shape[-1])).reshape(-1, x.shape[-1])  # [A, N]
    n = jnp.broadcast_to(n, rows).reshape(-1, 1)
    num_blocks = jnp.broadcast_to(num_blocks, rows).reshape(-1, 1)
    block_size = n // jnp.maximum(num_blocks, 1)
    sums = chunk_block_sums(x, 0, block_size, num_blocks, max_blocks)  # [Bmax, A, 1]
    estimate = median_of_block_means(sums / jnp.maximum(block_size, 1), num_blocks, dtype)
    valid = (block_size >= 1) & (num_blocks <= max_blocks)
    return jnp.where(valid, estimate, jnp.nan).astype(dtype).reshape(rows)
