"""R-UCB and R-UCB-G (Ashutosh, Nair, Kagrecha and Jagannathan, AISTATS 2021): distribution-oblivious UCB.

Source: "Bandit algorithms: Letting go of logarithmic regret for statistical
robustness" (arXiv 2006.12038), as the authors' public code computes it; the
definition below is the one implemented.  The policy knows no moment, no tail
exponent and no horizon; its confidence width is inflated by a slowly growing
``f(t) = m (log t)^a`` (``a = 0``: the constant ``m``).

1. Rounds ``t <= K`` play arm ``t - 1`` (0-based).
2. Rounds ``t > K`` play the first argmax of ``hat_mu_i + w_i`` with

   * ``"R-UCB"``: ``w_i = sqrt(f(t) log t / n_i)``;
   * ``"R-UCB-G"``: ``w_i = 1 / log f(t) + 16 f(t) log t / n_i``.

3. ``hat_mu_i`` changes only when arm ``i`` is pulled, in that round ``t``:
   ``"mean"``, the sample mean of its ``n_i`` rewards; ``"truncated"``,
   ``(1/n_i) sum_j X_ij 1{|X_ij| <= f(t)}`` over all its raw rewards.

Claimed (the paper): regret arbitrarily close to
logarithmic (``f(T) log T``-type) on every distribution with a finite mean and
variance, without knowing any moment.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import pytree
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, PolicySummary, first_argmax
from htb_jax._src.validation import (
    check_broadcast,
    check_integer,
    check_interval,
    lists_as_arrays,
    real_array,
)

KINDS = ("R-UCB", "R-UCB-G")
ESTIMATORS = ("mean", "truncated")
# The engine takes K >= 2 arms, so the index is first used in round K + 1 >= 3, where f is smallest.
_FIRST_INDEX_ROUND = 3


@pytree.dataclass
class RobustUCBf:
    """R-UCB or R-UCB-G with ``f(t) = m (log t)^a``.

    Rounds ``t <= K`` play arm ``t - 1`` (0-based); rounds ``t > K`` play the
    first argmax of ``hat_mu_i + w_i``, with ``w_i = sqrt(f(t) log t / n_i)``
    (``"R-UCB"``) or ``w_i = 1 / log f(t) + 16 f(t) log t / n_i``
    (``"R-UCB-G"``).  ``hat_mu_i`` changes only when arm ``i`` is pulled: the
    sample mean of its ``n_i`` rewards (``"mean"``), or ``(1/n_i) sum_j X_ij
    1{|X_ij| <= f(t)}`` over all its raw rewards (``"truncated"``).

    Source: Ashutosh, Nair, Kagrecha and Jagannathan (AISTATS 2021, arXiv
    2006.12038), as the authors' public code computes the index.  Claimed:
    regret arbitrarily close to logarithmic (``f(T) log T``-type) on every
    distribution with a finite mean and variance, knowing no moment, no tail
    exponent and no horizon.

    Choices made where the source is silent or differs:

    * Defaults ``m = 2.1, a = 0`` (``f = 2.1``), with ``kind="R-UCB"`` and
      ``estimator="mean"``: the first of the authors' two runs (the other is
      ``m = 1, a = 2``, ``f = (log t)^2``).  ``log`` is natural.
    * Rounds ``t <= K`` play arm ``t - 1``, as step 1 says (the authors'
      code plays arm ``t mod K``: arms ``1, .., K-1`` and then ``0``).
    * ``"truncated"`` keeps every raw reward and truncates at the current level
      ``f(t)`` when the arm is pulled, so a reward dropped once counts again
      when ``f`` has grown past it.  The authors' code instead sets truncated
      rewards to zero in its stored list, so a reward truncated once stays zero
      for good.  With ``a > 0``, ``f(1) = 0``: arm 0's estimate after round 1
      keeps only a reward equal to 0 (it is 0 until arm 0 is pulled again).
    * R-UCB-G needs ``f(t) > 1`` in every round ``t > K`` (``log f(t) > 0``).
      ``K`` is not known when the policy is built (``simulate`` offers no hook
      for it), and ``f`` increases in ``t``, so every grid point must have
      ``f(3) = m (log 3)^a > 1``: exactly the condition for ``K = 2``, the
      fewest arms ``simulate`` takes, and sufficient for every ``K``.
      ``1 / log f(t)`` is the same for every arm in a round, so it never
      changes a decision in exact arithmetic; in float64 it can, when it is
      large (``f`` close to 1) and absorbs differences between indices below
      its last bit, which then tie and go to the lowest index.

    Precision: rewards are the float32 table values; estimates, ``f(t)``, widths
    and indices are float64 (the summary reports the estimates as float32).
    ``"mean"`` keeps a float64 running sum per arm, added in pull order.
    ``"truncated"`` sums the kept rewards of the pulled arm in float64 in XLA's
    reduction order (the same as any other order wherever the float64 sum of
    float32 values is exact, i.e. unless the rewards' magnitudes span more
    than about ``29 - log2 n_i`` binary orders).

    Rewards of ``+-inf``: ``"truncated"`` drops them (``|X| <= f(t)`` is
    false); with ``"mean"`` an arm's estimate becomes ``+-inf`` for good (``+inf``
    and ``-inf`` in one arm give NaN, an index no arm beats: the first NaN is
    played, as ``argmax`` does).  ``f(t)`` that overflows float64 (an absurd
    ``a``) makes every index with a finite estimate ``+inf``: the lowest such
    arm is played.

    Cost of a round: O(K) for the index.  ``"mean"`` updates a running sum:
    O(1), state f64[2, K] (about UCB1's cost).  ``"truncated"`` recomputes the
    pulled arm's estimate from its stored rewards, one masked sum over its row
    of the reward store: O(T) (vectorised), state f32[K, T] + f64[K]; the
    level ``f(t)`` moves every round when ``a > 0`` and a reward dropped once
    may count again, so no running sum serves.

    Attributes:
      kind: ``"R-UCB"`` or ``"R-UCB-G"`` (static).
      estimator: ``"mean"`` or ``"truncated"`` (static).
      m: f[...] multiplier ``m > 0``.
      a: f[...] exponent ``a >= 0`` of ``log t``.

    Examples:
      >>> import jax, jax.numpy as jnp, htb_jax as htb
      >>> RobustUCBf("R-UCB", "truncated", m=jnp.array([1.0, 2.1])[:, None], a=jnp.array([0.0, 2.0])).batch_shape
      (2, 2)
      >>> RobustUCBf("R-UCB-G", m=1.0, a=0.0)  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ValueError: R-UCB-G needs f(t) = m (log t)^a > 1 in every round t > K ...
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.5), num_arms=3, gap=0.5)
      >>> authors = RobustUCBf(m=jnp.array([2.1, 1.0]), a=jnp.array([0.0, 2.0]))  # f = 2.1, (log t)^2
      >>> out = htb.simulate(jax.random.key(0), authors, nu, 1000, num_seeds=4)
      >>> out.pulls[:, 0]  # seed 0: f = (log t)^2 explores more
      Array([[935,  33,  32],
             [554, 184, 262]], dtype=int64)
    """

    anytime = True  # the protocol's declaration: never reads T (htb.frontier.measure reads one run at checkpoints)

    kind: str = pytree.static_field(default="R-UCB")
    estimator: str = pytree.static_field(default="mean")
    m: Any = 2.1
    a: Any = 0.0

    def __post_init__(self):
        lists_as_arrays(self)
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got kind={self.kind!r}.")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}; got estimator={self.estimator!r}.")
        check_interval("m", self.m, 0.0, math.inf, low_closed=False, high_closed=False)
        check_interval("a", self.a, 0.0, math.inf, low_closed=True, high_closed=False)
        check_broadcast("RobustUCBf", m=self.m, a=self.a)
        if self.kind == "R-UCB-G":
            m, a = real_array("m", self.m), real_array("a", self.a)
            if m is not None and a is not None:
                m, a = np.broadcast_arrays(np.asarray(m, np.float64), np.asarray(a, np.float64))
                f3 = m * np.log(float(_FIRST_INDEX_ROUND)) ** a
                bad = ~(np.log(f3) > 0.0)
                if np.any(bad):
                    i = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else ()
                    at = f" (entry {list(i)})" if i else ""
                    raise ValueError(
                        "R-UCB-G needs f(t) = m (log t)^a > 1 in every round t > K (its width has "
                        "1 / log f(t)); K is not known when the policy is built, so f(3) = m (log 3)^a "
                        f"must exceed 1 (K >= 2); got m={m[i]:.6g}, a={a[i]:.6g}{at}, f(3)={f3[i]:.6g}."
                    )

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters, ``()`` for one policy."""
        return tuple(jnp.broadcast_shapes(np.shape(self.m), np.shape(self.a)))

    def level(self, t: jax.Array) -> jax.Array:
        """``f(t) = m (log t)^a`` in float64 (``f(1) = m`` if ``a = 0``, else 0).

        Args:
          t: i64[...] rounds, ``>= 1``.

        Returns:
          f64[broadcast of t and the batch shape].
        """
        check_integer("t", t, 1)  # a traced t (the engine's round) passes
        m = jnp.asarray(self.m, jnp.float64)
        a = jnp.asarray(self.a, jnp.float64)
        return m * jnp.log(jnp.asarray(t).astype(jnp.float64)) ** a

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        k, n = spec.num_arms, spec.max_pulls
        kind, truncated = self.kind, self.estimator == "truncated"

        def act(state, ctx):
            estimates = state[0]
            log_t = jnp.log(ctx.t.astype(jnp.float64))
            f = self.level(ctx.t)
            pulls = jnp.maximum(ctx.pulls, 1).astype(jnp.float64)
            if kind == "R-UCB":
                width = jnp.sqrt(f * log_t / pulls)
            else:
                width = 1.0 / jnp.log(f) + 16.0 * f * log_t / pulls
            first_rounds = (ctx.t - 1).astype(jnp.int32)
            return jnp.where(ctx.t <= k, first_rounds, first_argmax(estimates + width))

        def init(ctx):
            estimates = jnp.zeros(k, jnp.float64)
            if truncated:
                return estimates, jnp.zeros((k, n), jnp.float32)  # each arm's rewards, in pull order
            return estimates, jnp.zeros(k, jnp.float64)  # each arm's reward sum

        def update(state, ctx, arm, reward):
            estimates, store = state
            s = ctx.pulls[arm]
            count = (s + 1).astype(jnp.float64)
            if truncated:
                store = store.at[arm, s].set(reward)
                row = store[arm].astype(jnp.float64)
                keep = (jnp.arange(n) <= s) & (jnp.abs(row) <= self.level(ctx.t))
                value = jnp.sum(jnp.where(keep, row, 0.0)) / count
            else:
                store = store.at[arm].add(reward.astype(jnp.float64))
                value = store[arm] / count
            return estimates.at[arm].set(value), store

        def summary(state, ctx):
            estimates = jnp.where(ctx.pulls > 0, state[0], jnp.nan).astype(jnp.float32)
            return PolicySummary(jnp.int32(-1), jnp.int64(0), estimates)

        return PolicyKernel(init, act, update, summary)
