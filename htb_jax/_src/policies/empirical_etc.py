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
    """

    def estimator_blocks(self, blocks: jax.Array) -> jax.Array:
        """The mean is the Median-of-Means with a single block."""
        return jnp.ones_like(blocks)

    def kernel(self, spec):
        return etc_kernel(self, spec)
