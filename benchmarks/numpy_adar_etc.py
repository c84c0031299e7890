"""The strongest plain-NumPy AdaR-ETC sweep we could write: the baseline of bench_sweep.py.

Written the way a careful NumPy engineer would, without htb_jax:

* **Draws.** A Pareto(a) variate on ``[1, inf)`` is ``U^(-1/a)``; ``U`` is
  ``|w| / 2^63`` for a raw 64-bit word ``w`` of ``SFC64`` (NumPy's fastest
  generator), read at float32 relative precision down to ``2^-63`` (htb_jax's
  uniform reaches ``2^-64``), and ``U^(-1/a) = exp((126 log 2 - log w^2) / 2a)``
  in vectorised float32 ufuncs, in place.  This is a quarter cheaper per
  reward than ``exp(E / a)`` from ``standard_exponential(dtype=np.float32)``,
  NumPy's float32 ziggurat (the baseline until 2026-12-01), whose tail also
  stops sooner (``E`` below about 24, ``U`` above about ``2^-35``).  The arm's
  location is added after the Median-of-Means, which commutes with a shift, so
  the rewards are never shifted elementwise.
* **Median-of-Means shared across the grid.** Every grid point at one
  ``(K, T)`` has the same block count ``B``; an arm's estimate depends only
  on its block size ``s = floor(n_i / B)``, so each distinct block size is
  reduced once (``reshape`` into ``[B, s]`` blocks, float32 block sums by
  ``s`` strided adds, then ``np.partition`` for the ``ceil(B/2)``-th
  smallest, in place) and every grid point with that size reads it, all grid
  points in one gather.
* **Seeds in cache-sized chunks over threads.** NumPy's generators, ufuncs
  and ``np.partition`` release the GIL, so chunks of seeds (each with its own
  generator, spawned from one ``SeedSequence``) run on a thread pool, one
  thread per core by default (chunks of 32 seeds measured fastest).

The commit is the argmax of the estimates (ties to the lowest index) and the
regret is the exact pseudo-regret ``sum_i Delta_i n_i + (T - L_T) Delta_c``.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def schedule(num_arms: int, horizon: int, eps: float, alpha: np.ndarray, q: np.ndarray):
    """``(B_T, L_T)`` of Algorithm 1 (float64; ``K^q T^beta`` rounded to 1e-9 before the ceiling)."""
    blocks = math.ceil(8 * math.log(num_arms * float(horizon) ** 3))
    beta = (1 - alpha) * (1 + eps) / eps
    poly = num_arms**q * float(horizon) ** beta
    poly = np.ceil(np.round(poly, 9))
    return blocks, np.minimum(horizon, num_arms * blocks + poly).astype(np.int64)


def draw_pareto(seed_seq, size: tuple[int, ...], shape: float) -> np.ndarray:
    """Pareto(``shape``) on ``[1, inf)``, f32[size], from ``SFC64(seed_seq)``'s raw 64-bit words.

    ``U = |w| / 2^63`` for the word ``w`` read as int64 (rounded to float32: 24 significant bits at every
    magnitude), and ``U^(-1/a) = exp((126 log 2 - log w^2) / (2a))``: squaring keeps ``w^2 <= 2^126``
    inside float32 and takes the absolute value; ``w = 0`` (probability ``2^-64``) is read as ``|w| = 1``.
    """
    words = np.random.SFC64(seed_seq).random_raw(math.prod(size)).view(np.int64).reshape(size)
    y = np.empty(size, np.float32)
    np.copyto(y, words, casting="unsafe")
    np.multiply(y, y, out=y)
    np.maximum(y, np.float32(1.0), out=y)
    np.log(y, out=y)
    y *= np.float32(-0.5 / shape)
    y += np.float32(63.0 * math.log(2.0) / shape)
    np.exp(y, out=y)
    return y


def _chunk_regret(seed_seq, n, means, shape, horizon, blocks, lengths, pulls):
    """Regret f64[G, n] of ``n`` seeds drawn from ``seed_seq``."""
    k = len(means)
    y = draw_pareto(seed_seq, (n, k, int(pulls.max())), shape)
    shift = means - shape / (shape - 1.0)  # loc_i + Y - a/(a-1), added after the median
    rank = (blocks + 1) // 2 - 1
    sizes = pulls // blocks  # [G, K]
    distinct, which = np.unique(sizes, return_inverse=True)
    medians = np.zeros((len(distinct), n, k))
    for u, s in enumerate(distinct):
        s = int(s)
        if s == 0:
            continue
        blocked = y[:, :, : blocks * s].reshape(n, k, blocks, s)
        block_sums = blocked[..., 0].copy()
        for j in range(1, s):  # s strided adds: NumPy reduces a short last axis slowly
            block_sums += blocked[..., j]
        block_sums.partition(rank, axis=-1)
        medians[u] = block_sums[..., rank]
        medians[u] /= s
    gaps = means.max() - means
    estimates = medians[which.reshape(sizes.shape), :, np.arange(k)]  # [G, K, n]: each arm's block size
    estimates += shift[:, None]
    explore = pulls @ gaps  # [G]
    regret = explore[:, None] + (horizon - lengths)[:, None] * gaps[np.argmax(estimates, axis=1)]
    return np.where((lengths >= horizon)[:, None], explore[:, None], regret)


def sweep(seed: int, means: np.ndarray, shape: float, horizon: int, eps: float, alpha: np.ndarray,
          q: np.ndarray, num_seeds: int, *, threads: int | None = None, seed_chunk: int = 32):
    """Regret f64[G, S] of AdaR-ETC on Pareto(shape) arms with the given means.

    Args:
      seed: root seed; chunk ``c`` draws from the ``c``-th child of ``SeedSequence(seed)``.
      threads: worker threads (default: one per core).
      seed_chunk: seeds per chunk (32 seeds of K = 10 arms and 2505 pulls are 3.2 MB of float32; 32
        measured faster than 16 on the AMD EPYC with 2 cores).

    Returns:
      ``(regret, drawn)``: regrets per grid point and seed, and the number of
      rewards drawn.
    """
    k = len(means)
    blocks, lengths = schedule(k, horizon, eps, alpha, q)
    pulls = lengths[:, None] // k + (np.arange(k)[None, :] < lengths[:, None] % k)  # [G, K]
    chunks = [min(seed_chunk, num_seeds - start) for start in range(0, num_seeds, seed_chunk)]
    children = np.random.SeedSequence(seed).spawn(len(chunks))
    threads = threads or os.cpu_count() or 1
    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(
            lambda args: _chunk_regret(args[0], args[1], means, shape, horizon, blocks, lengths, pulls),
            zip(children, chunks, strict=True)))
    return np.concatenate(parts, axis=1), num_seeds * k * int(pulls.max())


def sweep_reference(rng: np.random.Generator, means: np.ndarray, shape: float, horizon: int, eps: float,
                    alpha: np.ndarray, q: np.ndarray, num_seeds: int):
    """The previous baseline, kept to report the gain: float64 ``Generator.pareto`` for every
    seed at once, then per grid point and arm a ``reshape`` into blocks and ``np.partition``."""
    k = len(means)
    blocks, lengths = schedule(k, horizon, eps, alpha, q)
    pulls = lengths[:, None] // k + (np.arange(k)[None, :] < lengths[:, None] % k)  # [G, K]
    width = int(pulls.max())
    offset = shape / (shape - 1)
    rewards = rng.pareto(shape, size=(num_seeds, k, width)) + 1.0 - offset + means[None, :, None]
    gaps = means.max() - means
    regret = np.empty((len(lengths), num_seeds))
    rank = (blocks + 1) // 2 - 1
    for g, length in enumerate(lengths):
        explore = float(gaps @ pulls[g])
        if length >= horizon:
            regret[g] = explore
            continue
        estimates = np.empty((num_seeds, k))
        for i in range(k):
            s = int(pulls[g, i]) // blocks
            block_means = rewards[:, i, : blocks * s].reshape(num_seeds, blocks, s).mean(axis=-1)
            estimates[:, i] = np.partition(block_means, rank, axis=-1)[:, rank]
        committed = np.argmax(estimates, axis=1)
        regret[g] = explore + (horizon - length) * gaps[committed]
    return regret, rewards.size
