"""Plain-Python, round-by-round references for every policy (each from its class docstring's definition and source).

Each reads rewards from a table (``rewards[i][j]``: the ``j``-th pull of arm
``i``), plays ``horizon`` rounds and returns the sequence of arms played.
They are written from the definitions, with Python floats and ``math``, and
share nothing with the library.
"""

from __future__ import annotations

import math

import numpy as np


def first_argmax(values):
    """Index of the first maximum (ties to the lowest index)."""
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


def _median_of_means_f32(samples, blocks):
    """The ``ceil(B/2)``-th smallest block mean, rounded to float32 (the library's convention)."""
    s = len(samples) // blocks
    means = sorted(math.fsum(samples[b * s:(b + 1) * s]) / s for b in range(blocks))
    return float(np.float32(means[(blocks + 1) // 2 - 1]))


def _ceil_snapped(value):
    nearest = round(value)
    return nearest if abs(value - nearest) <= 2.0**-44 * max(abs(value), 1.0) else math.ceil(value)


def _adar_etc_schedule(num_arms, horizon, eps, alpha, q):
    blocks = _ceil_snapped(8 * (math.log(num_arms) + 3 * math.log(horizon)))
    beta = (1 - alpha) * (1 + eps) / eps
    return blocks, min(horizon, num_arms * blocks + _ceil_snapped(num_arms**q * horizon**beta))


def ucb1(rewards, horizon):
    k = len(rewards)
    sums, n, arms = [0.0] * k, [0] * k, []
    for t in range(1, horizon + 1):
        index = [
            math.inf if n[i] == 0 else (sums[i] + math.sqrt(2 * math.log(t) * n[i])) / n[i] for i in range(k)
        ]
        arm = first_argmax(index)
        sums[arm] += float(rewards[arm][n[arm]])
        n[arm] += 1
        arms.append(arm)
    return arms


def robust_ucb(rewards, horizon, eps, scale, estimator):
    k = len(rewards)
    seen = [[] for _ in range(k)]
    arms = []
    for t in range(1, horizon + 1):
        big_l = 2 * math.log(t)  # log(1/delta), delta = t^-2
        index = []
        for i in range(k):
            x, s = seen[i], len(seen[i])
            if estimator == "truncated":
                if s == 0:
                    index.append(math.inf)
                    continue
                kept = [xj for j, xj in enumerate(x, 1) if abs(xj) <= (scale * j / big_l) ** (1 / (1 + eps))]
                mean = math.fsum(kept) / s
                index.append(mean + 4 * scale ** (1 / (1 + eps)) * (big_l / s) ** (eps / (1 + eps)))
            elif estimator == "mom":
                blocks = math.floor(min(1 + 16 * math.log(t), s / 2))
                if blocks < 1:
                    index.append(math.inf)
                    continue
                mean = _median_of_means_f32(x, blocks)
                width = (12 * scale) ** (1 / (1 + eps)) * ((2 + 32 * math.log(t)) / s) ** (eps / (1 + eps))
                index.append(mean + width)
            else:  # catoni, eps = 1
                if not s > 4 * big_l:
                    index.append(math.inf)
                    continue
                a = math.sqrt(2 * big_l / (s * (scale + 2 * scale * big_l / (s - 2 * big_l))))
                mean = _catoni_root(x, a)
                index.append(mean + 2 * math.sqrt(scale * big_l / s))
        arm = first_argmax(index)
        seen[arm].append(float(rewards[arm][len(seen[arm])]))
        arms.append(arm)
    return arms


def _catoni_root(x, a):
    """Root of ``sum psi(a (x_j - mu))`` by bisection to float64 resolution."""
    def total(mu):
        return math.fsum(math.copysign(math.log1p(abs(a * (xj - mu)) + 0.5 * (a * (xj - mu)) ** 2), xj - mu)
                         for xj in x)
    lo, hi = min(x), max(x)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if total(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return hi


def force_mom(rewards, horizon, rho):
    k = len(rewards)
    m0 = math.ceil(16 * math.log(2 * k + math.e))
    forced = [[] for _ in range(k)]
    pulls = [0] * k
    done, arms = 0, []
    estimates = [math.nan] * k
    for t in range(1, horizon + 1):
        target = max(k * m0, _ceil_snapped(k ** (1 - rho) * t**rho))
        if done < target:
            arm = done % k
            x = float(rewards[arm][pulls[arm]])
            forced[arm].append(x)
            n = len(forced[arm])
            cap = 2 * math.ceil(math.log(2 * k) + math.log(math.log(math.exp(math.e) + n))) + 1
            q = min(n, cap)
            q = q if q % 2 == 1 else q - 1
            estimates[arm] = _median_of_means_f32(forced[arm], q)
            done += 1
        else:
            arm = first_argmax(estimates)
        pulls[arm] += 1
        arms.append(arm)
    return arms, done


def explore_then_commit(rewards, horizon, eps, alpha, q, mean_only=False, first_pulls=None):
    """Algorithm 1 (or Empirical ETC) on one run of ``horizon`` rounds; returns (arms, committed)."""
    k = len(rewards)
    blocks, length = _adar_etc_schedule(k, horizon, eps, alpha, q)
    start = list(first_pulls or [0] * k)
    count = [0] * k
    arms, committed = [], -1
    for t in range(1, horizon + 1):
        if t <= length:
            arm = (t - 1) % k
            count[arm] += 1
        else:
            if committed < 0:
                estimates = []
                for i in range(k):
                    x = [float(v) for v in rewards[i][start[i]:start[i] + count[i]]]
                    estimates.append(_median_of_means_f32(x, 1 if mean_only else blocks))
                committed = first_argmax(estimates)
            arm = committed
        arms.append(arm)
    return arms, committed


def anytime_adar_etc(rewards, horizon, eps, alpha, q, growth):
    k = len(rewards)
    pulls = [0] * k
    arms, epoch = [], 0
    while len(arms) < horizon:
        length = _ceil_snapped(growth**epoch)
        played, _ = explore_then_commit(rewards, length, eps, alpha, q, first_pulls=pulls)
        for arm in played[: horizon - len(arms)]:
            pulls[arm] += 1
            arms.append(arm)
        epoch += 1
    return arms
