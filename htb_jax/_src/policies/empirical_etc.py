"""Empirical-mean ETC: AdaR-ETC's schedule, committing on the plain sample mean."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from htb_jax._src import pytree
from htb_jax._src.policies.adar_etc import ExploreThenCommit, etc_kernel


@pytree.dataclass
class EmpiricalETC(ExploreThenCommit):
    """AdaR-ETC's exploration schedule with the empirical mean instead of Median-of-Means.

    The control that shows why robust estimation matters: identical
    exploration, one estimator changed.  Same arguments and named forms
    (``calibrated``, ``order_free``) as :class:`AdaRETC`.

    Algorithm 1 with its line 1 unchanged: rounds ``1..L_T`` pull the arms
    round-robin, ``L_T = min(T, K B_T + ceil(K^q T^beta))`` with ``beta = (1 -
    alpha)(1 + eps)/eps`` (``B_T = ceil(8 log(K T^3))`` is still counted in the
    exploration); if ``L_T < T`` the policy commits to the largest sample mean
    of the exploration rewards (Median-of-Means with one block), ties to the
    lowest index.

    Attributes:
      eps: f[...] tail exponent the schedule is designed for, in ``(0, 1]``.
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``: the distribution-free exponent
        of ``T`` the schedule is designed for (Theorem 2; the guarantee is Median-of-Means',
        which this control does not have).
      q: f[...] in ``[0, eps/(1+2eps)]``: the exploration exponent of ``K``.
    """

    def estimator_blocks(self, blocks: jax.Array) -> jax.Array:
        """The mean is the Median-of-Means with a single block."""
        return jnp.ones_like(blocks)

    def kernel(self, spec):
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""
        return etc_kernel(self, spec)
