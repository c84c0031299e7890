"""Tests of the benchmark's statistics over seeds (htb_jax/_src/bench/stats.py).

Each function is checked against a plain-Python reference written here with
loops.  Where the reference adds in another order than NumPy (pairwise
summation in ``np.mean`` and ``np.std``), values agree to a relative 1e-12:
summing S <= 100 float64 terms in two orders differs by at most about
S * 2^-53 = 1e-14 relative, for terms of one sign and a spread of a few
orders of magnitude as here.  Where the arithmetic is the same, equality is
exact.
"""

from __future__ import annotations

import math
import statistics
import warnings

import numpy as np
import pytest

from htb_jax._src.bench import stats

RTOL = 1e-12  # see the module docstring


def _heavy(seed: int, size: int) -> np.ndarray:
    """Pareto(1.5) draws: a heavy tail, as a regret's over seeds."""
    return np.random.default_rng(seed).pareto(1.5, size) + 1.0


def _loop_mean(xs) -> float:
    total = 0.0
    for x in xs:
        total += x
    return total / len(xs)


def _loop_sd(xs) -> float:
    m = _loop_mean(xs)
    total = 0.0
    for x in xs:
        total += (x - m) ** 2
    return math.sqrt(total / (len(xs) - 1))


def _loop_quantile(xs, q: float) -> float:
    """Hyndman and Fan's type 7 on finite values: x_(j) + g (x_(j+1) - x_(j)), h = (n - 1) q."""
    ordered = sorted(xs)
    h = (len(ordered) - 1) * q
    j = math.floor(h)
    g = h - j
    if g == 0:
        return ordered[j]
    return ordered[j] + g * (ordered[j + 1] - ordered[j])


def _loop_interval(xs, level: float) -> tuple[float, float, float]:
    z = statistics.NormalDist().inv_cdf((1 + level) / 2)
    m = _loop_mean(xs)
    half = z * _loop_sd(xs) / math.sqrt(len(xs))
    low = max(m - half, 0.0) if min(xs) >= 0 else m - half  # no mean of nonnegative regrets lies below 0
    return m, low, m + half


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_summary_matches_loop_reference(level):
    """Mean, interval, median and q90 against loops.  Catches: sd with ddof=0, sqrt(S - 1) for sqrt(S),
    z of ``level`` instead of ``(1 + level) / 2``, a fixed z of 1.96 (level 0.8), a q90 by another quantile
    rule (nearest, higher), the median of the unsorted data."""
    x = _heavy(1, 37)
    got = stats.summary(x, level=level)
    m, lo, hi = _loop_interval(list(x), level)
    want = {"mean": m, "mean_low": lo, "mean_high": hi, "median": sorted(x)[18], "q90": _loop_quantile(list(x), 0.9)}
    assert set(got) == {*want, "seeds"} and got["seeds"] == 37
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=RTOL, abs=0), key


@pytest.mark.parametrize(("xs", "clipped"), [([1.0, 1.0, 1.0, 1.0, 1000.0], True), ([-1.0, 1.0, 1.0, 1.0, 1000.0], False)])
def test_the_interval_of_nonnegative_regrets_stops_at_zero(xs, clipped):
    """One seed's heavy tail: mean 200.8, half-width 1.96 x 446.4 / sqrt(5) = 391.3, so the normal interval
    reaches -190.5, below any mean of nonnegative regrets (the stored reference showed 1875 [-1182, 4933]);
    clipped at 0 where every value is >= 0, and not where one is negative.  Catches: no clip, a clip of
    negative data, a clip of the high end or of the mean."""
    got = stats.summary(np.asarray(xs))
    m, lo, hi = _loop_interval(xs, 0.95)
    assert (got["mean"], got["mean_high"]) == (pytest.approx(m, rel=RTOL), pytest.approx(hi, rel=RTOL))
    assert got["mean_low"] == (0.0 if clipped else pytest.approx(lo, rel=RTOL)) and (lo == 0.0) == clipped
    band = stats.curve_band(np.asarray([xs, [2.0 * x for x in xs]]))
    assert (band["low"][0] == 0.0) == clipped and band["high"][0] == pytest.approx(hi, rel=RTOL)


def _t_cdf(x: float, df: int) -> float:
    """Student's t CDF at x > 0: 1/2 plus the density's integral over [0, x] by the trapezoid rule on
    10^5 intervals (error below 1e-10 here)."""
    u = np.linspace(0.0, x, 100_001)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_c - (df + 1) / 2 * np.log1p(u**2 / df))
    return 0.5 + float(np.sum((density[1:] + density[:-1]) / 2) * (u[1] - u[0]))


@pytest.mark.parametrize(("seeds", "percent"), [(64, 2.0), (16, 8.7)])
def test_summary_normal_vs_t_claim(seeds, percent):
    """The docstring's claim that t's 95% interval is 2.0% wider than the normal one at 64 seeds and 8.7% at
    16: the t quantile (S - 1 degrees of freedom) lies between z (1 + (percent -+ 0.05) / 100), as the t
    CDF there brackets 0.975.  Catches: a stale number after the interval's rule changes."""
    z = statistics.NormalDist().inv_cdf(0.975)
    assert _t_cdf(z * (1 + (percent - 0.05) / 100), seeds - 1) < 0.975
    assert _t_cdf(z * (1 + (percent + 0.05) / 100), seeds - 1) > 0.975
    assert "2.0% wider at\n    64 seeds, 8.7% at 16" in stats.summary.__doc__


def test_normalised_matches_loop_exactly():
    """Per seed, the mean over settings of R / R_uniform, exactly (NumPy reduces axis 0 of a C-ordered array
    row by row: the loop's order).  N = 3 settings, S = 5 seeds, so that a broadcast of the uniform regrets
    along seeds fails.  Catches: the mean over seeds instead of settings, the ratio of means
    mean(R) / mean(R_uniform), dividing by the wrong setting's uniform regret."""
    r = np.stack([_heavy(2, 5) * 10, _heavy(3, 5) * 100, _heavy(4, 5) * 1000])
    u = np.array([50.0, 700.0, 9000.0])
    want = []
    for s in range(5):
        total = 0.0
        for n in range(3):
            total += r[n, s] / u[n]
        want.append(total / 3)
    got = stats.normalised(r, u)
    assert got.dtype == np.float64 and got.shape == (5,)
    assert got.tolist() == want


def _loop_ratio(a, b, num_resamples: int, level: float, seed: int) -> dict[str, float]:
    """The paired percentile bootstrap, resample by resample, from the same index matrix."""
    s = len(a)
    idx = np.random.Generator(np.random.PCG64(seed)).integers(0, s, size=(num_resamples, s))
    ratios = []
    for row in idx:
        ratios.append(_loop_mean([a[i] for i in row]) / _loop_mean([b[i] for i in row]))
    return {
        "value": _loop_mean(list(a)) / _loop_mean(list(b)),
        "low": _loop_quantile(ratios, (1 - level) / 2),
        "high": _loop_quantile(ratios, (1 + level) / 2),
    }


@pytest.mark.parametrize(("num_resamples", "level", "seed"), [(2000, 0.95, 0), (301, 0.9, 7)])
def test_paired_ratio_matches_loop_reference(num_resamples, level, seed):
    """Value and interval against loops over the same resamples.  Catches: another index matrix (another
    generator, shape (S, num_resamples), or a's and b's indices drawn apart), the mean of per-seed ratios
    instead of the ratio of means, the ends at level instead of (1 -+ level) / 2, another quantile rule."""
    a, b = _heavy(5, 24) * 3, _heavy(6, 24)
    got = stats.paired_ratio(a, b, num_resamples=num_resamples, level=level, seed=seed)
    want = _loop_ratio(a, b, num_resamples, level, seed)
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=RTOL, abs=0), key


def test_paired_resampling_is_joint():
    """a = 1.3 b (1 + 1% noise) with b heavy-tailed across seeds: a's and b's seed noise cancels in the
    paired ratio, so its interval is far narrower (here under a tenth) than the one from resampling a and b
    independently.  Catches: resampling a and b with separate indices."""
    b = _heavy(8, 64) * 100
    a = 1.3 * b * (1 + 0.01 * np.random.default_rng(9).standard_normal(64))
    got = stats.paired_ratio(a, b)
    rng = np.random.default_rng(10)
    unpaired = a[rng.integers(0, 64, (2000, 64))].mean(1) / b[rng.integers(0, 64, (2000, 64))].mean(1)
    low, high = np.quantile(unpaired, [0.025, 0.975])
    assert got["low"] < 1.3 < got["high"]
    assert got["high"] - got["low"] < 0.1 * (high - low)


def _quiet(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return stats.paired_ratio(**kwargs)


def _ieee(num: float, den: float) -> float:
    """num / den by IEEE rules: +-inf for a non-zero num over 0, NaN for 0 / 0."""
    if den != 0:
        return num / den
    return math.nan if num == 0 else math.copysign(math.inf, num)


def test_paired_ratio_zero_denominators():
    """IEEE rules, without a warning.  mean(b) = 0: value and ends inf (a > 0), NaN (a = 0).  b = [0, 0, 3]:
    the resamples that miss seed 2 ((2/3)^3 = 30% of them) have ratio inf (a > 0), -inf (a < 0) or NaN
    (a = 0 there), so the high end is inf, the low end -inf, or the high end NaN, and the other end the
    loop reference's quantile among the finite ratios.  Catches: a crash or warning on 0 division, NaN
    sorted first, NumPy's quantile (NaN between inf and inf, or between a finite ratio and -inf)."""
    zero = np.zeros(4)
    assert _quiet(a=np.ones(4), b=zero) == {"value": math.inf, "low": math.inf, "high": math.inf}
    assert all(math.isnan(v) for v in _quiet(a=zero, b=zero).values())
    b = [0.0, 0.0, 3.0]
    idx = np.random.Generator(np.random.PCG64(0)).integers(0, 3, (2000, 3))
    for a, end, infinite in [([1.0, 1.0, 1.0], "high", math.inf), ([-1.0, -1.0, -1.0], "low", -math.inf),
                             ([0.0, 0.0, 1.0], "high", math.nan)]:
        got = _quiet(a=np.array(a), b=np.array(b))
        assert got["value"] == sum(a) / 3
        assert got[end] == infinite or (math.isnan(infinite) and math.isnan(got[end]))
        ratios = [_ieee(sum(a[i] for i in row), sum(b[i] for i in row)) for row in idx]
        finite = sorted(r for r in ratios if math.isfinite(r))
        below = sum(r == -math.inf for r in ratios)  # sorted before the finite ones
        other, q = ("low", 0.025) if end == "high" else ("high", 0.975)
        h = 1999 * q
        j = math.floor(h) - below
        assert 0 <= j < len(finite) - 1
        want = finite[j] + (h - math.floor(h)) * (finite[j + 1] - finite[j])
        assert got[other] == pytest.approx(want, rel=RTOL, abs=0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: stats.summary(np.array([1.0])), r"regrets must be .* at least 2 seeds; got an array of shape \(1,\)"),
        (lambda: stats.summary(np.ones((2, 3))), r"regrets must be .* 1 dimension"),
        (lambda: stats.summary(np.array([1.0, np.nan])), r"regrets must be finite .* regrets\[1\]=nan"),
        (lambda: stats.summary(np.array([np.inf, 1.0])), r"regrets must be finite .* regrets\[0\]=inf"),
        (lambda: stats.summary(np.ones(3), level=1.0), r"level must lie in \(0, 1\); got level=1"),
        (lambda: stats.summary(np.ones(3), level=[0.9, 0.95]), r"level must be one confidence level"),
        (lambda: stats.normalised(np.ones((2, 3)), np.ones(3)), r"uniform_regrets must hold one regret per setting, 2"),
        (lambda: stats.normalised(np.ones((2, 3)), np.array([1.0, 0.0])), r"uniform_regrets must lie in \(0, inf\)"),
        (lambda: stats.normalised(np.ones(3), np.ones(3)), r"regrets_by_setting must be .* 2 dimensions"),
        (lambda: stats.paired_ratio(np.ones(3), np.ones(4)), r"a and b must hold the same seeds"),
        (lambda: stats.paired_ratio(np.ones(3), np.ones(3), num_resamples=0), r"num_resamples must be an integer >= 1"),
        (lambda: stats.paired_ratio(np.ones(3), np.ones(3), seed=-1), r"seed must be an integer >= 0"),
        (lambda: stats.ranks_and_ratios({"x": np.ones(3)}, ["y"]), r"peers must name policies .*; got 'y'"),
        (lambda: stats.ranks_and_ratios({"x": np.ones(3), "y": np.ones(4)}, ["y"]), r"same seeds; got lengths"),
        (lambda: stats.ranks_and_ratios({"x": np.array([1.0, np.inf])}, []), r"normalised_by_policy\['x'\] must be finite"),
        (lambda: stats.curve_band(np.ones(3)), r"curve must be .* 2 dimensions"),
    ],
)
def test_refusals(call, match):
    """Bad input is a ValueError naming the argument, the admissible form and the value given.  Catches: a
    NaN or an inf averaged into the summaries, S = 1 (sd of one seed is NaN), settings and uniform regrets
    misaligned, unpaired arrays of different lengths, a peer that is no policy."""
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: stats.summary("1, 2"), r"regrets must be per-seed regrets"),
        (lambda: stats.ranks_and_ratios([np.ones(3)], []), r"normalised_by_policy must be a dict"),
        (lambda: stats.ranks_and_ratios({"ab": np.ones(3)}, "ab"), r"peers must be a list of policy names"),
    ],
)
def test_type_refusals(call, match):
    """Catches: a string read as numbers, and peers="ab" read as the peers "a" and "b"."""
    with pytest.raises(TypeError, match=match):
        call()


def test_ranks_tie_rule():
    """Competition ranks: equal means share a rank, the next rank is skipped (1, 2, 2, 4).  Catches: dense
    ranks (1, 2, 2, 3) and ordinal ranks by sorting (1, 2, 3, 4)."""
    x = np.array([0.3, 0.5])
    by_policy = {"a": x, "b": x.copy(), "c": x + 1, "d": x - 0.2}
    ranks, _ = stats.ranks_and_ratios(by_policy, [])
    assert ranks == {"a": 2, "b": 2, "c": 4, "d": 1}


def test_best_peer_excludes_the_policy_itself():
    """P1 is the best peer of every policy but itself; P1's is P3, tied with P2 (means 10/3) and first in
    peers; the ratios equal paired_ratio's.  Catches: the best peer chosen among all peers (P1 against
    itself, a ratio of 1), the best by the highest mean, a tie broken by name."""
    p1, p2, p3 = np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 5.0]), np.array([2.0, 4.0, 4.0])
    mine = np.array([1.5, 2.5, 2.5])
    ranks, ratios = stats.ranks_and_ratios({"mine": mine, "P3": p3, "P1": p1, "P2": p2}, ["P3", "P1", "P2"])
    assert ranks == {"mine": 2, "P3": 3, "P1": 1, "P2": 3}
    assert {name: r["best"] for name, r in ratios.items()} == {"mine": "P1", "P3": "P1", "P1": "P3", "P2": "P1"}
    assert ratios["P1"] == {**stats.paired_ratio(p1, p3), "best": "P3"}
    assert ratios["mine"] == {**stats.paired_ratio(mine, p1), "best": "P1"}


def test_ranks_and_ratios_without_values():
    """A policy given None has no rank and no ratio and is nobody's best peer; a lone peer has no ratio.
    Catches: None ranked or chosen as best, a ratio of a peer to itself when no other peer has values."""
    ranks, ratios = stats.ranks_and_ratios({"mine": np.array([1.0, 2.0]), "P1": None, "P2": np.array([3.0, 3.0])},
                                           ["P1", "P2"])
    assert ranks == {"mine": 1, "P1": None, "P2": 2}
    assert ratios["mine"]["best"] == "P2" and ratios["P1"] is None and ratios["P2"] is None


def test_curve_band_matches_loop_reference():
    """Per checkpoint, the normal interval of summary.  Catches: the interval over checkpoints instead of
    seeds (axis 0), ddof=0, a fixed z."""
    curve = np.stack([_heavy(11, 9) * c for c in (1.0, 5.0, 20.0, 40.0)])
    got = stats.curve_band(curve, level=0.9)
    assert set(got) == {"mean", "low", "high"}
    for c in range(4):
        m, lo, hi = _loop_interval(list(curve[c]), 0.9)
        for key, value in (("mean", m), ("low", lo), ("high", hi)):
            assert isinstance(got[key][c], float)
            assert got[key][c] == pytest.approx(value, rel=RTOL, abs=0), (key, c)
