"""Reward distributions as pytrees: sampling from 64-bit words, exact moments.

Every family is a frozen dataclass registered as a pytree; its float fields may
be arrays of any (broadcastable) shape, so a batch of distributions -- the K
arms of an instance, or a whole family of instances -- is one object that
``vmap`` and ``jit`` see through.  All families except :class:`TwoPoint` are
parametrised by their mean ``loc``, so gaps are differences of ``loc``.

Each family provides:

* ``from_bits(words)``: the bits-to-variate transform (float32) used by the
  reward table, from ``num_words`` 64-bit words per variate, with full tail
  fidelity (see :mod:`htb_jax._src.bits`);
* ``sample(key, sample_shape)``: i.i.d. draws, ``from_bits`` of fresh words;
* ``mean()``: the exact mean;
* ``abs_moment(eps)``: the raw absolute moment ``E|X|^(1+eps)`` (closed form
  for :class:`TwoPoint`, tanh-sinh quadrature otherwise, ``inf`` where it
  diverges);
* ``eps_sup()``: the supremum of the ``eps`` with ``E|X|^(1+eps) < inf``;
* ``cdf(x)`` and ``shifted(delta)``;
* where the sum of ``s`` i.i.d. draws has a closed-form law (:class:`TwoPoint`
  and :class:`Dirac` through the binomial law, :class:`Gaussian`),
  ``block_sums_from_bits(words, size)``: one Median-of-Means block sum per
  64-bit word, whatever ``s``; and ``block_mean_quantile(u, v, size)``: the
  quantile of a block mean, from which the Median-of-Means estimate is drawn
  as one order statistic.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import binomial, ndtri, order_statistic, pytree, quadrature
from htb_jax._src import bits as bits_lib
from htb_jax._src.validation import (
    check_broadcast,
    check_float32,
    check_float32_scale,
    check_interval,
    real_array,
)

_F32 = jnp.float32
_F64 = jnp.float64
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _f64(x: Any) -> jax.Array:
    return jnp.asarray(x, _F64)


def _f32(x: Any) -> jax.Array:
    return jnp.asarray(x, _F32)


class Distribution:
    """Shared behaviour of the reward families (not instantiated directly)."""

    num_words: ClassVar[int] = 1
    has_block_sums: ClassVar[bool] = False
    # Parameters that enter the float32 rewards additively (locations): see ``check_parameters``.
    location_fields: ClassVar[tuple[str, ...]] = ("loc",)

    def check_parameters(self) -> None:
        """``TypeError`` for a parameter that is not real, ``ValueError`` for shapes that do not
        broadcast or a parameter beyond the float32 range of the rewards (concrete values only)."""
        family = type(self).__name__
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name, value in values.items():
            real_array(f"{family} {name}", value)
        check_broadcast(family, **values)
        for name, value in values.items():
            if name != "p":
                check_float32(f"{family} {name}", value)
            if name == "scale":
                check_float32_scale(f"{family} {name}", value)

    # -- shapes --------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Broadcast shape of the parameters: ``(..., K)`` for an instance."""
        shapes = [jnp.shape(getattr(self, f.name)) for f in dataclasses.fields(self)]
        return tuple(jnp.broadcast_shapes(*shapes))

    def broadcast(self, shape: tuple[int, ...] | None = None):
        """Copy with every parameter a float array of ``shape`` (default: batch shape)."""
        shape = self.batch_shape if shape is None else tuple(shape)
        fields = {
            f.name: jnp.broadcast_to(jnp.asarray(getattr(self, f.name), _F64), shape)
            for f in dataclasses.fields(self)
        }
        return type(self)(**fields)

    def __getitem__(self, index) -> Distribution:
        """Indexes the batch, e.g. ``instance[..., 0]`` is the first arm."""
        return jax.tree.map(lambda p: p[index], self.broadcast())

    # -- sampling ------------------------------------------------------------
    def sample(self, key: jax.Array, sample_shape: tuple[int, ...] = ()) -> jax.Array:
        """Draws i.i.d. variates.

        Args:
          key: a threefry ``jax.random.key``.
          sample_shape: leading shape of the draw.

        Returns:
          f32[*sample_shape, *batch_shape].
        """
        return _sample(self, key, tuple(sample_shape))

    def from_bits(self, words: jax.Array) -> jax.Array:
        """Bits-to-variate transform.

        Args:
          words: u64[..., num_words]; the leading shape broadcasts against the
            batch shape.

        Returns:
          f32[broadcast(words.shape[:-1], batch_shape)].

        Every program that reads the reward table (the fast path's chunks, the engine's
        single pulls at any seed chunk, the prefix sums) must compute the same float32 bits,
        so a transform avoids what XLA compiles differently by context: it multiplies by a
        parameter's reciprocal ``x * (1 / a)`` instead of dividing ``x / a`` (XLA turns a
        division by a broadcast parameter into that product in vectorised code only), and
        keeps literal constants out of squares (see :func:`_opaque`).
        ``tests/test_engine.py`` checks every family at seed chunks of 1, 2 and 8.
        """
        raise NotImplementedError

    def block_sums_from_bits(self, words: jax.Array, size: jax.Array) -> jax.Array:
        """Sums of ``size`` i.i.d. draws, exact in law, one per word (``has_block_sums`` families).

        Each draw of the sum is rounded to float32 as :meth:`from_bits` rounds
        a single variate, so a block sum has the law of ``size`` float32
        rewards added in float64.

        Args:
          words: u64[...] one random word per sum; broadcast against the
            batch shape.
          size: int or f64[...] number of draws per sum (``0`` gives ``0``),
            at most ``2^53``.

        Returns:
          f64[broadcast(words.shape, size.shape, batch_shape)].
        """
        raise NotImplementedError(f"{type(self).__name__} has no closed-form block sums.")

    def block_mean_quantile(self, u: jax.Array, v: jax.Array, size: jax.Array) -> jax.Array:
        """Quantile of the mean of ``size`` i.i.d. draws (``has_block_sums`` families).

        The generalized inverse ``F^-(u) = min{m : P(M <= m) >= u}`` of the
        block mean ``M`` (its sum computed as :meth:`block_sums_from_bits` does,
        then divided by ``size``), so that ``F^-(U_(k))`` has the law of the
        ``k``-th smallest of ``B`` block means (:mod:`htb_jax._src.order_statistic`).

        Args:
          u, v: f64[...] the level and ``1 - u``, each with full relative precision.
          size: int or f64[...] draws per block, ``>= 1``.

        Returns:
          f64[broadcast(u.shape, size.shape, batch_shape)], nondecreasing in ``u``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no closed-form block means.")

    # -- moments -------------------------------------------------------------
    def mean(self) -> jax.Array:
        """Exact mean, f64[batch_shape]."""
        raise NotImplementedError

    def eps_sup(self) -> jax.Array:
        """Supremum of ``eps`` with ``E|X|^(1+eps) < inf``, f64[batch_shape]."""
        return jnp.full(self.batch_shape, jnp.inf, _F64)

    def abs_moment(self, eps: Any) -> jax.Array:
        """Raw absolute moment ``E|X|^(1+eps)`` (Section 2), f64[broadcast(eps, batch)].

        Closed form for :class:`TwoPoint`; tanh-sinh quadrature otherwise
        (relative accuracy about 1e-12, also close to the divergence);
        ``inf`` where ``1 + eps`` reaches the tail index.
        """
        return _abs_moment(self, eps)

    def cdf(self, x: Any) -> jax.Array:
        """``P(X <= x)``, f64 broadcast of ``x`` against the batch."""
        return _cdf(self, x)

    def _abs_moment(self, eps):
        raise NotImplementedError

    def _cdf(self, x):
        raise NotImplementedError

    def shifted(self, delta: Any) -> Distribution:
        """The law of ``X + delta`` (same family)."""
        raise NotImplementedError


# Compiled once per family and shape, whether called eagerly or inside a program.
_abs_moment = jax.jit(lambda dist, eps: dist._abs_moment(eps))
_cdf = jax.jit(lambda dist, x: dist._cdf(x))


@partial(jax.jit, static_argnums=2)
def _sample(dist, key, sample_shape):
    words = jax.random.bits(key, (*sample_shape, *dist.batch_shape, dist.num_words), jnp.uint64)
    return dist.from_bits(words)


def _abs_moment_by_quadrature(log_integrand, kink, lower, rate):
    """``int |h(w)|^r f(w) dw`` split at the kink of ``|h|`` and at +-1.

    Args:
      log_integrand: ``(v, side) -> log(|h(side e^v)|^r f(side e^v))``, with
        ``v = log|w|`` (robust for huge ``v``).
      kink: f64[...] the root of ``h`` (any point if ``h`` has none).
      lower: ``None`` for support R, else the lower end (>= 0) of the support.
      rate: f64[...] exponential decay rate of the tails in ``v``.

    Derivatives in the parameters hold the nodes fixed: the kink, the only
    split point that moves with them, is where the integrand vanishes
    (``r > 1``), and the tails' substitution is exact for any ``rate``, so the
    derivative is the same quadrature of the integrand's derivative.  (Moving
    nodes would differentiate ``log|w|`` at a node that lands on ``w = 0``.)
    """
    kink, rate = jax.lax.stop_gradient(kink), jax.lax.stop_gradient(rate)

    def finite_piece(a, b):
        def log_f(x):
            return log_integrand(jnp.log(jnp.abs(x)), jnp.where(x < 0, -1.0, 1.0))

        return quadrature.integrate_interval(log_f, a, b)

    def tail(start, side):
        return quadrature.integrate_log_tail(
            lambda v: log_integrand(v, side) + v, jnp.log(start), rate
        )

    if lower is None:
        right = jnp.maximum(kink, 1.0)
        left = jnp.minimum(kink, -1.0)
        return (
            finite_piece(left, kink)
            + finite_piece(kink, right)
            + tail(right, 1.0)
            + tail(-left, -1.0)
        )
    right = jnp.maximum(jnp.maximum(kink, lower), 1.0)
    mid = jnp.clip(kink, lower, right)
    return finite_piece(lower, mid) + finite_piece(mid, right) + tail(right, 1.0)


def _common(*arrays):
    """Broadcasts to a common shape; also returns copies with a trailing node axis."""
    full = jnp.broadcast_arrays(*[_f64(a) for a in arrays])
    return full, [a[..., None] for a in full]


def _log_abs_linear(c, scale, v, side):
    """``log|c + scale * side * e^v|`` for ``scale > 0``."""
    return quadrature.log_abs_affine(c, jnp.log(scale) + v, side)


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
        self.check_parameters()
        check_interval("Pareto shape", self.shape, 1.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("Pareto loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)

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
            return r_ * _log_abs_linear(c_, 1.0, v, side) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -c, 1.0, jnp.maximum(a - r, 1e-300))
        return jnp.where(r < a, value, jnp.inf)

    def _cdf(self, x):
        a = _f64(self.shape)
        y = _f64(x) - self._offset()
        return jnp.where(y >= 1.0, -jnp.expm1(-a * jnp.log(jnp.maximum(y, 1.0))), 0.0)

    def shifted(self, delta):
        return Pareto(loc=_f64(self.loc) + delta, shape=self.shape)


# Taylor coefficients of sin(x) / x in x^2 up to x^12: the truncation error is below
# (pi/2)^15 / 15! < 7e-10 on [0, pi/2], far below float32's 6e-8.
_SIN_COEFFS = tuple((-1.0) ** k / math.factorial(2 * k + 1) for k in range(7))


def _sin_quarter_turn(x):
    """``sin(x)`` for float32 ``x`` in ``[0, pi/2]``, within 3 float32 ulps (relative, also as ``x -> 0``).

    An odd polynomial: XLA's CPU ``sin`` runs a general range reduction about
    10x slower than ``log``, which the Student-t draw does not need.
    """
    x2 = x * x
    poly = _f32(_SIN_COEFFS[-1])
    for c in _SIN_COEFFS[-2::-1]:
        poly = poly * x2 + _f32(c)
    return x * poly


def _opaque(constant, like):
    """``constant`` as a value XLA's algebraic simplifier cannot see through: ``constant + 0 like``,
    equal to it for finite ``like``.

    Every program that reads the reward table must compute the same float32 bits.  Given
    ``x = c a`` with a literal ``c``, the simplifier rewrites ``x x`` as ``(a a)(c c)`` (another
    rounding) in some programs only: where the shapes are small enough that the constant stays a
    literal (the engine at a seed chunk of one), not in the table's vectorised draw.
    """
    return constant + 0.0 * like


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
    (:func:`~htb_jax._src.bits.uniform_from_bits`), so the heavy tail reaches
    ``|T| = sqrt(df) 2^(64/df)`` at its true probability; ``|cos(Theta)|`` has
    the law of ``sin(pi A)`` with ``A`` uniform on ``(0, 1/2)``, and word 1
    gives the sign and ``A`` (:func:`~htb_jax._src.bits.signed_tail`).

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
        self.check_parameters()
        check_interval("StudentT df", self.df, 1.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("StudentT scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("StudentT loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)

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
            return r_ * _log_abs_linear(loc_, s_, v, side) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -loc / s, None, jnp.maximum(nu - r, 1e-300))
        return jnp.where(r < nu, value, jnp.inf)

    def _cdf(self, x):
        nu = _f64(self.df)
        t = (_f64(x) - _f64(self.loc)) / _f64(self.scale)
        tail = 0.5 * special.betainc(0.5 * nu, 0.5, nu / (nu + t * t))
        return jnp.where(t < 0, tail, 1.0 - tail)

    def shifted(self, delta):
        return StudentT(loc=_f64(self.loc) + delta, df=self.df, scale=self.scale)


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
        self.check_parameters()
        check_interval("Frechet shape", self.shape, 1.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("Frechet scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("Frechet loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)

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
            return r_ * _log_abs_linear(c_, s_, v, side) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -c / s, 0.0, jnp.maximum(a - r, 1e-300))
        return jnp.where(r < a, value, jnp.inf)

    def _cdf(self, x):
        a = _f64(self.shape)
        w = (_f64(x) - _f64(self.loc)) / _f64(self.scale) + self._w_mean()
        return jnp.where(w > 0, jnp.exp(-jnp.exp(-a * jnp.log(jnp.maximum(w, 1e-300)))), 0.0)

    def shifted(self, delta):
        return Frechet(loc=_f64(self.loc) + delta, shape=self.shape, scale=self.scale)


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
        self.check_parameters()
        check_interval("Gaussian scale", self.scale, 0.0, jnp.inf, low_closed=True, high_closed=False)
        check_interval("Gaussian loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)

    has_block_sums: ClassVar[bool] = True

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

    def _abs_moment(self, eps):
        s = _f64(self.scale)
        safe = jnp.where(s > 0, s, 1.0)
        (r, loc, s, safe), (r_, loc_, _, safe_) = _common(1.0 + _f64(eps), self.loc, s, safe)

        def log_integrand(v, side):
            log_pdf = -0.5 * jnp.exp(2.0 * v) - _LOG_SQRT_2PI
            return r_ * _log_abs_linear(loc_, safe_, v, side) + log_pdf

        value = _abs_moment_by_quadrature(log_integrand, -loc / safe, None, jnp.ones_like(r))
        return jnp.where(s > 0, value, jnp.abs(loc) ** r)

    def _cdf(self, x):
        z = (_f64(x) - _f64(self.loc)) / _f64(self.scale)
        return special.ndtr(z)

    def shifted(self, delta):
        return Gaussian(loc=_f64(self.loc) + delta, scale=self.scale)


@pytree.dataclass
class LogNormal(Distribution):
    """Log-normal centred at its mean: ``X = loc + scale * (exp(sigma Z) - exp(sigma^2/2))``.

    All moments are finite, but the right tail is heavier than any exponential.

    Attributes:
      loc: f[...] mean.
      sigma: f[...] log-scale, in ``(0, 8]`` (larger overflows float32 samples).
      scale: f[...] positive scale.
    """

    loc: Any
    sigma: Any
    scale: Any = 1.0

    def __post_init__(self):
        self.check_parameters()
        check_interval("LogNormal sigma", self.sigma, 0.0, 8.0, low_closed=False, high_closed=True)
        check_interval("LogNormal scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("LogNormal loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)

    def from_bits(self, words):
        sigma = _f32(self.sigma)
        z = _normal_from_bits(words[..., 0])
        return _f32(self.loc) + _f32(self.scale) * (jnp.exp(sigma * z) - jnp.exp(0.5 * sigma * sigma))

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def _abs_moment(self, eps):
        sigma, s = _f64(self.sigma), _f64(self.scale)
        c = _f64(self.loc) - s * jnp.exp(0.5 * sigma * sigma)
        (r, sigma, s, c), (r_, sigma_, s_, c_) = _common(1.0 + _f64(eps), sigma, s, c)
        # Integrate over z: X = c + s exp(sigma z), z ~ N(0, 1); |X| has its kink at z*.
        kink = jnp.where(c < 0, jnp.log(jnp.maximum(-c / s, 1e-300)) / sigma, 0.0)

        def log_integrand(v, side):
            z = side * jnp.exp(v)
            log_pdf = -0.5 * jnp.exp(2.0 * v) - _LOG_SQRT_2PI
            return r_ * quadrature.log_abs_affine(c_, jnp.log(s_) + sigma_ * z, 1.0) + log_pdf

        return _abs_moment_by_quadrature(log_integrand, kink, None, jnp.ones_like(r))

    def _cdf(self, x):
        sigma = _f64(self.sigma)
        y = (_f64(x) - _f64(self.loc)) / _f64(self.scale) + jnp.exp(0.5 * sigma * sigma)
        return jnp.where(y > 0, special.ndtr(jnp.log(jnp.maximum(y, 1e-300)) / sigma), 0.0)

    def shifted(self, delta):
        return LogNormal(loc=_f64(self.loc) + delta, sigma=self.sigma, scale=self.scale)


@pytree.dataclass
class TwoPoint(Distribution):
    """``high`` with probability ``p``, else ``low``; ``p = 0`` is a Dirac mass at ``low``.

    The hard instances of Theorem 1 are two-point laws with a rare, huge spike.
    The spike is drawn as ``w < floor(p 2^64)`` on a 64-bit word, so its
    probability is exact to ``2^-64`` for any ``p``, down to 1e-12 and below.

    Attributes:
      low: f[...] the common value.
      high: f[...] the spike value.
      p: f[...] spike probability in ``[0, 1]``.
    """

    low: Any
    high: Any
    p: Any

    def __post_init__(self):
        self.check_parameters()
        check_interval("TwoPoint p", self.p, 0.0, 1.0, low_closed=True, high_closed=True)
        check_interval("TwoPoint low", self.low, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        check_interval("TwoPoint high", self.high, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)

    has_block_sums: ClassVar[bool] = True
    location_fields: ClassVar[tuple[str, ...]] = ("low", "high")

    def from_bits(self, words):
        p = _f64(self.p)
        spike = (words[..., 0] < bits_lib.spike_threshold(p)) | (p >= 1.0)
        return jnp.where(spike, _f32(self.high), _f32(self.low))

    def block_sums_from_bits(self, words, size):
        """``low (s - X) + high X`` with ``X ~ Binomial(s, p)`` (see :mod:`htb_jax._src.binomial`)."""
        size = _f64(size)
        spikes = binomial.binomial_from_words(words, size, _f64(self.p))
        low, high = _f32(self.low).astype(_F64), _f32(self.high).astype(_F64)
        return low * (size - spikes) + high * spikes

    def block_mean_quantile(self, u, v, size):
        """``(low (s - X) + high X) / s`` at the binomial quantile ``X`` (:func:`binomial.binomial_quantile`).

        The mean is increasing in ``X`` when ``high >= low``; otherwise the
        quantile at ``u`` takes ``X`` at level ``v = 1 - u``.
        """
        size = _f64(size)
        low, high = _f32(self.low).astype(_F64), _f32(self.high).astype(_F64)
        rising = high >= low
        u, v = _f64(u), _f64(v)
        spikes = binomial.binomial_quantile(jnp.where(rising, u, v), jnp.where(rising, v, u), size, _f64(self.p))
        return (low * (size - spikes) + high * spikes) / jnp.maximum(size, 1.0)

    def mean(self):
        p = _f64(self.p)
        return jnp.broadcast_to(_f64(self.low) + p * (_f64(self.high) - _f64(self.low)), self.batch_shape)

    def _abs_moment(self, eps):
        (r, p, low, high), _ = _common(1.0 + _f64(eps), self.p, self.low, self.high)
        low_part = jnp.where(p < 1.0, (1.0 - p) * jnp.abs(low) ** r, 0.0)
        high_part = jnp.where(p > 0.0, p * jnp.abs(high) ** r, 0.0)
        return low_part + high_part

    def _cdf(self, x):
        x, p = _f64(x), _f64(self.p)
        return (1.0 - p) * (x >= _f64(self.low)) + p * (x >= _f64(self.high))

    def shifted(self, delta):
        return TwoPoint(low=_f64(self.low) + delta, high=_f64(self.high) + delta, p=self.p)


def Dirac(value: Any) -> TwoPoint:  # noqa: N802 - reads as a distribution name
    """A point mass at ``value``, as a :class:`TwoPoint` with ``p = 0``."""
    real_array("Dirac value", value)
    return TwoPoint(low=value, high=value, p=0.0)
