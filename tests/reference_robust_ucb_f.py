"""R-UCB and R-UCB-G (Ashutosh et al. 2021) round by round in Python floats, from the definition in
RobustUCBf's docstring.

Shares nothing with the library; ``tests/test_robust_ucb_f.py`` compares the
engine with it and ``benchmarks/bench_engine.py`` times it.
"""

from __future__ import annotations

import math

from reference_policies import first_argmax


def reference(
    rewards, horizon, kind, estimator, m, a, *, constant=True, keep_raw=True, every_round=False, one_sided=False
):
    """R-UCB / R-UCB-G round by round, in Python floats.

    The keyword arguments switch on plausible wrong implementations, used only to show that a
    test case tells them apart: ``constant=False`` drops R-UCB-G's ``1 / log f(t)``;
    ``keep_raw=False`` zeroes truncated rewards in the stored list (the authors' code);
    ``every_round=True`` recomputes every arm's truncated mean each round with the current
    ``f(t)`` instead of only the pulled arm's, at its pull; ``one_sided=True`` keeps
    ``X <= f(t)`` instead of ``|X| <= f(t)``.

    Returns:
      ``(arms, estimates, truncated, returned)``: the arms played, the final estimates, how many
      pulls dropped at least one stored reward, and how many times a reward dropped at an earlier
      pull of its arm was kept again.
    """
    k = len(rewards)
    seen = [[] for _ in range(k)]
    dropped = [set() for _ in range(k)]
    sums = [0.0] * k
    estimates = [0.0] * k
    arms, truncated, returned = [], 0, 0

    def kept(x, level):
        return (x if one_sided else abs(x)) <= level

    def truncated_mean(i, level):
        return math.fsum(x for x in seen[i] if kept(x, level)) / len(seen[i])

    for t in range(1, horizon + 1):
        f = m * math.log(t) ** a
        if t <= k:
            arm = t - 1
        else:
            if every_round:
                estimates = [truncated_mean(i, f) for i in range(k)]
            index = []
            for i in range(k):
                n = len(seen[i])
                if kind == "R-UCB":
                    width = math.sqrt(f * math.log(t) / n)
                else:
                    width = (1 / math.log(f) if constant else 0.0) + 16 * f * math.log(t) / n
                index.append(estimates[i] + width)
            arm = first_argmax(index)
        x = float(rewards[arm][len(seen[arm])])
        seen[arm].append(x)
        if estimator == "mean":
            sums[arm] += x  # in pull order, as a running sum
            estimates[arm] = sums[arm] / len(seen[arm])
        else:
            now = {j for j, y in enumerate(seen[arm]) if not kept(y, f)}
            truncated += bool(now)
            returned += len(dropped[arm] - now)
            dropped[arm] = now
            estimates[arm] = truncated_mean(arm, f)
            if not keep_raw:
                seen[arm] = [y if kept(y, f) else 0.0 for y in seen[arm]]
        arms.append(arm)
    return arms, estimates, truncated, returned
