"""Per-round Python policies in the style of classic bandit libraries: the baseline of bench_engine.py.

A policy object exposes ``choose()`` and ``update(arm, reward)``, called once
per round; rewards are drawn one at a time from NumPy's generator.  Written
the way such libraries are (SMPyBandits, for example): every round recomputes
every arm's index.
"""

from __future__ import annotations

import math
import time

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


def gaussian_over_seeds(means: np.ndarray, scale: float, rng: np.random.Generator):
    """``draw(arm, pulls)``: one ``N(means[arm], scale^2)`` reward per seed, ``arm`` i64[seeds] (``pulls``,
    each seed's earlier pulls of its arm, unused)."""
    return lambda arm, pulls: means[arm] + scale * rng.standard_normal(arm.size)


def table_over_seeds(table: np.ndarray):
    """``draw(arm, pulls)`` reading a reward table f64[seeds, K, T]: seed ``s``'s ``pulls[s]``-th reward of
    ``arm[s]`` (zero-based), as the engine reads ``reward_table``."""
    rows = np.arange(table.shape[0])
    return lambda arm, pulls: table[rows, arm, pulls]


def ucb1_over_seeds(means: np.ndarray, seeds: int, horizon: int, draw, record_arms: bool = False):
    """UCB1 for ``seeds`` seeds at once: a Python loop over the rounds, NumPy over the seeds.

    The strongest plain-NumPy UCB1 we could write for many seeds (the engine's comparison without the
    one-seed-at-a-time handicap of the loops above): each round computes every seed's index in one
    expression (:class:`UCB1Loop`'s, the engine's one division), its argmax, one reward per seed from
    ``draw(arm, pulls)`` (:func:`gaussian_over_seeds`) and two scattered updates.

    Returns:
      the pseudo-regret f64[seeds], and with ``record_arms`` the arms played i64[seeds, horizon].
    """
    k = len(means)
    rows = np.arange(seeds)
    sums, counts = np.zeros((seeds, k)), np.zeros((seeds, k))
    arms = np.empty((seeds, horizon), dtype=np.int64) if record_arms else None
    for t in range(1, horizon + 1):
        if t <= k:  # each arm once, in order, as UCB1Loop plays its unplayed arms
            arm = np.full(seeds, t - 1)
        else:
            arm = ((sums + np.sqrt((2.0 * math.log(t)) * counts)) / counts).argmax(axis=1)
        sums[rows, arm] += draw(arm, counts[rows, arm].astype(np.int64))
        counts[rows, arm] += 1.0
        if record_arms:
            arms[:, t - 1] = arm
    regret = counts @ (means.max() - means)
    return (regret, arms) if record_arms else regret


def robust_ucb_mom_over_seeds(means: np.ndarray, eps: float, v: float, seeds: int, horizon: int, draw,
                              record_arms: bool = False):
    """Robust UCB with the median of means (:class:`RobustUCBMoMLoop`'s rule) for ``seeds`` seeds at once.

    A Python loop over the rounds, NumPy over the seeds, written to be as fast as we could make it:
    each arm's rewards are kept as prefix sums f64[seeds, K, T + 1], so a block mean is one difference;
    an arm's median of means is recomputed only when it changes (the pulled arm, or every arm when the
    block cap ``floor(1 + 16 log t)`` grows, 148 times in ``10^4`` rounds, for the arms whose block
    count grows), by one ``np.partition`` over the rows' block sums (rows of fewer blocks padded with
    ``-inf`` and ``+inf``); the width term is one expression over every arm.
    Block means are prefix-sum differences in float64, not rounded to float32 as the engine's.

    Returns:
      the pseudo-regret f64[seeds], and with ``record_arms`` the arms played i64[seeds, horizon].
    """
    k = len(means)
    rows = np.arange(seeds)
    cap_max = math.floor(1 + 16 * math.log(horizon))
    positions = np.arange(cap_max + 1)
    prefix = np.zeros((seeds, k, horizon + 1))  # prefix[s, a, n]: the sum of arm a's first n rewards
    counts = np.zeros((seeds, k), dtype=np.int64)
    mom = np.full((seeds, k), np.inf)  # +inf until an arm has two rewards (no block)
    arms = np.empty((seeds, horizon), dtype=np.int64) if record_arms else None
    power, scale = eps / (1 + eps), (12 * v) ** (1 / (1 + eps))

    def estimates(s, a, cap):  # the medians of means of the rows (s[i], a[i]) under the block cap
        n = counts[s, a]
        blocks = np.minimum(cap, n // 2)
        most = int(blocks.max(initial=0))
        if most == 0:
            return np.full(n.shape, np.inf)
        size = n // np.maximum(blocks, 1)
        offsets = positions[: most + 1] * size[:, None]
        padded = int(blocks.min()) < most
        if padded:  # rows of fewer blocks: keep their block ends inside their rewards
            offsets = np.minimum(offsets, n[:, None])
        ends = flat[((s * k + a) * (horizon + 1))[:, None] + offsets]
        sums = ends[:, 1:] - ends[:, :-1]  # each row's block sums, its first `blocks` of them meant
        if padded:
            # Padded with -inf and +inf so that every row's median is the same order statistic of its
            # padded row, the ((most + 1) // 2)-th smallest: one partition for all rows.
            low = blocks + ((most + 1) // 2 - (blocks + 1) // 2)
            sums = np.where(positions[:most] < blocks[:, None], sums,
                            np.where(positions[:most] < low[:, None], -np.inf, np.inf))
        middle = (most + 1) // 2 - 1
        median = np.partition(sums, middle, axis=1)[:, middle] / np.maximum(size, 1)
        return np.where(blocks >= 1, median, np.inf)

    flat = prefix.reshape(-1)
    cap = 0
    for t in range(1, horizon + 1):
        log_t = math.log(t)
        if (new_cap := math.floor(1 + 16 * log_t)) != cap:
            grown = np.flatnonzero(counts // 2 > cap)  # only these rows' block counts change
            cap = new_cap
            mom.reshape(-1)[grown] = estimates(grown // k, grown % k, cap)
        with np.errstate(divide="ignore"):
            index = mom + scale * ((2 + 32 * log_t) / counts) ** power
        arm = index.argmax(axis=1)
        pulls = counts[rows, arm]
        position = (rows * k + arm) * (horizon + 1) + pulls
        flat[position + 1] = flat[position] + draw(arm, pulls)
        counts[rows, arm] = pulls + 1
        mom[rows, arm] = estimates(rows, arm, cap)
        if record_arms:
            arms[:, t - 1] = arm
    regret = counts @ (means.max() - means)
    return (regret, arms) if record_arms else regret


def smpybandits_ucb(num_arms: int):
    """SMPyBandits' ``UCB`` behind the loops' ``choose``/``update`` interface (a class), or None if
    SMPyBandits 0.9.7 is not installed."""
    try:
        import scipy.special

        if not hasattr(scipy.special, "btdtri"):  # removed from recent SciPy; SMPyBandits imports it
            scipy.special.btdtri = scipy.special.betaincinv
        from SMPyBandits.Policies import UCB
    except Exception:  # noqa: BLE001 - optional comparison
        return None

    class Adapter:
        def __init__(self):
            self.policy = UCB(num_arms)
            self.policy.startGame()

        def choose(self):
            return self.policy.choice()

        def update(self, arm, reward):
            self.policy.getReward(arm, reward)

    return Adapter


def smpybandits_seed(means: np.ndarray, scale: float, horizon: int, seed: int) -> tuple[float, float]:
    """One seed of SMPyBandits' ``UCB`` on Gaussian arms: ``(seconds, pseudo-regret)``; a worker's task
    when seeds run in several processes."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    regret = run(smpybandits_ucb(len(means))(), means, gaussian_draw(scale), horizon, rng)
    return time.perf_counter() - start, regret


def gaussian_draw(scale: float):
    """One ``N(mean, scale^2)`` reward per call."""
    return lambda rng, mean: rng.normal(mean, scale)


def pareto_draw(shape: float):
    """One shifted Pareto(shape) reward with the given mean per call."""
    offset = 1.0 - shape / (shape - 1.0)
    return lambda rng, mean: rng.pareto(shape) + offset + mean
