"""The log-normal family, centred at its mean."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import pytree, quadrature
from htb_jax._src.distributions.base import (
    _F64,
    _LOG_SQRT_2PI,
    Distribution,
    _abs_moment_by_quadrature,
    _common,
    _f32,
    _f64,
)
from htb_jax._src.distributions.gaussian import _normal_from_bits
from htb_jax._src.validation import check_interval


@pytree.dataclass
class LogNormal(Distribution):
    """Log-normal centred at its mean: ``X = loc + scale * (exp(sigma Z) - exp(sigma^2/2))``.

    All moments are finite, but the right tail is heavier than any exponential.

    Attributes:
      loc: f[...] mean.
      sigma: f[...] log-scale, in ``(0, 8]`` (larger overflows float32 samples; at 8, the most extreme
        words overflow from a scale of about 3e6 on). The float32 draws resolve about ``6e-8 scale``
        near the mean, a visible share of their spread ``sigma scale`` below ``sigma`` of about 1e-5.
      scale: f[...] positive scale.
    """

    loc: Any
    sigma: Any
    scale: Any = 1.0

    def __post_init__(self):
        check_interval("LogNormal sigma", self.sigma, 0.0, 8.0, low_closed=False, high_closed=True)
        check_interval("LogNormal scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("LogNormal loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    def from_bits(self, words):
        sigma = _f32(self.sigma)
        z = _normal_from_bits(words[..., 0])
        return _f32(self.loc) + _f32(self.scale) * (jnp.exp(sigma * z) - jnp.exp(0.5 * sigma * sigma))

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def eps_sup(self):
        return jnp.full(self.batch_shape, jnp.inf, _F64)  # every moment is finite

    def _abs_moment(self, eps):
        sigma, s = _f64(self.sigma), _f64(self.scale)
        c = _f64(self.loc) - s * jnp.exp(0.5 * sigma * sigma)
        (r, sigma, s, c), (r_, sigma_, s_, c_) = _common(1.0 + _f64(eps), sigma, s, c)
        # Integrate over z: X = c + s exp(sigma z), z ~ N(0, 1); |X| has its kink at z*.
        kink = jnp.where(c < 0, jnp.log(jnp.maximum(-c / s, 1e-300)) / sigma, 0.0)

        def log_integrand(v, side):
            z = side * jnp.exp(v)
            log_pdf = -0.5 * jnp.exp(2.0 * v) - _LOG_SQRT_2PI
            return quadrature.log_power(r_, quadrature.log_abs_affine(c_, jnp.log(s_) + sigma_ * z, 1.0)) + log_pdf

        # Beyond the kink |X|^r phi(z) ~ (s e^(sigma z))^r phi(z), a unit-width bump at z = r sigma (16
        # at sigma = 8, eps = 1): the finite pieces run to 12 past it (e^-72 of it left), where the
        # tail's nodes in log z would be too sparse for it (6e-5 of the moment lost at sigma = 8).
        return _abs_moment_by_quadrature(log_integrand, kink, None, jnp.ones_like(r), far=r * sigma + 12.0)

    def _cdf(self, x):
        sigma = _f64(self.sigma)
        y = (_f64(x) - _f64(self.loc)) / _f64(self.scale) + jnp.exp(0.5 * sigma * sigma)
        return jnp.where(y > 0, special.ndtr(jnp.log(jnp.maximum(y, 1e-300)) / sigma), 0.0)

