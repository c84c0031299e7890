"""Alpha-stable arms in Samorodnitsky and Taqqu's S1 parametrization, with an exact block law.

**Parametrization.**  ``X ~ S_a(scale, beta, loc)`` (S1) has the characteristic
function ``E exp(i t X) = exp(-scale^a |t|^a (1 - i beta sign(t) tan(pi a / 2))
+ i loc t)``.  S1 rather than Nolan's S0 because, for ``a > 1``, the S1
location is the mean, so an instance's gaps are differences of ``loc`` as for
every other family, and because S1 is the one closed under averaging: the mean
of ``s`` i.i.d. copies is ``S_a(s^(1/a - 1) scale, beta, loc)``, the same
location (the S0 location would move by ``beta scale (s^(1/a-1) - 1)
tan(pi a / 2)``).  S0 is continuous at ``a = 1`` where S1 is not; the price of
S1 here is that for ``beta != 0`` and ``a -> 1`` the bulk of the law sits
about ``zeta = beta cot(pi (a - 1) / 2)`` away from its mean (``12.7 beta``
at ``a = 1.05``), which float32 rewards then carry with an absolute rounding of
``|zeta| 2^-24``.  ``a = 2`` is the Gaussian ``N(loc, 2 scale^2)`` (``beta``
has no effect).

**Draws** (Chambers, Mallows and Stuck 1976, in Weron's corrected S1 form,
Statist. Probab. Lett. 28, 1996).  With ``V`` uniform on ``(-pi/2, pi/2)``,
``W`` standard exponential, ``gamma = arctan(zeta)``,
``theta = a V - gamma`` and ``phi = V - theta``,

    Z = (1 + zeta^2)^(1/(2a)) sin(theta) / cos(V)^(1/a) (cos(phi) / W)^((1 - a)/a)

is standard S1.  The heavy tails come from ``cos V -> 0``, so ``V`` is
written ``s (pi/2 - delta)`` from a side ``s`` and ``delta = pi p`` with ``p``
from :func:`~htb_jax._src.bits.signed_tail` (word 0): ``cos V = sin delta``
keeps full relative precision down to ``p = 2^-65``, and a draw reaches
``|Z| ~ 2^(64/a)`` at its true probability, as Pareto's do.  The angles are
expanded around the end ``s pi / 2`` (``sin theta = sin theta_s cos(a delta) -
s cos theta_s sin(a delta)``, ``theta_s = s a pi / 2 - gamma``) with
``sin theta_s`` and ``cos theta_s`` in closed form from ``sin(pi (a-1)/2)`` and
``sin(pi (2-a)/2)``, so that ``sin theta_s`` is exactly 0 on the side that a
totally skewed law (``beta = -s``) cuts off and at ``a = 2``: there ``sin
theta`` and ``cos phi`` both vanish like ``delta`` and their ratio stays
accurate, instead of a rounding of ``pi`` becoming a spurious tail.  Near
``a -> 1`` nothing cancels: ``Z = sin(theta) exp(log|Z / sin(theta)|)`` is a
product, in float32 within about ``2^-16 max(|Z|, 1)`` of Weron's formula in float64
(the rounding of a logarithm up to about 45 in magnitude; at most 51 ulps of
``max(|Z|, 1)`` measured over 10^5 draws at ``a = 1.05``, 15 at ``a = 1.5``, 82
(``2.5 x 2^-18``) at ``a = 1.01, beta = 1``, 45 at ``a = 2``),
at the scale of the S1 reward's own resolution (the S0 variate ``Z - zeta``
would lose ``log2 |zeta|`` bits, but no reward is S0).  Sines and cosines run
on the odd polynomial of the Student-t draw.  ``W`` comes from word 1, both of
its tails resolved to ``2^-64``.

**The block law.**  A block mean is ``loc + scale s^(1/a - 1) Z`` with one
standard variate ``Z`` whatever ``s`` (:meth:`Stable.block_mean_from_standard`,
``Z`` the float32 draw of :meth:`Stable.standard_from_bits`), and since ``z ->
loc + c z`` is nondecreasing for ``c > 0``, also in floating point, the
Median-of-Means of ``B`` blocks is that map of the median of ``B`` standard
variates.  The rounding of each reward to float32 is not reproduced (a
relative ``2^-24`` per reward).

**The order statistic** (``sampler="order_statistic"`` of ``simulate``).  The
``ceil(B/2)``-th of ``B`` block means is ``loc + scale s^(1/a - 1) Q(U)``,
``Q`` the standard quantile and ``U = U_(ceil(B/2))`` the Beta level of
:func:`~htb_jax._src.order_statistic.median_levels` (three words whatever
``B``), so an estimate costs the same at ``T = 10^18`` as at ``10^3``.  ``Q``
has no closed form: it is tabulated when the program is built, per distinct
``(a, beta)`` of the instance (:mod:`~htb_jax._src.distributions.stable_quantile`,
which needs them concrete), on the levels ``[2^-20, 1 - 2^-20]``.  For ``B >
SMALL_BLOCKS`` the level leaves that range with probability below ``10^-27``
(``P(U_(5) < x) < 126 x^5`` at ``B = 9``); for ``B <= SMALL_BLOCKS`` (the
empirical mean of Empirical ETC is ``B = 1``, whose level is uniform) the
estimate is the median of ``B`` standard variates, as the ``block_sums``
sampler draws it, bit for bit.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import bits as bits_lib
from htb_jax._src import pytree, quadrature
from htb_jax._src.distributions.base import (
    _F32,
    _F64,
    Distribution,
    _abs_moment_by_quadrature,
    _f32,
    _f64,
    _opaque,
)
from htb_jax._src.distributions.stable_quantile import QuantileTable, quantile_table, table_quantile
from htb_jax._src.distributions.student_t import _sin_quarter_turn
from htb_jax._src.validation import check_float32_above_one, check_interval, concrete, real_array

_TAIL_START = 0.25  # the moment's outer integral: delta in (0, 1/4) by its power-law tail
_BEND_MARGIN = 40.0  # ... by tanh-sinh in y = -log delta up to this far past K's bend (e^-40 = 4e-18) ...
_BEND_MAX = 80.0  # ... placed at y = -log |sin theta_s|, at most this
_ROOT_MAX = 50.0  # the inner integral over W splits at a root of |loc + scale K W^k| below this
SMALL_BLOCKS = 8  # the order statistic takes B above this from the quantile table, B up to it by draws


def stable_constants(alpha: Any, beta: Any) -> dict[str, jnp.ndarray]:
    """The per-arm constants of the draw, f64 (see the module docstring).

    Returns:
      ``inv_a = 1/a``, ``expo = 1/a - 1``, ``log_s = log (1 + zeta^2)^(1/(2a))``,
      ``zeta = beta cot(pi (a-1)/2)`` and, for the sides ``s = +1, -1``,
      ``sin_p, cos_p, sin_m, cos_m``: ``sin theta_s`` and ``cos theta_s``.
    """
    a, b = _f64(alpha), _f64(beta)
    inv_a = 1.0 / a
    sx = jnp.sin((0.5 * math.pi) * (a - 1.0))  # sin(pi (a-1)/2) = -cos(pi a / 2)
    cx = jnp.sin((0.5 * math.pi) * (2.0 - a))  # cos(pi (a-1)/2) = sin(pi a / 2), exactly 0 at a = 2
    r = jnp.sqrt(sx * sx + b * b * (cx * cx))
    zeta = b * cx * (1.0 / sx)
    # theta_s = s a pi/2 - gamma, gamma = arctan(zeta): sin = s cx sx (1 + s b) / r,
    # cos = (s b cx^2 - sx^2) / r (1/r: cos gamma sx; exact zeros where 1 + s b = 0 or cx = 0).
    inv_r = 1.0 / r
    sin_p = cx * sx * (1.0 + b) * inv_r
    sin_m = -(cx * sx * (1.0 - b) * inv_r)
    cos_p = (b * (cx * cx) - sx * sx) * inv_r
    cos_m = (-b * (cx * cx) - sx * sx) * inv_r
    log_s = jnp.log(r * (1.0 / sx)) * inv_a
    return dict(inv_a=inv_a, expo=inv_a - 1.0, log_s=log_s, zeta=zeta,
                sin_p=sin_p, cos_p=cos_p, sin_m=sin_m, cos_m=cos_m)


def _angles(c, upper, sin_d, cos_d, sin_ad, cos_ad):
    """``sin theta`` and ``cos phi`` at ``V = s (pi/2 - delta)`` (``s = +1`` where ``upper``)."""
    sign = jnp.where(upper, 1.0, -1.0).astype(sin_d.dtype)
    sin_s = jnp.where(upper, c["sin_p"], c["sin_m"])
    cos_s = jnp.where(upper, c["cos_p"], c["cos_m"])
    sin_t = sin_s * cos_ad - sign * (cos_s * sin_ad)
    cos_t = cos_s * cos_ad + sign * (sin_s * sin_ad)
    cos_phi = sin_d * cos_t + sign * (cos_d * sin_t)  # cos(V - theta), cos V = sin delta
    return sin_t, cos_phi


def _log_exponential(upper, p):
    """``log W`` for the standard exponential ``W = -log U``, ``U = 1 - p`` where ``upper``, else ``p``."""
    return jnp.log(jnp.where(upper, -jnp.log1p(-p), -jnp.log(p)))


def _sin_cos_half_turn(x, quarter):
    """``sin(x)`` and ``cos(x)`` for float32 ``x`` in ``[0, pi]`` by :func:`_sin_quarter_turn` (XLA's
    CPU ``sin`` and ``cos`` run a general range reduction several times slower); ``quarter`` is
    ``pi/2`` as an opaque value (:func:`_opaque`).  Absolute error a few float32 ulps of 1, and
    relative for ``sin`` as ``x -> 0``."""
    sin = _sin_quarter_turn(jnp.minimum(x, (quarter + quarter) - x))
    to_quarter = quarter - x
    cos = _sin_quarter_turn(jnp.abs(to_quarter))
    return sin, jnp.where(to_quarter < 0, -cos, cos)


def _standard(c, words):
    """Standard S1 variates ``Z``, f32, from words u64[..., 2] and the float32 constants ``c``."""
    side, p = bits_lib.signed_tail(words[..., 0])
    quarter = _opaque(_f32(0.5 * math.pi), p)
    delta = (quarter + quarter) * p
    sin_d, cos_d = _sin_cos_half_turn(delta, quarter)
    sin_ad, cos_ad = _sin_cos_half_turn(delta * c["alpha"], quarter)
    w_side, w_p = bits_lib.signed_tail(words[..., 1])
    sin_t, cos_phi = _angles(c, side, sin_d, cos_d, sin_ad, cos_ad)
    log_z = (c["log_s"] - c["inv_a"] * jnp.log(sin_d)
             + c["expo"] * (jnp.log(jnp.maximum(cos_phi, jnp.finfo(_F32).tiny)) - _log_exponential(w_side, w_p)))
    return sin_t * jnp.exp(log_z)


def check_alpha_below_two(alpha: Any, name: str = "Stable alpha") -> None:
    """``ValueError`` for an ``alpha`` below 2 that float32, in which rewards are drawn, rounds to 2: the
    draws were the Gaussian's, while ``eps_sup()`` and ``abs_moment`` described the stable law (an
    infinite variance)."""
    a = real_array(name, alpha)  # None for a traced value: checked where concrete
    if a is None:
        return
    a = np.asarray(a, np.float64)
    rounded = (a < 2.0) & (a.astype(np.float32) == 2.0)
    if np.any(rounded):
        below = float(np.nextafter(np.float32(2.0), np.float32(0.0)))
        raise ValueError(
            f"{name} must be 2 (the Gaussian N(loc, 2 scale^2)) or at most {below!r}, the largest float32 below 2: "
            f"float32, in which rewards are drawn, rounds it to 2; got {name}={float(a[rounded].flat[0])!r}."
        )


@pytree.dataclass
class Stable(Distribution):
    """Alpha-stable ``S_a(scale, beta, loc)`` in the S1 parametrization (Samorodnitsky and Taqqu).

    ``P(|X| > x) ~ x^-a`` for ``a < 2``, so ``E|X|^(1+eps) < inf`` iff ``1 + eps < a``;
    ``a = 2`` is ``N(loc, 2 scale^2)``, every moment finite.  The mean of ``s``
    i.i.d. draws is ``S_a(s^(1/a - 1) scale, beta, loc)``: the fast path draws a
    Median-of-Means estimate from ``B`` standard variates, whatever the block size.

    Attributes:
      loc: f[...] mean (the S1 location).
      alpha: f[...] stability index in ``(1, 2]``.
      beta: f[...] skewness in ``[-1, 1]`` (``+1``: no left power tail).
      scale: f[...] positive scale.
    """

    loc: Any
    alpha: Any
    beta: Any = 0.0
    scale: Any = 1.0

    num_words: ClassVar[int] = 2
    has_block_sums: ClassVar[bool] = True
    affine_block_means: ClassVar[bool] = True
    tabulated_quantile: ClassVar[bool] = True

    def __post_init__(self):
        check_interval("Stable alpha", self.alpha, 1.0, 2.0, low_closed=False, high_closed=True)
        check_float32_above_one("Stable alpha", self.alpha)
        check_alpha_below_two(self.alpha)
        check_interval("Stable beta", self.beta, -1.0, 1.0, low_closed=True, high_closed=True)
        check_interval("Stable scale", self.scale, 0.0, jnp.inf, low_closed=False, high_closed=False)
        check_interval("Stable loc", self.loc, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        self.check_parameters()  # after the ranges: a value out of its range is named by it, not float32's

    def _constants(self):
        c = stable_constants(_f32(self.alpha).astype(_F64), _f32(self.beta).astype(_F64))
        c = {k: v.astype(_F32) for k, v in c.items()}
        c["alpha"] = _f32(self.alpha)
        return c

    def from_bits(self, words):
        return _f32(self.loc) + _f32(self.scale) * _standard(self._constants(), words)

    def standard_from_bits(self, words):
        """Standard S1 variates ``S_a(1, beta, 0)``: the float32 draw of :meth:`from_bits` before
        its location and scale, f32[broadcast(words.shape[:-1], batch)].

        Float32 as the rewards are: cheaper than a float64 draw, and the Median-of-Means selects
        among them as 32-bit keys.

        Args:
          words: u64[..., 2] (word 0: the angle, word 1: the exponential).
        """
        return _standard(self._constants(), words)

    def block_mean_from_standard(self, z, size):
        """``loc + scale size^(1/a - 1) z``: the mean of ``size`` draws given its standard variate ``z``.

        Nondecreasing in ``z``; ``loc`` and ``scale`` are the float32 parameters the rewards use.

        Args:
          z: f32 or f64[...] standard variates (or their median).
          size: int or f64[...] draws per block, ``>= 1``.

        Returns:
          f64[broadcast(z.shape, size.shape, batch_shape)].
        """
        expo = 1.0 / _f32(self.alpha).astype(_F64) - 1.0
        factor = jnp.exp(expo * jnp.log(jnp.maximum(_f64(size), 1.0)))
        loc, scale = _f32(self.loc).astype(_F64), _f32(self.scale).astype(_F64)
        return loc + (scale * factor) * _f64(z)

    def block_sums_from_bits(self, words, size):
        """``size loc + scale size^(1/a) Z`` from words u64[..., 2] (see :meth:`standard_from_bits`)."""
        size = _f64(size)
        return size * self.block_mean_from_standard(self.standard_from_bits(words), size)

    def quantile_tables(self) -> tuple[QuantileTable, ...]:
        """The standard quantile tabulated at each distinct float32 ``(alpha, beta)`` of the arms.

        Raises:
          ValueError: where ``alpha`` or ``beta`` is traced (the tables are built in NumPy).
        """
        values = [concrete(self.alpha), concrete(self.beta)]
        if any(v is None for v in values):
            raise ValueError(
                "sampler='order_statistic' on Stable arms needs concrete alpha and beta (the standard quantile "
                "is tabulated when the program is built); got traced values: use sampler='block_sums'."
            )
        pairs = np.stack([np.broadcast_to(np.asarray(v, np.float32), self.batch_shape).ravel() for v in values], -1)
        return tuple(quantile_table(float(a), float(b)) for a, b in np.unique(pairs, axis=0))

    def standard_quantile(self, tables: tuple[QuantileTable, ...], u: jax.Array, v: jax.Array) -> jax.Array:
        """The standard S1 quantile of each arm at the level pair ``(u, v = 1 - u)``, from ``tables``.

        Args:
          tables: :meth:`quantile_tables` of an instance holding every ``(alpha, beta)`` of this one.
          u, v: f64[...] levels in ``[2^-20, 1 - 2^-20]`` (clipped there), broadcasting with the batch.

        Returns:
          f64[broadcast(u.shape, batch_shape)].
        """
        alpha, beta = _f32(self.alpha), _f32(self.beta)
        z = table_quantile(tables[0], u, v)
        for table in tables[1:]:
            z = jnp.where((alpha == table.alpha) & (beta == table.beta), table_quantile(table, u, v), z)
        return jnp.broadcast_to(z, jnp.broadcast_shapes(np.shape(z), self.batch_shape))

    def mean(self):
        return jnp.broadcast_to(_f64(self.loc), self.batch_shape)

    def eps_sup(self):
        a = _f64(self.alpha)
        return jnp.broadcast_to(jnp.where(a < 2.0, a - 1.0, jnp.inf), self.batch_shape)

    def _abs_moment(self, eps):
        """``E|loc + scale Z|^r`` over the draw's own representation: ``Z = K(V) W^(1 - 1/a)``.

        Given ``V = s (pi/2 - delta)``, ``E_W |loc + scale K W^k|^r`` is a one-dimensional
        integral against ``exp(-w)`` (:func:`_abs_moment_by_quadrature`, kink at the root in
        ``w``); the outer integral over ``delta`` in ``(0, pi/2)`` (density ``1/pi`` per side)
        runs on ``(1/4, pi/2)`` by tanh-sinh and on ``(0, 1/4)`` over ``y = -log delta``.  There
        ``K ~ delta^(-1/a)`` only below ``delta ~ |sin theta_s|`` and is bounded above it, and all
        the way where ``sin theta_s = 0`` (``a = 2``; the side a totally skewed law cuts off), so
        the integrand decays like ``exp(-y)`` down to that bend and like ``exp(-(1 - r/a) y)``
        below it: tanh-sinh in ``y`` up to ``_BEND_MARGIN`` past the bend, then the power tail
        with its own rate (``1`` where there is none).  That rate alone from ``delta = 1/4`` is 0
        at ``a = r = 2`` and dropped the whole tail (``E|Z|^2`` came out 1.3765 for 2, ``N(0, 2)``);
        near ``a = 2`` it missed the bend (1.3e-9 off at ``a = 1.9999, r = 1.999``).  Accurate up
        to the divergence at ``r = a`` (there the tail reaches ``delta`` of ``e^-10000``, so
        ``|scale K|^r`` is factored out of the inner integral before it overflows).
        For ``beta != 0``, ``K`` vanishes inside one side, at ``V = gamma / a``: the tanh-sinh part
        is split there (and the tail starts below it), since at ``loc = 0`` the integrand has a kink
        ``|delta - delta_0|^r`` (unsplit, ``1e-6`` relative off at ``a = 1.3, beta = -1``; split,
        within ``1e-13`` of the closed form ``E|Z|^r`` of a centred law, ``tests/test_stable.py``).
        For ``loc != 0`` the inner mean bends where ``loc + scale K w^k`` changes sign at a typical
        ``w``, over a range of ``K`` of relative width about ``k``, which is not split at: 1e-10 of
        the moment at ``a = 1.1``, ``beta = 0`` (2e-9 skewed, and at ``loc = 100 scale``), 1.7e-7 at
        ``a = 1.01`` (``tests/test_abs_moment_edges.py``).
        """
        r = 1.0 + _f64(eps)
        shape = jnp.broadcast_shapes(np.shape(r), self.batch_shape)
        r, a, b, loc, scale = (jnp.broadcast_to(x, shape) for x in
                               (r, _f64(self.alpha), _f64(self.beta), _f64(self.loc), _f64(self.scale)))
        c = stable_constants(a, b)
        k = 1.0 - c["inv_a"]  # Z = K W^k

        def log_inner(log_delta, delta, upper):
            """``log E_W |loc + scale K W^k|^r`` at nodes f64[..., n] (parameters [...])."""
            cn = {name: v[..., None] for name, v in c.items()}
            a_delta = a[..., None] * delta
            sin_t, cos_phi = _angles(cn, upper, jnp.sin(delta), jnp.cos(delta),
                                     jnp.sin(a_delta), jnp.cos(a_delta))
            log_sin_d = log_delta + jnp.log(jnp.sinc(delta * (1.0 / math.pi)))
            log_k = (cn["log_s"] + jnp.log(jnp.abs(sin_t)) - cn["inv_a"] * log_sin_d
                     + cn["expo"] * jnp.log(jnp.maximum(cos_phi, 1e-300)))
            log_k = jnp.log(scale[..., None]) + log_k  # log |scale K|
            sign_k = jnp.where(sin_t < 0, -1.0, 1.0)
            c0, r_, k_ = loc[..., None], r[..., None], k[..., None]
            # root of loc + scale K w^k in w > 0, where loc and K have opposite signs.  A root past
            # _ROOT_MAX, where exp(-w) leaves nothing, is not split at: the piece from 1 to it would put
            # the whole mass of exp(-w) at one end of a tanh-sinh interval up to w = e^700 (small |K| and
            # k = 1 - 1/a near 0 put the root there: 1e-5 of the moment lost at a = 1.1, loc = -1.5).
            log_root = (jnp.log(jnp.abs(jnp.where(c0 == 0, 1.0, c0))) - log_k) / k_
            has_root = (c0 * sign_k < 0) & (log_root < math.log(_ROOT_MAX))
            kink = jnp.where(has_root, jnp.exp(jnp.minimum(log_root, math.log(_ROOT_MAX))), 1.0)

            # |scale K|^r factored out where it exceeds 1: it overflows float64 as delta -> 0 (near r = a
            # the outer tail reaches y = -log delta of 10^4), which would drop those nodes.
            shift = r_ * jnp.maximum(log_k, 0.0)  # [..., n]

            def log_integrand(v, side):
                log_w_k = log_k[..., None] + quadrature.log_power(k_[..., None], v)  # log |scale K| w^k; w = 0 at a node
                log_abs = quadrature.log_abs_affine(c0[..., None], log_w_k, sign_k[..., None])
                return quadrature.log_power(r_[..., None], log_abs) - jnp.exp(v) - shift[..., None]

            value = _abs_moment_by_quadrature(log_integrand, kink, 0.0, jnp.ones_like(kink))
            return jnp.log(value) + shift

        # The outer pieces' ends and tail rate are held fixed in derivatives, as the inner ones are
        # (_abs_moment_by_quadrature): each substitution is exact for any of them, so the derivative is
        # the same quadrature of the integrand's derivative.
        rate = jax.lax.stop_gradient((a - r) * c["inv_a"])
        gamma_a = jax.lax.stop_gradient(jnp.arctan(c["zeta"]) * c["inv_a"])  # sin theta = 0 at V = gamma / a
        nodes, sides = [], []
        for upper in (True, False):
            # On the side of gamma's sign, K = 0 at delta_0 = pi/2 - |gamma| / a inside (0, pi/2): a
            # kink of the integrand at loc = 0, a sharp bend near it for small |loc|.
            delta_0 = 0.5 * math.pi - (gamma_a if upper else -gamma_a)
            inside = delta_0 < 0.5 * math.pi
            start = jnp.where(inside, jnp.minimum(_TAIL_START, 0.5 * delta_0), _TAIL_START)
            split = jnp.where(inside, delta_0, 0.5 * math.pi)
            # K ~ delta^(-1/a) only below delta ~ |sin theta_s|, bounded above it, and bounded all the
            # way where sin theta_s = 0 (a = 2, and the side a totally skewed law cuts off), where the
            # integrand decays like exp(-y): by tanh-sinh in y up to _BEND_MARGIN past that bend, then
            # by the power tail's rate (or 1 where there is no power tail).
            sin_s = jax.lax.stop_gradient(jnp.abs(c["sin_p"] if upper else c["sin_m"]))
            y_start = -jnp.log(start)
            bend = jnp.clip(-jnp.log(jnp.where(sin_s > 0, sin_s, 1.0)), y_start, _BEND_MAX)
            y_tail = jnp.where(sin_s > 0, bend, y_start) + _BEND_MARGIN
            tail_rate = jnp.where(sin_s > 0, jnp.maximum(rate, 1e-300), 1.0)
            # The side's four pieces: delta in (start, split) and (split, pi/2), y = -log delta in
            # (y_start, y_tail) and past it.
            low, low_width = quadrature.interval_nodes(start, split)
            high, high_width = quadrature.interval_nodes(split, 0.5 * math.pi)
            mid, mid_width = quadrature.interval_nodes(y_start, y_tail)
            far = quadrature.log_tail_nodes(y_tail, tail_rate)
            nodes += [(jnp.log(low), low), (jnp.log(high), high), (-mid, jnp.exp(-mid)), (-far, jnp.exp(-far))]
            sides.append((low_width, high_width, mid, mid_width, far, tail_rate))
        # The eight pieces by one loop over one copy of the inner mean, a piece at a time (the inner
        # nodes of every outer node of a piece are held at once).
        log_delta, delta = (jnp.stack([piece[i] for piece in nodes]) for i in range(2))
        upper = np.repeat([True, False], 4)
        log_values = jax.lax.map(lambda piece: log_inner(*piece), (log_delta, delta, upper))
        total = jnp.zeros(shape, _F64)
        for (low_width, high_width, mid, mid_width, far, tail_rate), (at_low, at_high, at_mid, at_far) in zip(
                sides, log_values.reshape(2, 4, *log_values.shape[1:]), strict=True):
            total = total + quadrature.interval_sum(at_low, low_width)
            total = total + quadrature.interval_sum(at_high, high_width)
            total = total + quadrature.interval_sum(at_mid - mid, mid_width)  # in y: the Jacobian e^-y
            total = total + quadrature.log_tail_sum(at_far - far, tail_rate)
        value = total * (1.0 / math.pi)
        finite_moment = (r < a) | (a >= 2.0)
        return jnp.where(finite_moment, value, jnp.inf)

    def _cdf(self, x):
        raise NotImplementedError(
            "Stable has no cdf in htb_jax (scipy.stats.levy_stable.cdf with parameterization 'S1' gives it)."
        )
