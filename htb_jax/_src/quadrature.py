"""Tanh-sinh quadrature for the raw absolute moments ``E|X|^(1+eps)``.

Heavy tails make these integrals hard: when ``1 + eps`` approaches the tail
index ``a`` the mass of ``|x|^(1+eps) f(x)`` sits at astronomically large
``x``.  Two devices keep the rule accurate right up to the divergence:

* tails are integrated over ``v = log|x|`` and mapped to ``t in (0, 1]`` by
  ``v = v0 - log(t) / rate``; with ``rate = a - (1 + eps)`` the integrand of a
  power-law tail becomes bounded and smooth in ``t``, and nothing is ever
  exponentiated out of float64 range;
* the tanh-sinh (double-exponential) rule converges quickly even with the
  algebraic end-point behaviour left by kinks of ``|x|`` and by the map.

Everything is float64, vectorised over any batch of distribution parameters,
and traceable (usable under ``jit`` and ``vmap``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

_STEP = 1.0 / 32.0
_TAU_MAX = 4.0


def _tanh_sinh_nodes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tau = np.arange(-_TAU_MAX, _TAU_MAX + _STEP / 2, _STEP)
    g = np.pi * np.sinh(tau)
    log_t = -np.logaddexp(0.0, -g)          # log of t = 1 / (1 + exp(-g))
    log_1mt = -np.logaddexp(0.0, g)         # log of 1 - t
    weight = _STEP * np.pi * np.cosh(tau) * np.exp(log_t + log_1mt)
    return log_t, log_1mt, weight


_LOG_T, _LOG_1MT, _WEIGHT = _tanh_sinh_nodes()


def interval_nodes(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The tanh-sinh nodes of ``[a, b]`` and its width: f64[..., n] and f64[..., 1] (zero where ``b <= a``).

    With :func:`interval_sum`, :func:`integrate_interval` in two halves, so that one copy of an
    integrand in a program can serve the nodes of several intervals (stacked, and evaluated by one
    ``lax.map``, as ``Stable.abs_moment`` does).
    """
    a = jnp.asarray(a, jnp.float64)[..., None]
    b = jnp.asarray(b, jnp.float64)[..., None]
    width = jnp.maximum(b - a, 0.0)
    t, one_minus_t = np.exp(_LOG_T), np.exp(_LOG_1MT)
    # Points near either end are computed from that end, without cancellation.
    return jnp.where(t <= 0.5, a + width * t, b - width * one_minus_t), width


def interval_sum(log_values: jax.Array, width: jax.Array) -> jax.Array:
    """``int_a^b exp(log_f(x)) dx`` from ``log_f`` at the :func:`interval_nodes` of ``[a, b]``, f64[...]."""
    values = jnp.exp(log_values)
    total = jnp.sum(jnp.where(jnp.isfinite(values), values, 0.0) * _WEIGHT, axis=-1)
    return width[..., 0] * total


def integrate_interval(
    log_f: Callable[[jax.Array], jax.Array], a: jax.Array, b: jax.Array
) -> jax.Array:
    """``int_a^b exp(log_f(x)) dx`` by tanh-sinh; zero where ``b <= a``.

    Args:
      log_f: log of the integrand, evaluated on f64[..., n] points.
      a: f64[...] lower ends.
      b: f64[...] upper ends (broadcast against ``a``).

    Returns:
      f64[...] the integral.
    """
    x, width = interval_nodes(a, b)
    return interval_sum(log_f(x), width)


def log_tail_nodes(v0: jax.Array, rate: jax.Array) -> jax.Array:
    """The nodes f64[..., n] in ``v`` of :func:`integrate_log_tail`'s substitution ``v = v0 - log(t) / rate``."""
    v0 = jnp.asarray(v0, jnp.float64)[..., None]
    rate = jnp.asarray(rate, jnp.float64)[..., None]
    return v0 - _LOG_T / rate


def log_tail_sum(log_values: jax.Array, rate: jax.Array) -> jax.Array:
    """``int_{v0}^inf exp(log_g(v)) dv`` from ``log_g`` at the :func:`log_tail_nodes` of ``v0`` and ``rate``, f64[...]."""
    rate = jnp.asarray(rate, jnp.float64)[..., None]
    values = jnp.exp(log_values - jnp.log(rate) - _LOG_T)
    return jnp.sum(jnp.where(jnp.isfinite(values), values, 0.0) * _WEIGHT, axis=-1)


def integrate_log_tail(
    log_g: Callable[[jax.Array], jax.Array], v0: jax.Array, rate: jax.Array
) -> jax.Array:
    """``int_{v0}^inf exp(log_g(v)) dv`` for an integrand decaying like ``exp(-rate v)``.

    The substitution ``v = v0 - log(t) / rate`` maps the tail to ``t in (0, 1]``
    and turns an exact exponential decay into a constant.

    Args:
      log_g: log of the integrand, evaluated on f64[..., n] values of ``v``.
      v0: f64[...] start of the tail.
      rate: f64[...] positive decay rate.

    Returns:
      f64[...] the integral.
    """
    return log_tail_sum(log_g(log_tail_nodes(v0, rate)), rate)


def log_power(r: jax.Array, log_abs: jax.Array) -> jax.Array:
    """``r * log_abs``, the log of ``|h|^r``, with ``-inf`` where ``log_abs`` is ``-inf`` (``h = 0``).

    Its derivative in ``r`` there is 0, not ``0 * -inf = NaN``: the node holds no mass, so a
    gradient of a moment in ``eps`` (``r = 1 + eps``) stays finite.

    Args:
      r: f64[...] the power.
      log_abs: f64[...] ``log|h|``, broadcast against ``r``.

    Returns:
      f64[broadcast shape].
    """
    root = log_abs == -jnp.inf
    return jnp.where(root, -jnp.inf, r * jnp.where(root, 0.0, log_abs))


def log_abs_affine(c: jax.Array, log_scale: jax.Array, sign: float | jax.Array) -> jax.Array:
    """``log|c + sign * exp(log_scale)|`` without overflow; ``-inf`` at the root.

    Args:
      c: f64[...] offset.
      log_scale: f64[...] log of the magnitude of the second term (may be huge).
      sign: +1 or -1, the sign of the second term.

    Returns:
      f64[...].
    """
    # Singular points (c = 0, the root) take the limit value through a select on a safe
    # argument, so that their derivatives are finite rather than NaN (0 * inf) in a gradient.  At
    # c = 0 the value is log_scale, and the derivative in c is sign * exp(-log_scale), which the
    # select alone would drop (a skewed law's moment at loc = 0 had a derivative 0 in loc): the
    # first-order term sign * c * exp(-log_scale), 0 there, carries it (its exponent is capped
    # where exp(-log_scale) would overflow, at nodes of no mass).
    zero = c == 0
    log_c = jnp.where(zero, -jnp.inf, jnp.log(jnp.abs(jnp.where(zero, 1.0, c))))
    same_sign = (jnp.sign(c) * sign) >= 0
    # The larger and the smaller log by one select (not max and -|difference|, whose derivatives
    # at a tie -- a node where the two terms are equal -- do not add up to the true one).
    c_larger = log_c >= log_scale
    big = jnp.where(c_larger, log_c, log_scale)
    gap = jnp.where(c_larger, log_scale, log_c) - big
    gap = jnp.where(jnp.isnan(gap), -jnp.inf, gap)
    added = big + jnp.log1p(jnp.exp(gap))
    root = gap == 0
    subtracted = jnp.where(root, -jnp.inf, big + jnp.log(-jnp.expm1(jnp.where(root, -1.0, gap))))
    at_zero = log_scale + sign * jnp.where(zero, c, 0.0) * jnp.exp(jnp.minimum(-log_scale, 700.0))
    return jnp.where(zero, at_zero, jnp.where(same_sign, added, subtracted))
