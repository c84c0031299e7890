"""The paper's rate exponents in closed form: frontiers, AdaR-ETC's guarantees, calibrations.

A rate ``K^k T^t`` is described by its exponents ``(k, t)``.  Following
Theorem 1, ``Phi_free(K, T) = K^b T^d`` is the moment-free distribution-free
rate and ``Phi_dep(K, T) = K^a T^c`` the gap-sum-normalized
distribution-dependent rate.  Every function takes Python floats or NumPy
arrays, broadcasts them, and returns float64 (a NumPy scalar when every
input is a scalar).  Out-of-range inputs raise ``ValueError`` naming the
admissible range and the value given; a closed end also admits values within
``1e-12`` (relative) of it, taken as the end point (a typed ``2/3`` where the
bound is ``(1+eps)/(1+2eps)``).  For ``eps`` below about ``1e-8``, an ``alpha``
in ``[alpha*(eps), 1)`` holds ``1 - alpha`` to about ``1e-16 / eps``
(relative) only, and exponents computed from it lose as many digits.  Equations are cited by their labels in
the paper's source, ``eq. (boundEpsKnown)``; the documentation's index says
where each one is.
"""

from __future__ import annotations

import functools
import inspect
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from htb_jax._src.validation import broadcast_named_shapes, check_interval, has_tracer

Float = float | np.ndarray

# About the least eps whose alpha*(eps) = (1+eps)/(1+2eps) is below 1 in float64.
SMALLEST_EPS_WITH_ALPHA = 1.6653345369377348e-16


class Exponents(NamedTuple):
    """Exponents of a rate ``K^k T^t``.

    Attributes:
      k: f64[...] the exponent of the number of arms ``K``.
      t: f64[...] the exponent of the horizon ``T``.
    """

    k: Float
    t: Float


class CalibratedProfile(NamedTuple):
    """Rates of the ``eps_bar``-calibrated AdaR-ETC at the true order ``eps`` (Theorem 6).

    Attributes:
      free: ``Phi_free``'s exponents, eq. (arbitrary_calibration_profile).
      dep: ``Phi_dep``'s exponents, eq. (arbitrary_calibration_dep).
    """

    free: Exponents
    dep: Exponents


class OperatingPoint(NamedTuple):
    """A row of Table 1: a point on the ``K``-frontier at ``eps = 1``.

    Attributes:
      label: the row's name in Table 1.
      b: the exponent of ``K`` in ``Phi_free``.
      a: the exponent of ``K`` in ``Phi_dep``.
      equal_gap_k: the exponent of ``K`` in the equal-gap regret, ``a + 1``.
      q: AdaR-ETC's exploration exponent that realises ``(b, a)``.
    """

    label: str
    b: float
    a: float
    equal_gap_k: float
    q: float


class ForceMoMExponents(NamedTuple):
    """ForceMoM's claimed exponents of ``T``.

    Attributes:
      fixed_instance: f64[...] ``rho``: regret ``O(T^rho)`` on a fixed instance.
      worst_case: f64[...] ``1 - rho eps/(1+eps)``: worst-case regret ``u^(1/p) T^(1 - rho eps/(1+eps))``.
    """

    fixed_instance: Float
    worst_case: Float


def _concrete(function):
    """``function`` refusing a traced argument by name: the rates are NumPy closed forms of concrete
    values (JAX's own error, ``TracerArrayConversionError``, names neither the function nor the argument)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def checked(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            if has_tracer(value):
                raise TypeError(
                    f"htb.theory.{function.__name__} computes in NumPy on concrete values; got a traced {name} (inside "
                    "jax.jit, vmap or grad): call it outside the transformation, on the concrete value."
                )
        return function(*args, **kwargs)

    return checked


def _broadcast(*values: ArrayLike) -> tuple[Float, ...]:
    """float64 copies of ``values`` broadcast to one shape; 0-d results as NumPy scalars."""
    return tuple(np.array(v, np.float64)[()] for v in np.broadcast_arrays(*values))


def _check_shapes(function: str, **values: ArrayLike) -> None:
    """``ValueError`` naming every argument's shape unless they broadcast (values checked as numbers first)."""
    broadcast_named_shapes({name: np.shape(value) for name, value in values.items()},
                           f"the arguments of {function} must broadcast to one shape")


def _check_eps(eps: ArrayLike, name: str = "eps") -> np.ndarray:
    """``eps`` as f64, an ``eps`` the check took within its slack above 1 being 1 (the formulas' bounds hold)."""
    check_interval(name, eps, 0.0, 1.0, low_closed=False, high_closed=True)
    return np.minimum(np.asarray(eps, np.float64), 1.0)


def _check_finite(name: str, value: ArrayLike) -> np.ndarray:
    check_interval(name, value, -np.inf, np.inf, low_closed=False, high_closed=False)
    return np.asarray(value, np.float64)


def check_alpha_room(eps: ArrayLike) -> None:
    """``ValueError`` for an ``eps`` so small that ``alpha*(eps) = (1+eps)/(1+2eps)`` rounds to 1 in float64,
    leaving no ``alpha`` in ``[alpha*(eps), 1)`` (every eps from ``SMALLEST_EPS_WITH_ALPHA`` on has one)."""
    eps = np.asarray(eps, np.float64)
    # (a threshold as well: the rounding of the quotient alone refused 1.12e-16 but took 1e-16)
    small = (eps < SMALLEST_EPS_WITH_ALPHA) | ((1.0 + eps) / (1.0 + 2.0 * eps) >= 1.0)
    if np.any(small):
        raise ValueError(
            f"eps must be at least {SMALLEST_EPS_WITH_ALPHA!r}: from there on alpha*(eps) = (1+eps)/(1+2eps) is "
            f"below 1 in float64, while below it rounds to 1 for some eps, leaving no alpha in [alpha*(eps), 1); "
            f"got eps={float(eps[small].flat[0])!r}."
        )


def _check_alpha(alpha: ArrayLike, eps: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = alpha_range(eps)
    eps = np.asarray(eps, np.float64)
    check_interval("alpha", alpha, lo, hi, low_closed=True, high_closed=False, where={"eps": eps})
    return np.maximum(np.asarray(alpha, np.float64), lo), eps  # an alpha within the slack below lo is lo


def _check_q(q: ArrayLike, eps: ArrayLike) -> np.ndarray:
    lo, hi = q_range(eps)
    check_interval("q", q, lo, hi, low_closed=True, high_closed=True, where={"eps": eps})
    return np.clip(np.asarray(q, np.float64), lo, hi)  # a q within the slack outside its ends is that end


@_concrete
def alpha_range(eps: ArrayLike) -> tuple[Float, Float]:
    """Admissible ``alpha`` of AdaR-ETC: ``[(1+eps)/(1+2eps), 1)`` (Algorithm 1, Theorems 2-3).

    The lower end is where ``alpha >= beta_alpha`` starts to hold (Section 4,
    "Exploration Budget"); the upper end is excluded.

    Args:
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      ``(lo, hi)``, f64[eps.shape] each: ``lo`` included, ``hi = 1`` excluded.

    Examples:
      >>> [float(x) for x in alpha_range(0.5)]
      [0.75, 1.0]
    """
    eps = _check_eps(eps)
    check_alpha_room(eps)
    return _broadcast((1.0 + eps) / (1.0 + 2.0 * eps), 1.0)


@_concrete
def q_range(eps: ArrayLike) -> tuple[Float, Float]:
    """Admissible ``q`` of AdaR-ETC: ``[0, eps/(1+2eps)]`` (Algorithm 1, Theorems 2-3).

    The upper end is where ``q <= (1-q) eps/(1+eps)`` stops holding (Section 4).

    Args:
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      ``(lo, hi)``, f64[eps.shape] each, both included.

    Examples:
      >>> [float(x) for x in q_range(0.5)]
      [0.0, 0.25]
    """
    eps = _check_eps(eps)
    return _broadcast(0.0, eps / (1.0 + 2.0 * eps))


@_concrete
def beta_alpha(alpha: ArrayLike, eps: ArrayLike) -> Float:
    """``beta_alpha = (1 - alpha)(1 + eps)/eps``, the exploration exponent of ``T`` (Algorithm 1, line 1).

    Args:
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``.
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      f64[broadcast shape], in ``(0, (1+eps)/(1+2eps)]``.

    Examples:
      >>> float(beta_alpha(0.75, 1.0))
      0.5
    """
    _check_shapes("beta_alpha", alpha=alpha, eps=_check_eps(eps))
    alpha, eps = _check_alpha(alpha, eps)
    return (1.0 - alpha) * (1.0 + eps) / eps


@_concrete
def free_exponents(alpha: ArrayLike, q: ArrayLike, eps: ArrayLike) -> Exponents:
    """``(b, d)`` of AdaR-ETC's ``Phi_free = K^(eps(1-q)/(1+eps)) T^alpha`` (Theorem 2).

    The regret has an exploration term ``K^q T^beta_alpha`` and an estimation
    term ``K^(eps(1-q)/(1+eps)) T^alpha``; on the admissible ``(alpha, q)`` the
    latter dominates and is the rate Theorem 2 states.

    Args:
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``.
      q: f[...] in ``[0, eps/(1+2eps)]``.
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      ``Exponents(k=b, t=d)``, f64[broadcast shape] each.

    Examples:
      >>> [float(x) for x in free_exponents(2 / 3, 0.0, 1.0)]
      [0.5, 0.6666666666666666]
    """
    _check_shapes("free_exponents", alpha=alpha, q=q, eps=_check_eps(eps))
    alpha, eps = _check_alpha(alpha, eps)
    q = _check_q(q, eps)
    return Exponents(*_broadcast(eps * (1.0 - q) / (1.0 + eps), alpha))


@_concrete
def dependent_exponents(alpha: ArrayLike, q: ArrayLike, eps: ArrayLike) -> Exponents:
    """``(a, c)`` of AdaR-ETC's ``Phi_dep = K^(q-1) T^beta_alpha`` (Theorem 3).

    Args:
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``.
      q: f[...] in ``[0, eps/(1+2eps)]``.
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      ``Exponents(k=a, t=c)``, f64[broadcast shape] each.

    Examples:
      >>> [float(x) for x in dependent_exponents(0.75, 0.0, 1.0)]
      [-1.0, 0.5]
    """
    _check_shapes("dependent_exponents", alpha=alpha, q=q, eps=_check_eps(eps))
    beta = beta_alpha(alpha, eps)
    q = _check_q(q, eps)
    return Exponents(*_broadcast(q - 1.0, beta))


@_concrete
def t_frontier(d: ArrayLike, eps: ArrayLike) -> Float:
    """Theorem 1's ``T``-frontier: the least ``c`` with ``c + d(1+eps)/eps >= (1+eps)/eps``.

    ``c = min(1, (1 - d)(1+eps)/eps)``.  ``Phi_dep = T`` is always attained
    (regret is at most linear), so, as Figure 1 draws it, the boundary is
    clipped at ``c = 1``, which it reaches at ``d = 1/(1+eps)``: Figure 1's
    solid polylines ``(0, 1)``, ``(1/(1+eps), 1)``, ``(1, 0)``.

    Args:
      d: f[...] distribution-free exponent of ``T``, in ``[0, 1]``.
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      f64[broadcast shape], in ``[0, 1]``.

    Examples:
      >>> float(t_frontier(0.75, 1.0))
      0.5
    """
    check_interval("d", d, 0.0, 1.0, low_closed=True, high_closed=True)
    eps = _check_eps(eps)
    _check_shapes("t_frontier", d=d, eps=eps)
    d = np.clip(np.asarray(d, np.float64), 0.0, 1.0)  # a d the check took within its slack of an end is that end
    return np.minimum(1.0, (1.0 - d) * (1.0 + eps) / eps)


@_concrete
def k_frontier(b: ArrayLike, eps: ArrayLike) -> Float:
    """``a = -b(1+eps)/eps``: the boundary ``a + b(1+eps)/eps = 0`` of Theorem 1's ``K``-frontier.

    Args:
      b: f[...] distribution-free exponent of ``K``, finite.
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      f64[broadcast shape], the distribution-dependent exponent of ``K``.

    Examples:
      >>> float(k_frontier(0.5, 1.0))
      -1.0
    """
    b = _check_finite("b", b)
    eps = _check_eps(eps)
    _check_shapes("k_frontier", b=b, eps=eps)
    return -b * (1.0 + eps) / eps


@_concrete
def oracle_exponents(eps: ArrayLike) -> Exponents:
    """``(eps/(1+eps), 1/(1+eps))``: the minimax rate with ``(eps, u)`` known, eq. (oracleBound).

    Lower bound of Bubeck et al. (eq. (standard_distribution_free_lb)); its
    ``T`` exponent is Figure 2's solid curve and where Figure 1's frontier
    reaches ``c = 1``.

    Args:
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      ``Exponents``, f64[eps.shape] each.
    """
    eps = _check_eps(eps)
    return Exponents(eps / (1.0 + eps), 1.0 / (1.0 + eps))


@_concrete
def balanced_alpha(eps: ArrayLike) -> Float:
    """``alpha*(eps) = (1+eps)/(1+2eps)``, the ``alpha`` balancing the ``T`` exponents (Section 5).

    Args:
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      f64[eps.shape].

    Examples:
      >>> float(balanced_alpha(1.0))
      0.6666666666666666
    """
    eps = _check_eps(eps)
    return (1.0 + eps) / (1.0 + 2.0 * eps)


@_concrete
def balanced_q(eps: ArrayLike) -> Float:
    """``q*(eps) = eps/(1+2eps)``, the ``q`` balancing ``b`` against ``a + 1`` (Section 5).

    Args:
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      f64[eps.shape].
    """
    eps = _check_eps(eps)
    return eps / (1.0 + 2.0 * eps)


@_concrete
def balanced_exponent(eps: ArrayLike) -> Float:
    """``c = d = (1+eps)/(1+2eps)``, the common ``T`` exponent of the balanced point, eq. (boundEpsKnown).

    The solution of ``c = d`` on the ``T``-frontier (Section 3, "Balancing
    both K and T"); it equals ``alpha*(eps)`` because
    ``beta_alpha = alpha`` there.  Figure 2's dashed curve.

    Args:
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      f64[eps.shape].
    """
    return balanced_alpha(eps)


@_concrete
def order_free_exponent(eps: ArrayLike) -> Float:
    """``(3+eps)/(3(1+eps))``: the ``T`` exponent of order-free AdaR-ETC's ``Phi_free`` (Theorem 4).

    Eq. (unknown_parameters_free_rate); Figure 2's dotted curve.

    Args:
      eps: f[...] true tail exponent in ``(0, 1]``.

    Returns:
      f64[eps.shape].

    Examples:
      >>> float(order_free_exponent(1.0))
      0.6666666666666666
    """
    eps = _check_eps(eps)
    return (3.0 + eps) / (3.0 * (1.0 + eps))


@_concrete
def price_of_order_freedom(eps: ArrayLike) -> Float:
    """``eps(1-eps)/(3(1+eps)(1+2eps)) >= 0``, the price of not knowing ``eps``, eq. (unknown_epsilon_price).

    The order-free ``T`` exponent minus the balanced one; the order-free
    ``K`` exponent is smaller by the same amount (Section 5).

    Args:
      eps: f[...] true tail exponent in ``(0, 1]``.

    Returns:
      f64[eps.shape], zero only at ``eps = 1``.
    """
    eps = _check_eps(eps)
    return eps * (1.0 - eps) / (3.0 * (1.0 + eps) * (1.0 + 2.0 * eps))


@_concrete
def calibrated_profile(eps: ArrayLike, eps_bar: ArrayLike) -> CalibratedProfile:
    """Rates of AdaR-ETC calibrated at ``eps_bar`` when the true order is ``eps`` (Theorem 6).

    With ``q_bar = eps_bar/(1+2 eps_bar)`` and ``beta_bar = (1+eps_bar)/(1+2 eps_bar)``:

    * ``Phi_free``, eq. (arbitrary_calibration_profile): for ``eps <= eps_bar``
      ``K^(eps(1+eps_bar)/((1+eps)(1+2eps_bar))) T^((1+2eps_bar+eps eps_bar)/((1+eps)(1+2eps_bar)))``,
      for ``eps >= eps_bar`` ``K^q_bar T^beta_bar``; the branches agree at ``eps = eps_bar``.
    * ``Phi_dep``, eq. (arbitrary_calibration_dep): ``K^(-beta_bar) T^beta_bar`` for every ``eps``.

    ``eps_bar = 1`` is the order-free version of Theorem 4.

    Args:
      eps: f[...] true tail exponent in ``(0, 1]``.
      eps_bar: f[...] calibration order in ``(0, 1]``.

    Returns:
      ``CalibratedProfile(free, dep)`` of ``Exponents``, f64[broadcast shape] each.

    Examples:
      >>> profile = calibrated_profile(0.5, 1.0)
      >>> [float(x) for x in profile.free], [float(x) for x in profile.dep]
      ([0.2222222222222222, 0.7777777777777778], [-0.6666666666666666, 0.6666666666666666])
    """
    eps, eps_bar = _check_eps(eps), _check_eps(eps_bar, "eps_bar")
    _check_shapes("calibrated_profile", eps=eps, eps_bar=eps_bar)
    scale = (1.0 + eps) * (1.0 + 2.0 * eps_bar)
    q_bar, beta_bar = eps_bar / (1.0 + 2.0 * eps_bar), (1.0 + eps_bar) / (1.0 + 2.0 * eps_bar)
    under = eps <= eps_bar
    free_k = np.where(under, eps * (1.0 + eps_bar) / scale, q_bar)
    free_t = np.where(under, (1.0 + 2.0 * eps_bar + eps * eps_bar) / scale, beta_bar)
    free_k, free_t, dep_k, dep_t = _broadcast(free_k, free_t, -beta_bar, beta_bar)
    return CalibratedProfile(Exponents(free_k, free_t), Exponents(dep_k, dep_t))


@_concrete
def pairwise_lower_bound(k: ArrayLike, t: ArrayLike, eps: ArrayLike) -> Exponents:
    """Least exponents of ``Phi_eps`` given ``Phi_eps' = K^k T^t``, ``eps <= eps'`` (Theorem 5).

    Eq. (pairwise_unknown_epsilon_frontier),
    ``Phi_eps Phi_eps'^(eps/(1+eps)) >= c_1 T K^(eps/(1+eps))``, gives
    ``Phi_eps >= K^(eps(1-k)/(1+eps)) T^(1 - t eps/(1+eps))``.  The theorem
    needs ``Phi_eps' <= T/4``, hence ``t <= 1``.  With ``(k, t) = (1/3, 2/3)``
    this is eq. (unknown_parameters_matching_lower_bound).

    Args:
      k: f[...] exponent of ``K`` in ``Phi_eps'``, finite.
      t: f[...] exponent of ``T`` in ``Phi_eps'``, in ``[0, 1]``.
      eps: f[...] the smaller order, in ``(0, 1]``.

    Returns:
      ``Exponents``, f64[broadcast shape] each.
    """
    k = _check_finite("k", k)
    check_interval("t", t, 0.0, 1.0, low_closed=True, high_closed=True)
    eps = _check_eps(eps)
    _check_shapes("pairwise_lower_bound", k=k, t=t, eps=eps)
    ratio = eps / (1.0 + eps)
    t = np.clip(np.asarray(t, np.float64), 0.0, 1.0)  # a t within the check's slack outside [0, 1] is that end
    return Exponents(*_broadcast(ratio * (1.0 - k), 1.0 - t * ratio))


def table1_points() -> tuple[OperatingPoint, ...]:
    """Table 1: the two points on the ``K``-frontier ``a + 2b = 0`` at ``eps = 1``, as printed.

    Instance-oriented ``(b, a) = (1/2, -1)`` (``q = 0``) and ``K``-balanced
    ``(b, a) = (1/3, -2/3)`` (``q = 1/3``), with equal-gap regret exponents of
    ``K`` ``0`` and ``1/3``.

    Returns:
      A tuple of two :class:`OperatingPoint` (Python floats): ``"Instance-oriented"``, then
      ``"K-balanced"``.
    """
    return (
        OperatingPoint("Instance-oriented", b=1 / 2, a=-1.0, equal_gap_k=0.0, q=0.0),
        OperatingPoint("K-balanced", b=1 / 3, a=-2 / 3, equal_gap_k=1 / 3, q=1 / 3),
    )


@_concrete
def force_mom_exponents(rho: ArrayLike, eps: ArrayLike) -> ForceMoMExponents:
    """ForceMoM's claimed ``T`` exponents: ``rho`` fixed-instance, ``1 - rho eps/(1+eps)`` worst case.

    From Dewasurendra (2026): fixed-instance regret ``O(T^rho)`` and worst case
    ``u^(1/p) T^(1 - rho (p-1)/p)``, ``p = 1 + eps``.

    Args:
      rho: f[...] exploration exponent in ``(0, 1)``.
      eps: f[...] tail exponent in ``(0, 1]``.

    Returns:
      ``ForceMoMExponents``, f64[broadcast shape] each.

    Examples:
      >>> [float(x) for x in force_mom_exponents(0.5, 1.0)]
      [0.5, 0.75]
    """
    check_interval("rho", rho, 0.0, 1.0, low_closed=False, high_closed=False)
    eps = _check_eps(eps)
    _check_shapes("force_mom_exponents", rho=rho, eps=eps)
    rho = np.asarray(rho, np.float64)
    return ForceMoMExponents(*_broadcast(rho, 1.0 - rho * eps / (1.0 + eps)))
