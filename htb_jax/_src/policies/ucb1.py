"""UCB1 (Auer, Cesa-Bianchi and Fischer, 2002): the naive baseline for heavy tails."""

from __future__ import annotations

import jax.numpy as jnp

from htb_jax._src import pytree
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel, PolicySummary, first_argmax


@pytree.dataclass
class UCB1:
    """UCB1: play ``argmax_i mean_i + sqrt(2 log t / s_i)``, each arm once first.

    Assumes rewards in ``[0, 1]``; on heavy tails it is the baseline that
    breaks.  A round costs O(K): running sums, and the index computed as
    ``(sum_i + sqrt(2 log t * s_i)) / s_i``, one division and one square root
    per arm.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Gaussian(loc=0.0, scale=0.5), num_arms=3, gap=0.5)
      >>> out = htb.simulate(jax.random.key(0), htb.UCB1(), nu, 1000, num_seeds=4)
      >>> out.regret.shape, out.regret_curve.shape
      ((4,), (4, 16))
    """

    anytime = True  # the protocol's declaration: never reads T (htb.frontier.measure reads one run at checkpoints)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape, always ``()`` (the policy has no parameters to batch)."""
        return ()

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros(k, jnp.float64)  # reward sums

        def act(sums, ctx):
            s = jnp.maximum(ctx.pulls, 1).astype(jnp.float64)
            log_t = jnp.log(ctx.t.astype(jnp.float64))
            index = jnp.where(ctx.pulls > 0, (sums + jnp.sqrt(2.0 * log_t * s)) / s, jnp.inf)
            return first_argmax(index)

        def update(sums, ctx, arm, reward):
            return sums.at[arm].add(reward.astype(jnp.float64))

        def summary(sums, ctx):
            means = sums / jnp.maximum(ctx.pulls, 1)
            means = jnp.where(ctx.pulls > 0, means, jnp.nan).astype(jnp.float32)
            return PolicySummary(jnp.int32(-1), jnp.int64(0), means)

        return PolicyKernel(init, act, update, summary)
