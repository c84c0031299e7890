"""A straightforward vectorised NumPy AdaR-ETC sweep: the baseline of bench_sweep.py.

Written the way one would without htb_jax: draw every seed's exploration rewards
at once (float64, ``Generator.pareto``), then for each grid point reshape the
first ``B s`` pulls of every arm into ``B`` blocks, take block means and
``np.partition`` for the ``ceil(B/2)``-th smallest, commit to the argmax, and
add up the pseudo-regret.
"""

from __future__ import annotations

import math

import numpy as np


def schedule(num_arms: int, horizon: int, eps: float, alpha: np.ndarray, q: np.ndarray):
    """``(B_T, L_T)`` of Algorithm 1 (float64; ``K^q T^beta`` rounded to 1e-9 before the ceiling)."""
    blocks = math.ceil(8 * math.log(num_arms * float(horizon) ** 3))
    beta = (1 - alpha) * (1 + eps) / eps
    poly = num_arms**q * float(horizon) ** beta
    poly = np.ceil(np.round(poly, 9))
    return blocks, np.minimum(horizon, num_arms * blocks + poly).astype(np.int64)


def sweep(rng: np.random.Generator, means: np.ndarray, shape: float, horizon: int, eps: float,
          alpha: np.ndarray, q: np.ndarray, num_seeds: int):
    """Regret f64[G, S] of AdaR-ETC on Pareto(shape) arms with the given means.

    Returns:
      ``(regret, drawn)``: regrets per grid point and seed, and the number of
      rewards drawn.
    """
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
