"""Median-of-Means (Section 4): block sums streamed chunk by chunk, median by exact selection.

With ``n`` samples and ``B`` blocks, ``s = floor(n / B)``; block ``b`` (0-based)
holds samples ``b s .. (b+1) s - 1``, the ``n - B s`` leftover samples are
discarded, and the estimate is the ``ceil(B/2)``-th smallest block mean.

``n``, ``B`` and ``s`` may be traced values (one compiled program serves a
whole grid of exploration lengths), so a block layout is never a static
reshape of the samples.  Each row and layout is summed by one of two routes:

* **Small blocks, ``1 <= s <= STATIC_BLOCK_SIZES`` (32):** a ``lax.switch`` on ``s``
  picks a branch in which ``s`` is a Python int, and the row's samples are
  reshaped into ``[blocks, s]`` and added in float64, sample after sample in
  their order (a fixed order: the same sum on every machine).  A sum is
  exact up to float64 rounding of ``s - 1`` additions; infinities follow
  IEEE arithmetic within their own block (``+inf``, ``-inf``, NaN for both or
  for a NaN sample) and never reach another block.
* **Larger blocks:** float64 prefix sums of the chunk, read at the block edges
  (:func:`chunk_block_sums`), which is cheap per sample when blocks are long.
  Infinite samples are kept out of the prefix sums (which would turn
  ``inf - inf`` into NaN for every later block): prefix counts of ``+inf`` and
  ``-inf`` samples restore each block's own infinity, with the semantics
  above.  A block sum is exact up to ``|error| <= C 2^-53 max_j |sum_{i<=j}
  x_i|`` over a chunk of ``C`` samples.

The median is an exact order statistic (:mod:`htb_jax._src.selection`), which
orders NaN after ``+inf``.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import selection
from htb_jax._src.validation import check_broadcasts_against, check_integer, concrete, real_array

STATIC_BLOCK_SIZES = 32  # block sizes summed by a static reshape; longer blocks read prefix sums


def _block_diff(cumsum: jax.Array, edges: jax.Array) -> jax.Array:
    """Block sums from a cumulative sum: f[..., A, C] and edges i32[Bmax + 1, A, G] -> [..., Bmax, A, G].

    The sum of samples ``edges[b] .. edges[b+1] - 1`` of arm row ``a`` is
    ``S(edges[b+1]) - S(edges[b])`` with ``S(e) = cumsum[a, e - 1]`` and
    ``S(0) = 0``.  One flat gather per leading row.
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
    """Contributions of samples ``offset .. offset + C - 1`` to every MoM block, from prefix sums.

    Each row ``a`` of ``x`` (an arm) feeds ``G`` block layouts; block ``b`` of
    layout ``(a, g)`` holds samples ``b s .. (b+1) s - 1``, ``s =
    block_size[a, g]``, and exists for ``b < num_blocks[a, g]``.

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


def _static_size_sums(size: int, chunk: int, max_blocks: int):
    """The branch for block size ``s = size``: ``(x f[L, C], offset) -> f64[max_blocks, L]``, the
    contributions of the chunk's samples to blocks ``start .. start + max_blocks - 1`` with
    ``start = min(offset // s, max_blocks)`` (blocks past ``max_blocks`` are never read)."""
    touched = min(-(-(chunk + size - 1) // size), max_blocks)  # blocks a chunk reaches, at most

    def branch(x, offset):
        rows = x.shape[0]
        head = offset % size  # samples of the first block that precede the chunk
        padded = jnp.pad(x, ((0, 0), (size - 1, max(touched * size - chunk, 0))))
        window = jax.lax.dynamic_slice_in_dim(padded, size - 1 - head, touched * size, axis=-1)
        window = window.reshape(rows, touched, size).astype(jnp.float64)
        sums = window[..., 0]
        for t in range(1, size):
            sums = sums + window[..., t]
        return jnp.pad(sums.T, ((0, max_blocks - touched), (0, 0)))

    return branch


def static_block_sizes(largest: int) -> int | None:
    """The static bound on block sizes a program is compiled for: the largest block size it will
    see rounded up to 4, 8, 16 or 32 (so that a new grid recompiles only when it crosses one), or
    ``None`` beyond :data:`STATIC_BLOCK_SIZES` (every size, longer blocks by prefix sums)."""
    return next((b for b in (4, 8, 16, STATIC_BLOCK_SIZES) if largest <= b), None)


def static_smallest_block_size(smallest: int) -> int:
    """The static lower bound on nonzero block sizes a program is compiled for: ``STATIC_BLOCK_SIZES
    + 1`` where every nonzero block is longer than :data:`STATIC_BLOCK_SIZES` (no static route is
    compiled: the empirical mean's single block, long blocks at large ``T``), else 1."""
    return STATIC_BLOCK_SIZES + 1 if smallest > STATIC_BLOCK_SIZES else 1


def stream_block_sums(
    draw_chunk, steps, block_size, num_blocks, chunk: int, max_blocks: int, max_block_size: int | None = None,
    min_block_size: int = 1,
):
    """Streams chunks of pulls into Median-of-Means block sums, block axis first.

    A chunk's contribution to a block is added onto the block's running sum
    (from ``+0.0``); on the static route the contribution is the block's
    samples in the chunk added one after the other, from the first.

    Args:
      draw_chunk: ``j -> f[..., A, chunk]``, samples ``j chunk .. (j+1) chunk - 1``
        of each row (leading axes ``...``, e.g. seeds, share the layouts).
      steps: traced number of chunks to stream (>= 1).
      block_size: i64[A, G] ``s`` per row and layout; ``s = 0`` is an empty
        layout (no work; its sums are 0).
      num_blocks: i64[G] (or [A, G]) ``B`` per layout.
      chunk: static chunk length.
      max_blocks: static length of the block axis.
      max_block_size: static bound on every ``s`` (see :func:`static_block_sizes`):
        branches are compiled for sizes up to it only, and the prefix-sum route
        only above :data:`STATIC_BLOCK_SIZES`; ``None``: any size.
      min_block_size: static lower bound on every nonzero ``s`` (see
        :func:`static_smallest_block_size`): static branches are compiled from it on.  Each ``s``
        takes the same route whatever the bounds, so the sums do not depend on them.

    Returns:
      f64[max_blocks, A, G, ...] block sums (entries ``b >= B`` are meaningless).
    """
    lead = jax.eval_shape(draw_chunk, 0).shape[:-2]
    rows = math.prod(lead)
    arms, layouts = block_size.shape
    num_blocks = jnp.broadcast_to(jnp.asarray(num_blocks, jnp.int64), (arms, layouts))
    size = jnp.asarray(block_size, jnp.int64).reshape(-1)  # [A G]
    static_sizes = STATIC_BLOCK_SIZES if max_block_size is None else min(max_block_size, STATIC_BLOCK_SIZES)
    long_route = max_block_size is None or max_block_size > STATIC_BLOCK_SIZES
    lowest = max(int(min_block_size), 1)
    branch = jnp.where((size >= lowest) & (size <= static_sizes), size - lowest + 1, 0).astype(jnp.int32)
    long_blocks = size > static_sizes
    branches = [lambda x, offset: jnp.zeros((max_blocks, rows), jnp.float64)]
    branches += [_static_size_sums(s, chunk, max_blocks) for s in range(lowest, static_sizes + 1)]

    def step(j, sums):
        x = draw_chunk(j)
        offset = jnp.asarray(j, jnp.int64) * chunk
        flat = x.reshape(rows, arms, chunk)

        def row(r, sums):
            part = jax.lax.switch(branch[r], branches, flat[:, r // layouts], offset)
            start = jnp.minimum(offset // jnp.maximum(size[r], 1), max_blocks)
            current = jax.lax.dynamic_slice(sums, (start, r, 0), (max_blocks, 1, rows))
            return jax.lax.dynamic_update_slice(sums, current + part[:, None], (start, r, 0))

        if len(branches) > 1:  # else every row is empty or long: nothing but +0.0 to add here
            sums = jax.lax.fori_loop(0, arms * layouts, row, sums)

        def add_long_blocks(sums):
            long_sums = chunk_block_sums(flat, offset, block_size, num_blocks, max_blocks)  # [L, Bmax, A, G]
            long_sums = jnp.where(long_blocks.reshape(arms, layouts), long_sums, 0.0)
            return sums.at[:max_blocks].add(jnp.moveaxis(long_sums, 0, -1).reshape(max_blocks, -1, rows))

        if not long_route:
            return sums
        return jax.lax.cond(jnp.any(long_blocks), add_long_blocks, lambda sums: sums, sums)

    # Rows [2 Bmax, A G, L]: a chunk's blocks start at offset // s, clamped to Bmax.
    sums = jnp.zeros((2 * max_blocks, arms * layouts, rows), jnp.float64)
    sums = jax.lax.fori_loop(0, steps, step, sums)[:max_blocks]
    return sums.reshape(max_blocks, arms, layouts, *lead)


def stream_block_means(
    draw_chunk, steps, block_size, num_blocks, chunk: int, max_blocks: int, max_block_size: int | None = None,
    min_block_size: int = 1,
):
    """:func:`stream_block_sums` divided by the block sizes: f64[max_blocks, A, G, ...] block means
    (0 for an empty layout; entries ``b >= B`` are meaningless)."""
    sums = stream_block_sums(draw_chunk, steps, block_size, num_blocks, chunk, max_blocks, max_block_size,
                             min_block_size)
    size = jnp.maximum(jnp.asarray(block_size, jnp.int64), 1).astype(jnp.float64)
    return sums / size.reshape(*size.shape, *([1] * (sums.ndim - 3)))


def median_of_blocks(means: jax.Array, num_blocks: jax.Array, dtype=jnp.float32) -> jax.Array:
    """The ``ceil(B/2)``-th smallest of the first ``B`` block means along the leading axis, in ``dtype``.

    Rounding the float64 means to ``dtype`` first is monotone, so the result is
    exactly the float64 order statistic rounded to ``dtype``.

    Args:
      means: f64[Bmax, ...] block means; entries ``b >= B`` are ignored.
      num_blocks: int ``B``, ``1 <= B <= Bmax``, broadcast against ``means.shape[1:]``.
      dtype: float32 or float64.

    Returns:
      dtype[means.shape[1:]].
    """
    max_blocks, rest = means.shape[0], means.shape[1:]
    num_blocks = jnp.broadcast_to(jnp.asarray(num_blocks), rest)
    keys = selection.order_keys(means.astype(dtype))
    keys = jnp.where(jnp.arange(max_blocks).reshape(-1, *([1] * len(rest))) >= num_blocks,
                     jnp.iinfo(keys.dtype).max, keys)
    # Count over the block axis of a 2-D [Bmax, columns] array: the counting passes
    # vectorise along every other axis at once.
    picked = selection.kth_smallest_keys(keys.reshape(max_blocks, -1), ((num_blocks + 1) // 2).reshape(-1), axis=0)
    return selection.from_order_keys(picked, dtype).reshape(rest)


def differentiable_median(means: jax.Array) -> jax.Array:
    """The ``ceil(B/2)``-th smallest of ``B`` block means along the leading axis, differentiable in them.

    Exactly ``jnp.sort(means, axis=0)[(B + 1) // 2 - 1]`` and its derivative,
    without the sort: the value by the exact selection of
    :mod:`htb_jax._src.selection` (NaN last, ``-0.0`` equal to ``+0.0``), the
    derivative that of the block a stable sort puts at that rank (among blocks
    with equal means, the ``r``-th in block order, ``r`` the rank's place
    among them).  Blocks of two-point arms tie often, and which tied block
    carries the derivative changes it.

    Args:
      means: f64[B, ...] block means.

    Returns:
      f64[means.shape[1:]].
    """
    blocks, rest = means.shape[0], means.shape[1:]
    plain = jax.lax.stop_gradient(means)
    plain = jnp.where(plain == 0, 0.0, plain)  # -0.0 ties +0.0, as in a sort
    keys = selection.order_keys(plain).reshape(blocks, -1)
    rank = (blocks + 1) // 2
    picked = selection.kth_smallest_keys(keys, rank, axis=0)  # [columns]
    below = jnp.sum(keys < picked, axis=0)
    place = jnp.cumsum(keys == picked, axis=0)  # [B, columns]: equal keys up to each block
    position = jnp.argmax(place == rank - below, axis=0)  # the stable sort's block at the rank
    return jnp.take_along_axis(means.reshape(blocks, -1), position[None], axis=0)[0].reshape(rest)


def num_chunks(pulls: jax.Array, chunk: int) -> jax.Array:
    """Streaming steps of ``chunk`` pulls needed to cover ``pulls`` pulls (at least 1)."""
    return jnp.maximum((pulls + chunk - 1) // chunk, 1)


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
      ``x.dtype[...]`` (float32 for float16, bfloat16 and non-float input); NaN in the rows of a
      grid (or traced) ``n`` with ``n < B`` (a block would be empty), and
      where a traced ``num_blocks`` exceeds ``max_blocks``.  ``B > N``,
      a single estimate with ``n < B`` and ``N = 0`` are ``ValueError``\ s.  An infinite sample spoils only its own block:
      the estimate stays finite unless at least half the blocks are spoiled.  A huge finite sample reaches
      other blocks through rounding only where blocks are longer than 32 samples (their sums are
      differences of float64 prefix sums, exact up to ``N 2^-53 max|prefix sum|``): a sample of ``1e20``
      among samples near 1 erases the other blocks' sums, and prefix sums that overflow float64 make them
      NaN.  It has no derivative (the selection is on integer order keys: JAX's gradient through it
      is 0).
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
    shape = samples.shape if samples is not None else np.shape(x)  # x a device array only once valid
    if len(shape) == 0:
        raise ValueError(f"x must have a sample axis, shape (..., N); got a scalar x={x}.")
    length = shape[-1]
    if length == 0 and samples is not None:
        raise ValueError(f"x must hold at least one sample (N >= 1); got x of shape {shape}.")
    check_integer("num_blocks", num_blocks, 1)
    if n is not None:
        check_integer("n", n, 0, maximum=length)
    for name, value in (("num_blocks", num_blocks), ("n", n)):
        check_broadcasts_against(name, value, shape[:-1], "x's shape without its sample axis")
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
    max_blocks = int(max_blocks)  # an integral float (2.0) as its integer: a static shape
    if blocks is not None and blocks.size and blocks.max() > max_blocks:  # NaN, as an empty block
        raise ValueError(
            f"max_blocks must bound num_blocks; got max_blocks={int(max_blocks)} and num_blocks={int(blocks.max())}."
        )
    # Block sizes are at most n // B <= N // B (<= N when B is traced): compile the static branches
    # for those only.
    most, fewest = length, 1
    if blocks is not None and blocks.size:
        most = length if valid is None or not valid.size else int(valid.max())
        fewest = max(int(blocks.min()), 1)
    bound = static_block_sizes(most // fewest)
    x = jnp.asarray(x)
    x = x.astype(jnp.float64 if x.dtype == jnp.float64 else jnp.float32)
    n = jnp.asarray(length if n is None else n, jnp.int64)
    return _median_of_means(x, jnp.asarray(num_blocks, jnp.int64), n, max_blocks, bound)


@partial(jax.jit, static_argnums=(3, 4))
def _median_of_means(x, num_blocks, n, max_blocks, max_block_size):
    dtype = x.dtype
    rows = jnp.broadcast_shapes(x.shape[:-1], n.shape, num_blocks.shape)
    x = jnp.broadcast_to(x, (*rows, x.shape[-1])).reshape(-1, x.shape[-1])  # [A, N]
    n = jnp.broadcast_to(n, rows).reshape(-1, 1)
    num_blocks = jnp.broadcast_to(num_blocks, rows).reshape(-1, 1)
    block_size = n // jnp.maximum(num_blocks, 1)
    length = x.shape[-1]
    means = stream_block_means(lambda j: x, 1, block_size, num_blocks, length, max_blocks, max_block_size)
    estimate = median_of_blocks(means, num_blocks, dtype)
    valid = (block_size >= 1) & (num_blocks <= max_blocks)
    return jnp.where(valid, estimate, jnp.nan).astype(dtype).reshape(rows)
