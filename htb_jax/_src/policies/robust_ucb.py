"""Robust UCB (Bubeck, Cesa-Bianchi and Lugosi, 2013) with known (or misspecified) moments.

Index policy: play ``argmax_i B_i(t)`` with ``delta = t^-2``, so
``log(1/delta) = 2 log t``; an arm whose estimator is not yet valid has index
``+inf``, and the lowest-index such arm is played.  Under Catoni's validity
``s > 4 log(1/delta) = 8 log t`` arm 0 is therefore played alone until it is
valid, then arm 1, and so on: a short horizon may never play the last arms
(``K = 3``, ``T = 40``: pulls 30, 10, 0).  Three estimators, with the
constants of the paper's Lemmas 1-3 and Proposition 1:

* ``"truncated"`` (known ``(eps, u)``, ``u >= E|X|^(1+eps)``):
  ``mu = (1/s) sum_j X_j 1{|X_j| <= (u j / log(1/delta))^(1/(1+eps))}``,
  ``B = mu + 4 u^(1/(1+eps)) (log(1/delta) / s)^(eps/(1+eps))``;
* ``"mom"`` (known ``(eps, v)``, ``v >= E|X - mu|^(1+eps)``): ``k = floor(min(8
  log(e^(1/8)/delta), s/2))`` blocks of size ``floor(s/k)``, the lower median
  (``ceil(k/2)``-th smallest) of the block means,
  ``B = mu + (12 v)^(1/(1+eps)) (16 log(e^(1/8)/delta) / s)^(eps/(1+eps))``;
* ``"catoni"`` (``eps = 1``, known variance bound ``v``): ``mu`` solves
  ``sum_j psi(a (X_j - mu)) = 0``, ``psi(x) = sign(x) log(1 + |x| + x^2/2)``,
  ``a = sqrt(2 L / (s (v + 2 v L / (s - 2 L))))``, ``L = log(1/delta)``,
  valid for ``s > 4 L``; ``B = mu + 2 sqrt(v L / s)``.

The estimators are exact: the truncation level of every sample and Catoni's
``a`` change with ``t``, so ``"truncated"`` and ``"catoni"`` recompute from all
samples each round, reading the columns up to ``t`` (O(K t) per round).
Catoni's root is re-solved each round by 4 safeguarded Newton steps
started from the previous round's root (O(4 K t)), which reach float64
resolution where the root moves little from one round to the next (a
10^6 reward among 60 samples is absorbed in one round); roots are tracked
from an arm's first sample on, so they have converged long before the arm
becomes valid (with 5 samples, a reward of 1000 leaves 3e-7 after one
round, while ``s > 4 L`` is still far).  A ``v`` far below the arms'
variance makes ``a`` large and the steps can stop short: with ``v = 10^-6``
on Pareto(1.5) arms (infinite variance) a root was 6.4e-8 away after its
round, though no arm was played differently (4 seeds, ``T = 600``).
``"mom"`` keeps float64 prefix sums and caches each arm's estimate: a round
recomputes the pulled arm (O(k log) with ``k <= 1 + 16 log t``), and all arms
only in the rounds where ``floor(1 + 16 log t)`` changes (about ``16 log T``
rounds in all); it keeps the estimates in float32, the rewards' precision, and
adds the float64 width to them.  Its block sums are differences of the arm's
float64 prefix sums over its whole history, so one extreme reward reaches
every later block: after a reward of ``+inf`` their sums are NaN, and the
arm's estimate is ``+inf`` or NaN once such blocks are half of them or more
(its index recomputed when the arm is pulled; a NaN index, which ``argmax``
takes for the largest, is played from then on); a finite one of ``1e17``
among rewards near 1 erases their sums.  An infinite reward comes only from
a law whose float32 draws overflow (a large ``scale``) or a user's law.

The estimates a run reports (``Outcome.estimates``) are those after its last
reward, as round ``T + 1``'s index would compute them (NaN where the estimator
is not yet valid).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import mom, pytree
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, PolicySummary, first_argmax
from htb_jax._src.validation import check_broadcast, check_interval, concrete, given, lists_as_arrays

ESTIMATORS = ("truncated", "mom", "catoni")
_CATONI_STEPS = 4
_COLUMN_CHUNK = 128  # samples per step of the truncated mean's and Catoni's loops over the pulled columns


@pytree.dataclass
class RobustUCB:
    """Robust UCB with a known (or deliberately misspecified) moment bound.

    Bubeck, Cesa-Bianchi and Lugosi (2013): ``argmax_i B_i(t)`` with ``delta =
    t^-2``; the indices of its three estimators are in the API reference's
    "Robust UCB's estimators".  ``u`` and ``v`` lie in ``(0, inf)``.

    Attributes:
      eps: f[...] tail exponent in ``(0, 1]`` (``1`` for Catoni).
      u: f[...] bound on ``E|X|^(1+eps)`` (``"truncated"`` only).
      v: f[...] bound on ``E|X - mu|^(1+eps)`` (``"mom"``, ``"catoni"``).
      estimator: ``"truncated"``, ``"mom"`` or ``"catoni"`` (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> RobustUCB(1.0, v=jnp.array([0.1, 1.0, 10.0]), estimator="mom").batch_shape
      (3,)
    """

    anytime = True  # the protocol's declaration: never reads T (htb.frontier.measure reads one run at checkpoints)

    eps: Any
    u: Any = None
    v: Any = None
    estimator: str = pytree.static_field(default="truncated")

    def __post_init__(self):
        lists_as_arrays(self)
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}; got estimator={self.estimator!r}.")
        check_interval("eps", self.eps, 0.0, 1.0, low_closed=False, high_closed=True)
        needs, other = ("u", "v") if self.estimator == "truncated" else ("v", "u")
        if getattr(self, needs) is None or getattr(self, other) is not None:
            raise ValueError(
                f'RobustUCB(estimator="{self.estimator}") takes {needs}= (and not {other}=); got '
                f"{given(needs, getattr(self, needs))}, {given(other, getattr(self, other))}."
            )
        check_interval(needs, getattr(self, needs), 0.0, math.inf, low_closed=False, high_closed=False)
        check_broadcast("RobustUCB", **{"eps": self.eps, needs: getattr(self, needs)})
        if self.estimator == "catoni":
            eps = concrete(self.eps)  # None where traced
            if eps is not None and np.any(eps != 1.0):
                raise ValueError(f"eps must be 1 for Catoni's estimator (it needs a finite variance); got "
                                 f"eps={float(eps[eps != 1.0].flat[0]):g}.")

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters, ``()`` for one policy."""
        fields = (self.eps, self.u if self.v is None else self.v)
        return tuple(jnp.broadcast_shapes(*(np.shape(f) for f in fields)))

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        make = {"truncated": _truncated_kernel, "mom": _mom_kernel, "catoni": _catoni_kernel}
        return make[self.estimator](self, spec)


def _log_inv_delta(t: jax.Array) -> jax.Array:
    """``log(1/delta) = 2 log t`` for ``delta = t^-2``."""
    return 2.0 * jnp.log(t.astype(jnp.float64))


def _sample_buffer(k: int, n: int) -> jax.Array:
    """f64[K, N]: each arm's samples in pull order (zeros until pulled), ``N`` the ``n`` pulls
    rounded up to whole chunks of ``_COLUMN_CHUNK`` columns."""
    return jnp.zeros((k, -(-n // _COLUMN_CHUNK) * _COLUMN_CHUNK), jnp.float64)


def _fold_columns(x, columns, add, init):
    """``add(acc, cols, index)`` folded over ``x`` (a :func:`_sample_buffer`) in column chunks,
    in order, up to ``columns``: ``cols`` is f64[K, _COLUMN_CHUNK] and ``index`` i64[_COLUMN_CHUNK]
    the 0-based pull index of each column.

    ``columns`` is an upper bound on every arm's pull count that every seed
    shares (the round ``t``), so a round at ``t`` costs ``O(K t)``, not
    ``O(K N)``.  (The seed's own ``max(s)`` would give each seed its own trip
    count, and under ``vmap`` every step a select over the batch: 2.8x slower
    than reading all ``N`` columns at ``K = 2``.)
    """
    k, n = x.shape
    columns = jnp.minimum(jnp.asarray(columns, jnp.int64), n)
    trips = (columns + _COLUMN_CHUNK - 1) // _COLUMN_CHUNK

    def chunk(c, acc):
        first = c * _COLUMN_CHUNK
        cols = jax.lax.dynamic_slice(x, (jnp.int64(0), first), (k, _COLUMN_CHUNK))
        return add(acc, cols, first + jnp.arange(_COLUMN_CHUNK, dtype=jnp.int64))

    return jax.lax.fori_loop(jnp.int64(0), trips, chunk, init)


def _truncated_mean(x, s, eps, u, log_inv_delta, columns):
    """Lemma 1's truncated mean of each arm's first ``s`` samples: f64[K], from the columns of
    ``x`` up to ``columns`` (:func:`_fold_columns`), adding chunk sums in order."""

    def add(total, cols, index):
        j = (index + 1).astype(jnp.float64)
        level = (u * j / log_inv_delta) ** (1.0 / (1.0 + eps))
        keep = (j <= s[:, None]) & (jnp.abs(cols) <= level)
        return total + jnp.sum(jnp.where(keep, cols, 0.0), axis=-1)

    total = _fold_columns(x, columns, add, jnp.zeros(x.shape[0], jnp.float64))
    return total / jnp.maximum(s, 1)


def _psi(x):
    return jnp.sign(x) * jnp.log1p(jnp.abs(x) + 0.5 * x * x)


def _catoni_root(x, s, a, start, columns):
    """Root of ``f(mu) = sum_{j<s} psi(a (x_j - mu))`` (decreasing in ``mu``) per arm: f64[K].

    Safeguarded Newton from ``start`` (last round's root: the root moves little
    from round to round), inside the bracket ``[min x, max x]`` where
    ``f >= 0`` and ``f <= 0`` at the ends; a step that leaves the current
    bracket is replaced by bisection.  ``_CATONI_STEPS`` iterations reach
    float64 resolution from such a start.  Every pass reads the columns of
    ``x`` up to ``columns`` (:func:`_fold_columns`), adding chunk sums in order.
    """
    k = x.shape[0]

    def over_columns(add, init):
        return _fold_columns(x, columns, lambda acc, cols, index: add(acc, cols, index < s[:, None]), init)

    lo, hi = over_columns(
        lambda acc, cols, used: (jnp.minimum(acc[0], jnp.min(jnp.where(used, cols, jnp.inf), axis=-1)),
                                 jnp.maximum(acc[1], jnp.max(jnp.where(used, cols, -jnp.inf), axis=-1))),
        (jnp.full(k, jnp.inf), jnp.full(k, -jnp.inf)),
    )

    def step(_, state):
        m, lo, hi = state

        def add(acc, cols, used):
            y = a[:, None] * (cols - m[:, None])
            dpsi = (1.0 + jnp.abs(y)) / (1.0 + jnp.abs(y) + 0.5 * y * y)
            return (acc[0] + jnp.sum(jnp.where(used, _psi(y), 0.0), axis=-1),
                    acc[1] + jnp.sum(jnp.where(used, dpsi, 0.0), axis=-1))

        f, g = over_columns(add, (jnp.zeros(k), jnp.zeros(k)))
        slope = -a * g
        lo = jnp.where(f >= 0.0, m, lo)
        hi = jnp.where(f <= 0.0, m, hi)
        newton = m - f / slope
        inside = (newton >= lo) & (newton <= hi) & (f != 0.0)
        return jnp.where(f == 0.0, m, jnp.where(inside, newton, 0.5 * (lo + hi))), lo, hi

    inside = (start >= lo) & (start <= hi)  # False for NaN
    m, _, _ = jax.lax.fori_loop(0, _CATONI_STEPS, step, (jnp.where(inside, start, 0.5 * (lo + hi)), lo, hi))
    return jnp.where(s > 0, m, jnp.nan)


def _truncated_kernel(policy: RobustUCB, spec: EngineSpec) -> PolicyKernel:
    """Truncated mean: every round recomputes every arm from its samples (O(K t))."""
    k, n = spec.num_arms, spec.max_pulls
    eps = jnp.asarray(policy.eps, jnp.float64)
    u = jnp.asarray(policy.u, jnp.float64)

    def index(x, pulls, t):
        s = pulls.astype(jnp.float64)
        big_l = _log_inv_delta(t)
        mean = _truncated_mean(x, s, eps, u, big_l, t)  # no arm has more than t pulls by round t
        width = 4.0 * u ** (1.0 / (1.0 + eps)) * (big_l / jnp.maximum(s, 1.0)) ** (eps / (1.0 + eps))
        return mean, jnp.where(pulls > 0, mean + width, jnp.inf)

    def init(ctx):
        return _sample_buffer(k, n)

    def act(x, ctx):
        return first_argmax(index(x, ctx.pulls, ctx.t)[1])

    def update(x, ctx, arm, reward):
        return x.at[arm, ctx.pulls[arm]].set(reward.astype(jnp.float64))

    def summary(x, ctx):
        mean, _ = index(x, ctx.pulls, ctx.horizon + 1)  # after the last reward, as Catoni's and "mom"'s
        return PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.where(ctx.pulls > 0, mean, jnp.nan).astype(jnp.float32))

    return PolicyKernel(init, act, update, summary)


def _catoni_kernel(policy: RobustUCB, spec: EngineSpec) -> PolicyKernel:
    """Catoni's M-estimator: each round re-solves every arm's root (O(K t) per Newton step)."""
    k, n = spec.num_arms, spec.max_pulls
    v = jnp.asarray(policy.v, jnp.float64)

    def scale(pulls, t):
        """``a`` of Lemma 3 and validity ``s > 4 log(1/delta)``; ``a`` at ``s = 4 L + 1`` when invalid."""
        s = pulls.astype(jnp.float64)
        big_l = _log_inv_delta(t)
        valid = (s > 4.0 * big_l) & (pulls > 0)
        safe_s = jnp.where(valid, s, 4.0 * big_l + 1.0)
        a = jnp.sqrt(2.0 * big_l / (safe_s * (v + 2.0 * v * big_l / (safe_s - 2.0 * big_l))))
        return a, valid

    def init(ctx):
        # samples in pull order; each arm's root for the coming round (tracked while invalid too)
        return _sample_buffer(k, n), jnp.full(k, jnp.nan, jnp.float64)

    def act(state, ctx):
        _, roots = state
        _, valid = scale(ctx.pulls, ctx.t)
        width = 2.0 * jnp.sqrt(v * _log_inv_delta(ctx.t) / jnp.maximum(ctx.pulls, 1))
        return first_argmax(jnp.where(valid, roots + width, jnp.inf))

    def update(state, ctx, arm, reward):
        x, roots = state
        x = x.at[arm, ctx.pulls[arm]].set(reward.astype(jnp.float64))
        pulls = ctx.pulls.at[arm].add(1)
        a, _ = scale(pulls, ctx.t + 1)
        return x, _catoni_root(x, pulls, a, roots, ctx.t)  # no arm has more than t pulls after round t

    def summary(state, ctx):
        _, roots = state  # each solved for round T + 1, after the last reward
        _, valid = scale(ctx.pulls, ctx.horizon + 1)
        return PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.where(valid, roots, jnp.nan).astype(jnp.float32))

    return PolicyKernel(init, act, update, summary)


def _mom_blocks(t: jax.Array, s: jax.Array) -> jax.Array:
    """``k = floor(min(8 log(e^(1/8) / delta), s / 2)) = floor(min(1 + 16 log t, s / 2))``."""
    from_t = jnp.floor(1.0 + 16.0 * jnp.log(t.astype(jnp.float64)))
    return jnp.minimum(from_t, jnp.floor(s.astype(jnp.float64) / 2.0)).astype(jnp.int64)


def _mom_kernel(policy: RobustUCB, spec: EngineSpec) -> PolicyKernel:
    """Median of means with prefix sums and cached estimates (see the module docstring)."""
    k, n = spec.num_arms, spec.max_pulls
    max_blocks = int(math.floor(1.0 + 16.0 * math.log(max(n, 1)))) + 1
    eps = jnp.asarray(policy.eps, jnp.float64)
    v = jnp.asarray(policy.v, jnp.float64)

    def estimate(prefix, arm, s, blocks):
        """Lower median of ``blocks`` block means of ``arm``'s first ``s`` samples: f32[].

        Gathers only the ``blocks + 1`` prefix sums at the block edges."""
        size = s // jnp.maximum(blocks, 1)
        b = jnp.arange(max_blocks + 1, dtype=jnp.int64)
        at = prefix[arm, jnp.minimum(b, blocks) * size]
        sums = at[1:] - at[:-1]
        value = mom.median_of_blocks(sums / jnp.maximum(size, 1), jnp.maximum(blocks, 1))
        return jnp.where(blocks >= 1, value, jnp.nan)

    def init(ctx):
        return jnp.zeros((k, n + 1), jnp.float64), jnp.full(k, jnp.nan, jnp.float32)

    def act(state, ctx):
        _, est = state
        s = ctx.pulls.astype(jnp.float64)
        log_term = 2.0 + 32.0 * jnp.log(ctx.t.astype(jnp.float64))  # 16 log(e^(1/8) / delta)
        width = (12.0 * v) ** (1.0 / (1.0 + eps)) * (log_term / jnp.maximum(s, 1.0)) ** (eps / (1.0 + eps))
        valid = _mom_blocks(ctx.t, ctx.pulls) >= 1
        return first_argmax(jnp.where(valid, est.astype(jnp.float64) + width, jnp.inf))

    def update(state, ctx, arm, reward):
        prefix, est = state
        s = ctx.pulls[arm]
        prefix = prefix.at[arm, s + 1].set(prefix[arm, s] + reward.astype(jnp.float64))
        pulls = ctx.pulls.at[arm].add(1)
        nxt = ctx.t + 1
        est = est.at[arm].set(estimate(prefix, arm, pulls[arm], _mom_blocks(nxt, pulls[arm])))
        changed = jnp.floor(16.0 * jnp.log(nxt.astype(jnp.float64))) != jnp.floor(
            16.0 * jnp.log(ctx.t.astype(jnp.float64))
        )

        def refresh(_):
            arms = jnp.arange(k)
            return jax.vmap(estimate, in_axes=(None, 0, 0, 0))(prefix, arms, pulls, _mom_blocks(nxt, pulls))

        return prefix, jax.lax.cond(changed, refresh, lambda e: e, est)

    def summary(state, ctx):
        _, est = state
        return PolicySummary(jnp.int32(-1), jnp.int64(0), est)

    return PolicyKernel(init, act, update, summary)
