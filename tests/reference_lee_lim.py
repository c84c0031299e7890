"""Plain-Python, round-by-round APE2, MR-UCB and MR-APE, written from the papers' definitions.

Python floats and ``math`` (SciPy's inverse incomplete gamma for the Gamma
law, which ``math`` lacks); nothing from htb_jax.  The rewards are a table
(``rewards[i][j]``: the ``j``-th pull of arm ``i``) and the perturbation
levels are given per round (``levels[t - 1] = (u, v)``, lists of K floats,
``v = 1 - u`` with the smaller of the two exact).
"""

from __future__ import annotations

import math

from reference_policies import first_argmax
from scipy import special


def b_p(p):
    if p == 2.0:
        return 0.5
    r = (2.0 - p) / (p - 1.0)
    return (2.0 * r ** (1.0 - 2.0 / p) + r ** (2.0 - 2.0 / p)) ** (-p / 2.0)


def psi_p(x, p):
    if math.isinf(x):
        return x
    a = abs(x)
    return math.copysign(math.log1p(a + b_p(p) * a**p), x) if x != 0.0 else 0.0


def p_robust(rewards, p, scale):
    """``c_e n^(1/p - 1) sum_k psi_p(Y_k / (c_e n^(1/p)))``."""
    n = len(rewards)
    width = scale * n ** (1.0 / p)
    return scale * n ** (1.0 / p - 1.0) * math.fsum(psi_p(y / width, p) for y in rewards)


def _minus_log_u(u, v):
    return -math.log(u) if u < 0.5 else -math.log1p(-v)


def _minus_log_v(u, v):
    return -math.log(v) if v < 0.5 else -math.log1p(-u)


def quantile(law, u, v, shape=None, scale=1.0):
    """``F^-1(U)`` of the law from its definition, computed on the small side of ``(u, v)``."""
    if law == "frechet":  # F(x) = exp(-(x/s)^-a)
        return scale * _minus_log_u(u, v) ** (-1.0 / shape)
    if law == "pareto":  # F(x) = 1 - (s/x)^a
        return scale * math.exp(_minus_log_v(u, v) / shape)
    if law == "weibull":  # F(x) = 1 - exp(-(x/s)^a)
        return scale * _minus_log_v(u, v) ** (1.0 / shape)
    if law == "gumbel":  # F(x) = exp(-exp(-x/s))
        return -scale * math.log(_minus_log_u(u, v))
    if law == "gamma":
        x = special.gammaincinv(shape, u) if u < 0.5 else special.gammainccinv(shape, v)
        return scale * float(x)
    if law == "uniform":
        return u
    if law == "bernoulli":
        return 1.0 if u > 0.5 else 0.0
    if law == "symmetric_uniform":
        return 2.0 * u - 1.0 if u < 0.5 else 1.0 - 2.0 * v
    if law == "rademacher":
        return 1.0 if u > 0.5 else -1.0
    raise ValueError(law)


def median(law, shape=None, scale=1.0):
    """A fixed ``G`` (the law's median) to tell whether the drawn perturbations decided a round."""
    return quantile(law, 0.5, 0.5, shape, scale)




def lee_lim(rewards, horizon, kind, p, c, law=None, levels=None, shape=None, scale=1.0):
    """APE2 (``kind="ape2"``), MR-UCB (``"mr_ucb"``) or MR-APE (``"mr_ape"``) round by round.

    Returns:
      ``(arms, stats)``: the arm of each round, and counts of the decision
      rounds (``t > K``) in which some arm's ``log(max(T/(K n), 1))`` is capped
      at 0 (``"capped"``) or none is (``"uncapped"``), and in which the drawn
      perturbations chose another arm than the law's median in their place
      would have (``"decisive"``), and in which ``log(T/(K n))`` without the
      cap (negative past ``n = T/K``) would have chosen another arm
      (``"cap_decisive"``; MR-UCB and MR-APE).
    """
    k = len(rewards)
    if kind == "ape2" and shape is None and law == "frechet":
        shape = p * p / (p - 1.0)
    estimator_scale = 0.1 if kind == "mr_ucb" else c
    seen = [[] for _ in range(k)]
    estimates = [0.0] * k
    arms = []
    stats = {"capped": 0, "uncapped": 0, "decisive": 0, "cap_decisive": 0}
    for t in range(1, horizon + 1):
        if t <= k:
            arm = t - 1
        else:
            index, at_median, uncapped = [], [], []
            for a in range(k):
                n = len(seen[a])
                root = n ** (1.0 - 1.0 / p)
                if kind != "mr_ucb":
                    u, v = levels[t - 1][0][a], levels[t - 1][1][a]
                    g, g0 = quantile(law, u, v, shape, scale), median(law, shape, scale)
                if kind == "ape2":
                    bonus, bonus0 = c * g / root, c * g0 / root
                    bonus1 = bonus
                else:
                    log_term = math.log(max(horizon / (k * n), 1.0))
                    factor = c if kind == "mr_ucb" else 2.0 * c * g
                    bonus = factor * log_term / root
                    bonus0 = bonus if kind == "mr_ucb" else 2.0 * c * g0 * log_term / root
                    bonus1 = factor * math.log(horizon / (k * n)) / root
                index.append(estimates[a] + bonus)
                at_median.append(estimates[a] + bonus0)
                uncapped.append(estimates[a] + bonus1)
            arm = first_argmax(index)
            capped = any(len(seen[a]) >= horizon / k for a in range(k))
            stats["capped" if capped else "uncapped"] += 1
            stats["decisive"] += arm != first_argmax(at_median)
            stats["cap_decisive"] += arm != first_argmax(uncapped)
        seen[arm].append(float(rewards[arm][len(seen[arm])]))
        estimates[arm] = p_robust(seen[arm], p, estimator_scale)
        arms.append(arm)
    return arms, stats
