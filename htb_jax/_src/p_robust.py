"""The p-robust estimator of Lee, Yang, Lim and Oh (2020), and the index policies built on it.

For a moment order ``p`` in ``(1, 2]`` (``p = 1 + eps``) and a scale
``c_e > 0``, the estimate of rewards ``Y_1 .. Y_n`` is

    y_hat = c_e n^(1/p - 1) sum_k psi_p(Y_k / (c_e n^(1/p))),
    psi_p(x) = sign(x) log(1 + |x| + b_p |x|^p),
    b_p = [2 r^(1 - 2/p) + r^(2 - 2/p)]^(-p/2),  r = (2 - p) / (p - 1).

At ``p = 2`` (``r = 0``) the bracket is ``2 r^0 + r^1 = 2``, so ``b_2 = 1/2``
and ``psi_2`` is Catoni's influence function; the formula is continuous
there (``r^(1 - 2/p) = exp((p - 2)/p log r) -> 1`` as ``p -> 2``), and
``b_p -> 1`` as ``p -> 1``.  ``b_2`` is set exactly rather than evaluated as
``0^0``.

``psi_p`` is ``log1p(|x| + b_p exp(p log|x|))`` (three transcendental
functions per sample: it is the whole cost of an estimate), and ``log b_p + p
log|x|`` where ``|x|^p`` overflows float64 (there ``1 + |x|`` lies below the
last bit), so it is finite for every finite ``x``.  At ``p = 2`` (where
``|x|^2`` is ``x x``, as Python's ``abs(x) ** 2`` computes it) it is
``log1p(|x| + x^2 / 2)``, one transcendental function instead of three, and
for ``|x| >= 2^500`` ``log1p(m^2 / 2 - 1) + 2 e log 2`` with ``|x| = m 2^e``,
``1 <= m < 2``: ``log(x^2 / 2)``, to which ``1 + |x|`` adds nothing, through
the same ``log1p``.  ``psi_p(+-inf) = +-inf``, so an infinite reward makes its
arm's estimate infinite (NaN if the arm holds both signs).

The index policies APE2, MR-UCB and MR-APE share :func:`index_kernel`: the
first ``K`` rounds play arm ``t - 1``; later rounds play the first argmax of
``y_hat_a + bonus_a``, where each policy supplies its bonus.  The pulled arm's
estimate is recomputed from all of its rewards when it is pulled (its
normalisation depends on ``n``), in chunks of :data:`CHUNK` rewards, so a
round costs ``O(K)`` for the index plus ``O(CHUNK ceil(n_a / CHUNK))`` for the
estimate.  Everything is float64; the rewards are the table's float32 values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, PolicySummary, RoundContext, first_argmax
from htb_jax._src.validation import check_interval

CHUNK = 256  # rewards per step of the estimator's loop over a pulled arm's history
_LOG_2 = math.log(2.0)


def b_p(p: jax.typing.ArrayLike) -> jax.Array:
    """``b_p = [2 r^(1 - 2/p) + r^(2 - 2/p)]^(-p/2)``, ``r = (2 - p)/(p - 1)``; ``b_2 = 1/2``.

    Args:
      p: f64[...] moment order in ``(1, 2]``.

    Returns:
      f64[...].

    Examples:
      >>> float(b_p(2.0)), round(float(b_p(1.5)), 6)
      (0.5, 0.438691)
    """
    p = jnp.asarray(p, jnp.float64)
    two = p == 2.0
    r = jnp.where(two, 1.0, (2.0 - p) / (p - 1.0))
    bracket = 2.0 * r ** (1.0 - 2.0 / p) + r ** (2.0 - 2.0 / p)
    return jnp.where(two, 0.5, bracket ** (-p / 2.0))


def psi_p(x: jax.typing.ArrayLike, p: jax.typing.ArrayLike, b: jax.typing.ArrayLike | None = None) -> jax.Array:
    """``psi_p(x) = sign(x) log(1 + |x| + b_p |x|^p)``, without overflow for finite ``x``.

    Args:
      x: f64[...] the argument.
      p: f64[...] moment order in ``(1, 2]`` (broadcast against ``x``).
      b: f64[...] ``b_p`` if already computed (else from ``p``).

    Returns:
      f64[...]: odd in ``x``; ``+-inf`` at ``x = +-inf``.

    Examples:
      >>> import math
      >>> float(psi_p(1.0, 2.0)) == math.log(2.5)
      True
    """
    x = jnp.asarray(x, jnp.float64)
    p = jnp.asarray(p, jnp.float64)
    b = b_p(p) if b is None else jnp.asarray(b, jnp.float64)
    shape = jnp.broadcast_shapes(x.shape, p.shape, b.shape)

    def general():
        a = jnp.abs(x)
        log_a = jnp.log(a)
        inner = a + b * jnp.exp(p * log_a)  # |x| + b_p |x|^p; log(0) = -inf gives 0 at x = 0
        # Where inner overflows (|x|^p > 1e308), 1 is below its last bit: log|x| + log1p(b_p |x|^(p-1)), which
        # keeps |x| (as large as b_p |x|^p for p near 1), and where that overflows too, log b_p + p log|x|.
        tail = b * jnp.exp((p - 1.0) * log_a)
        big = jnp.where(jnp.isinf(tail), jnp.log(b) + p * log_a, log_a + jnp.log1p(tail))
        out = jnp.sign(x) * jnp.where(jnp.isinf(inner), big, jnp.log1p(inner))
        return jnp.broadcast_to(out, shape)

    def two():
        return jnp.broadcast_to(jnp.sign(x) * _log1p_abs_plus_b_square(jnp.abs(x), b), shape)

    def mixed():
        return jnp.where(p == 2.0, two(), general())

    # Elementwise, psi is two() where p = 2 and general() elsewhere; the switch runs only what is needed
    # (under vmap with a batched p, all three and a select).
    which = jnp.any(p == 2.0).astype(jnp.int32) + jnp.all(p == 2.0).astype(jnp.int32)
    return jax.lax.switch(which, (general, mixed, two))


def _log1p_abs_plus_b_square(a: jax.Array, b: jax.Array) -> jax.Array:
    """``log(1 + a + b a^2)`` for ``a >= 0`` (``psi_2``), without overflow: ``log1p(b m^2 - 1) + 2 e log 2``
    for ``a = m 2^e >= 2^500`` (``a / (b a^2) < 2^-499``), ``inf`` at ``a = inf``."""
    big = a >= 2.0**500
    bits = jax.lax.bitcast_convert_type(a, jnp.uint64)
    exponent = ((bits >> 52) & 0x7FF).astype(jnp.int64) - 1023
    m = jax.lax.bitcast_convert_type((bits & jnp.uint64(2**52 - 1)) | jnp.uint64(1023 << 52), jnp.float64)  # [1, 2)
    out = jnp.log1p(jnp.where(big, b * m * m - 1.0, a + b * a * a))
    out = out + jnp.where(big, (2 * exponent).astype(jnp.float64) * _LOG_2, 0.0)
    return jnp.where(jnp.isinf(a), jnp.inf, out)


def p_robust_mean(
    samples: jax.Array,
    count: jax.typing.ArrayLike,
    p: jax.typing.ArrayLike,
    scale: jax.typing.ArrayLike,
    chunk: int | None = None,
) -> jax.Array:
    """The p-robust estimate of the first ``count`` entries of ``samples``.

    ``y_hat = c_e n^(1/p - 1) sum_{k < n} psi_p(Y_k / (c_e n^(1/p)))`` with
    ``n = count`` and ``c_e = scale``.  Entries at ``count`` and beyond are
    ignored (a masked buffer); the loop runs over ``ceil(count / chunk)``
    chunks only, so the cost is ``O(count)`` rounded up to a chunk.  One
    buffer; ``jax.vmap`` it for several.

    Args:
      samples: f32[N] or f64[N] the buffer (read as float64).
      count: i[] number of valid entries, ``0 <= count <= N``.
      p: f64[] moment order in ``(1, 2]``.
      scale: f64[] ``c_e > 0``.
      chunk: static entries per loop step (default: the whole buffer).

    Returns:
      f64[]: the estimate; NaN where ``count = 0``.

    Examples:
      >>> import jax.numpy as jnp
      >>> y = p_robust_mean(jnp.array([1.0, 2.0, 3.0, 1e6]), 3, 2.0, 10.0)
      >>> round(float(y), 4)  # close to the mean of 1, 2, 3; the 1e6 is masked out
      1.9941
    """
    samples = jnp.asarray(samples)
    size = samples.shape[-1]
    chunk = size if chunk is None else max(1, min(int(chunk), size))
    pad = (-size) % chunk
    if pad:
        samples = jnp.pad(samples, (0, pad))
    read = lambda start: jax.lax.dynamic_slice(samples, (start,), (chunk,))  # noqa: E731
    return _estimate(read, chunk, size + pad, count, p, scale)


def _estimate(read: Callable[[jax.Array], jax.Array], chunk: int, size: int, count, p, scale) -> jax.Array:
    """:func:`p_robust_mean` over chunks ``read(start)`` (f[chunk], entries ``start ..``) of a buffer of ``size``."""
    count = jnp.asarray(count, jnp.int64)
    p = jnp.asarray(p, jnp.float64)
    n = count.astype(jnp.float64)
    width = jnp.asarray(scale, jnp.float64) * jnp.maximum(n, 1.0) ** (1.0 / p)  # c_e n^(1/p)
    b = b_p(p)

    def step(i, total):
        start = i * chunk
        x = read(start).astype(jnp.float64)
        used = start + jnp.arange(chunk, dtype=jnp.int64) < count
        return total + jnp.sum(jnp.where(used, psi_p(jnp.where(used, x, 0.0) / width, p, b), 0.0))

    if chunk >= size:  # one chunk: no loop
        total = step(jnp.int64(0), jnp.float64(0.0))
    else:
        total = jax.lax.fori_loop(jnp.int64(0), (count + chunk - 1) // chunk, step, jnp.float64(0.0))
    return jnp.where(count > 0, width / jnp.maximum(n, 1.0) * total, jnp.nan)


def check_p_and_c(p: Any, c: Any) -> None:
    """``ValueError`` unless ``p`` lies in ``(1, 2]`` and ``c`` in ``(0, inf)`` (APE2, MR-UCB, MR-APE)."""
    check_interval("p", p, 1.0, 2.0, low_closed=False, high_closed=True, where="(p = 1 + eps, the moment order)")
    check_interval("c", c, 0.0, math.inf, low_closed=False, high_closed=False)


def horizon_log(horizon: jax.Array, num_arms: int, pulls: jax.Array) -> jax.Array:
    """``log(max(T / (K n_a), 1))`` of MR-UCB and MR-APE, f64[K] (0 once ``n_a >= T / K``).

    Args:
      horizon: i64[] ``T``.
      num_arms: ``K``.
      pulls: i64[K] ``n_a >= 1``.
    """
    ratio = horizon.astype(jnp.float64) / (num_arms * pulls).astype(jnp.float64)
    return jnp.log(jnp.maximum(ratio, 1.0))


Bonus = Callable[[RoundContext, jax.Array], jax.Array]


def index_kernel(spec: EngineSpec, p: jax.Array, estimator_scale: jax.Array, bonus: Bonus) -> PolicyKernel:
    """The engine kernel of an index policy on p-robust estimates (APE2, MR-UCB, MR-APE).

    Rounds ``t <= K`` play arm ``t - 1``; later rounds play the first argmax of
    ``y_hat_a + bonus(ctx, n)_a`` (ties to the lowest index).  The pulled
    arm's estimate is recomputed from all its rewards with ``n_a + 1``.

    State: the rewards f32[K, N'] in pull order (``N'`` = the largest
    horizon rounded up to :data:`CHUNK`) and the estimates f64[K].

    Args:
      spec: static engine sizes.
      p: f64[] moment order in ``(1, 2]``.
      estimator_scale: f64[] ``c_e`` of the estimator.
      bonus: ``(ctx, n f64[K]) -> f64[K]``, the term added to ``y_hat`` in
        rounds ``t > K`` (``n >= 1`` there; the perturbations are drawn
        from ``ctx.uniforms``).

    Returns:
      The :class:`PolicyKernel`; its summary reports the estimates (f32, NaN
      where an arm was never pulled).
    """
    k = spec.num_arms
    size = -(-max(spec.max_pulls, 1) // CHUNK) * CHUNK
    chunk = min(CHUNK, size)
    p = jnp.asarray(p, jnp.float64)
    estimator_scale = jnp.asarray(estimator_scale, jnp.float64)

    def init(ctx):
        return jnp.zeros((k, size), jnp.float32), jnp.full(k, jnp.nan, jnp.float64)

    def act(state, ctx):
        _, est = state
        n = jnp.maximum(ctx.pulls, 1).astype(jnp.float64)
        chosen = first_argmax(est + bonus(ctx, n))
        return jnp.where(ctx.t <= k, (ctx.t - 1).astype(jnp.int32), chosen)

    def update(state, ctx, arm, reward):
        rewards, est = state
        n = ctx.pulls[arm] + 1
        rewards = rewards.at[arm, n - 1].set(reward.astype(jnp.float32))
        read = lambda start: jax.lax.dynamic_slice(rewards, (arm.astype(jnp.int64), start), (1, chunk))[0]  # noqa: E731
        value = _estimate(read, chunk, size, n, p, estimator_scale)
        return rewards, est.at[arm].set(value)

    def summary(state, ctx):
        _, est = state
        return PolicySummary(jnp.int32(-1), jnp.int64(0), est.astype(jnp.float32))

    scratch = 8 * (4 * chunk + 8 * k)
    return PolicyKernel(init, act, update, summary, scratch)
