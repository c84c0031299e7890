"""Anytime AdaR-ETC by the doubling trick (the paper's first open direction).

Epoch ``k = 0, 1, 2, ...`` lasts ``l_k = ceil(g^k)`` rounds (``g`` the growth
factor, 2 for the doubling trick) and runs AdaR-ETC afresh with horizon
``l_k``: ``L(l_k)`` round-robin rounds (starting from arm 0), then a commit to
the largest Median-of-Means estimate of *this epoch's* exploration samples
with ``B(l_k)`` blocks.  Nothing carries over between epochs; the policy never
looks at ``T``.  Each commit computes its estimates from the reward table with
the fast path's routine; a round otherwise costs O(K).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from htb_jax._src import pytree
from htb_jax._src.policies.adar_etc import ExploreThenCommit, commit_estimates, commit_scratch_bytes
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, PolicySummary, first_argmax
from htb_jax._src.rounding import snapped_ceil
from htb_jax._src.validation import check_integer, check_interval

MIN_GROWTH = 1.1
MAX_GROWTH = 16.0


@pytree.dataclass
class AnytimeAdaRETC(ExploreThenCommit):
    """AdaR-ETC restarted on epochs of geometrically growing length.

    Same schedule arguments and named forms (``calibrated``, ``order_free``) as
    :class:`AdaRETC`, plus ``growth``.  Epoch ``k`` runs Algorithm 1 with horizon
    ``l_k = ceil(g^k)``: ``L(l_k) = min(l_k, K B(l_k) + ceil(K^q l_k^beta))``
    round-robin rounds, then a commit to the largest Median-of-Means estimate of
    that epoch's samples (``B(l_k)`` blocks).

    Attributes:
      eps: f[...] tail exponent each epoch's schedule is designed for, in ``(0, 1]``.
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``: the distribution-free exponent
        of ``T`` of each epoch's schedule (Theorem 2), ``beta = (1 - alpha)(1 + eps)/eps``.
      q: f[...] in ``[0, eps/(1+2eps)]``: the exploration exponent of ``K``.
      growth: f[...] epoch growth factor ``g`` in ``[1.1, 16]`` (default 2).
    """

    anytime = True  # the protocol's declaration: never reads T (htb.frontier.measure reads one run at checkpoints)

    growth: Any = 2.0

    def __post_init__(self):
        super().__post_init__()
        check_interval("growth", self.growth, MIN_GROWTH, MAX_GROWTH, low_closed=True, high_closed=True)

    def epochs(self, max_pulls: int) -> jax.Array:
        """The lengths of the epochs an engine run of at most ``max_pulls`` rounds may enter,
        i64[..., count]: enough epochs at the smallest growth factor.  Each epoch that starts by
        round ``max_pulls`` has its own length ``l_k = ceil(g^k)``, even where that reaches past
        ``max_pulls`` (its schedule is AdaR-ETC's with horizon ``l_k``, whatever the run's horizon);
        the epochs after it, which no run enters, are given length 1."""
        check_integer("max_pulls", max_pulls, 1, one=True)
        max_pulls = int(max_pulls)
        count = math.ceil(math.log(max_pulls + 1) / math.log(MIN_GROWTH)) + 2
        k = jnp.arange(count, dtype=jnp.float64)
        growth = jnp.asarray(self.growth, jnp.float64)[..., None]
        lengths = snapped_ceil(growth**k)  # f64: past int64 (inf) for the late epochs at a large growth
        # Rounds before each epoch, counting each earlier epoch as at most max_pulls + 1 (exact in
        # int64): fewer than max_pulls exactly when the true count is.
        capped = jnp.minimum(lengths, max_pulls + 1).astype(jnp.int64)
        before = jnp.cumsum(capped, axis=-1) - capped
        # An epoch entered has l_k <= g l_{k-1} + 1 <= 16 max_pulls + 1 rounds: an int64.
        return jnp.where(before < max_pulls, lengths, 1.0).astype(jnp.int64)

    def commit_horizons(self, horizons: jax.Array) -> jax.Array:
        """Every epoch length a run up to ``max(horizons)`` may commit in: :meth:`epochs`, i64[..., count]."""
        return self.epochs(int(jnp.max(jnp.asarray(horizons))))

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        k = spec.num_arms
        lengths = self.epochs(spec.max_pulls)
        count = lengths.shape[-1]
        ends = jnp.cumsum(lengths)  # last round of each epoch

        def epoch(t):
            index = jnp.searchsorted(ends, t, side="left")
            length = lengths[index]
            local = t - (ends[index] - length)  # 1-based round within the epoch
            return length, local, self.exploration_length(k, length)

        def init(ctx):
            return jnp.int32(-1), jnp.full(k, jnp.nan, jnp.float32), jnp.zeros(k, jnp.int64)

        def act(state, ctx):
            committed, _, _ = state
            _, local, explore = epoch(ctx.t)
            return jnp.where(local <= explore, ((local - 1) % k).astype(jnp.int32), committed)

        def update(state, ctx, arm, reward):
            del arm, reward
            committed, estimates, first_pulls = state
            length, local, explore = epoch(ctx.t)
            first_pulls = jnp.where(local == 1, ctx.pulls, first_pulls)

            def commit(_):
                est = commit_estimates(self, ctx.table, first_pulls, explore, length, spec)
                return first_argmax(est), est

            committed, estimates = jax.lax.cond(
                (local == explore) & (explore < length), commit, lambda s: s, (committed, estimates)
            )
            return committed, estimates, first_pulls

        def summary(state, ctx):
            committed, estimates, _ = state
            # Exploration rounds up to the horizon: full epochs, then the current one.
            last = ctx.horizon
            index = jnp.searchsorted(ends, last, side="left")
            explored = jax.vmap(lambda n: self.exploration_length(k, n))(lengths)
            before = jnp.sum(jnp.where(jnp.arange(count) < index, explored, 0))
            _, local, explore = epoch(last)
            return PolicySummary(committed, before + jnp.minimum(local, explore), estimates)

        return PolicyKernel(init, act, update, summary, commit_scratch_bytes(spec))
