"""The exponent fits of a family run (``d`` worst case, ``c`` fixed instance), finite-T predictions, verdicts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from htb_jax._src.exponents import ExponentFit, fit_exponent, fit_worst_case_exponent
from htb_jax._src.frontier.families import SpikeFamily, StableFamily, check_family
from htb_jax._src.frontier.runs import FamilyRuns, _check_runs
from htb_jax._src.policies.adar_etc import num_blocks
from htb_jax._src.validation import check_instance_type, check_integer, check_interval, given

AGREEMENT = 0.05  # |measured - theory| tolerance besides the confidence interval


def _check_schedule(runs: FamilyRuns, g) -> int:
    """``g`` as the index of a schedule of ``runs`` (``1.0`` is 1: a float failed as an index)."""
    check_integer("g", g, 0, maximum=runs.regret.shape[0] - 1, one=True)
    return int(g)


def _fit_mask(horizons: np.ndarray, fit_from: int) -> np.ndarray:
    mask = horizons >= fit_from
    if np.unique(horizons[mask]).size < 2:  # a slope needs two distinct horizons (1e9,1e9 ran, then failed)
        raise ValueError(f"fit_from={fit_from} leaves fewer than two distinct horizons in {horizons.tolist()}.")
    return mask


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def free_exponent(
    runs: FamilyRuns, g: int, eps: float, fit_from: int, *, key: int = 0, also: Sequence[FamilyRuns] = ()
) -> tuple[ExponentFit, float, float]:
    """Worst-case normalized-regret slope of schedule ``g`` for true ``eps``, and its finite-T prediction.

    Args:
      runs: the family runs.
      g: the schedule.
      eps: the true tail exponent (normalization by ``U_eps``).
      fit_from: smallest horizon in the fit.
      key: bootstrap key.
      also: runs of the same schedules at the same horizons on other families
        (for example a :class:`ParetoFamily`); their members join the worst case
        after ``runs``' own (``fit.argmax`` indexes the concatenation).

    Returns:
      ``(fit, finite_t, hardest)``: the bootstrap fit over horizons ``>=
      fit_from``, the slope of ``T (K B_T / L_T)^(eps/(1+eps))`` over the same
      horizons (on a :class:`StableFamily`, of its predicted worst normalized
      regret: :meth:`StableFamily.free_slope`), and ``K B_T / L_T`` at the largest one (about the spike
      probability of the hardest instance); both NaN where the schedule explores no round at a fitted
      horizon (exploration 0: an index policy's runs, which have no finite-T prediction).
    """
    _check_runs("runs", runs)
    g = _check_schedule(runs, g)
    if isinstance(eps, (list, tuple)) or np.ndim(eps) != 0:  # float() of a list failed, naming nothing
        raise TypeError(f"eps must be one number in (0, 1], the true tail exponent; got {given('eps', eps)}.")
    check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    check_integer("fit_from", fit_from, 1, maximum=10**18, one=True)
    check_integer("key", key, 0, one=True)
    if not isinstance(also, (list, tuple)):
        raise TypeError(f"also must be a list or tuple of FamilyRuns; got {given('also', also)}.")
    for i, other in enumerate(also):
        _check_runs(f"also[{i}]", other)
        if other.regret.shape[0] != runs.regret.shape[0]:  # schedule g of each is joined
            raise ValueError(f"also[{i}] must hold the runs of the same schedules as runs; it holds "
                             f"{other.regret.shape[0]} schedule(s), runs {runs.regret.shape[0]}.")
    mask = _fit_mask(runs.horizons, fit_from)
    t = runs.horizons[mask].astype(float)
    regrets, scales = [], []
    for r in (runs, *also):
        if not np.array_equal(r.horizons, runs.horizons) or r.regret.shape[-1] != runs.regret.shape[-1]:
            raise ValueError("runs joined into one worst case need the same horizons and seeds.")
        members = r.family.num_members
        regrets.append(np.moveaxis(r.regret[g, :members][:, mask], 0, 1))  # [H, F, S]
        scales.append(r.scale(eps)[:members])
    fit = fit_worst_case_exponent(t, np.concatenate(regrets, axis=1), np.concatenate(scales), key=key)
    if not np.all(runs.exploration[g, mask] > 0):  # an index policy's runs: no schedule to predict from
        return fit, math.nan, math.nan
    finite, share = schedule_free_slope(runs.family.num_arms, runs.horizons[mask], runs.exploration[g, mask], eps)
    if isinstance(runs.family, StableFamily):  # its block law's prediction (StableFamily.free_slope)
        finite = runs.family.free_slope(runs.horizons[mask], runs.exploration[g, mask], eps)
    return fit, finite, share


def schedule_free_slope(num_arms: int, horizons: np.ndarray, exploration: np.ndarray, eps: float) -> tuple[float, float]:
    """The finite-T prediction of ``d`` for an AdaR-ETC-type schedule, and ``K B_T / L_T`` at the largest horizon.

    The worst normalized regret behaves like ``T (K B_T / L_T)^(eps/(1+eps))``
    (see the package docstring); its slope over ``horizons`` is what ``d``
    measures at finite ``T``.

    Args:
      num_arms: ``K``.
      horizons: i64[H] the fitted horizons.
      exploration: i64[H] ``L_T`` at each.
      eps: the true tail exponent.
    """
    t = np.asarray(horizons, float)
    share = num_arms * np.asarray(num_blocks(num_arms, np.asarray(horizons, np.int64)), float) / np.asarray(
        exploration, float
    )
    return _slope(t, t * share ** (eps / (1.0 + eps))), float(share[np.argmax(t)])


def dependent_exponent(runs: FamilyRuns, g: int, fit_from: int, *, key: int = 0) -> tuple[ExponentFit, float]:
    """Regret slope of schedule ``g`` on the fixed instance, and its finite-T prediction.

    The prediction is the slope of ``L_T`` (the fixed two-point instance never
    commits wrongly), or on a :class:`StableFamily` the slope of its expected
    regret with wrong commits (:meth:`StableFamily.dependent_slope`).

    Args:
      runs: the family runs (:func:`run_family` or :func:`load_runs`); the fit uses the
        regrets of the fixed instance, ``runs.regret[g, -1]``, f64[H, S].
      g: the schedule, an index in ``[0, G)``.
      fit_from: smallest horizon in the fit (at least two distinct horizons must remain).
      key: bootstrap key, an int ``>= 0``.

    Returns:
      ``(fit, finite_t)``: the bootstrap :class:`~htb_jax.ExponentFit` of the mean regret's
      slope ``c`` over horizons ``>= fit_from``, and the finite-T prediction of that slope
      over the same horizons (NaN where the schedule explores no round at a fitted horizon:
      exploration 0, an index policy's runs).
    """
    _check_runs("runs", runs)
    g = _check_schedule(runs, g)
    check_integer("fit_from", fit_from, 1, maximum=10**18, one=True)
    check_integer("key", key, 0, one=True)
    mask = _fit_mask(runs.horizons, fit_from)
    t = runs.horizons[mask].astype(float)
    fit = fit_exponent(t, runs.regret[g, -1][mask], key=key)
    if not np.all(runs.exploration[g, mask] > 0):  # an index policy's runs: no schedule to predict from
        return fit, math.nan
    if isinstance(runs.family, StableFamily):
        return fit, runs.family.dependent_slope(runs.horizons[mask], runs.exploration[g, mask])
    return fit, _slope(t, runs.exploration[g, mask].astype(float))


def verdict(fit: ExponentFit, theory_value: float, finite_t: float, hardest: float | None = None,
            family: SpikeFamily | None = None, exploration_t: float | None = None) -> str:
    """``agrees`` (theory inside the interval or within 0.05), else what explains the gap.

    ``hardest`` is the spike probability of the hardest instance at the
    largest fitted horizon, about ``K B_T / L_T`` (one over the block size;
    above 1 where ``L_T = T < K B_T``, no spike probability then); below the
    family's grid, the worst case of the grid misses it and the
    fitted ``d`` is too small.  ``exploration_t`` is the slope of ``L_T``
    over the fitted horizons: the worst normalized regret is about ``A T (K
    B_T / L_T)^(eps/(1+eps)) + B L_T`` (estimation plus exploration), and the
    local slope of a sum of two power laws lies between their exponents, so
    a slope between ``finite_t`` and ``exploration_t`` is a crossover between
    the two regimes inside the fitted range.

    Args:
      fit: the measured :class:`~htb_jax.ExponentFit` (from :func:`free_exponent` or
        :func:`dependent_exponent`).
      theory_value: the exponent theory predicts as ``T`` grows (finite).
      finite_t: the finite-T prediction over the fitted horizons (finite).
      hardest: ``K B_T / L_T`` at the largest fitted horizon, ``> 0`` (``free_exponent``'s third
        value), or ``None``.
      family: the :class:`SpikeFamily` whose grid of spike probabilities ``hardest`` is
        compared with, or ``None`` (the "grid too narrow" case needs both).
      exploration_t: the slope of ``L_T`` over the fitted horizons, or ``None``.

    Returns:
      One of ``"agrees"``, ``"finite T: schedule predicts ..."``, ``"regime crossover: ..."``,
      ``"grid too narrow: ..."`` or ``"disagrees"``, checked in that order.
    """
    check_instance_type("fit", fit, ExponentFit, "an ExponentFit")
    # hardest, K B_T / L_T, is above 1 where L_T = T < K B_T; it and exploration_t may be None
    for name, value, low in (("theory_value", theory_value, -np.inf), ("finite_t", finite_t, -np.inf),
                             ("hardest", hardest, 0.0), ("exploration_t", exploration_t, -np.inf)):
        if value is None and name in ("hardest", "exploration_t"):
            continue
        if value is not None and np.ndim(value) != 0:  # else "the truth value of an array is ambiguous"
            raise ValueError(f"{name} must be one number; got {name} of shape {np.shape(value)}.")
        check_interval(name, value, low, np.inf, low_closed=False, high_closed=False)
    if family is not None:
        check_family("family", family)
    if fit.contains(theory_value, tol=AGREEMENT) or abs(fit.slope - theory_value) <= AGREEMENT:
        return "agrees"
    if fit.contains(finite_t, tol=AGREEMENT) or abs(fit.slope - finite_t) <= AGREEMENT:
        return f"finite T: schedule predicts {finite_t:.3f}"
    if exploration_t is not None and min(finite_t, exploration_t) <= fit.slope <= max(finite_t, exploration_t):
        return (
            f"regime crossover: between the estimation term's {finite_t:.3f} "
            f"and the exploration term's {exploration_t:.3f}"
        )
    if hardest is not None and isinstance(family, SpikeFamily) and hardest < min(family.spike_probs):
        return (
            f"grid too narrow: hardest spike probability K B_T / L_T = {hardest:.1g} "
            f"< {min(family.spike_probs):g} at the largest T"
        )
    return "disagrees"
