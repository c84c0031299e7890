"""The benchmark's statistics over seeds: intervals, normalised regret, paired ratios and ranks.

Heavy-tailed rewards make a policy's regret heavy-tailed across seeds, so a
mean is reported with its interval and beside robust summaries (the median
and the 0.9 quantile).  Every policy runs on the same seeds and the same
reward tables, so seed ``s`` of two policies saw the same rewards: two
policies are compared by a bootstrap that resamples seeds jointly (paired),
which cancels the noise the seeds share.  NumPy float64 on host data:
nothing here is traced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np

from htb_jax._src.validation import check_integer, check_interval, real_array


def _array(name: str, value: Any, form: str, ndim: int, min_seeds: int = 2) -> np.ndarray:
    """``value`` as a finite float64 array of ``ndim`` dimensions with at least ``min_seeds`` columns."""
    arr = real_array(name, value, form)
    if arr is None:
        raise TypeError(f"{name} must be {form} on the host (a NumPy array), not a traced value.")
    if arr.ndim != ndim or arr.shape[-1] < min_seeds or arr.size == 0:
        raise ValueError(
            f"{name} must be {form} with {ndim} dimension{'s' * (ndim > 1)} and at least {min_seeds} "
            f"seed{'s' * (min_seeds > 1)}; got an array of shape {arr.shape}."
        )
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if np.any(bad):
        at = [int(i) for i in np.argwhere(bad)[0]]
        raise ValueError(f"{name} must be finite (no NaN or inf); got {name}{at}={arr[tuple(at)]}.")
    return arr


def _level(level: Any) -> float:
    """``level`` as a float in ``(0, 1)``."""
    arr = real_array("level", level, "a confidence level in (0, 1), such as 0.95")
    if arr is None or arr.ndim != 0:
        raise ValueError(f"level must be one confidence level in (0, 1), such as 0.95; got level={level!r}.")
    check_interval("level", arr, 0.0, 1.0, low_closed=False, high_closed=False)
    return float(arr)


def _normal_interval(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over the last axis and its normal interval ``mean -+ z sd / sqrt(S)``, ``sd`` with ``ddof=1``,
    its low end clipped at 0 where the values are nonnegative (regrets): no mean of them lies below."""
    z = NormalDist().inv_cdf((1.0 + level) / 2.0)
    mean = np.mean(x, axis=-1)
    half = z * np.std(x, axis=-1, ddof=1) / math.sqrt(x.shape[-1])
    low = mean - half
    if np.all(x >= 0):
        low = np.maximum(low, 0.0)
    return mean, low, mean + half


def summary(regrets: Any, level: float = 0.95) -> dict[str, float | int]:
    """The mean regret over seeds with its interval, the median and the 0.9 quantile.

    The interval is the normal one, ``mean -+ z sd / sqrt(S)`` with ``sd``
    the sample standard deviation (``ddof=1``) and ``z`` the normal quantile
    of ``(1 + level) / 2`` (1.96 at 0.95).  Normal rather than Student's t:
    t is exact only for normal data, which heavy-tailed regrets are not, so
    both rest on the central limit theorem over seeds, and at the
    benchmark's seed counts they differ little (t's interval is 2.0% wider at
    64 seeds, 8.7% at 16).  Regrets are nonnegative, so where every value is,
    the interval's low end is clipped at 0 (a heavy tail's spread reached
    below).  Where the regret's variance is infinite the interval covers the
    mean less often than ``level`` says, whatever ``z``: the median and
    ``q90`` are the robust summaries.  ``q90`` is NumPy's default quantile (``method=
    "linear"``: linear interpolation between order statistics, Hyndman and
    Fan's type 7), as is the median.

    Args:
      regrets: f64[S] the regret of one policy on one setting, one entry per
        seed, ``S >= 2``.
      level: the interval's confidence level, in ``(0, 1)``.

    Returns:
      ``{"mean", "mean_low", "mean_high", "median", "q90"}`` as floats and
      ``"seeds"``: ``S``.

    Raises:
      TypeError: for a non-real ``regrets`` or ``level``.
      ValueError: for a ``regrets`` that is not 1-D, has fewer than 2 seeds
        or holds NaN or inf; for ``level`` outside ``(0, 1)``.

    Examples:
      >>> import numpy as np
      >>> from htb_jax._src.bench import stats
      >>> s = stats.summary(np.array([10.0, 12.0, 11.0, 13.0, 40.0]))
      >>> {k: round(v, 3) for k, v in s.items()}
      {'mean': 17.2, 'mean_low': 5.985, 'mean_high': 28.415, 'median': 12.0, 'q90': 29.2, 'seeds': 5}
    """
    x = _array("regrets", regrets, "per-seed regrets f64[S]", ndim=1)
    mean, low, high = _normal_interval(x, _level(level))
    return {
        "mean": float(mean),
        "mean_low": float(low),
        "mean_high": float(high),
        "median": float(np.median(x)),
        "q90": float(np.quantile(x, 0.9)),
        "seeds": int(x.shape[0]),
    }


def normalised(regrets_by_setting: Any, uniform_regrets: Any) -> np.ndarray:
    """Per seed, the mean over an experiment's settings of ``R / R_uniform``.

    Each setting's regret is divided by the regret of uniform random play at
    that setting's horizon, so that every setting weighs the same in the
    experiment whatever its horizon or gaps: 1 is uniform play's regret, 0
    no regret.

    Args:
      regrets_by_setting: f64[N, S] the policy's regret on each of the ``N``
        settings, one column per seed.
      uniform_regrets: f64[N] uniform random play's regret on each setting,
        ``> 0``.

    Returns:
      f64[S] the normalised regret of each seed.

    Raises:
      TypeError: for non-real input.
      ValueError: for shapes other than ``[N, S]`` and ``[N]`` with ``N, S >=
        1``, NaN or inf, or a uniform regret ``<= 0``.

    Examples:
      >>> import numpy as np
      >>> from htb_jax._src.bench import stats
      >>> stats.normalised(np.array([[10.0, 20.0], [300.0, 100.0]]), np.array([100.0, 1000.0]))
      array([0.2 , 0.15])
    """
    r = _array("regrets_by_setting", regrets_by_setting, "regrets f64[N, S] (settings x seeds)", ndim=2,
               min_seeds=1)
    u = _array("uniform_regrets", uniform_regrets, "uniform play's regrets f64[N] (one per setting)", ndim=1,
               min_seeds=1)
    if u.shape[0] != r.shape[0]:
        raise ValueError(
            f"uniform_regrets must hold one regret per setting, {r.shape[0]} as regrets_by_setting of shape "
            f"{r.shape} has; got uniform_regrets of shape {u.shape}."
        )
    check_interval("uniform_regrets", u, 0.0, math.inf, low_closed=False, high_closed=False)
    return np.mean(r / u[:, None], axis=0)


def _quantile(ordered: np.ndarray, q: float) -> float:
    """The ``q`` quantile of sorted f64[M] by NumPy's default linear interpolation between order statistics,
    extended to non-finite ones: between equal ones their value, between a finite one and ``-+inf`` that
    infinity, and NaN between ``-inf`` and ``inf`` or next to a NaN."""
    h = (ordered.shape[0] - 1) * q
    j = math.floor(h)
    g = h - j
    lo, hi = float(ordered[j]), float(ordered[min(j + 1, ordered.shape[0] - 1)])
    if g == 0 or lo == hi:
        return lo
    if math.isnan(hi):
        return math.nan
    if math.isinf(lo) != math.isinf(hi):
        return lo if math.isinf(lo) else hi
    return lo + g * (hi - lo)


def paired_ratio(
    a: Any, b: Any, *, num_resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> dict[str, float]:
    """``mean(a) / mean(b)`` with a paired percentile bootstrap interval over seeds.

    Seed ``s`` of ``a`` and ``b`` saw the same rewards, so the bootstrap
    resamples seed indices jointly: resample ``j`` draws the indices
    ``numpy.random.Generator(numpy.random.PCG64(seed)).integers(0, S,
    size=(num_resamples, S))[j]`` and takes the ratio of the means of ``a``
    and of ``b`` over the same indices.  The interval's ends are the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the
    ``num_resamples`` ratios, by linear interpolation between order
    statistics (NumPy's default quantile).

    Degenerate cases follow IEEE division, without a warning or an error:
    where ``mean(b) == 0`` the value is ``inf`` (``mean(a) > 0``), ``-inf``
    (``mean(a) < 0``) or NaN (``mean(a) == 0``: the ratio is undefined).  A
    resample whose mean of ``b`` is 0 has the ratio ``inf``, ``-inf`` or NaN
    by the same rule, sorted with NaN above ``inf``; an end interpolated
    between a finite order statistic and ``inf`` is ``inf`` (``-inf`` below),
    next to a NaN or between ``-inf`` and ``inf`` NaN.  With
    non-negative regrets a resample's denominator is 0 only if every seed it
    drew has ``b == 0``.  The floats returned are then not finite: write
    them to JSON accordingly.

    Args:
      a: f64[S] the numerator's values, one per seed, ``S >= 2``.
      b: f64[S] the denominator's values on the same seeds.
      num_resamples: the number of bootstrap resamples, ``>= 1``.
      level: the interval's confidence level, in ``(0, 1)``.
      seed: the seed of the resampling generator, ``>= 0``.

    Returns:
      ``{"value", "low", "high"}`` as floats.

    Raises:
      TypeError: for non-real input.
      ValueError: for arrays that are not 1-D with ``S >= 2``, of different
        lengths or holding NaN or inf; ``num_resamples < 1``, ``seed < 0``,
        ``level`` outside ``(0, 1)``.

    Examples:
      >>> import numpy as np
      >>> from htb_jax._src.bench import stats
      >>> b = np.array([10.0, 50.0, 12.0, 300.0, 20.0, 15.0])
      >>> r = stats.paired_ratio(1.5 * b + np.array([1.0, -1.0, 0.0, 2.0, 0.0, 1.0]), b)
      >>> {k: round(v, 4) for k, v in r.items()}
      {'value': 1.5074, 'low': 1.4935, 'high': 1.5476}
    """
    x = _array("a", a, "per-seed values f64[S]", ndim=1)
    y = _array("b", b, "per-seed values f64[S]", ndim=1)
    if x.shape != y.shape:
        raise ValueError(
            f"a and b must hold the same seeds (paired), so the same shape; got a of shape {x.shape} and b of "
            f"shape {y.shape}."
        )
    check_integer("num_resamples", num_resamples, 1)
    check_integer("seed", seed, 0)
    lev = _level(level)
    s = x.shape[0]
    idx = np.random.Generator(np.random.PCG64(int(seed))).integers(0, s, size=(int(num_resamples), s))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.mean(x) / np.mean(y)
        ratios = np.mean(x[idx], axis=1) / np.mean(y[idx], axis=1)
    ordered = np.sort(ratios)  # NaN last
    low, high = _quantile(ordered, (1.0 - lev) / 2.0), _quantile(ordered, (1.0 + lev) / 2.0)
    return {"value": float(value), "low": low, "high": high}


def ranks_and_ratios(
    normalised_by_policy: Mapping[str, Any],
    peers: Sequence[str],
    *,
    num_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[dict[str, int | None], dict[str, dict[str, Any] | None]]:
    """Each policy's rank by mean normalised regret, and its ratio to the best peer.

    Ranks are competition ranks ("1224"): a policy's rank is 1 plus the
    number of policies whose mean is strictly lower, so policies with equal
    means share a rank and the next rank is skipped.  A policy's best peer is
    the peer with the lowest mean other than the policy itself (ties: the
    first in ``peers``); its ratio is :func:`paired_ratio` of the policy's
    normalised regrets to the best peer's, with the name of that peer under
    ``"best"``.  A policy given ``None`` (no normalised regret: it reached no
    setting) has rank ``None``, ratio ``None``, and is nobody's best peer; a
    policy with no other peer that has values has ratio ``None``.

    Args:
      normalised_by_policy: policy name -> f64[S] its normalised regret per
        seed (:func:`normalised`), or ``None``; every array on the same ``S
        >= 2`` seeds.
      peers: the names of the peers, each a key of ``normalised_by_policy``.
      num_resamples: passed to :func:`paired_ratio`.
      level: passed to :func:`paired_ratio`.
      seed: passed to :func:`paired_ratio` (the same resamples for every
        policy).

    Returns:
      ``(ranks, ratios)``: dictionaries by policy name, in the order of
      ``normalised_by_policy``; ``ratios[name]`` is ``{"value", "low",
      "high", "best"}`` or ``None``.

    Raises:
      TypeError: for a ``normalised_by_policy`` that is not a mapping, a
        ``peers`` that is a string or not a sequence, or non-real values.
      ValueError: for a peer that is not a policy, arrays of different
        lengths, or the refusals of :func:`paired_ratio`.

    Examples:
      >>> import numpy as np
      >>> from htb_jax._src.bench import stats
      >>> by_policy = {"mine": np.array([0.2, 0.3, 0.25]), "UCB1": np.array([0.4, 0.5, 0.6]),
      ...              "AdaR-UCB": np.array([0.3, 0.3, 0.3])}
      >>> ranks, ratios = stats.ranks_and_ratios(by_policy, ["UCB1", "AdaR-UCB"])
      >>> ranks
      {'mine': 1, 'UCB1': 3, 'AdaR-UCB': 2}
      >>> ratios["mine"]["best"], round(ratios["mine"]["value"], 4)
      ('AdaR-UCB', 0.8333)
      >>> {k: round(v, 4) if isinstance(v, float) else v for k, v in ratios["AdaR-UCB"].items()}
      {'value': 0.6, 'low': 0.5, 'high': 0.75, 'best': 'UCB1'}
    """
    if not isinstance(normalised_by_policy, Mapping):
        raise TypeError(
            "normalised_by_policy must be a dict of policy name -> f64[S] normalised regrets (or None); got "
            f"{type(normalised_by_policy).__name__}."
        )
    if isinstance(peers, (str, bytes)) or not isinstance(peers, Sequence):
        raise TypeError(f"peers must be a list of policy names; got peers={peers!r}.")
    values = {
        name: None if v is None else _array(f"normalised_by_policy[{name!r}]", v, "normalised regrets f64[S]", 1)
        for name, v in normalised_by_policy.items()
    }
    missing = [p for p in peers if p not in values]
    if missing:
        raise ValueError(f"peers must name policies of normalised_by_policy ({list(values)}); got {missing[0]!r}.")
    lengths = {name: v.shape[0] for name, v in values.items() if v is not None}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"every policy's normalised regrets must cover the same seeds; got lengths {lengths}.")
    means = {name: float(np.mean(v)) for name, v in values.items() if v is not None}
    ranks = {name: None if name not in means else 1 + sum(m < means[name] for m in means.values())
             for name in values}
    ratios: dict[str, dict[str, Any] | None] = {}
    for name in values:
        others = [p for p in peers if p != name and p in means]
        if name not in means or not others:
            ratios[name] = None
            continue
        best = min(others, key=means.__getitem__)
        ratio = paired_ratio(values[name], values[best], num_resamples=num_resamples, level=level, seed=seed)
        ratios[name] = {**ratio, "best": best}
    return ranks, ratios


def curve_band(curve: Any, level: float = 0.95) -> dict[str, list[float]]:
    """The mean regret curve over seeds and its normal interval at each checkpoint.

    At each checkpoint, the interval of :func:`summary`: ``mean -+ z sd /
    sqrt(S)``, ``sd`` with ``ddof=1``, ``z`` the normal quantile of ``(1 +
    level) / 2``, its low end clipped at 0 where the regrets are nonnegative.

    Args:
      curve: f64[C, S] the regret at ``C`` checkpoint rounds, one column per
        seed, ``S >= 2``.
      level: the interval's confidence level, in ``(0, 1)``.

    Returns:
      ``{"mean", "low", "high"}``, each a list of ``C`` floats.

    Raises:
      TypeError: for non-real input.
      ValueError: for a ``curve`` that is not 2-D with ``C >= 1`` and ``S >=
        2``, or holds NaN or inf; for ``level`` outside ``(0, 1)``.

    Examples:
      >>> import numpy as np
      >>> from htb_jax._src.bench import stats
      >>> band = stats.curve_band(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 9.0]]))
      >>> {k: [round(v, 3) for v in vs] for k, vs in band.items()}
      {'mean': [2.0, 5.0], 'low': [0.868, 0.92], 'high': [3.132, 9.08]}
    """
    c = _array("curve", curve, "a regret curve f64[C, S] (checkpoints x seeds)", ndim=2)
    mean, low, high = _normal_interval(c, _level(level))
    return {"mean": mean.tolist(), "low": low.tolist(), "high": high.tolist()}
