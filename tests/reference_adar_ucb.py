"""AdaR-UCB round by round in plain Python (floats, ``math``), from arXiv 2310.02975 (Algorithm 1)
with the class docstring's repairs.

Shares nothing with the library: lists of Python floats, the threshold by a
top-down walk over the sorted squares, the trimmed moments by direct
two-pass sums.
"""

from __future__ import annotations

import math

C = (1 + math.sqrt(2)) ** 2


def threshold(samples, budget):
    """The positive root ``M`` of ``sum_j min(x_j^2 / M^2, 1) = budget``, or None where none exists.

    It exists exactly when more than ``budget`` samples are nonzero.  Walking
    down from the largest square: with the top ``n - j`` squares counted as 1
    and the ``j`` smallest (sum ``S_j``) as ``x^2 / M^2``, the root is
    ``M^2 = S_j / (budget - (n - j))`` on the first segment (from the top)
    whose lower end ``s_j`` lies below it.
    """
    squares = sorted(x * x for x in samples)
    n = len(squares)
    if budget <= 0 or sum(1 for s in squares if s != 0.0) <= budget:
        return None
    below = math.fsum(squares)
    for j in range(n, 0, -1):
        ones = n - j
        assert budget > ones
        if below > squares[j - 1] * (budget - ones):  # S_j / (budget - ones) > s_j
            return math.sqrt(below / (budget - ones))
        below -= squares[j - 1]
    raise AssertionError("unreachable: the smallest nonzero square always qualifies")


def trimmed_moments(samples, level):
    """Mean and unbiased variance of ``y = x 1{|x| <= level}``."""
    y = [x if abs(x) <= level else 0.0 for x in samples]
    mu = math.fsum(y) / len(y)
    return mu, math.fsum((v - mu) ** 2 for v in y) / (len(y) - 1)


def adar_ucb(rewards, horizon):
    """Arms played in rounds ``1..horizon`` on a reward table (``rewards[i][j]``: j-th pull of arm i).

    Returns:
      ``(arms, forced, stats, means)``: the arm of every round; the number of
      rounds played at index ``+inf``; counts of decisions (paired rounds) by branch:
      ``"argmax"`` (every index finite), ``"tie"`` (several ``+inf`` arms and
      the fewest-pairs rule picks one other than the lowest such index),
      ``"truncated"`` (a finite arm with some ``|X| > M``), ``"clipped"`` (a
      finite arm with some ``X'^2 >= M^2``, counted 1 in the root equation),
      ``"zeros"`` (an arm with ``N > c L >= m``: its zeros keep it at ``+inf``),
      ``"again"`` (an arm at ``+inf`` after having had a finite index); the
      trimmed means at ``tau = floor(T/2) + 1`` (NaN where the index is ``+inf``).
    """
    k = len(rewards)
    xs = [[] for _ in range(k)]  # estimation lists X_i
    ts = [[] for _ in range(k)]  # threshold lists X'_i
    arms, forced, was_finite = [], 0, [False] * k
    stats = dict(argmax=0, tie=0, truncated=0, clipped=0, zeros=0, again=0)
    for tau in range(1, (horizon + 1) // 2 + 1):
        big_l = 3 * math.log(tau)
        budget = C * big_l
        index = []
        for i in range(k):
            n = len(ts[i])
            level = threshold(ts[i], budget) if n > 0 else None
            if level is None:
                index.append(math.inf)
                stats["zeros"] += n > budget
                stats["again"] += was_finite[i]
                continue
            was_finite[i] = True
            mu, var = trimmed_moments(xs[i], level)
            index.append(mu + math.sqrt(2 * var * big_l / n) + 10 * level * big_l / n)
            stats["truncated"] += any(abs(x) > level for x in xs[i])
            stats["clipped"] += any(x * x >= level * level for x in ts[i])
        infinite = [i for i in range(k) if index[i] == math.inf]
        if infinite:
            arm = min(infinite, key=lambda i: (len(ts[i]), i))  # fewest paired pulls, then lowest index
            stats["tie"] += arm != infinite[0]
            forced += 1 if 2 * tau > horizon else 2
        else:
            arm = max(range(k), key=lambda i: (index[i], -i))  # first maximum
            stats["argmax"] += 1
        arms.append(arm)
        if 2 * tau <= horizon:
            arms.append(arm)
            n = len(ts[arm])
            xs[arm].append(float(rewards[arm][2 * n]))
            ts[arm].append(float(rewards[arm][2 * n + 1]))
    budget = C * 3 * math.log(horizon // 2 + 1)
    levels = [threshold(ts[i], budget) if ts[i] else None for i in range(k)]
    means = [math.nan if levels[i] is None else trimmed_moments(xs[i], levels[i])[0] for i in range(k)]
    return arms, forced, stats, means
