"""The admissible schedules as unconstrained logits, and the exact search that polishes a tuned one.

**Reparametrisation.**  Unconstrained ``z = (z_alpha, z_q)`` map into the
admissible set of Theorems 2-3 (:func:`theory.alpha_range`: ``[alpha*(eps),
1)``; :func:`theory.q_range`: ``[0, eps/(1+2eps)]``) by

    alpha = lo + (hi - lo) (m + (1 - 2m) sigmoid(z)),   m = 10^-6,

so every iterate lies strictly inside, at distance ``>= m (hi - lo)`` from
both ends, even when ``sigmoid`` saturates to exactly 0 or 1 (a huge learning
rate) or ``z`` is infinite.

**Polish.**  ``(eps, alpha, q)`` act on a run only through the integer
exploration length ``L``, and the exact objective is a sawtooth in ``L``:
between the lengths where some arm's Median-of-Means blocks grow, every
seed's commit is fixed and the regret moves linearly.  Where a tooth is wider
than the widths (on seven Student-t arms at ``T = 2 10^5`` one spans
``alpha`` in ``[0.70, 1)``) the descent follows the slope inside it to an end
of the range; where teeth are narrow it can stop a tooth or two from the
edge; and a minimum can be a needle one length wide (three Pareto(1.5) arms
at ``T = 10^5``: only ``L = 1714``, where the optimal arm alone has blocks of
2).  With ``polish = P > 0`` (the smoothed proxy of ``tune_schedule``)
three passes of the exact objective follow the descent, each keeping the
best point seen: ``P``
schedules across the whole range of ``L`` -- ``alpha`` from 1 down to
``alpha*(eps)`` with ``q`` from 0 up to its maximum when ``q`` is tuned
(``L`` grows along this diagonal from its smallest to its largest admissible
value), ``alpha`` alone at the kept ``q`` otherwise -- then ``P`` values of
``alpha`` over ``+- width[0]`` around the best so far, ``q`` kept, then the
``3K - 1`` :func:`tooth_lengths` of each of the ``max(1, P // (3K - 1))``
teeth around the best (each length reached exactly by
:func:`schedule_for_length`).  The last pass holds the exact minimum over
those teeth when the objective is an increasing function of one instance's
mean regret (``lam = 0``, or a family of one).  The returned schedule is the
best of all (``3 max(P, 3K - 1)`` exact evaluations: the passes are padded to the longest).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import theory
from htb_jax._src.policies.adar_etc import AdaRETC, num_blocks
from htb_jax._src.validation import check_broadcast, check_interval, real_array

MARGIN = 1e-6  # relative distance of every iterate from the ends of the admissible ranges


def _squash(z: jax.Array, lo: jax.Array, hi: jax.Array) -> jax.Array:
    unit = MARGIN + (1.0 - 2.0 * MARGIN) * jax.nn.sigmoid(jnp.asarray(z, jnp.float64))
    unit = jnp.where(jnp.isnan(unit), 0.5, unit)
    return lo + (hi - lo) * unit


def admissible_schedule(z_alpha: Any, z_q: Any, eps: Any) -> tuple[jax.Array, jax.Array]:
    """``(alpha, q)`` strictly inside the admissible ranges for ``eps``, from unconstrained logits.

    Args:
      z_alpha, z_q: f64[...] logits (any real, also ``+-inf``; NaN maps to the middle).
      eps: f64[...] tail exponent in ``(0, 1]`` the schedule is designed for.

    Returns:
      ``(alpha, q)``, f64[broadcast shape]:
      ``alpha in [alpha*(eps) + m w_a, 1 - m w_a]``, ``q in [m w_q, q_max - m w_q]``
      with ``m = 10^-6`` and ``w`` the range widths.
    """
    for name, value in (("z_alpha", z_alpha), ("z_q", z_q), ("eps", eps)):
        real_array(name, value)
    shape = check_broadcast("admissible_schedule", z_alpha=z_alpha, z_q=z_q, eps=eps)
    check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    eps = jnp.asarray(eps, jnp.float64)
    lo_a = (1.0 + eps) / (1.0 + 2.0 * eps)
    hi_q = eps / (1.0 + 2.0 * eps)
    # both of the broadcast shape (z_alpha of shape (2,) and z_q of (3,) gave (2,) and (3,))
    return jnp.broadcast_to(_squash(z_alpha, lo_a, 1.0), shape), jnp.broadcast_to(_squash(z_q, 0.0, hi_q), shape)


def schedule_logits(alpha: Any, q: Any, eps: Any) -> tuple[jax.Array, jax.Array]:
    """The inverse of :func:`admissible_schedule` (values are first clipped into its range)."""
    eps = jnp.asarray(eps, jnp.float64)
    lo_a = (1.0 + eps) / (1.0 + 2.0 * eps)
    hi_q = eps / (1.0 + 2.0 * eps)

    def logit(v, lo, hi):
        unit = (jnp.asarray(v, jnp.float64) - lo) / (hi - lo)
        unit = jnp.clip((unit - MARGIN) / (1.0 - 2.0 * MARGIN), 1e-12, 1.0 - 1e-12)
        return jnp.log(unit) - jnp.log1p(-unit)

    return logit(alpha, lo_a, 1.0), logit(q, 0.0, hi_q)


def tooth_lengths(first_tooth: Any, teeth: int, num_arms: int, horizon: int) -> jax.Array:
    """The lengths where the minimum of each tooth of the exact objective can sit, i64[teeth, 3K - 1].

    Round robin gives arm ``i`` ``floor(L/K) + [i < L mod K]`` pulls, so its
    Median-of-Means blocks (``B_T`` of them) reach ``m`` samples at ``L = (m
    B_T - 1) K + i + 1``; tooth ``m`` is ``[E_m, E_(m+1))``, ``E_m = (m B_T -
    1) K + 1``, where arm 0 has blocks of ``m``.  Its first ``K`` lengths
    each move one arm to blocks of ``m``; then the block sizes, hence every
    seed's commit, stay fixed up to ``E_(m+1) - 1``, and the mean regret on
    fixed seeds grows by ``Delta_(L mod K) - mean committed gap`` per round:
    increments of period ``K``, so its minimum over that stretch sits within
    its first or last ``K`` lengths.  Row ``m``: ``E_m + j``, ``j = 0 .. 2K -
    2``, and ``E_(m+1) - j``, ``j = 1 .. K`` -- the exact minimum over the tooth
    of any increasing function of one instance's mean regret (lengths past
    ``T`` are clipped to ``T``).

    Args:
      first_tooth: i64[] the first ``m >= 1``.
      teeth: static number of teeth.
      num_arms: ``K``.
      horizon: ``T``.
    """
    k = num_arms
    blocks = num_blocks(k, horizon)
    m = jnp.asarray(first_tooth, jnp.int64) + jnp.arange(teeth, dtype=jnp.int64)[:, None]  # [teeth, 1]
    start = (m * blocks - 1) * k + 1
    offsets = jnp.concatenate([jnp.arange(2 * k - 1), blocks * k - jnp.arange(1, k + 1)]).astype(jnp.int64)
    return jnp.minimum(start + offsets, horizon)


def schedule_for_length(length: Any, q: Any, eps: float, num_arms: int, horizon: int, tune_q: bool):
    """``(alpha, q)`` whose exploration length is ``length``, f64 each (the inverse of Algorithm 1, line 1).

    Solves ``ceil(K^q T^beta_alpha) = L - K B_T`` for ``alpha`` at the given
    ``q`` (aiming at ``L - K B_T - 1/2``, half a round from either rounding
    edge).  Where that ``alpha`` leaves ``[alpha*(eps), 1]`` and ``tune_q``,
    ``alpha`` is clipped to the range and ``q`` solved instead, clipped to
    ``[0, eps/(1+2eps)]``; without ``tune_q`` it is returned as solved
    (:func:`schedule_logits` clips it).  A length no admissible schedule
    reaches gives an end of the range.

    Args:
      length: i64[...] target ``L``.
      q: f64[...] the ``q`` to keep.
      eps: design ``eps``.
      num_arms, horizon: ``K`` and ``T``.
      tune_q: whether ``q`` may move.
    """
    lo_a, hi_q = theory.alpha_range(eps)[0], theory.q_range(eps)[1]
    log_k, log_t = np.log(num_arms), np.log(horizon)
    poly = jnp.asarray(length, jnp.int64) - num_arms * num_blocks(num_arms, horizon)
    log_target = jnp.log(jnp.maximum(poly, 1).astype(jnp.float64) - 0.5)
    q = jnp.asarray(q, jnp.float64)
    alpha = 1.0 - (log_target - q * log_k) / log_t * eps / (1.0 + eps)
    if not tune_q:
        return alpha, jnp.broadcast_to(q, alpha.shape)
    clipped = jnp.clip(alpha, lo_a, 1.0)
    solved = jnp.clip((log_target - (1.0 - clipped) * (1.0 + eps) / eps * log_t) / log_k, 0.0, hi_q)
    return clipped, jnp.where(clipped == alpha, q, solved)


def polish(z, value, objective, radius, eps, points: int, tune_q: bool, num_arms: int, horizon: int):
    """Three passes of the exact objective from ``z``, each keeping the best point seen: ``points``
    schedules across the whole range of the exploration length (``alpha`` from 1 to ``alpha*``,
    with ``q`` from 0 to its maximum when tuned), then ``points`` values of ``alpha`` over
    ``+- radius`` (clipped into the admissible range), ``q`` kept, then the :func:`tooth_lengths`
    of the ``max(1, points // (3K - 1))`` teeth around the best (inside the range of ``L``).

    The passes are one loop around one ``lax.map`` of the objective (one copy of it in the
    program, not three): each pass's points are padded to the longest pass's count with copies of
    ``z``, whose values are not read."""
    lo_a, hi_q = theory.alpha_range(eps)[0], theory.q_range(eps)[1]
    grid = jnp.linspace(0.0, 1.0, points)
    teeth = max(1, points // (3 * num_arms - 1))
    size = max(points, teeth * (3 * num_arms - 1))  # points of every pass, the shorter ones padded

    def length(z_alpha, z_q):
        alpha, q = admissible_schedule(z_alpha, z_q, eps)
        return AdaRETC(eps=eps, alpha=alpha, q=q).exploration_length(num_arms, horizon)

    def tooth(lengths):  # the m of [E_m, E_(m+1)): arm 0's block size
        return -(-lengths // num_arms) // num_blocks(num_arms, horizon)

    def across(z):  # the whole range of L
        _, q = admissible_schedule(z[0], z[1], eps)
        return 1.0 - (1.0 - lo_a) * grid, hi_q * grid if tune_q else q

    def around(z):  # alpha over +- radius, q kept
        alpha, q = admissible_schedule(z[0], z[1], eps)
        return alpha + radius * (2.0 * grid - 1.0), q

    def tooth_edges(z):  # the lengths where a tooth's minimum sits, of the teeth around the best
        z_q_ends = (-jnp.inf, jnp.inf) if tune_q else (z[1], z[1])
        first, last = tooth(length(jnp.inf, z_q_ends[0])), tooth(length(-jnp.inf, z_q_ends[1]))
        start = jnp.clip(tooth(length(z[0], z[1])) - (teeth - 1) // 2, first, jnp.maximum(first, last - teeth + 1))
        _, q = admissible_schedule(z[0], z[1], eps)
        return schedule_for_length(tooth_lengths(start, teeth, num_arms, horizon).ravel(), q, eps, num_arms,
                                   horizon, tune_q)

    def candidates(schedules):
        def fn(z):
            z_alpha, z_q = schedule_logits(*schedules(z), eps)  # clips into the ranges
            zs = jnp.stack([z_alpha, jnp.broadcast_to(z_q, z_alpha.shape)], axis=-1)
            count = zs.shape[0]
            return jnp.concatenate([zs, jnp.broadcast_to(z, (size - count, 2))]), jnp.arange(size) < count
        return fn

    def one_pass(i, carry):
        z, value = carry
        zs, real = jax.lax.switch(i, [candidates(f) for f in (across, around, tooth_edges)], z)
        values = jnp.where(real, jax.lax.map(objective, zs), jnp.inf)
        best = jnp.argmin(values)
        better = values[best] < value
        return jnp.where(better, zs[best], z), jnp.where(better, values[best], value)

    return jax.lax.fori_loop(0, 3, one_pass, (z, value))
