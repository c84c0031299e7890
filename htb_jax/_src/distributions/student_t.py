"""The Student-t family, sampled by Bailey's polar construction."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import bits as bits_lib
from htb_jax._src import pytree, quadrature
from htb_jax._src.distributions.base import (
    Distribution,
    _abs_moment_by_quadrature,
    _common,
    _f32,
    _f64,
    _log_abs_linear,
    _opaque,
)
from htb_jax._src.validation import check_float32_above_one, check_interval

# Taylor coefficients of sin(x) / x in x^2 up to x^12: the truncation error is below
# (pi/2)^15 / 15! < 7e-10 on [0, pi/2], far below float32's 6e-8.
NORMAL_DF = 3e7  # cdf: from this df on, the normal cdf (see _cdf)
LARGE_DF = 30.0  # abs_moment: from this df on, the tails start where the power law has set in (see _abs_moment)

_SIN_COEFFS = tuple((-1.0) ** k / math.factorial(2 * k + 1) for k in range(7))


def _sin_quarter_turn(x):
    """``sin(x)`` for float32 ``x`` in ``[0, pi/2]``, rounded to float32 (relative error about half an ulp,
    also as ``x -> 0``).

    An odd polynomial: XLA's CPU ``sin`` runs a general range reduction about
    10x slower than ``log``, which the Student-t draw does not need.  It is
    evaluated in float64 and rounded once: in float32, XLA contracted its
    multiply-adds into fused ones in some programs and not in others (the
    engine at a seed chunk of 2, 3, 5, ...), whose draws then differed from the
    table's in the last bits, about 1 in 200.  Rounding errors of a few
    ``1e-16`` relative change the float32 result only where it lies that close
    to a rounding boundary (about one draw in ``10^8``).
    """
    x = jnp.asarray(x, jnp.float64)
    x2 = x * x
    poly = jnp.float64(_SIN_COEFFS[-1])
    for c in _SIN_COEFFS[-2::-1]:
        poly = poly * x2 + c
    return (x * poly).astype(jnp.float32)

@pytree.dataclass
class StudentT(Distribution):
    """Student-t: ``X = loc + scale * T_df``.

    ``P(|X| > x) ~ x^-df``, so ``E|X|^(1+eps) < inf`` iff ``1 + eps < df``.
    Sampled by Bailey's polar construction (Math. Comp. 62, 1994), a closed
    form with no rejection: ``T = R cos(Theta)``, the first coordinate of a
    bivariate t vector whose radius has ``P(R > r) = (1 + r^2/df)^(-df/2)``, so
    ``R^2 = df (W^(-2/df) - 1)`` with ``W`` uniform, and whose angle
    ``Theta`` is uniform and independent of ``R``.  ``W`` comes from word 0
    with full relative precision down to ``2^-64``
    (:func:`~htb_jax.uniform_from_bits`), so the heavy tail reaches
    ``|T| = sqrt(df) 2^(64/df)`` at its true probability; ``|cos(Theta)|`` has
    the law of ``sin(pi A)`` with ``A`` uniform on ``(0, 1/2)``, and word 1
    gives the sign and ``A`` (:func:`~htb_jax.signed_tail`).

    Attributes:
      loc: f[...] mean (and median).
      df: f[...] degrees of freedom, ``> 1``.
      scale: f[...] positive scale.
    """

    loc: Any
    df: Any
    scale: Any = 1.0

    num_words: ClassVar[int] = 2

    def __post_init__(self):
        check_interval("StudentT df", self.df, 1.0, jnp.inf, low_closed=False, high_closed=False)
        check_float32_above_one("StudentT df", self.df)
        check_interval("StudentT scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("StudentT loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    def from_bits(self, words):
        nu = _f32(self.df)
        # R^2 = df (W^(-2/df) - 1) = df h (h + 2) with h = W^(-1/df) - 1: no overflow (h <= 2^(65/df),
        # while h^2 would pass float32's range as df -> 1) and no cancellation as W -> 1 (expm1).
        # Near 1, W lies on the 2^-24 grid of every float32 uniform (Pareto's too).
        log_w = jnp.log(bits_lib.uniform_from_bits(words[..., 0]))
        h = jnp.expm1(-log_w * (1.0 / nu))
        radius = jnp.sqrt(nu * h) * jnp.sqrt(h + 2.0)
        positive, a = bits_lib.signed_tail(words[..., 1])
        t = radius * _sin_quarter_turn(_opaque(_f32(math.pi), a) * a)
        return _f32(self.loc) + _f32(self.scale) * jnp.where(positive, t, -t)

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def eps_sup(self):
        return jnp.broadcast_to(_f64(self.df) - 1.0, self.batch_shape)

    def _abs_moment(self, eps):
        (r, nu, s, loc), (r_, nu_, s_, loc_) = _common(1.0 + _f64(eps), self.df, self.scale, self.loc)
        log_norm = (
            special.gammaln(0.5 * (nu_ + 1.0))
            - special.gammaln(0.5 * nu_)
            - 0.5 * jnp.log(nu_ * jnp.pi)
        )

        def log_integrand(v, side):
            log_pdf = log_norm - 0.5 * (nu_ + 1.0) * jnp.logaddexp(0.0, 2.0 * v - jnp.log(nu_))
            return quadrature.log_power(r_, _log_abs_linear(loc_, s_, v, side)) + log_pdf

        # The tails' substitution needs the power law, which sets in beyond |w| ~ sqrt(df): for a large df
        # the bulk, Gaussian up to there, is integrated as a finite piece out to where it is negligible.
        far = jnp.where(nu > LARGE_DF, jnp.minimum(10.0 * jnp.sqrt(nu), 40.0), 1.0)
        value = _abs_moment_by_quadrature(log_integrand, -loc / s, None, jnp.maximum(nu - r, 1e-300), far=far,
                                          far_left=True)
        return jnp.where(r < nu, value, jnp.inf)

    def _cdf(self, x):
        nu = _f64(self.df)
        t = (_f64(x) - _f64(self.loc)) / _f64(self.scale)
        tail = 0.5 * special.betainc(0.5 * nu, 0.5, nu / (nu + t * t))
        # From df ~ 3e7 on, the normal cdf (within 4e-9 there, 1.2e-9 at 1e8, falling as 1 / df) is closer than the
        # incomplete beta function, which drifts (5e-6 at df = 1e10, above 1 at 1e15).
        return jnp.where(nu > NORMAL_DF, special.ndtr(t), jnp.where(t < 0, tail, 1.0 - tail))

