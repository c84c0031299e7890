"""MR-UCB: minimax-optimal robust UCB with a p-robust estimator (Lee and Lim, 2022)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from htb_jax._src import pytree
from htb_jax._src.p_robust import check_p_and_c, horizon_log, index_kernel
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel
from htb_jax._src.validation import check_broadcast, lists_as_arrays

ESTIMATOR_SCALE = 0.1  # c_e of MR-UCB's estimator (the authors' code)


@pytree.dataclass
class MRUCB:
    """MR-UCB of Lee and Lim (IEEE TNNLS 2022, "Minimax optimal bandits for heavy tail rewards").

    Rounds ``t <= K`` play arm ``t - 1``; then ``argmax_a y_hat_a + c
    log(max(T / (K n_a), 1)) / n_a^(1 - 1/p)`` (ties to the lowest index),
    where ``y_hat_a`` is the p-robust estimate of arm ``a``'s ``n_a`` rewards
    with the fixed scale ``c_e = 0.1`` (the API reference's "The p-robust estimate"), as the
    authors' code computes it.  Once ``n_a >= T / K`` the bonus is 0 and the
    index is the estimate alone.

    Needs the moment order ``p = 1 + eps`` (assumed) and the horizon ``T``
    (the engine's); no moment bound ``u`` (the paper's section "Heavy-Tailed Bandits" counts this
    line among the algorithms that need ``u``; the authors' code does not
    use it, and neither does this).  Choices where the source is silent: the
    estimate uses all of an arm's rewards, recomputed when it is pulled.

    Claimed: minimax-optimal ``O(K^(1 - 1/p) T^(1/p))`` distribution-free
    regret, with no dependence on the moment bound.

    Precision: estimates and indices in float64 (rewards are the table's
    float32 values).  An estimate sums its ``psi`` values in XLA's reduction
    order, so two arms with the same rewards pulled in other orders can get
    estimates an ulp apart (a discrete law's exact tie, broken by that ulp and
    not by the lowest index).  Cost of a round: an ``O(K)`` index and argmax,
    and the pulled arm's estimate from its ``n_a`` rewards (``O(n_a)``, in
    chunks of 256).

    Attributes:
      p: f[...] moment order in ``(1, 2]``.
      c: f[...] scale ``c > 0`` of the bonus.

    Examples:
      >>> import jax.numpy as jnp
      >>> MRUCB(p=jnp.array([1.2, 1.6, 2.0])).batch_shape
      (3,)
    """

    anytime = False  # the protocol's declaration: reads T (htb.frontier.measure runs it once per horizon)

    p: Any
    c: Any = 1.0

    def __post_init__(self):
        lists_as_arrays(self)
        check_p_and_c(self.p, self.c)
        check_broadcast("MRUCB", p=self.p, c=self.c)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters, ``()`` for one policy."""
        return tuple(jnp.broadcast_shapes(np.shape(self.p), np.shape(self.c)))

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        p = jnp.asarray(self.p, jnp.float64)
        c = jnp.asarray(self.c, jnp.float64)

        def bonus(ctx, n):
            return c * horizon_log(ctx.horizon, spec.num_arms, n) / n ** (1.0 - 1.0 / p)

        return index_kernel(spec, p, jnp.float64(ESTIMATOR_SCALE), bonus)
