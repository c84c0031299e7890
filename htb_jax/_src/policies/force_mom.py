"""ForceMoM (Dewasurendra, 2026 preprint "A Sharp Adaptation Frontier for Heavy-Tailed Bandits with
Unknown Moments"): forced exploration at rate ``t^rho`` and Median-of-Means; the definition is
:class:`ForceMoM`'s docstring."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import mom, pytree
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, PolicySummary, first_argmax
from htb_jax._src.rounding import snapped_ceil
from htb_jax._src.validation import check_integer, check_interval, lists_as_arrays


def initial_pulls(num_arms: int) -> int:
    """``m0 = ceil(16 log(2K + e))``."""
    return math.ceil(16.0 * math.log(2 * num_arms + math.e))


def exploration_target(rho: Any, num_arms: int, t: jax.Array) -> jax.Array:
    """``D_t = max(K m0, ceil(K^(1 - rho) t^rho))``, i64."""
    rho = jnp.asarray(rho, jnp.float64)
    k = jnp.float64(num_arms)
    target = snapped_ceil(k ** (1.0 - rho) * jnp.asarray(t, jnp.float64) ** rho)
    return jnp.maximum(num_arms * initial_pulls(num_arms), target).astype(jnp.int64)


def num_blocks(forced: jax.Array, num_arms: int) -> jax.Array:
    """``q(n)``: the largest odd integer ``<= min(n, 2 ceil(log(2K) + log log(e^e + n)) + 1)``."""
    n = jnp.asarray(forced, jnp.int64)
    ell = jnp.log(jnp.log(math.exp(math.e) + n.astype(jnp.float64)))
    cap = 2 * jnp.ceil(math.log(2 * num_arms) + ell).astype(jnp.int64) + 1
    q = jnp.minimum(n, cap)
    return jnp.where(q % 2 == 0, q - 1, q)


@pytree.dataclass
class ForceMoM:
    """ForceMoM (Dewasurendra, 2026 preprint "A Sharp Adaptation Frontier for Heavy-Tailed Bandits
    with Unknown Moments") with exploration exponent ``rho``.

    ``m0 = ceil(16 log(2K + e))``; the first ``K m0`` rounds pull every arm ``m0``
    times cyclically.  The exploration target is
    ``D_t = max(K m0, ceil(K^(1 - rho) t^rho))``: in round ``t``, if fewer than
    ``D_t`` forced pulls have happened the next arm in cyclic order is forced,
    otherwise the policy exploits the largest Median-of-Means estimate computed
    from each arm's forced samples only.  With ``n`` forced samples,
    ``ell(n) = log log(e^e + n)`` and ``q(n)`` is the largest odd integer
    ``<= min(n, 2 ceil(log(2K) + ell(n)) + 1)``; the first ``q floor(n/q)``
    samples form ``q`` equal blocks and the estimate is their median.

    Claimed (the preprint): fixed-instance regret ``O(T^rho)``, worst case
    ``u^(1/p) T^(1 - rho (p-1)/p)`` with ``p = 1 + eps``; every ``rho <= 2/3`` is on
    the frontier for all ``eps`` at once.

    A round costs O(K); a forced round also recomputes the forced arm's estimate
    from float64 prefix sums (O(q log)).  The estimates are kept rounded to
    float32: two that round to the same float32 (up to a float32 ulp apart,
    ``1.2e-7`` relative) tie, and the exploited arm is the lowest index among
    them.  The block sums are differences of the arm's float64 prefix sums over
    all its forced samples, so one extreme reward reaches every later block:
    after a ``+inf`` their sums are NaN, and the estimate is ``+inf`` or NaN
    once such blocks are half of them or more (a NaN estimate, which ``argmax``
    takes for the largest, is exploited from then on); a finite ``1e17`` among
    rewards near 1 erases the later blocks' sums.  An infinite reward comes only from a law
    whose float32 draws overflow (a large ``scale``) or a user's law.

    Attributes:
      rho: f[...] in ``(0, 1)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> ForceMoM(rho=jnp.array([0.5, 2 / 3])).batch_shape
      (2,)
    """

    anytime = True  # the protocol's declaration: never reads T (htb.frontier.measure reads one run at checkpoints)

    rho: Any

    def __post_init__(self):
        lists_as_arrays(self)
        check_interval("rho", self.rho, 0.0, 1.0, low_closed=False, high_closed=False)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters, ``()`` for one policy."""
        return tuple(np.shape(self.rho))

    def exploration_target(self, num_arms: int, t: Any) -> jax.Array:
        """``D_t = max(K m0, ceil(K^(1 - rho) t^rho))``: the forced pulls due by round ``t``.

        Args:
          num_arms: ``K >= 1``.
          t: rounds, int or int array ``>= 1``, broadcast against ``rho``.

        Returns:
          i64[broadcast(rho.shape, t.shape)].

        Examples:
          >>> ForceMoM(rho=0.5).exploration_target(2, [10, 10**4, 10**6]).tolist()  # K m0 = 62 first
          [62, 142, 1415]
        """
        check_integer("num_arms", num_arms, 1, one=True)
        check_integer("t", t, 1)
        return exploration_target(self.rho, num_arms, t)

    def num_blocks(self, num_arms: int, forced: Any) -> jax.Array:
        """``q(n)``, the Median-of-Means blocks of an arm with ``n`` forced samples (the largest odd
        integer ``<= min(n, 2 ceil(log(2K) + log log(e^e + n)) + 1)``).

        Args:
          num_arms: ``K >= 1``.
          forced: ``n``, int or int array ``>= 1``.

        Returns:
          i64[forced.shape].

        Examples:
          >>> ForceMoM(rho=0.5).num_blocks(2, [1, 4, 100, 10**6]).tolist()
          [1, 3, 7, 11]
        """
        check_integer("num_arms", num_arms, 1, one=True)
        check_integer("forced", forced, 1)
        return num_blocks(forced, num_arms)

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        k, n = spec.num_arms, spec.max_pulls
        max_blocks = 2 * math.ceil(math.log(2 * k) + math.log(math.log(math.exp(math.e) + n))) + 2

        def estimate(prefix, arm, forced):
            """Median of the ``q(n)`` block means of ``arm``'s forced samples (edges only)."""
            blocks = num_blocks(forced, k)
            size = forced // jnp.maximum(blocks, 1)
            b = jnp.arange(max_blocks + 1, dtype=jnp.int64)
            at = prefix[arm, jnp.minimum(b, blocks) * size]
            value = mom.median_of_blocks((at[1:] - at[:-1]) / jnp.maximum(size, 1), jnp.maximum(blocks, 1))
            return jnp.where(blocks >= 1, value, jnp.nan)

        def is_forced(done, ctx):
            return done < exploration_target(self.rho, k, ctx.t)

        def init(ctx):
            prefix = jnp.zeros((k, n + 1), jnp.float64)  # prefix sums of forced samples
            return jnp.int64(0), jnp.zeros(k, jnp.int64), prefix, jnp.full(k, jnp.nan, jnp.float32)

        def act(state, ctx):
            done, _, _, est = state
            forced_arm = (done % k).astype(jnp.int32)
            return jnp.where(is_forced(done, ctx), forced_arm, first_argmax(est))

        def update(state, ctx, arm, reward):
            done, forced, prefix, est = state
            use = is_forced(done, ctx)  # exploitation rewards are never used for estimation
            s = forced[arm]
            # one-element updates that keep the old value when not forced: a select over
            # the whole (K, n + 1) prefix array would make a round O(T)
            sample = jnp.where(use, prefix[arm, s] + reward.astype(jnp.float64), prefix[arm, s + 1])
            prefix = prefix.at[arm, s + 1].set(sample)
            value = jnp.where(use, estimate(prefix, arm, s + 1).astype(est.dtype), est[arm])
            return done + use, forced.at[arm].add(use), prefix, est.at[arm].set(value)

        def summary(state, ctx):
            done, _, _, est = state
            return PolicySummary(jnp.int32(-1), done, est)

        return PolicyKernel(init, act, update, summary)
