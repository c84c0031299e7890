"""The instance families of the worst-case search: Theorem 1's two-point family and Pareto arms."""

from __future__ import annotations

import dataclasses
import functools

import jax.numpy as jnp
import numpy as np

from htb_jax._src.distributions import Pareto
from htb_jax._src.grids import powers_of_ten
from htb_jax._src.instances import lower_bound_pair
from htb_jax._src.validation import check_instance_type, check_integer, check_interval, check_nonempty


def _check_family(name: str, family) -> None:
    check_instance_type(name, family, (SpikeFamily, ParetoFamily), "a SpikeFamily or ParetoFamily")


@dataclasses.dataclass(frozen=True)
class SpikeFamily:
    """Theorem 1's two-point family on ``K`` arms: spike probabilities on a log grid.

    Attributes:
      num_arms: ``K``.
      gap: ``Delta``.
      spike_probs: the grid of ``beta`` (arm 1's spike probability).
      fixed_spike: ``beta`` of the fixed instance for distribution-dependent fits
        (0.9: a single pull already tells the arms apart with probability 0.9,
        so its regret is the exploration cost, ``Delta n_0``, at every ``T``).
    """

    num_arms: int = 2
    gap: float = 1.0
    spike_probs: tuple[float, ...] = powers_of_ten(-10.0, 0.0, 0.5) + (0.5,)
    fixed_spike: float = 0.9

    def validate(self) -> None:
        check_integer("num_arms", self.num_arms, 2)
        check_interval("gap", self.gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_nonempty("spike_probs", self.spike_probs)
        check_interval("spike_probs", list(self.spike_probs), 0.0, 1.0, low_closed=False, high_closed=True)
        check_interval("fixed_spike", self.fixed_spike, 0.0, 1.0, low_closed=False, high_closed=True)

    @property
    def num_members(self) -> int:
        """``F``, the members of the worst-case search."""
        return len(self.spike_probs)

    def instances(self):
        """TwoPoint of batch shape ``(F + 1, K)``: the family, then the fixed instance."""
        return _spike_instances(self.num_arms, self.gap, (*self.spike_probs, self.fixed_spike))


@functools.cache
def _spike_instances(num_arms: int, gap: float, betas: tuple[float, ...]):
    return lower_bound_pair(num_arms, gap, jnp.asarray(betas, jnp.float64))[1]


@dataclasses.dataclass(frozen=True)
class ParetoFamily:
    """Heavy-tailed members of the worst-case search: equal-gap Pareto arms, gaps x tail indices.

    Arm 0 has mean ``Delta``, the others mean 0, all shifted Pareto with tail
    index ``a`` (``E|X|^(1+eps)`` finite iff ``1 + eps < a``; members without
    the moment have ``U_eps = inf`` and drop out of the worst case for that
    ``eps``).  No closed-form block sums: simulated pull by pull, so the
    horizons are limited by ``L_T / K <= 2^32`` and by the cost ``O(L_T)``.

    Attributes:
      num_arms: ``K``.
      gaps: the grid of ``Delta``.
      shapes: the grid of tail indices ``a > 1``.
      fixed_gap, fixed_shape: the fixed instance (distribution-dependent fits).
    """

    num_arms: int = 2
    gaps: tuple[float, ...] = powers_of_ten(-4.5, 1.01, 0.5)
    shapes: tuple[float, ...] = (1.75, 2.5, 4.0)
    fixed_gap: float = 0.5
    fixed_shape: float = 3.0

    def validate(self) -> None:
        check_integer("num_arms", self.num_arms, 2)
        for name in ("gaps", "shapes"):
            check_nonempty(name, getattr(self, name))
        check_interval("gaps", list(self.gaps), 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("shapes", list(self.shapes), 1.0, np.inf, low_closed=False, high_closed=False)
        check_interval("fixed_gap", self.fixed_gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("fixed_shape", self.fixed_shape, 1.0, np.inf, low_closed=False, high_closed=False)

    @property
    def num_members(self) -> int:
        """``F = len(shapes) * len(gaps)``."""
        return len(self.shapes) * len(self.gaps)

    def instances(self):
        """Pareto of batch shape ``(F + 1, K)``: shape-major members, then the fixed instance."""
        shape, gap = (np.asarray(a, np.float64).ravel() for a in np.meshgrid(self.shapes, self.gaps, indexing="ij"))
        shape = jnp.asarray(np.append(shape, self.fixed_shape))
        gap = jnp.asarray(np.append(gap, self.fixed_gap))
        arm0 = jnp.arange(self.num_arms) == 0
        return Pareto(loc=jnp.where(arm0, gap[:, None], 0.0), shape=jnp.broadcast_to(shape[:, None], (shape.size, self.num_arms)))
