"""The strongest plain-NumPy AdaR-ETC sweep we could write: the baseline of bench_sweep.py.

Written the way a careful NumPy engineer would, without htb_jax:

* **Draws.** A Pareto(a) variate on ``[1, inf)`` is ``exp(E / a)`` with ``E``
  standard exponential; ``Generator.standard_exponential(dtype=np.float32)``
  runs NumPy's float32 ziggurat, and ``np.exp`` in float32 is vectorised.
  The arm's location is added after the Median-of-Means, which commutes with
  a shift, so the rewards are never shifted elementwise.
* **Median-of-Means shared across the grid.** Every grid point at one
  ``(K, T)`` has the same block count ``B``; an arm's estimate depends only
  on its block size ``s = floor(n_i / B)``, so each distinct block size is
  reduced once (``reshape`` into ``[B, s]`` blocks, float32 block sums by
  ``s`` strided adds, then ``np.partition`` for the ``ceil(B/2)``-th
  smallest) and every grid point with that size reads it.
* **Seeds in cache-sized chunks over threads.** NumPy's generators, ufuncs
  and ``np.partition`` release the GIL, so chunks of seeds (each with its own
  generator, spawned from one ``SeedSequence``) run on a thread pool, one
  thread per core by default; a chunk's rewards fit in the core's L2 cache.

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


def _chunk_regret(seed_seq, n, means, shape, horizon, blocks, lengths, pulls):
    """Regret f64[G, n] of ``n`` seeds drawn from ``seed_seq``."""
    k = len(means)
    rng = np.random.Generator(np.random.PCG64DXSM(seed_seq))
    width = int(pulls.max())
    y = rng.standard_exponential((n, k, width), dtype=np.float32)
    y *= np.float32(1.0 / shape)
    np.exp(y, out=y)  # Pareto(shape) on [1, inf)
    shift = means - shape / (shape - 1.0)  # loc_i + Y - a/(a-1), added after the median
    rank = (blocks + 1) // 2 - 1
    sizes = pulls // blocks  # [G, K]
    medians = {}
    for s in np.unique(sizes):
        s = int(s)
        if s == 0:
            continue
        blocked = y[:, :, : blocks * s].reshape(n, k, blocks, s)
        block_sums = blocked[..., 0].copy()
        for j in range(1, s):  # s strided adds: NumPy reduces a short last axis slowly
            block_sums += blocked[..., j]
        medians[s] = np.partition(block_sums, rank, axis=-1)[..., rank].astype(np.float64) / s  # [n, K]
    gaps = means.max() - means
    regret = np.empty((len(lengths), n))
    for g, length in enumerate(lengths):
        explore = float(gaps @ pulls[g])
        if length >= horizon:
            regret[g] = explore
            continue
        estimates = np.stack([medians[int(sizes[g, i])][:, i] for i in range(k)], axis=1) + shift
        regret[g] = explore + (horizon - length) * gaps[np.argmax(estimates, axis=1)]
    return regret


def sweep(seed: int, means: np.ndarray, shape: float, horizon: int, eps: float, alpha: np.ndarray,
          q: np.ndarray, num_seeds: int, *, threads: int | None = None, seed_chunk: int = 16):
    """Regret f64[G, S] of AdaR-ETC on Pareto(shape) arms with the given means.

    Args:
      seed: root seed; chunk ``c`` draws from the ``c``-th child of ``SeedSequence(seed)``.
      threads: worker threads (default: one per core).
      seed_chunk: seeds per chunk (16 seeds of K = 10 arms and 2505 pulls are 1.6 MB of float32).

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
