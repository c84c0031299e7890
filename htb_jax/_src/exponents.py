"""Empirical regret exponents: log-log slopes with bootstrap confidence intervals over seeds.

A regret curve ``R(x) ~ C x^b`` over horizons ``x = T`` (or arm counts
``x = K``) is summarised by the least-squares slope ``b`` of ``log R`` on
``log x``.  The uncertainty comes from the seeds: each grid point averages
``S`` simulated regrets, and the seeds are usually common random numbers (seed
``s`` draws the same reward table at every point).  The percentile bootstrap
here therefore resamples *seed indices* once per draw and applies the same
indices at every point (and every family member), which keeps the correlation
between points that common random numbers create.

Plain numpy; nothing here is traced.  The ``key`` of each fit is an ``int``
seed for :func:`numpy.random.default_rng`; the same ``key``, ``num_bootstrap``
and number of seeds give the same resampled indices in every fit, whatever the
number of points or family members.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from htb_jax._src.validation import real_array

# Bootstrap draws are generated and reduced in chunks of this many draws, so
# that memory stays bounded (chunk x S indices, chunk x P x F means) and the
# resampled indices do not depend on P or F.
_CHUNK = 128
MAX_BOOTSTRAP = 10**6  # draws of a bootstrap: 1000 give two-digit interval ends, 10^6 four

_STATISTICS = ("mean", "median")


@dataclasses.dataclass(frozen=True)
class ExponentFit:
    """A fitted exponent ``log y = intercept + slope * log x`` with a bootstrap interval.

    Attributes:
      slope: least-squares slope of ``log y`` on ``log x`` (natural logs).
      intercept: least-squares intercept, so ``y ~ exp(intercept) * x**slope``.
      low: lower end of the percentile-bootstrap interval of ``slope``.
      high: upper end of the percentile-bootstrap interval of ``slope``.
      level: nominal coverage of ``[low, high]``, e.g. ``0.95``.
      num_bootstrap: number of bootstrap draws behind ``low`` and ``high``.
      argmax: for a worst-case fit, the family member attaining the maximum at
        each point (first one on ties); ``None`` otherwise.

    Examples:
      >>> fit = ExponentFit(slope=2 / 3, intercept=0.0, low=0.65, high=0.684, level=0.95, num_bootstrap=1000)
      >>> str(fit)
      '0.667 [0.650, 0.684]'
      >>> fit.contains(0.7), fit.contains(0.7, tol=0.02)
      (False, True)
    """

    slope: float
    intercept: float
    low: float
    high: float
    level: float
    num_bootstrap: int
    argmax: tuple[int, ...] | None = None

    def __post_init__(self):
        """``ValueError`` for fields that no fit gives: a slope that is not one finite number, an
        infinite intercept, an interval end that is NaN, ``low > high``, a ``level`` outside ``(0, 1)`` or ``num_bootstrap < 1``."""
        for name in ("slope", "intercept", "low", "high", "level"):
            value = getattr(self, name)
            # An interval end may be infinite (bootstrap draws of regret 0); the intercept NaN (a fit rebuilt
            # from its slope and interval, as a table holds them).
            ends, unknown = name in ("low", "high"), name == "intercept"
            if not (isinstance(value, numbers.Real) and not isinstance(value, bool)
                    and (math.isfinite(value) or (ends and not math.isnan(value)) or (unknown and math.isnan(value)))):
                what = "a number, not NaN" if ends else "one finite number, or NaN" if unknown else "one finite number"
                raise ValueError(f"ExponentFit {name} must be {what}; got {name}={value!r}.")
        if not self.low <= self.high:
            raise ValueError(f"ExponentFit low must be at most high; got low={self.low!r}, high={self.high!r}.")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"ExponentFit level must lie in (0, 1); got level={self.level!r}.")
        if not (isinstance(self.num_bootstrap, numbers.Integral) and not isinstance(self.num_bootstrap, bool)
                and self.num_bootstrap >= 1):
            raise ValueError(f"ExponentFit num_bootstrap must be an integer >= 1; got "
                             f"num_bootstrap={self.num_bootstrap!r}.")

    def contains(self, value: float, tol: float = 0.0) -> bool:
        """Whether ``low - tol <= value <= high + tol``.

        Args:
          value: the exponent to test, e.g. a theoretical rate.
          tol: non-negative slack added on both sides of the interval.

        Returns:
          ``True`` when ``value`` lies in the widened interval.
        """
        if not (isinstance(tol, numbers.Real) and math.isfinite(tol) and tol >= 0):
            raise ValueError(f"tol must be a finite number >= 0; got {tol!r}")
        return bool(self.low - tol <= value <= self.high + tol)

    def __str__(self) -> str:
        return f"{self.slope:.3f} [{self.low:.3f}, {self.high:.3f}]"


def fit_exponent(
    x: Any,
    regret: Any,
    *,
    key: int = 0,
    num_bootstrap: int = 1000,
    level: float = 0.95,
    statistic: str = "mean",
) -> ExponentFit:
    """Slope of ``log(statistic over seeds of regret)`` on ``log x``, with a seed-bootstrap interval.

    The point estimate fits a least-squares line to ``(log x[p], log y[p])``
    where ``y[p]`` is the mean (or median) over seeds of ``regret[p]``.  The
    interval is the percentile bootstrap: each draw resamples ``S`` seed
    indices with replacement, uses the same indices at every point, recomputes
    ``y`` and refits.  Its ends are order statistics of the resampled slopes,
    taken outward (numpy's ``"lower"`` method for ``low``, ``"higher"`` for
    ``high``), so the interval never narrows by interpolation, and widened to
    hold the point estimate where the resampled slopes lie to one side of it
    (where every seed agrees, the resamples' rounding can put all of them
    ``1e-16`` away from it).

    Individual regrets may be zero or negative (realised regret); only the
    statistic at each point must be positive.  A bootstrap draw whose
    statistic is zero at some point has slope ``+-inf`` (the limit of the
    fitted line); a draw where the slope is undefined (a negative statistic,
    or zeros pulling both ways) counts as ``-inf`` for ``low`` and ``+inf``
    for ``high``, so such draws can only widen the interval.

    Args:
      x: f[P] positive abscissae (horizons ``T`` or arm counts ``K``), ``P >= 2``
        with at least two distinct values.
      regret: f[P, S] finite regrets, ``S >= 2`` seeds per point (one seed would give
        every resample that seed: an interval of width 0); seed ``s`` is taken to be
        the same seed at every point.
      key: ``int >= 0`` seed of the bootstrap's ``numpy.random.default_rng``.
      num_bootstrap: number of bootstrap draws, in ``[2, 10^6]``.
      level: nominal coverage of the interval, in ``(0, 1)``.
      statistic: ``"mean"`` or ``"median"``, taken over seeds at each point.

    Returns:
      ExponentFit with ``argmax=None``.

    Raises:
      ValueError: on a shape or value outside the ranges above, in particular
        a point whose statistic is not positive (e.g. regret 0 for every seed).

    Examples:
      >>> import numpy as np
      >>> x = np.array([10.0, 100.0, 1000.0])
      >>> regret = np.repeat(3.0 * np.sqrt(x)[:, None], 4, axis=1)  # f[3, 4], noiseless
      >>> print(fit_exponent(x, regret))
      0.500 [0.500, 0.500]
    """
    log_x = _log_abscissae(x)
    if statistic not in _STATISTICS:
        raise ValueError(f"statistic must be one of {_STATISTICS}; got {statistic!r}")
    _check_bootstrap_args(key, num_bootstrap, level)
    r = _finite_array("regret", regret, ndim=2, shape_doc="f[P, S]")
    if r.shape[0] != log_x.shape[0] or r.shape[1] < 2:
        raise ValueError(
            f"regret must have shape (P, S) = ({log_x.shape[0]}, S) with S >= 2 seeds (the bootstrap interval "
            f"resamples them) to match x of length {log_x.shape[0]}; got shape {r.shape}"
        )
    y = np.mean(r, axis=1) if statistic == "mean" else np.median(r, axis=1)
    _check_positive_statistic(y, r, x_values=np.exp(log_x), name=f"{statistic} regret over seeds")
    slope, intercept = _line(log_x, y)

    def resampled(counts: np.ndarray, indices: np.ndarray) -> np.ndarray:
        if statistic == "mean":
            return counts @ r.T / r.shape[1]  # [chunk, P]
        return np.median(r[:, indices], axis=-1).T  # r[:, indices]: [P, chunk, S]

    slopes = np.concatenate(
        [_slopes(log_x, resampled(c, i)) for i, c in _resamples(key, num_bootstrap, r.shape[1])]
    )
    low, high = _percentile_interval(slopes, level, slope)
    return ExponentFit(slope, intercept, low, high, float(level), int(num_bootstrap))


def fit_worst_case_exponent(
    x: Any,
    regret: Any,
    scale: Any,
    *,
    key: int = 0,
    num_bootstrap: int = 1000,
    level: float = 0.95,
) -> ExponentFit:
    """Slope of the worst normalised mean regret over an instance family, with a seed-bootstrap interval.

    At each point the statistic is ``max_f mean_s(regret[p, f, s]) / scale[p, f]``,
    an empirical ``sup_nu R(nu) / U_eps(nu)`` (Section 5, eq. (intrinsic_scale_unknown_parameters), for
    ``scale = intrinsic_scale``).  The slope and intercept fit its logarithm on
    ``log x`` by least squares.  Each bootstrap draw resamples ``S`` seed
    indices with replacement, applies the same indices at every point and to
    every family member, and recomputes the maximum, so the worst member may
    change from draw to draw.  Interval ends are taken as in
    :func:`fit_exponent`.

    Args:
      x: f[P] positive abscissae, ``P >= 2`` with at least two distinct values.
      regret: f[P, F, S] finite regrets of ``F >= 1`` family members, ``S >= 2``
        seeds shared by every point and member.
      scale: f[F] or f[P, F] normalisers in ``(0, inf]``; a member with
        ``scale = inf`` (e.g. no ``(1+eps)``-moment) contributes 0.
      key: ``int >= 0`` seed of the bootstrap's ``numpy.random.default_rng``.
      num_bootstrap: number of bootstrap draws, in ``[2, 10^6]``.
      level: nominal coverage of the interval, in ``(0, 1)``.

    Returns:
      ExponentFit whose ``argmax`` is a P-tuple: the worst member at each point
      (first one on ties) in the data, not in the bootstrap draws.

    Raises:
      ValueError: on a shape or value outside the ranges above, in particular
        a point where no member has positive normalised mean regret.

    Examples:
      >>> import numpy as np
      >>> x = np.array([1.0, 10.0, 100.0])
      >>> members = np.stack([2.0 * x**0.25, 0.3 * x**0.75], axis=1)  # f[3, 2]; worst switches
      >>> fit = fit_worst_case_exponent(x, np.repeat(members[:, :, None], 2, axis=2), np.ones(2))  # 2 seeds
      >>> fit.argmax
      (0, 0, 1)
    """
    log_x = _log_abscissae(x)
    num_points = log_x.shape[0]
    _check_bootstrap_args(key, num_bootstrap, level)
    r = _finite_array("regret", regret, ndim=3, shape_doc="f[P, F, S]")
    if r.shape[0] != num_points or r.shape[1] < 1 or r.shape[2] < 2:
        raise ValueError(
            f"regret must have shape (P, F, S) = ({num_points}, F, S) with F >= 1 and S >= 2 seeds (the "
            f"bootstrap interval resamples them) to match x of length {num_points}; got shape {r.shape}"
        )
    num_members, num_seeds = r.shape[1], r.shape[2]
    u = _real("scale", scale, "a real array f[F] or f[P, F]")
    if u.shape not in ((num_members,), (num_points, num_members)):
        raise ValueError(
            f"scale must have shape (F,) = ({num_members},) or (P, F) = ({num_points}, {num_members}); got shape {u.shape}"
        )
    if not np.all((u > 0) & ~np.isnan(u)):
        raise ValueError(f"scale must lie in (0, inf]; got {_first_bad(u, (u > 0) & ~np.isnan(u))}")
    inv_scale = np.broadcast_to(1.0 / u, (num_points, num_members))  # 0 where scale = inf

    normalised = np.mean(r, axis=2) * inv_scale  # [P, F]
    worst = np.max(normalised, axis=1)
    _check_positive_statistic(
        worst, r.reshape(num_points, -1), x_values=np.exp(log_x), name="worst normalised mean regret"
    )
    slope, intercept = _line(log_x, worst)
    argmax = tuple(int(f) for f in np.argmax(normalised, axis=1))

    flat = r.reshape(num_points * num_members, num_seeds)
    weights = inv_scale.reshape(-1) / num_seeds

    def resampled(counts: np.ndarray) -> np.ndarray:
        means = (counts @ flat.T) * weights  # [chunk, P * F]
        return means.reshape(-1, num_points, num_members).max(axis=2)  # [chunk, P]

    slopes = np.concatenate(
        [_slopes(log_x, resampled(c)) for _, c in _resamples(key, num_bootstrap, num_seeds)]
    )
    low, high = _percentile_interval(slopes, level, slope)
    return ExponentFit(slope, intercept, low, high, float(level), int(num_bootstrap), argmax)


def local_slopes(x: Any, y: Any) -> np.ndarray:
    """Slopes of ``log y`` on ``log x`` between consecutive points: where a power law bends.

    Args:
      x: f[P] positive finite abscissae, ``P >= 2``, consecutive values distinct.
      y: f[P] or f[P, ...] positive finite values.

    Returns:
      f[P-1] (or f[P-1, ...]): ``(log y[p+1] - log y[p]) / (log x[p+1] - log x[p])``.

    Raises:
      ValueError: on a shape or value outside the ranges above.

    Examples:
      >>> import numpy as np
      >>> local_slopes(np.array([1.0, 10.0, 100.0]), np.array([1.0, 10.0, 1000.0]))
      array([1., 2.])
    """
    xs = _finite_array("x", x, ndim=1, shape_doc="f[P]")
    if xs.shape[0] < 2:
        raise ValueError(f"x must have length P >= 2; got shape {xs.shape}")
    if not np.all(xs > 0):
        raise ValueError(f"x must be positive; got {_first_bad(xs, xs > 0)}")
    step = np.diff(np.log(xs))
    if np.any(step == 0):
        p = int(np.argmax(step == 0))
        raise ValueError(f"consecutive x must differ; got x[{p}] = x[{p + 1}] = {xs[p]:.6g}")
    ys = _finite_array("y", y, ndim=None, shape_doc="f[P] or f[P, ...]")
    if ys.ndim < 1 or ys.shape[0] != xs.shape[0]:
        raise ValueError(f"y must have shape (P, ...) with P = {xs.shape[0]}; got shape {ys.shape}")
    if not np.all(ys > 0):
        raise ValueError(f"y must be positive; got {_first_bad(ys, ys > 0)}")
    return np.diff(np.log(ys), axis=0) / step.reshape((-1,) + (1,) * (ys.ndim - 1))


def _real(name: str, value: Any, what: str) -> np.ndarray:
    """``value`` as a float64 array: ``TypeError`` for one that is not real (strings, bools:
    :func:`real_array`) or is traced (the fits are NumPy computations on results)."""
    a = real_array(name, value, what)
    if a is None:
        raise TypeError(f"{name} must be {what} of results, not a traced value: fit outside jax.jit and jax.grad.")
    return a.astype(np.float64)


def _finite_array(name: str, value: Any, *, ndim: int | None, shape_doc: str) -> np.ndarray:
    """``value`` as a float64 array of ``ndim`` dimensions with finite entries: ``TypeError`` for one that
    is not real (strings, bools: :func:`real_array`), else ``ValueError``."""
    a = _real(name, value, f"a real array {shape_doc}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {shape_doc} ({ndim} dimensions); got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite; got {_first_bad(a, np.isfinite(a))}")
    return a


def _first_bad(a: np.ndarray, ok: np.ndarray) -> str:
    idx = tuple(int(i) for i in np.argwhere(~ok)[0]) if a.ndim else ()
    return f"{float(a[idx]):.6g} at index {list(idx)}" if idx else f"{float(a[()]):.6g}"


def _log_abscissae(x: Any) -> np.ndarray:
    """``log x`` for f[P] positive finite ``x`` with ``P >= 2`` and two distinct values."""
    xs = _finite_array("x", x, ndim=1, shape_doc="f[P]")
    if xs.shape[0] < 2:
        raise ValueError(f"x must have length P >= 2; got shape {xs.shape}")
    if not np.all(xs > 0):
        raise ValueError(f"x must be positive; got {_first_bad(xs, xs > 0)}")
    log_x = np.log(xs)
    if np.all(log_x == log_x[0]):
        raise ValueError(f"x must hold at least two distinct values to fit a slope; got all {xs[0]:.6g}")
    return log_x


def _check_bootstrap_args(key: Any, num_bootstrap: Any, level: Any) -> None:
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, numbers.Integral) or key < 0:
        raise ValueError(f"key must be an int >= 0 (a numpy seed); got {key!r}")
    if isinstance(num_bootstrap, (bool, np.bool_)) or not isinstance(num_bootstrap, numbers.Integral):
        raise ValueError(f"num_bootstrap must be an int in [2, {MAX_BOOTSTRAP}]; got {num_bootstrap!r}")
    if not 2 <= num_bootstrap <= MAX_BOOTSTRAP:  # 2^70 ran for minutes, holding its draws, and never ended
        raise ValueError(f"num_bootstrap must be an int in [2, {MAX_BOOTSTRAP}]; got {num_bootstrap!r}")
    if not isinstance(level, numbers.Real):
        raise ValueError(f"level must be a real number in (0, 1), a Python or NumPy float; got {level!r} "
                         f"({type(level).__name__})")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level!r}")


def _check_positive_statistic(y: np.ndarray, r: np.ndarray, *, x_values: np.ndarray, name: str) -> None:
    """``ValueError`` at the first point where ``y`` (f[P]) is not positive; ``r``: f[P, ...] raw regrets."""
    bad = ~(y > 0)
    if not np.any(bad):
        return
    p = int(np.argmax(bad))
    if np.all(r[p] == 0):
        raise ValueError(
            f"regret is 0 for every seed at point {p} (x = {x_values[p]:.6g}); its logarithm is "
            "undefined, so no exponent can be fitted"
        )
    raise ValueError(
        f"the {name} must be positive at every point to take its logarithm; got {y[p]:.6g} at point "
        f"{p} (x = {x_values[p]:.6g})"
    )


def _line(log_x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares ``(slope, intercept)`` of ``log y`` on ``log_x``, both f[P], ``y > 0``."""
    slope = float(_slopes(log_x, y[None])[0])
    return slope, float(np.mean(np.log(y)) - slope * np.mean(log_x))


def _slopes(log_x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of ``log y`` on ``log_x`` (f[P]) for each row of ``y`` (f[B, P]) -> f[B].

    A row with zeros only on one side of the mean of ``log_x`` gives the limit
    ``+-inf``; a row where the limit is undefined (a negative entry, zeros on
    both sides or at the mean) gives ``nan``.
    """
    centred = log_x - np.mean(log_x)
    weights = centred / np.dot(centred, centred)  # sums to 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_y = np.log(y)
        # Subtracting the row mean leaves the slope unchanged and keeps its rounding small.
        finite = np.isfinite(log_y).all(axis=1, keepdims=True)
        log_y = np.where(finite, log_y - np.mean(log_y, axis=1, keepdims=True), log_y)
        return log_y @ weights


def _resamples(key: int, num_bootstrap: int, num_seeds: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Bootstrap draws in chunks: seed indices i[chunk, S] and their counts f[chunk, S]."""
    rng = np.random.default_rng(key)
    for start in range(0, num_bootstrap, _CHUNK):
        size = min(_CHUNK, num_bootstrap - start)
        indices = rng.integers(0, num_seeds, size=(size, num_seeds))
        offsets = (np.arange(size) * num_seeds)[:, None]
        counts = np.bincount((indices + offsets).ravel(), minlength=size * num_seeds)
        yield indices, counts.reshape(size, num_seeds).astype(np.float64)


def _percentile_interval(slopes: np.ndarray, level: float, slope: float) -> tuple[float, float]:
    """Outward order statistics of f[B] ``slopes``; ``nan`` slopes count as ``-inf`` / ``+inf``.  The
    interval is widened to hold the point estimate ``slope``."""
    tail = (1.0 - level) / 2.0
    undefined = np.isnan(slopes)
    low = np.quantile(np.where(undefined, -np.inf, slopes), tail, method="lower")
    high = np.quantile(np.where(undefined, np.inf, slopes), 1.0 - tail, method="higher")
    return min(float(low), slope), max(float(high), slope)
