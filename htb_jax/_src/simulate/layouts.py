"""Block layouts ``(B, s)``: a Median-of-Means estimate's block count and block size on one arm.

Configurations (grid points and horizons) with the same layout on an arm read
the same blocks of the same samples, so the fast path streams each distinct
layout once (:func:`_distinct_layouts`), and the static number of layouts it
streams is bucketed by :func:`num_layouts` so that a new grid seldom
recompiles.  A layout is packed in one integer (:func:`_layout_codes`) to be
sorted and compared.
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp

_LAYOUT_SHIFT = 40  # (B, s) packed as B 2^40 + s: s <= MAX_PULLS = 2^32, B < 2^23


def _layout_codes(block_size, blocks):
    """i64[K, C]: configuration c's block layout ``(B, s)`` on arm ``k``, packed in one integer."""
    return (blocks[None, :] << _LAYOUT_SHIFT) + block_size


def _distinct_layouts(block_size, blocks, num_layouts: int):
    """The distinct block layouts of each arm, and where each configuration finds its own.

    Configurations with the same ``(B, s)`` on an arm read the same blocks of the
    same samples, so their Median-of-Means estimates are one computation: the
    grid points of a sweep share ``B_T`` and have few distinct block sizes
    (16 ``(alpha, q)`` points at ``K = 10``, ``T = 10^6``: 5), and streaming
    and selecting the distinct layouts alone gives bitwise the same estimates.

    Args:
      block_size: i64[K, C] ``s``; blocks: i64[C] ``B``.
      num_layouts: static ``U``, at least the most distinct layouts of an arm;
        an arm with fewer fills its other slots with empty layouts (``s = 0``,
        ``B = 1``: no work, never read).

    Returns:
      ``(size, count, index)``: i64[K, U] the layouts' ``s`` and ``B``, and
      i64[K, C] the layout of each configuration.
    """
    codes = _layout_codes(block_size, blocks)
    ordered = jnp.sort(codes, axis=-1)
    rank = jnp.cumsum(jnp.diff(ordered, axis=-1, prepend=ordered[:, :1]) != 0, axis=-1)  # [K, C]
    slot = jnp.arange(num_layouts)[:, None]
    # The u-th distinct code of each arm, or the arm's largest where it has fewer (order kept).
    distinct = jnp.min(jnp.where(rank[:, None, :] == slot, ordered[:, None, :], ordered[:, None, -1:]), axis=-1)
    index = jnp.sum(distinct[:, None, :] < codes[:, :, None], axis=-1)  # the first slot holding the code
    mask = (1 << _LAYOUT_SHIFT) - 1
    used = slot[:, 0] <= rank[:, -1:]  # [K, U]
    return jnp.where(used, distinct & mask, 0), jnp.where(used, distinct >> _LAYOUT_SHIFT, 1), index


def num_layouts(needed: int, configs: int) -> int:
    """Static number of block layouts streamed per arm: ``needed``, the most distinct ``(B, s)`` of
    an arm over the ``configs`` configurations, rounded up to 1, 2, 3, 4, 6, 8, 12, 16, ... (at
    most ``configs``), so that a new grid recompiles only when it crosses one of those."""
    if needed == 1:
        return 1
    bucket = next(b for e in itertools.count() for b in (2 << e, 3 << e) if b >= needed)  # 2, 3, 4, 6, 8, ...
    return min(bucket, configs)
