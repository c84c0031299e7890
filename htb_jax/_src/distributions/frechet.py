"""The Frechet family, centred at its mean."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import bits as bits_lib
from htb_jax._src import pytree, quadrature
from htb_jax._src.distributions.base import (
    _F32,
    _F64,
    Distribution,
    _abs_moment_by_quadrature,
    _common,
    _f32,
    _f64,
    _log_abs_linear,
)
from htb_jax._src.validation import check_float32_above_one, check_interval


@pytree.dataclass
class Frechet(Distribution):
    """Frechet centred at its mean: ``X = loc + scale * (W - Gamma(1 - 1/shape))``.

    ``W`` is standard Frechet, ``P(W <= w) = exp(-w^-shape)`` on ``w > 0``;
    ``E|X|^(1+eps) < inf`` iff ``1 + eps < shape``.

    Attributes:
      loc: f[...] mean.
      shape: f[...] tail index, ``> 1``.
      scale: f[...] positive scale.
    """

    loc: Any
    shape: Any
    scale: Any = 1.0

    def __post_init__(self):
        check_interval("Frechet shape", self.shape, 1.0, jnp.inf, low_closed=False, high_closed=False)
        check_float32_above_one("Frechet shape", self.shape)
        check_interval("Frechet scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("Frechet loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    def _w_mean(self, dtype=_F64):
        a = jnp.asarray(self.shape, dtype)
        return jnp.exp(special.gammaln(1.0 - 1.0 / a))

    def from_bits(self, words):
        a = _f32(self.shape)
        upper, p = bits_lib.signed_tail(words[..., 0])
        # -log F with F = 1 - p (upper tail) or F = p (lower tail).
        neg_log_cdf = jnp.where(upper, -jnp.log1p(-p), -jnp.log(p))
        w = jnp.exp(-jnp.log(neg_log_cdf) * (1.0 / a))
        return _f32(self.loc) + _f32(self.scale) * (w - self._w_mean(_F32))

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def eps_sup(self):
        return jnp.broadcast_to(_f64(self.shape) - 1.0, self.batch_shape)

    def _abs_moment(self, eps):
        c = _f64(self.loc) - _f64(self.scale) * self._w_mean()
        (r, a, s, c), (r_, a_, s_, c_) = _common(1.0 + _f64(eps), self.shape, self.scale, c)

        def log_integrand(v, side):
            log_pdf = jnp.log(a_) - (a_ + 1.0) * v - jnp.exp(-a_ * v)
            log_pdf = jnp.where(side > 0, log_pdf, -jnp.inf)
            return quadrature.log_power(r_, _log_abs_linear(c_, s_, v, side)) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -c / s, 0.0, jnp.maximum(a - r, 1e-300))
        return jnp.where(r < a, value, jnp.inf)

    def _cdf(self, x):
        a = _f64(self.shape)
        w = (_f64(x) - _f64(self.loc)) / _f64(self.scale) + self._w_mean()
        return jnp.where(w > 0, jnp.exp(-jnp.exp(-a * jnp.log(jnp.maximum(w, 1e-300)))), 0.0)

