"""Exact quantiles of ``Binomial(n, p)``: the common-random-number block sums of two-point arms.

The smoothed regret proxy takes a two-point arm's block mean at a quantile
level drawn once and shared by every schedule (``TwoPoint.block_mean_quantile``):
the block's number of high rewards is the binomial quantile at that level.
The pmf and the smaller tail are written without cancellation for ``n`` up
to ``10^18`` (Loader's saddle-point form and a tanh-sinh tail integral), and
the quantile is found by unit steps from a start that is exact (0, for small
means) or within a few units (a corrected normal quantile).  Lanes are grouped by method and run in tiles as the
variates of :mod:`htb_jax._src.binomial` are.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from htb_jax._src import binomial, order_statistic, quadrature

_F64 = jnp.float64


def _stirling_error(m: jax.Array) -> jax.Array:
    """``log(m!) - [(m + 1/2) log m - m + log(2 pi)/2]`` for integer ``m >= 1``, f64."""
    return binomial.stirling_tail(m - 1.0)


def _deviance(x: jax.Array, m: jax.Array, x_minus_m: jax.Array) -> jax.Array:
    """``x log(x / m) + m - x`` for ``x >= 0``, ``m > 0``, given ``x - m`` separately.

    Near ``x = m`` the series ``(x - m) v + 2 x sum_j v^(2j+1) / (2j+1)``,
    ``v = (x - m) / (x + m)``, avoids the cancellation of the direct form
    (Loader's ``bd0``); ``x - m`` comes from the caller, where it is exact.
    """
    v = x_minus_m / (x + m)
    v2 = v * v
    series = jnp.zeros_like(v)
    for j in range(12, 0, -1):  # |v| < 0.1: the omitted terms are below 1e-25 relative
        series = v2 * (1.0 / (2 * j + 1) + series)
    near = x_minus_m * v + 2.0 * x * v * series
    far = x * jnp.log(jnp.maximum(x, 1e-300) / m) - x_minus_m
    return jnp.where(jnp.abs(v) < 0.1, near, far)


def log_pmf(x: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """``log P(X = x)`` for ``X ~ Binomial(n, p)``, without cancellation for any ``n`` (Loader 2000).

    ``log P = delta(n) - delta(x) - delta(n - x) - D(x, np) - D(n - x, nq)
    + log(n / (2 pi x (n - x))) / 2`` with ``delta`` the Stirling error and
    ``D`` the deviance of :func:`_deviance`; ``x - np`` enters both deviances
    as one exact-as-possible difference.

    Args:
      x: f64 integers in ``[0, n]``.
      n: f64 integers ``>= 1`` (exact up to ``2^53``).
      p: f64 in ``(0, 1)``.

    Returns:
      f64, accurate to about ``1e-13`` absolute for ``n`` up to ``10^18``.
    """
    q = 1.0 - p
    inner = (x > 0) & (x < n)
    xs = jnp.where(inner, x, 1.0)
    ns = jnp.where(inner, n, 2.0)
    mean_np = ns * p
    diff = xs - mean_np
    value = (
        _stirling_error(ns)
        - _stirling_error(xs)
        - _stirling_error(ns - xs)
        - _deviance(xs, mean_np, diff)
        - _deviance(ns - xs, ns * q, -diff)
        + 0.5 * (jnp.log(ns) - jnp.log(xs) - jnp.log(ns - xs) - jnp.log(2.0 * jnp.pi))
    )
    return jnp.where(x <= 0, n * jnp.log1p(-p), jnp.where(x >= n, n * jnp.log(p), value))


def tail(x: jax.Array, n: jax.Array, p: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The smaller tail of ``Binomial(n, p)`` at ``x``, with relative accuracy about ``1e-13``.

    ``P(X > x) = I_p(x + 1, n - x)`` where ``x >= (n - 1) p`` (the upper tail),
    ``P(X <= x) = I_(1-p)(n - x, x + 1)`` otherwise.  Either is
    ``n P(Bin(n - 1, p) = x)`` (from :func:`log_pmf`) times
    ``int_0^W h(w) dw`` with ``h`` the incomplete-beta integrand divided by its
    value at ``t = p`` (so ``h(0) = 1``, decreasing): written with ``log1p``,
    in units of its own decay length ``1 / (|slope| + sqrt(curvature))`` and
    integrated by the tanh-sinh tail rule of :mod:`htb_jax._src.quadrature`.
    No incomplete-beta continued fraction, no normalising constant of size
    ``lgamma(n)``: the same accuracy at ``n = 10^18`` as at ``n = 100``.

    Args:
      x: f64 integers in ``[0, n - 1]``.
      n: f64 integers ``>= 1``.
      p: f64 in ``(0, 1)``.

    Returns:
      ``(upper, value, pmf)``: bool, True where ``value`` is ``P(X > x)``, else
      it is ``P(X <= x)``; and ``P(X = x)``.
    """
    q = 1.0 - p
    upper = x >= (n - 1.0) * p
    b = n - x - 1.0
    slope = jnp.abs(x - (n - 1.0) * p) / (p * q)
    curvature = x / (p * p) + b / (q * q)
    scale = 1.0 / (slope + jnp.sqrt(curvature))
    width = jnp.where(upper, p, q)
    sign = jnp.where(upper, -1.0, 1.0)

    def log_h(y):
        w = scale[..., None] * y
        value = x[..., None] * jnp.log1p(sign[..., None] * w / p[..., None]) + b[..., None] * jnp.log1p(
            -sign[..., None] * w / q[..., None]
        )
        return jnp.where(w < width[..., None], value, -jnp.inf)

    integral = scale * quadrature.integrate_log_tail(log_h, jnp.zeros_like(x), jnp.ones_like(x))
    shorter = jnp.exp(log_pmf(x, n - 1.0, p))  # P(Bin(n - 1, p) = x)
    return upper, n * shorter * integral, shorter * n * q / (n - x)


_MAX_QUANTILE_STEPS = 1000  # the corrected normal start is within a few units of the quantile


def _quantile_by_search(u, v, n, p, by_tail):
    """``min{x : P(X <= x) >= u}`` for ``p <= 1/2``, by unit steps from a start.

    Lanes with mean ``n p < 10`` start at 0, where the upper tail
    ``P(X > 0) = 1 - (1 - p)^n`` is exact (sequential search, as in
    :func:`~htb_jax._src.binomial.binomial_from_words`).  The others (``by_tail``) start at the
    Cornish-Fisher quantile (normal plus skewness term) with the smaller
    tail there from :func:`tail`.  Each step moves one unit with the pmf
    recurrence, comparing the upper tail with ``v = 1 - u`` or the lower
    tail with ``u``, whichever the start computed.
    """
    q = 1.0 - p
    mean = n * p
    sd = jnp.sqrt(mean * q)
    z = order_statistic.normal_quantile(u, v)
    w = z + (q - p) / sd * (z * z - 1.0) / 6.0
    start = jnp.clip(jnp.round(mean + sd * w - 0.5), 0.0, n - 1.0)
    tail_n, tail_p = jnp.where(by_tail, n, 100.0), jnp.where(by_tail, p, 0.5)
    upper, value, pmf = jax.lax.cond(
        jnp.any(by_tail),
        lambda: tail(jnp.where(by_tail, start, 50.0), tail_n, tail_p),
        lambda: (jnp.ones_like(by_tail), jnp.zeros_like(u), jnp.zeros_like(u)),
    )
    log_q = n * jnp.log1p(-p)
    x = jnp.where(by_tail, start, 0.0)
    upper = jnp.where(by_tail, upper, True)
    value = jnp.where(by_tail, value, -jnp.expm1(log_q))
    pmf = jnp.where(by_tail, pmf, jnp.exp(log_q))

    def holds(value):
        return jnp.where(upper, value <= v, value >= u)

    down = holds(value)  # the start already satisfies: look below it

    def cond(state):
        step, _, _, _, done = state
        return jnp.any(~done) & (step < _MAX_QUANTILE_STEPS)

    def body(state):
        step, x, value, pmf, done = state
        # Down: the tail at x - 1 (adding or removing P(X = x)).
        below = jnp.where(upper, value + pmf, value - pmf)
        pmf_below = pmf * x / (n - x + 1.0) * q / p
        move_down = down & holds(below) & (x > 0)
        # Up: the tail at x + 1.
        pmf_above = pmf * (n - x) / (x + 1.0) * p / q
        above = jnp.where(upper, value - pmf_above, value + pmf_above)
        go = ~done
        x_new = jnp.where(down, jnp.where(move_down, x - 1.0, x), x + 1.0)
        value_new = jnp.where(down, jnp.where(move_down, below, value), above)
        pmf_new = jnp.where(down, jnp.where(move_down, pmf_below, pmf), pmf_above)
        finished = jnp.where(down, ~move_down, holds(above) | (x + 1.0 >= n))
        x = jnp.where(go, x_new, x)
        value = jnp.where(go, value_new, value)
        pmf = jnp.where(go, pmf_new, pmf)
        return step + 1, x, value, pmf, done | finished

    _, x, _, _, _ = jax.lax.while_loop(cond, body, (0, x, value, pmf, jnp.zeros_like(by_tail)))
    return x


def _quantile_tile(u, v, n, p):
    """The quantile on one tile (``p <= 1/2``; trivial lanes return 0)."""
    trivial = (n <= 0) | (p <= 0)
    safe_p = jnp.where(trivial, 0.5, p)
    safe_n = jnp.where(trivial, 1.0, n)
    x = _quantile_by_search(u, v, safe_n, safe_p, (~trivial) & (safe_n * safe_p >= binomial.INVERSION_MEAN))
    return jnp.where(trivial, 0.0, x)


def binomial_quantile(u: jax.Array, v: jax.Array, n: jax.Array, p: jax.Array, *, tile: int | None = None) -> jax.Array:
    """The quantile ``F^-(u) = min{x : P(X <= x) >= u}`` of ``X ~ Binomial(n, p)``, exactly.

    The level comes twice, as ``u`` and as ``v = 1 - u``, each with full
    relative precision, so that both tails are resolved (a spike probability
    ``P(X >= 1) = 1 - (1 - p)^n`` of 1e-15 is a level ``v`` of 1e-15).  The
    count is the exact integer quantile wherever the tail probabilities that
    decide it are resolved to their accuracy:

    * mean ``n min(p, 1-p) < 10``: sequential search from 0 on the upper tail
      (as in :func:`~htb_jax._src.binomial.binomial_from_words`), its tail
      sums accurate to about ``1e-15`` absolute, so to less than ``1e-13``
      relative where the tail itself is below ``1e-2``;
    * otherwise: a corrected normal start, the smaller tail there from
      :func:`tail`, and unit steps with the pmf recurrence (a few steps: the
      start is within about ``1 + 1 / sd`` of the quantile), the tail to about
      ``1e-13`` relative.

    ``p > 1/2`` uses ``X = n - Y``, ``Y ~ Binomial(n, 1 - p)``, at level ``v``.
    Lanes are grouped by method and run in tiles, as in
    :func:`~htb_jax._src.binomial.binomial_from_words`; under ``vmap`` the batch axes join the lanes,
    so that the tail quadrature runs only for the lanes that need it.

    Args:
      u, v: f64[...] levels in ``(0, 1)`` with ``u + v = 1`` (broadcast).
      n: f64[...] numbers of trials, integers in ``[0, 2^53]`` (larger ``n``
        is used as its float64 value).
      p: f64[...] success probabilities in ``[0, 1]``.
      tile: static number of lanes per tile (default :func:`~htb_jax._src.binomial.default_tile`).

    Returns:
      f64[...] integer-valued quantiles in ``[0, n]``, nondecreasing in ``u``.
    """
    return binomial.lanewise(_binomial_quantile, tile)(*(jnp.asarray(a, _F64) for a in (u, v, n, p)))


def _binomial_quantile(u, v, n, p, *, tile):
    u, v, n, p = jnp.broadcast_arrays(u, v, n, p)
    shape = u.shape
    u, v, n, p = (a.reshape(-1) for a in (u, v, n, p))
    n = jnp.maximum(n, 0.0)
    flip = p > 0.5
    small_p = jnp.where(flip, 1.0 - p, p)
    # X = n - Y: P(X <= x) >= u iff P(Y >= n - x) >= u iff P(Y < n - x) <= v.
    level, complement = jnp.where(flip, v, u), jnp.where(flip, u, v)
    trivial = (n <= 0) | (small_p <= 0)
    method = jnp.where(trivial, 2, jnp.where(n * small_p < binomial.INVERSION_MEAN, 0, 1))
    x = binomial.partitioned(method, tile, _quantile_tile, (0.5, 0.5, 0.0, 0.0), level, complement, n, small_p)
    return jnp.where(flip, n - x, x).reshape(shape)
