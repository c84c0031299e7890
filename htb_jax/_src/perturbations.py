"""Perturbation laws of APE2 and MR-APE, as quantile maps of uniform pairs ``(U, 1 - U)``.

A draw is ``F^-1(U)`` for a level pair ``(u, v = 1 - u)`` from the engine's
per-round stream (:func:`htb_jax._src.round_stream.uniforms`), in which the
smaller of ``u``, ``v`` is exact (down to ``2^-65``).  Each quantile computes
from whichever of the two is small, so both tails are exact in law: a
Frechet draw at ``1 - U = 2^-64`` is ``(2^-64)^(-1/shape)`` to float64
precision, not the ``inf`` (or the bounded value) that ``1 - U`` rounded
from ``U`` would give.  Every law uses one level per draw.

Heavy-tailed laws (APE2), with ``shape`` and ``scale``:

* ``"frechet"``: ``F(x) = exp(-(x/s)^-a)``, ``x > 0``;
  ``F^-1 = s (-log U)^(-1/a)``.
* ``"pareto"`` (classical, minimum ``s``): ``F(x) = 1 - (s/x)^a``, ``x >= s``;
  ``F^-1 = s (1 - U)^(-1/a)``.
* ``"weibull"``: ``F(x) = 1 - exp(-(x/s)^a)``; ``F^-1 = s (-log(1 - U))^(1/a)``
  (``a = 1``: exponential).
* ``"gumbel"`` (location 0, no shape): ``F(x) = exp(-exp(-x/s))``;
  ``F^-1 = -s log(-log U)``.
* ``"gamma"``: ``F(x) = P(a, x/s)`` (regularized lower incomplete gamma),
  shape ``a`` in ``[0.1, 1000]``; quantile by :func:`gamma_quantile`.

Bounded laws (MR-APE), no parameters: ``"uniform"`` on ``[0, 1]`` (``U``
itself), ``"bernoulli"`` (1/2) on ``{0, 1}`` (``1{U > 1/2}``),
``"symmetric_uniform"`` on ``[-1, 1]`` (``2U - 1``) and ``"rademacher"`` on
``{-1, 1}`` (``+1`` if ``U > 1/2``).

All arithmetic is float64.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy import special

from htb_jax._src.order_statistic import normal_quantile
from htb_jax._src.validation import check_interval, real_array

HEAVY_LAWS = ("frechet", "pareto", "weibull", "gumbel", "gamma")
BOUNDED_LAWS = ("uniform", "bernoulli", "symmetric_uniform", "rademacher")
GAMMA_SHAPES = (0.1, 1000.0)  # admissible gamma shapes (the quantile's tested range)
GAMMA_NEWTON_STEPS = 8
SMALLEST_LEVEL = 2.0**-65  # the round stream's smallest level: the extreme draws
_LOG_F64_MAX = math.log(np.finfo(np.float64).max)


def _minus_log_u(u, v):
    """``-log U``, exact whichever of ``u``, ``v`` is small."""
    return jnp.where(u < 0.5, -jnp.log(u), -jnp.log1p(-v))


def _minus_log_v(u, v):
    """``-log(1 - U)``, exact whichever of ``u``, ``v`` is small."""
    return jnp.where(v < 0.5, -jnp.log(v), -jnp.log1p(-u))


def frechet_quantile(u: jax.Array, v: jax.Array, shape: jax.typing.ArrayLike, scale: jax.typing.ArrayLike = 1.0):
    """Frechet(``shape``, ``scale``) quantile ``s (-log U)^(-1/a)``: f64[...].

    Args:
      u, v: f64[...] the level pair ``(U, 1 - U)``.
      shape: f64[...] ``a > 0``.
      scale: f64[...] ``s > 0``.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(frechet_quantile(jnp.array(1 - 2.0**-64), jnp.array(2.0**-64), 4.0))  # 2^16
      65536.0
    """
    return jnp.asarray(scale, jnp.float64) * _minus_log_u(u, v) ** (-1.0 / jnp.asarray(shape, jnp.float64))


def pareto_quantile(u: jax.Array, v: jax.Array, shape: jax.typing.ArrayLike, scale: jax.typing.ArrayLike = 1.0):
    """Classical Pareto (minimum ``scale``, index ``shape``) quantile ``s (1 - U)^(-1/a)``: f64[...]."""
    return jnp.asarray(scale, jnp.float64) * jnp.exp(_minus_log_v(u, v) / jnp.asarray(shape, jnp.float64))


def weibull_quantile(u: jax.Array, v: jax.Array, shape: jax.typing.ArrayLike, scale: jax.typing.ArrayLike = 1.0):
    """Weibull(``shape``, ``scale``) quantile ``s (-log(1 - U))^(1/a)``: f64[...]."""
    return jnp.asarray(scale, jnp.float64) * _minus_log_v(u, v) ** (1.0 / jnp.asarray(shape, jnp.float64))


def gumbel_quantile(u: jax.Array, v: jax.Array, scale: jax.typing.ArrayLike = 1.0):
    """Gumbel(location 0, ``scale``) quantile ``-s log(-log U)``: f64[...]."""
    return -jnp.asarray(scale, jnp.float64) * jnp.log(_minus_log_u(u, v))


def gamma_quantile(u: jax.Array, v: jax.Array, shape: jax.typing.ArrayLike, scale: jax.typing.ArrayLike = 1.0):
    """Gamma(``shape`` a, ``scale`` s) quantile: ``s x`` with ``P(a, x) = U``, f64[...].

    Solved in ``y = log x`` by :data:`GAMMA_NEWTON_STEPS` Newton steps on
    ``log P(a, e^y) = log u`` where ``u < 1/2`` (lower tail) and on ``log
    Q(a, e^y) = log v`` otherwise (``Q = 1 - P``, ``jax.scipy.special.gammainc``
    and ``gammaincc``), so the small level is matched with full relative
    precision.  ``log X`` has the log-concave density ``exp(a y - e^y) /
    Gamma(a)``, so both functions are concave and monotone in ``y``: from the
    second iterate on, Newton approaches the root from one side (below in the
    lower tail, above in the upper) without overshooting.  The iterates are
    clamped to bounds that hold for every ``a``: ``x >= (u Gamma(a + 1))^(1/a)``
    (as ``P(a, x) <= x^a / Gamma(a + 1)``) and ``x >= a - sqrt(2 a t)``
    (sub-Gaussian left tail, ``t = -log u``) in the lower tail, ``x <= a +
    sqrt(2 a t) + t`` (sub-gamma right tail, ``t = -log v``) in the upper.
    Start: Wilson-Hilferty, ``a (1 - 1/(9a) + z / (3 sqrt a))^3`` with ``z =
    Phi^-1(U)``, raised to at least ``a`` in the upper tail (the median is
    below ``a``) and moved inside the bounds.  Exact in law up to float64
    rounding: over ``a`` in ``[0.1, 1000]`` and levels ``2^-65 .. 1/2`` in
    either tail, six steps already agree with ``scipy.special.gammaincinv``
    and ``gammainccinv`` to ``1e-13`` (relative; five steps to ``1e-8``), the
    accuracy of ``P`` itself times the quantile's condition number; eight
    leave a margin.  A draw costs eight evaluations of ``P`` or ``Q``.

    Args:
      u, v: f64[...] the level pair ``(U, 1 - U)``.
      shape: f64[...] ``a`` in ``[0.1, 1000]`` (see :data:`GAMMA_SHAPES`).
      scale: f64[...] ``s > 0``.

    Returns:
      f64[...].
    """
    u, v = jnp.asarray(u, jnp.float64), jnp.asarray(v, jnp.float64)
    a = jnp.asarray(shape, jnp.float64)
    lower = u < 0.5
    t = jnp.where(lower, -jnp.log(u), -jnp.log(v))  # -log of the small level
    log_gamma = special.gammaln(a)
    y_low = jnp.maximum(
        (jnp.log(u) + special.gammaln(a + 1.0)) / a, jnp.log(jnp.maximum(a - jnp.sqrt(2.0 * a * t), 0.0))
    )
    y_high = jnp.log(a + jnp.sqrt(2.0 * a * t) + t)
    wh = a * (1.0 - 1.0 / (9.0 * a) + normal_quantile(u, v) / (3.0 * jnp.sqrt(a))) ** 3
    y_wh = jnp.where(wh > 0.0, jnp.log(jnp.where(wh > 0.0, wh, 1.0)), -jnp.inf)
    y0 = jnp.where(lower, jnp.maximum(y_wh, y_low), jnp.minimum(jnp.maximum(y_wh, jnp.log(a)), y_high))

    def step(_, y):
        x = jnp.exp(y)
        # Each tail's function sees x = 0 (answered without iterating) where the other tail is asked.
        prob = jnp.where(lower, special.gammainc(a, jnp.where(lower, x, 0.0)),
                         special.gammaincc(a, jnp.where(lower, 0.0, x)))
        log_prob = jnp.log(prob)
        density = jnp.exp(a * y - x - log_gamma - log_prob)  # d log P / dy = x f(x) / P
        new = y - (log_prob + t) / jnp.where(lower, density, -density)
        new = jnp.where(lower, jnp.maximum(new, y_low), jnp.minimum(new, y_high))
        return jnp.where(jnp.isnan(new), y, new)

    y = jax.lax.fori_loop(0, GAMMA_NEWTON_STEPS, step, y0)
    return jnp.asarray(scale, jnp.float64) * jnp.exp(y)


def quantile(law: str, u: jax.Array, v: jax.Array, shape: Any = None, scale: Any = None) -> jax.Array:
    """``F^-1(U)`` of the named law from the level pair ``(u, v)``: f64[...].

    Args:
      law: one of :data:`HEAVY_LAWS` or :data:`BOUNDED_LAWS` (static).
      u, v: f64[...] the level pair.
      shape: f64[...] the shape (``None`` for Gumbel and the bounded laws).
      scale: f64[...] the scale (``None``: 1).

    Examples:
      >>> import jax.numpy as jnp
      >>> u = jnp.array([0.25, 0.75]); v = 1.0 - u
      >>> quantile("symmetric_uniform", u, v).tolist(), quantile("rademacher", u, v).tolist()
      ([-0.5, 0.5], [-1.0, 1.0])
    """
    u, v = jnp.asarray(u, jnp.float64), jnp.asarray(v, jnp.float64)
    s = 1.0 if scale is None else scale
    if law == "frechet":
        return frechet_quantile(u, v, shape, s)
    if law == "pareto":
        return pareto_quantile(u, v, shape, s)
    if law == "weibull":
        return weibull_quantile(u, v, shape, s)
    if law == "gumbel":
        return gumbel_quantile(u, v, s)
    if law == "gamma":
        return gamma_quantile(u, v, shape, s)
    if law == "uniform":
        return u
    if law == "bernoulli":
        return (u > 0.5).astype(jnp.float64)
    if law == "symmetric_uniform":
        return jnp.where(u < 0.5, 2.0 * u - 1.0, 1.0 - 2.0 * v)
    if law == "rademacher":
        return jnp.where(u > 0.5, 1.0, -1.0)
    raise ValueError(f"unknown perturbation law {law!r}; the laws are {HEAVY_LAWS + BOUNDED_LAWS}.")


def _log_largest_draw(law: str, shape: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """log of the largest draw, at the level ``1 - U = 2^-65`` (an upper bound for Gamma)."""
    t = -math.log(SMALLEST_LEVEL)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if law in ("frechet", "pareto"):
            return np.log(scale) + t / shape
        if law == "weibull":
            return np.log(scale) + math.log(t) / shape
        if law == "gumbel":
            return np.log(scale) + math.log(t)
        return np.log(scale) + np.log(shape + np.sqrt(2.0 * shape * t) + t)


def check_law(owner: str, law: Any, laws: tuple[str, ...], shape: Any, scale: Any, *, shape_default: bool = False):
    """Validates a perturbation law and its parameters, in Python (``ValueError``).

    Args:
      owner: the policy, for the messages (``"APE2"``).
      law: the law's name (static).
      laws: the names admissible for ``owner``.
      shape: the shape or ``None``; required for ``"pareto"``, ``"weibull"``,
        ``"gamma"`` (and ``"frechet"`` unless ``shape_default``), refused for
        ``"gumbel"`` and the bounded laws.
      scale: the scale or ``None`` (1); refused for the bounded laws.
      shape_default: whether the owner supplies a default Frechet shape.

    Raises:
      ValueError: an unknown law, a missing or superfluous parameter, a shape
        or scale out of range, or a largest draw (at ``1 - U = 2^-65``) that
        would overflow float64.
    """
    if not isinstance(law, str) or law not in laws:
        raise ValueError(f"{owner}: perturbation must be one of {laws}; got perturbation={law!r}.")
    shaped = law in ("frechet", "pareto", "weibull", "gamma")
    if not shaped and shape is not None:
        raise ValueError(f'{owner}(perturbation="{law}") takes no shape; got shape={shape!r}.')
    if law in BOUNDED_LAWS:
        if scale is not None:
            raise ValueError(f'{owner}(perturbation="{law}") takes no scale; got scale={scale!r}.')
        return
    if shaped and shape is None and not (law == "frechet" and shape_default):
        raise ValueError(f'{owner}(perturbation="{law}") needs shape= (the law\'s shape parameter).')
    if law == "gamma":
        check_interval("shape", shape, *GAMMA_SHAPES, low_closed=True, high_closed=True,
                       where='(perturbation="gamma")')
    elif shape is not None:
        check_interval("shape", shape, 0.0, math.inf, low_closed=False, high_closed=False,
                       where=f'(perturbation="{law}")')
    if scale is not None:
        check_interval("scale", scale, 0.0, math.inf, low_closed=False, high_closed=False,
                       where=f'(perturbation="{law}")')
    a = real_array("shape", shape) if shape is not None else np.asarray(4.0)  # the Frechet default is >= 4
    s = real_array("scale", scale) if scale is not None else np.asarray(1.0)
    if a is None or s is None:
        return
    a, s = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(s, np.float64))
    bad = ~(_log_largest_draw(law, a, s) < _LOG_F64_MAX)
    if np.any(bad):
        i = np.argwhere(bad)[0] if bad.ndim else ()
        i = tuple(int(j) for j in i)
        raise ValueError(
            f'{owner}(perturbation="{law}"): the largest draw (at 1 - U = 2^-65) must be a finite float64; '
            f"got shape={a[i]:.6g}, scale={s[i]:.6g}."
        )
