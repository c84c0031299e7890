"""The Gaussian family, with exact block sums and block-mean quantiles."""

from __future__ import annotations

from typing import Any, ClassVar

import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import bits as bits_lib
from htb_jax._src import ndtri, order_statistic, pytree, quadrature
from htb_jax._src.distributions.base import (
    _F64,
    _LOG_SQRT_2PI,
    Distribution,
    _abs_moment_by_quadrature,
    _common,
    _f32,
    _f64,
    _log_abs_linear,
)
from htb_jax._src.validation import check_interval


def _normal_from_bits(w):
    """Standard normal from one word, both tails to ``|z| ~ 9.3`` (prob. ``2^-64``)."""
    upper, p = bits_lib.signed_tail(w)
    magnitude = ndtri.lower_tail_magnitude(p)  # -ndtri(p), bit for bit
    return jnp.where(upper, magnitude, -magnitude)


@pytree.dataclass
class Gaussian(Distribution):
    """Gaussian ``N(loc, scale^2)``; all moments finite.

    Attributes:
      loc: f[...] mean.
      scale: f[...] standard deviation, ``>= 0`` (0 is a Dirac mass).
    """

    loc: Any
    scale: Any = 1.0

    def __post_init__(self):
        check_interval("Gaussian scale", self.scale, 0.0, jnp.inf, low_closed=True, high_closed=False)
        check_interval("Gaussian loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    has_block_sums: ClassVar[bool] = True
    has_block_quantile: ClassVar[bool] = True

    def from_bits(self, words):
        return _f32(self.loc) + _f32(self.scale) * _normal_from_bits(words[..., 0])

    def block_sums_from_bits(self, words, size):
        size = _f64(size)
        z = _normal_from_bits(words).astype(_F64)
        loc, scale = _f32(self.loc).astype(_F64), _f32(self.scale).astype(_F64)
        return size * loc + scale * jnp.sqrt(size) * z

    def block_mean_quantile(self, u, v, size):
        """``loc + scale Phi^-1(u) / sqrt(size)``, ``Phi^-1`` from the smaller of ``u`` and ``v``."""
        size = _f64(size)
        u, v = _f64(u), _f64(v)
        z = order_statistic.normal_quantile(u, v)
        loc, scale = _f32(self.loc).astype(_F64), _f32(self.scale).astype(_F64)
        return (size * loc + scale * jnp.sqrt(size) * z) / jnp.maximum(size, 1.0)

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def eps_sup(self):
        return jnp.full(self.batch_shape, jnp.inf, _F64)  # every moment is finite

    def _abs_moment(self, eps):
        s = _f64(self.scale)
        safe = jnp.where(s > 0, s, 1.0)
        (r, loc, s, safe), (r_, loc_, _, safe_) = _common(1.0 + _f64(eps), self.loc, s, safe)

        def log_integrand(v, side):
            log_pdf = -0.5 * jnp.exp(2.0 * v) - _LOG_SQRT_2PI
            return quadrature.log_power(r_, _log_abs_linear(loc_, safe_, v, side)) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -loc / safe, None, jnp.ones_like(r))
        return jnp.where(s > 0, value, jnp.abs(loc) ** r)

    def _cdf(self, x):
        x, loc, scale = _f64(x), _f64(self.loc), _f64(self.scale)
        z = (x - loc) / jnp.where(scale > 0, scale, 1.0)
        return jnp.where(scale > 0, special.ndtr(z), jnp.where(x >= loc, 1.0, 0.0))  # scale 0: a Dirac mass at loc

