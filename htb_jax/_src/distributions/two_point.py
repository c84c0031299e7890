"""Two-point laws (the hard instances of Theorem 1) and point masses."""

from __future__ import annotations

from typing import Any, ClassVar

import jax.numpy as jnp

from htb_jax._src import binomial, binomial_quantile, pytree
from htb_jax._src import bits as bits_lib
from htb_jax._src.distributions.base import _F64, Distribution, _common, _f32, _f64
from htb_jax._src.validation import check_float32, check_interval, real_array


@pytree.dataclass
class TwoPoint(Distribution):
    """``high`` with probability ``p``, else ``low``; ``p = 0`` is a Dirac mass at ``low``.

    The hard instances of Theorem 1 are two-point laws with a rare, huge spike.
    The spike is drawn as ``w < floor(p 2^64)`` on a 64-bit word, so its
    probability is exact to ``2^-64`` in absolute terms: relatively, within
    ``2^-64 / p``, under float32's ``6e-8`` from ``p = 1e-12`` up, ``5e-4`` at
    ``p = 1e-16``, and a ``p`` below ``2^-64`` never spikes.  ``mean()`` and
    ``abs_moment`` are those of ``p`` itself, as are the draws of the
    order-statistic and block-sum samplers (a Binomial in ``p``), which the
    frontier's runs at large ``T`` use; per-pull draws (``sample``, the reward
    table) of a smaller ``p`` describe a slightly other law.

    Attributes:
      low: f[...] the common value.
      high: f[...] the spike value.
      p: f[...] spike probability in ``[0, 1]``.
    """

    low: Any
    high: Any
    p: Any

    def __post_init__(self):
        check_interval("TwoPoint p", self.p, 0.0, 1.0, low_closed=True, high_closed=True)
        check_interval("TwoPoint low", self.low, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        check_interval("TwoPoint high", self.high, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    has_block_sums: ClassVar[bool] = True
    has_block_quantile: ClassVar[bool] = True
    location_fields: ClassVar[tuple[str, ...]] = ("low", "high")

    def from_bits(self, words):
        p = _f64(self.p)
        spike = (words[..., 0] < bits_lib.spike_threshold(p)) | (p >= 1.0)
        return jnp.where(spike, _f32(self.high), _f32(self.low))

    def block_sums_from_bits(self, words, size):
        """``low (s - X) + high X`` with ``X ~ Binomial(s, p)``, ``X`` drawn exactly from the word."""
        size = _f64(size)
        spikes = binomial.binomial_from_words(words, size, _f64(self.p))
        low, high = _f32(self.low).astype(_F64), _f32(self.high).astype(_F64)
        return low * (size - spikes) + high * spikes

    def block_mean_quantile(self, u, v, size):
        """``(low (s - X) + high X) / s`` at the quantile ``X`` of ``Binomial(s, p)``.

        The mean is increasing in ``X`` when ``high >= low``; otherwise the
        quantile at ``u`` takes ``X`` at level ``v = 1 - u``.
        """
        size = _f64(size)
        low, high = _f32(self.low).astype(_F64), _f32(self.high).astype(_F64)
        rising = high >= low
        u, v = _f64(u), _f64(v)
        spikes = binomial_quantile.binomial_quantile(jnp.where(rising, u, v), jnp.where(rising, v, u), size, _f64(self.p))
        return (low * (size - spikes) + high * spikes) / jnp.maximum(size, 1.0)

    def mean(self):
        p = _f64(self.p)
        return jnp.broadcast_to(_f64(self.low) + p * (_f64(self.high) - _f64(self.low)), self.batch_shape)

    def eps_sup(self):
        return jnp.full(self.batch_shape, jnp.inf, _F64)  # every moment is finite

    def _abs_moment(self, eps):
        (r, p, low, high), _ = _common(1.0 + _f64(eps), self.p, self.low, self.high)
        low_part = jnp.where(p < 1.0, (1.0 - p) * jnp.abs(low) ** r, 0.0)
        high_part = jnp.where(p > 0.0, p * jnp.abs(high) ** r, 0.0)
        return low_part + high_part

    def _cdf(self, x):
        x, p = _f64(x), _f64(self.p)
        return (1.0 - p) * (x >= _f64(self.low)) + p * (x >= _f64(self.high))



def Dirac(value: Any) -> TwoPoint:  # noqa: N802 - reads as a distribution name
    """A point mass at ``value``, as a :class:`TwoPoint` with ``p = 0``.

    Args:
      value: f[...] the point (finite, within the float32 range); an array gives a batch of
        point masses of its shape (e.g. ``[..., K]`` for an instance of ``K`` arms).

    Returns:
      A :class:`TwoPoint` with ``low = high = value`` and ``p = 0``, of batch shape
      ``value.shape``.
    """
    real_array("Dirac value", value)
    check_interval("Dirac value", value, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)  # not TwoPoint's low
    check_float32("Dirac value", value)
    return TwoPoint(low=value, high=value, p=0.0)
