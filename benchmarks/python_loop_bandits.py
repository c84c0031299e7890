"""Per-round Python policies in the style of classic bandit libraries: the baseline of bench_engine.py.

A policy object exposes ``choose()`` and ``update(arm, reward)``, called once
per round; rewards are drawn one at a time from NumPy's generator.  Written
the way such libraries are (SMPyBandits, for example): every round recomputes
every arm's index.
"""

from __future__ import annotations

import math

import numpy as np


class UCB1Loop:
    def __init__(self, num_arms: int):
        self.sums = np.zeros(num_arms)
        self.counts = np.zeros(num_arms)
        self.t = 0

    def choose(self) -> int:
        self.t += 1
        if np.any(self.counts == 0):
            return int(np.argmin(self.counts > 0))
        index = (self.sums + np.sqrt(2.0 * math.log(self.t) * self.counts)) / self.counts
        return int(np.argmax(index))

    def update(self, arm: int, reward: float) -> None:
        self.sums[arm] += reward
        self.counts[arm] += 1


class RobustUCBMoMLoop:
    """Robust UCB with the median of means, known ``(eps, v)``, ``delta = t^-2``."""

    def __init__(self, num_arms: int, eps: float, v: float):
        self.samples = [[] for _ in range(num_arms)]
        self.eps, self.v = eps, v
        self.t = 0

    def _index(self, arm: int) -> float:
        x = self.samples[arm]
        s = len(x)
        blocks = math.floor(min(1 + 16 * math.log(self.t), s / 2))
        if blocks < 1:
            return math.inf
        size = s // blocks
        means = np.asarray(x[: blocks * size]).reshape(blocks, size).mean(axis=1)
        mom = np.partition(means, (blocks + 1) // 2 - 1)[(blocks + 1) // 2 - 1]
        width = (12 * self.v) ** (1 / (1 + self.eps)) * ((2 + 32 * math.log(self.t)) / s) ** (
            self.eps / (1 + self.eps)
        )
        return mom + width

    def choose(self) -> int:
        self.t += 1
        return int(np.argmax([self._index(i) for i in range(len(self.samples))]))

    def update(self, arm: int, reward: float) -> None:
        self.samples[arm].append(reward)


def run(policy, means: np.ndarray, draw, horizon: int, rng: np.random.Generator) -> float:
    """Plays ``horizon`` rounds; ``draw(rng, mean)`` is one reward of the arm with that mean.
    Returns the pseudo-regret."""
    best = means.max()
    regret = 0.0
    for _ in range(horizon):
        arm = policy.choose()
        policy.update(arm, draw(rng, means[arm]))
        regret += best - means[arm]
    return regret


def ucb1_over_seeds(means: np.ndarray, scale: float, seeds: int, horizon: int, rng: np.random.Generator) -> np.ndarray:
    """UCB1 on Gaussian arms for ``seeds`` seeds at once: a Python loop over the rounds, NumPy over the seeds.

    The strongest plain-NumPy UCB1 we could write for many seeds (the engine's comparison without the
    one-seed-at-a-time handicap of the loops above): each round computes every seed's index in one
    expression (:class:`UCB1Loop`'s, the engine's one division), its argmax, one reward per seed from
    ``rng.standard_normal`` and two scattered updates.  Returns the pseudo-regret f64[seeds].
    """
    k = len(means)
    rows = np.arange(seeds)
    sums, counts = np.zeros((seeds, k)), np.zeros((seeds, k))
    for t in range(1, horizon + 1):
        if t <= k:  # each arm once, in order, as UCB1Loop plays its unplayed arms
            arm = np.full(seeds, t - 1)
        else:
            arm = ((sums + np.sqrt((2.0 * math.log(t)) * counts)) / counts).argmax(axis=1)
        sums[rows, arm] += means[arm] + scale * rng.standard_normal(seeds)
        counts[rows, arm] += 1.0
    return counts @ (means.max() - means)


def gaussian_draw(scale: float):
    """One ``N(mean, scale^2)`` reward per call."""
    return lambda rng, mean: rng.normal(mean, scale)


def pareto_draw(shape: float):
    """One shifted Pareto(shape) reward with the given mean per call."""
    offset = 1.0 - shape / (shape - 1.0)
    return lambda rng, mean: rng.pareto(shape) + offset + mean
