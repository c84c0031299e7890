"""APE2: adaptively perturbed exploration with a p-robust estimator (Lee, Yang, Lim and Oh, 2020)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from htb_jax._src import perturbations, pytree
from htb_jax._src.p_robust import check_p_and_c, index_kernel
from htb_jax._src.policy_protocol import EngineSpec, PolicyKernel
from htb_jax._src.validation import check_broadcast, lists_as_arrays


@pytree.dataclass
class APE2:
    """APE2 of Lee, Yang, Lim and Oh (NeurIPS 2020, arXiv 2010.12866), as the authors' code computes it.

    Rounds ``t <= K`` play arm ``t - 1``; then ``argmax_a y_hat_a + c G_a /
    n_a^(1 - 1/p)`` (ties to the lowest index), where ``y_hat_a`` is the
    p-robust estimate of arm ``a``'s ``n_a`` rewards with scale ``c_e = c``
    (the API reference's "The p-robust estimate") and ``G_a ~ F`` is drawn afresh for every
    arm in every round.  ``F`` is Frechet(``p^2/(p-1)``, 1) by default (the
    authors' runs), or Pareto(minimum ``scale``, index ``shape``),
    Weibull(``shape``, ``scale``), Gumbel(``scale``) or Gamma(``shape``,
    ``scale``).

    Needs the moment order ``p = 1 + eps`` (assumed) and no moment bound
    ``u``: the paper's section "Heavy-Tailed Bandits" counts this line among the algorithms that
    need ``u``, but the authors' code does not use it, and neither does this.

    Choices where the source is silent: the perturbations come from the
    engine's per-round stream (``ctx.uniforms(K)``, word ``j`` for arm ``j``:
    a function of the seed and the round alone) by inverse CDF from the small
    side of ``(U, 1 - U)``, so the heavy tails are exact down to ``2^-65``;
    the estimate uses all of an arm's rewards, recomputed when it is pulled;
    the Pareto, Weibull and Gamma laws have no default shape (``shape=`` is
    required), every law's ``scale`` defaults to 1, and the Gamma shape is
    restricted to ``[0.1, 1000]`` (the range its quantile is tested on).

    Claimed: regret ``O(K^(1 - 1/p) T^(1/p))`` up to logarithmic factors with
    the optimal perturbation, independent of the moment bound.

    Precision: estimates, perturbations and indices in float64 (rewards are
    the table's float32 values).  An estimate sums its ``psi`` values in XLA's
    reduction order, so two arms with the same rewards pulled in other orders
    can get estimates an ulp apart (a discrete law's exact tie, broken by that
    ulp and not by the lowest index).  Cost of a round: ``K`` words of the
    round stream and their quantiles (Gamma: eight incomplete-gamma
    evaluations each), an ``O(K)`` argmax, and the pulled arm's estimate from
    its ``n_a`` rewards (``O(n_a)``, in chunks of 256).

    Attributes:
      p: f[...] moment order in ``(1, 2]``.
      c: f[...] scale ``c > 0`` of the estimator and of the perturbation.
      perturbation: the law of ``G`` (static): ``"frechet"``, ``"pareto"``,
        ``"weibull"``, ``"gumbel"`` or ``"gamma"``.
      shape: f[...] the law's shape (Frechet: ``p^2/(p-1)`` if ``None``;
        Gumbel: none).
      scale: f[...] the law's scale (Pareto: its minimum); ``None``: 1.

    Examples:
      >>> import jax.numpy as jnp
      >>> APE2(p=jnp.array([1.5, 2.0])[:, None], c=jnp.array([0.5, 1.0, 2.0])).batch_shape
      (2, 3)
      >>> APE2(1.5, perturbation="gamma", shape=2.0, scale=0.5).perturbation
      'gamma'
    """

    anytime = True  # the protocol's declaration: never reads T (htb.frontier.measure reads one run at checkpoints)

    p: Any
    c: Any = 1.0
    perturbation: str = pytree.static_field(default="frechet")
    shape: Any = None
    scale: Any = None

    def __post_init__(self):
        lists_as_arrays(self)
        perturbations.check_law("APE2", self.perturbation, perturbations.HEAVY_LAWS, self.shape, self.scale,
                                shape_default=True)
        check_p_and_c(self.p, self.c)
        check_broadcast("APE2", p=self.p, c=self.c, shape=self.shape, scale=self.scale)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters, ``()`` for one policy."""
        fields = [f for f in (self.p, self.c, self.shape, self.scale) if f is not None]
        return tuple(jnp.broadcast_shapes(*(np.shape(f) for f in fields)))

    def kernel(self, spec: EngineSpec) -> PolicyKernel:
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        p = jnp.asarray(self.p, jnp.float64)
        c = jnp.asarray(self.c, jnp.float64)
        shape = p * p / (p - 1.0) if self.shape is None else self.shape
        law = self.perturbation

        def bonus(ctx, n):
            g = perturbations.quantile(law, *ctx.uniforms(spec.num_arms), shape, self.scale)
            return c * g / n ** (1.0 - 1.0 / p)

        return index_kernel(spec, p, c, bonus)
