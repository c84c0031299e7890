"""MR-APE: minimax-optimal adaptively perturbed exploration (Lee and Lim, 2022)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from htb_jax._src import perturbations, pytree
from htb_jax._src.p_robust import check_p_and_c, horizon_log, index_kernel
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel
from htb_jax._src.validation import check_broadcast, lists_as_arrays


@pytree.dataclass
class MRAPE:
    """MR-APE of Lee and Lim (IEEE TNNLS 2022, "Minimax optimal bandits for heavy tail rewards").

    Rounds ``t <= K`` play arm ``t - 1``; then ``argmax_a y_hat_a + 2 c G_a
    log(max(T / (K n_a), 1)) / n_a^(1 - 1/p)`` (ties to the lowest index),
    where ``y_hat_a`` is the p-robust estimate of arm ``a``'s ``n_a`` rewards
    with scale ``c_e = c`` (the API reference's "The p-robust estimate") and ``G_a`` is drawn
    afresh for every arm in every round from a bounded law: U[0, 1]
    (``"uniform"``, default), Bernoulli(1/2) on ``{0, 1}`` (``"bernoulli"``),
    U[-1, 1] (``"symmetric_uniform"``) or Rademacher on ``{-1, 1}``
    (``"rademacher"``).  Once ``n_a >= T / K`` the bonus is 0.

    Needs the moment order ``p = 1 + eps`` (assumed) and the horizon ``T``
    (the engine's); no moment bound ``u`` (the paper's section "Heavy-Tailed Bandits" counts this
    line among the algorithms that need ``u``; the authors' code does not
    use it, and neither does this).  Choices where the source is silent: the
    perturbations come from the engine's per-round stream (``ctx.uniforms(K)``,
    word ``j`` for arm ``j``: a function of the seed and the round alone), as
    ``G = U``, ``1{U > 1/2}``, ``2U - 1`` or ``sign(U - 1/2)``; the estimate
    uses all of an arm's rewards, recomputed when it is pulled.

    Claimed: minimax-optimal ``O(K^(1 - 1/p) T^(1/p))`` distribution-free
    regret, with no dependence on the moment bound.

    Precision: estimates, perturbations and indices in float64 (rewards are
    the table's float32 values).  An estimate sums its ``psi`` values in XLA's
    reduction order, so two arms with the same rewards pulled in other orders
    can get estimates an ulp apart (a discrete law's exact tie, broken by that
    ulp and not by the lowest index).  Cost of a round: ``K`` words of the
    round stream, an ``O(K)`` index and argmax, and the pulled arm's estimate
    from its ``n_a`` rewards (``O(n_a)``, in chunks of 256).

    Attributes:
      p: f[...] moment order in ``(1, 2]``.
      c: f[...] scale ``c > 0`` of the estimator and of the bonus.
      perturbation: the law of ``G`` (static).

    Examples:
      >>> MRAPE(1.5, c=0.5, perturbation="rademacher").batch_shape
      ()
    """

    anytime = False  # the protocol's declaration: reads T (htb.frontier.measure runs it once per horizon)

    p: Any
    c: Any = 1.0
    perturbation: str = pytree.static_field(default="uniform")

    def __post_init__(self):
        lists_as_arrays(self)
        perturbations.check_law("MRAPE", self.perturbation, perturbations.BOUNDED_LAWS, None, None)
        check_p_and_c(self.p, self.c)
        check_broadcast("MRAPE", p=self.p, c=self.c)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters, ``()`` for one policy."""
        return tuple(jnp.broadcast_shapes(np.shape(self.p), np.shape(self.c)))

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        p = jnp.asarray(self.p, jnp.float64)
        c = jnp.asarray(self.c, jnp.float64)
        law = self.perturbation

        def bonus(ctx, n):
            g = perturbations.quantile(law, *ctx.uniforms(spec.num_arms))
            return 2.0 * c * g * horizon_log(ctx.horizon, spec.num_arms, n) / n ** (1.0 - 1.0 / p)

        return index_kernel(spec, p, c, bonus)
