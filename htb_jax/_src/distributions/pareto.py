"""The shifted Pareto family."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from htb_jax._src import bits as bits_lib
from htb_jax._src import pytree, quadrature
from htb_jax._src.distributions.base import (
    Distribution,
    _abs_moment_by_quadrature,
    _common,
    _f32,
    _f64,
    _log_abs_linear,
)
from htb_jax._src.validation import check_float32_above_one, check_interval


@pytree.dataclass
class Pareto(Distribution):
    """Shifted Pareto: ``X = loc + Y - shape/(shape-1)``, ``Y ~ Pareto(shape)`` on ``[1, inf)``.

    The mean is exactly ``loc``; ``P(X > x) ~ x^-shape``, so
    ``E|X|^(1+eps) < inf`` iff ``1 + eps < shape``.

    Attributes:
      loc: f[...] mean.
      shape: f[...] tail index, ``> 1``.
    """

    loc: Any
    shape: Any

    def __post_init__(self):
        check_interval("Pareto shape", self.shape, 1.0, jnp.inf, low_closed=False, high_closed=False)
        check_float32_above_one("Pareto shape", self.shape)
        check_interval("Pareto loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    def _offset(self):
        a = _f64(self.shape)
        return _f64(self.loc) - a / (a - 1.0)

    def from_bits(self, words):
        a = _f32(self.shape)
        u = bits_lib.uniform_from_bits(words[..., 0])
        y = jnp.exp(-jnp.log(u) * (1.0 / a))  # times the reciprocal: see Distribution.from_bits
        return _f32(self.loc) + (y - a / (a - 1.0))

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def eps_sup(self):
        return jnp.broadcast_to(_f64(self.shape) - 1.0, self.batch_shape)

    def _abs_moment(self, eps):
        (r, a, c), (r_, a_, c_) = _common(1.0 + _f64(eps), self.shape, self._offset())

        def log_integrand(v, side):
            log_pdf = jnp.log(a_) - (a_ + 1.0) * v
            log_pdf = jnp.where((side > 0) & (v >= 0.0), log_pdf, -jnp.inf)
            return quadrature.log_power(r_, _log_abs_linear(c_, 1.0, v, side)) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -c, 1.0, jnp.maximum(a - r, 1e-300))
        return jnp.where(r < a, value, jnp.inf)

    def _cdf(self, x):
        a = _f64(self.shape)
        y = _f64(x) - self._offset()
        return jnp.where(y >= 1.0, -jnp.expm1(-a * jnp.log(jnp.maximum(y, 1.0))), 0.0)

