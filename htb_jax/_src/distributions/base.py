"""The shared base of the reward families: :class:`Distribution`, sampling, moment quadrature."""

from __future__ import annotations

import dataclasses
import math
import numbers
from functools import partial
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import quadrature
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.pytree import class_keyed_jit
from htb_jax._src.validation import (
    check_broadcast,
    check_broadcasts_against,
    check_float32,
    check_float32_scale,
    check_interval,
    check_real,
    first_entry,
    has_tracer,
    lists_as_arrays,
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
    # An exact law of Median-of-Means block sums (simulate's "block_sums" sampler) ...
    has_block_sums: ClassVar[bool] = False
    # ... a computable quantile of a block mean (the "order_statistic" sampler) ...
    has_block_quantile: ClassVar[bool] = False
    # ... and block means ``c(s) + d(s) Z`` affine in one standard variate ``Z`` whose law is free of
    # the block size ``s`` (``d(s) > 0``): ``standard_from_bits`` and ``block_mean_from_standard``.
    affine_block_means: ClassVar[bool] = False
    # ... whose standard quantile is tabulated at build time (``quantile_tables``, ``standard_quantile``):
    # the "order_statistic" sampler of ``simulate`` for concrete parameters.
    tabulated_quantile: ClassVar[bool] = False
    # Parameters that enter the float32 rewards additively (locations): see ``check_parameters``.
    location_fields: ClassVar[tuple[str, ...]] = ("loc",)

    def check_parameters(self) -> None:
        """``TypeError`` for a parameter that is not real, ``ValueError`` for shapes that do not
        broadcast or a parameter beyond the float32 range of the rewards (concrete values only).

        A parameter given as a list or tuple becomes a float64 NumPy array (JAX would take its
        entries for leaves of their own); the families call this in ``__post_init__``."""
        family = type(self).__name__
        lists_as_arrays(self, family)
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name, value in values.items():
            real_array(f"{family} {name}", value)
        check_broadcast(family, **values)
        for name, value in values.items():
            if name != "p":
                check_float32(f"{family} {name}", value, positive=name in ("scale", "shape", "df"))
            if name == "scale":
                check_float32_scale(f"{family} {name}", value)

    # -- shapes --------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The parameters' broadcast shape, ``(..., K)`` for an instance."""
        return check_broadcast(type(self).__name__, **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def broadcast(self, shape: tuple[int, ...] | None = None):
        """Copy with every parameter a float array of ``shape`` (default: batch shape)."""
        shape = self.batch_shape if shape is None else tuple(shape)
        fields = {
            f.name: jnp.broadcast_to(jnp.asarray(getattr(self, f.name), _F64), shape)
            for f in dataclasses.fields(self)
        }
        return type(self)(**fields)

    def __getitem__(self, index) -> Distribution:
        """Indexes the batch, e.g. ``instance[..., 0]`` is the first arm.

        Raises:
          IndexError: for an index past the batch shape (a JAX array would clamp it: arm 5 of two
            arms was arm 1), unless the index is traced.
        """
        if not has_tracer(index):
            try:  # NumPy's indexing rules, on a view of no memory
                np.broadcast_to(np.zeros((), np.int8), self.batch_shape)[index]
            except IndexError as e:  # NumPy's IndexError covers an index of the wrong kind (1.0) too
                kind = TypeError if "only integers" in str(e) else IndexError
                raise kind(f"index must lie within the batch shape {self.batch_shape} of the "
                           f"{type(self).__name__}; got index={index!r}: {e}") from None
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
        key = as_threefry_key(key)  # jax's own message, "invalid PRNG key data", named no argument
        shape = (sample_shape,) if isinstance(sample_shape, numbers.Integral) else sample_shape
        if not isinstance(shape, (tuple, list)) or not all(
                isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)) for n in shape):
            raise TypeError(f"sample_shape must be a tuple of integers >= 0; got sample_shape={sample_shape!r}.")
        if any(n < 0 for n in shape):
            raise ValueError(f"sample_shape must be a tuple of integers >= 0; got sample_shape={sample_shape!r}.")
        draws = _sample(self, key, tuple(int(n) for n in shape))
        if draws.dtype != jnp.float32:  # as reward_table refuses it: never a silently other dtype
            raise TypeError(f"sample needs {type(self).__name__}.from_bits(words) to return float32 rewards; got "
                            f"{draws.dtype}.")
        return draws

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
        keeps literal constants out of squares (XLA's simplifier would otherwise rewrite
        ``(c a)^2`` as ``a^2 c^2`` in some programs only).  The test suite checks every
        family at seed chunks of 1, 2 and 8.
        """
        raise NotImplementedError(_undefined(self, "from_bits"))

    def block_sums_from_bits(self, words: jax.Array, size: jax.Array) -> jax.Array:
        """Sums of ``size`` i.i.d. draws, exact in law, one per word (``has_block_sums`` families
        with ``num_words = 1``; :class:`Stable` takes words u64[..., 2]).

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
        """Quantile of the mean of ``size`` i.i.d. draws (``has_block_quantile`` families).

        The generalized inverse ``F^-(u) = min{m : P(M <= m) >= u}`` of the
        block mean ``M`` (its sum computed as :meth:`block_sums_from_bits` does,
        then divided by ``size``), so that ``F^-(U_(k))`` has the law of the
        ``k``-th smallest of ``B`` block means (``simulate``'s ``"order_statistic"``
        sampler draws ``U_(k)`` and evaluates this).

        Args:
          u: f64[...] the level in ``(0, 1)``, with full relative precision near 0 (the
            lower tail is read from it).
          v: f64[...] its complement ``1 - u``, given separately with full relative precision
            near 0 (the upper tail, ``u`` near 1, is read from it: ``1 - u`` computed from a
            float64 ``u`` would lose those digits); same shape as ``u``.
          size: int or f64[...] draws per block, ``>= 1``.

        Returns:
          f64[broadcast(u.shape, size.shape, batch_shape)], nondecreasing in ``u``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no closed-form block means.")

    # -- moments -------------------------------------------------------------
    def mean(self) -> jax.Array:
        """Exact mean, f64[batch_shape].

        Returns:
          f64[batch_shape]: ``E[X]`` of each law of the batch (each arm's ``mu_i``).
        """
        raise NotImplementedError(_undefined(self, "mean"))

    def eps_sup(self) -> jax.Array:
        """Supremum of ``eps`` with ``E|X|^(1+eps) < inf``, f64[batch_shape]; every family defines it
        (``inf`` where every moment is finite).

        Returns:
          f64[batch_shape]: for a tail index ``a``, ``a - 1`` (e.g. :class:`Pareto`'s ``shape - 1``),
          ``inf`` where every moment is finite; a negative value means no finite mean.
        """
        raise NotImplementedError(_undefined(self, "eps_sup"))

    def abs_moment(self, eps: Any) -> jax.Array:
        """Raw absolute moment ``E|X|^(1+eps)`` ("Heavy-Tailed Bandits"), f64[broadcast(eps, batch)].

        Any order ``1 + eps > 0``, so ``eps`` in ``(-1, inf)`` (the paper's ``eps`` lies in ``(0, 1]``).
        Closed form for :class:`TwoPoint`, a float64 sum over every observation for :class:`Empirical`; tanh-sinh quadrature otherwise
        (relative accuracy about 1e-12; close to the divergence at a tail
        index ``a``, a few ulps times ``a / (a - 1 - eps)``, the conditioning
        of a moment ``~ 1 / (a - 1 - eps)``; for :class:`Stable` arms with
        ``loc != 0``, whose quadrature is nested, 1e-11 for ``alpha >= 1.2``
        and ``|loc| <= 2 scale``, 2e-9 at ``alpha = 1.1`` (skewed, ``eps = 0.05``) and at
        ``loc = 100 scale``, and worse as ``alpha -> 1``, 1.7e-7 at ``alpha = 1.01``, 1.7e-6 at
        1.001; for :class:`StudentT` up to ``df = 10^4``, 1e-10 at ``10^5`` where
        the normalising constant's ``gammaln`` difference limits it; for
        :class:`Frechet` of a large shape, whose power-law tail sets in late,
        1e-12 at shape 20, 1e-9 at 100, 2e-7 at 1000, and where ``loc`` is 0, the
        law centred at its mean with the integrand's kink in its narrow peak,
        1e-10, 6e-8 and 1e-5); ``inf`` where ``1 + eps``
        reaches the tail index (both tested at the edges).  :class:`Stable` at ``alpha = 2``
        is the Gaussian ``N(loc, 2 scale^2)``, with every moment finite.
        Differentiable in ``eps`` and in the law's parameters (``jax.grad``):
        the derivative is the same quadrature of the integrand's derivative,
        within 1e-6 of central differences in the tests.

        Args:
          eps: f[...] the order minus one, in ``(-1, inf)``; broadcast against the batch shape.

        Returns:
          f64[broadcast(eps.shape, batch_shape)]: ``E|X|^(1+eps)``, ``inf`` from
          :meth:`eps_sup` on.

        Raises:
          ValueError: where a concrete ``eps`` is not in ``(-1, inf)``.
        """
        check_interval("eps", eps, -1.0, np.inf, low_closed=False, high_closed=False, where="(the order 1 + eps > 0)")
        check_broadcasts_against("eps", eps, self.batch_shape, "the law's batch shape")
        return _abs_moment(self, eps)

    def cdf(self, x: Any) -> jax.Array:
        """``P(X <= x)``, f64 broadcast of ``x`` against the batch.

        Args:
          x: f[...] real points; broadcast against the batch shape.

        Returns:
          f64[broadcast(x.shape, batch_shape)]: the distribution function at ``x``.

        Raises:
          TypeError, ValueError: for ``x`` not real, NaN (but in a JAX array), or not broadcasting.
          NotImplementedError: for a family without a distribution function (``Stable``).
        """
        check_real("x", x)
        # cdf(NaN) was 0.0.  Python and NumPy points are looked at; a JAX array is not copied to the host.
        points = None if isinstance(x, jax.Array) else np.asarray(x, np.float64)
        if points is not None and np.any(np.isnan(points)):
            _, at = first_entry(np.isnan(points))
            raise ValueError(f"x must be real points, -inf and inf included, not NaN; got x=nan{at}.")
        check_broadcasts_against("x", x, self.batch_shape, "the law's batch shape")
        return _cdf(self, x)

    def _abs_moment(self, eps):
        raise NotImplementedError(_undefined(self, "abs_moment"))

    def _cdf(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not define cdf(x) (simulate, the frontier "
                                  "and the bench do not need it).")

    def shifted(self, delta: Any) -> Distribution:
        """The law of ``X + delta`` (same family): ``delta`` added to every field of
        ``location_fields``, which enter the variate additively.

        Args:
          delta: f[...] the shift; broadcast against the location fields (e.g. f[K] shifts
            each arm of an instance by its own amount).

        Returns:
          A law of the same class, location fields f64[broadcast(loc.shape, delta.shape)], the
          other fields unchanged.

        Raises:
          TypeError, ValueError: for a ``delta`` that is not real (a bool, a string) or not finite.
        """
        # A bool shifted by 1, NaN was blamed on the location field, a string failed in JAX.
        check_interval("delta", delta, -np.inf, np.inf, low_closed=False, high_closed=False)
        if isinstance(delta, (list, tuple)):  # a list of shifts, one per arm, as an array (traced ones too)
            delta = jnp.asarray(delta, _F64)
        moved = {name: _f64(getattr(self, name)) + delta for name in type(self).location_fields}
        return dataclasses.replace(self, **moved)


# What each method of the reward-law protocol must return, for the messages (the guide "Your own policy
# and reward law", docs/guides/own-code.md).
LAW_METHODS = {
    "from_bits": "from_bits(words) -> float32 rewards of the words' leading shape, from words "
                 "uint64[..., num_words] (num_words 64-bit words per reward)",
    "mean": "mean() -> float64[..., K], the arms' means",
    "abs_moment": "abs_moment(eps) -> float64[..., K], the moments E|X|^(1+eps) (inf where they diverge)",
    "eps_sup": "eps_sup() -> float64[..., K], the supremum of the eps with E|X|^(1+eps) < inf",
}


def _undefined(law: Distribution, method: str) -> str:
    """The message of a protocol method (a key of :data:`LAW_METHODS`) that ``law``'s class does not define."""
    return (f"{type(law).__name__} does not define {LAW_METHODS[method]} (docs/guides/own-code.md, \"Your own "
            f"policy and reward law\").")


# Compiled once per family and shape, whether called eagerly or inside a program.
def _finite_or_inf_moment(dist, eps):
    """``dist._abs_moment(eps)``, ``inf`` from ``eps_sup`` on, where the family's own formula is evaluated
    at a finite order instead: the derivative of a divergent quadrature is NaN, and a caller's finite
    stand-in for the ``inf`` (``jnp.where``) multiplied it by 0, which left every gradient NaN."""
    if type(dist)._abs_moment is Distribution._abs_moment:  # named before eps_sup, which it reads first
        raise NotImplementedError(_undefined(dist, "abs_moment"))
    eps = _f64(eps)
    sup = jax.lax.stop_gradient(dist.eps_sup())
    diverges = eps >= sup
    inside = jnp.where(diverges, (jnp.maximum(sup, -1.0) - 1.0) / 2.0, eps)  # an order in (-1, eps_sup)
    return jnp.where(diverges, jnp.inf, dist._abs_moment(inside))


_abs_moment = class_keyed_jit(_finite_or_inf_moment)
_cdf = class_keyed_jit(lambda dist, x: dist._cdf(x))


@partial(class_keyed_jit, static_argnums=2)
def _sample(dist, key, sample_shape):
    words = jax.random.bits(key, (*sample_shape, *dist.batch_shape, dist.num_words), jnp.uint64)
    return dist.from_bits(words)


def _abs_moment_by_quadrature(log_integrand, kink, lower, rate, far=None, far_left=False):
    """``int |h(w)|^r f(w) dw`` split at the kink of ``|h|`` and at +-1 (and ``far``).

    Args:
      log_integrand: ``(v, side) -> log(|h(side e^v)|^r f(side e^v))``, with
        ``v = log|w|`` (robust for huge ``v``).
      kink: f64[...] the root of ``h`` (any point if ``h`` has none).
      lower: ``None`` for support R, else the lower end (>= 0) of the support.
      rate: f64[...] exponential decay rate of the tails in ``v``.
      far: ``None``, or f64[...] where the finite pieces end on the right and the
        tail in ``v`` starts, where it lies beyond ``max(kink, 1)``: for an
        integrand with a bump beyond 1 too narrow for that tail's nodes (the
        log-normal's, at ``w = r sigma``).
      far_left: the left tail starts at ``-far`` too (a symmetric law whose power-law tails set in
        late: the Student-t's at a large ``df``), not at ``-1``.

    Derivatives in the parameters hold the nodes fixed: the kink, the only
    split point that moves with them, is where the integrand vanishes
    (``r > 1``), and the tails' substitution is exact for any ``rate``, so the
    derivative is the same quadrature of the integrand's derivative.  (Moving
    nodes would differentiate ``log|w|`` at a node that lands on ``w = 0``.)
    """
    kink, rate = jax.lax.stop_gradient(kink), jax.lax.stop_gradient(rate)
    end = 1.0 if far is None else jnp.maximum(jax.lax.stop_gradient(far), 1.0)

    def finite_piece(a, b):
        def log_f(x):
            return log_integrand(jnp.log(jnp.abs(x)), jnp.where(x < 0, -1.0, 1.0))

        return quadrature.integrate_interval(log_f, a, b)

    def tail(start, side):
        return quadrature.integrate_log_tail(
            lambda v: log_integrand(v, side) + v, jnp.log(start), rate
        )

    if lower is None:
        start = -end if far_left else -1.0
        left, mid, right = jnp.minimum(kink, start), jnp.clip(kink, start, end), jnp.maximum(kink, end)
        # A kink beyond [start, end] (|loc| >> scale) leaves the law's bulk, and the 16 units of w next to
        # it, pieces of their own: on one piece from -1 to a kink at 1e4, tanh-sinh lost 5e-8 of a
        # Gaussian's moment and 4e-9 of a Student-t's (1e-3 and 2e-4 at 1e8).  (Empty pieces add exact zeros.)
        near_left, near_right = jnp.clip(start - 16.0, left, start), jnp.clip(end + 16.0, end, right)
        return (
            finite_piece(left, near_left)
            + finite_piece(near_left, start)
            + finite_piece(start, mid)
            + finite_piece(mid, end)
            + finite_piece(end, near_right)
            + finite_piece(near_right, right)
            + tail(right, 1.0)
            + tail(-left, -1.0)
        )
    right = jnp.maximum(jnp.maximum(kink, lower), end)
    mid = jnp.clip(kink, lower, right)
    return finite_piece(lower, mid) + finite_piece(mid, right) + tail(right, 1.0)


def _common(*arrays):
    """Broadcasts to a common shape; also returns copies with a trailing node axis."""
    full = jnp.broadcast_arrays(*[_f64(a) for a in arrays])
    return full, [a[..., None] for a in full]


def _log_abs_linear(c, scale, v, side):
    """``log|c + scale * side * e^v|`` for ``scale > 0``."""
    return quadrature.log_abs_affine(c, jnp.log(scale) + v, side)

def _opaque(constant, like):
    """``constant`` as a value XLA's algebraic simplifier cannot see through: ``constant + 0 like``,
    equal to it for finite ``like``.

    Every program that reads the reward table must compute the same float32 bits.  Given
    ``x = c a`` with a literal ``c``, the simplifier rewrites ``x x`` as ``(a a)(c c)`` (another
    rounding) in some programs only: where the shapes are small enough that the constant stays a
    literal (the engine at a seed chunk of one), not in the table's vectorised draw.
    """
    return constant + 0.0 * like
