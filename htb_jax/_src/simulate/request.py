"""A validated simulation: what both paths build their programs from."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from htb_jax._src.distributions import Distribution


@dataclasses.dataclass(frozen=True)
class Request:
    """One call of :func:`~htb_jax._src.simulate.program.simulate`, validated and flattened.

    Attributes:
      key: the threefry key.
      policy: the policy grid (batch shape ``G``).
      instance: the instance (batch shape ``I + (K,)``).
      horizons: i64[H] the flat horizons; horizon_shape: their shape ``H``.
      num_seeds: ``S``.
      flat: the flat policy grid [G] (:func:`~htb_jax._src.simulate.schedule._flatten`).
      flat_instance: the instances, parameters [F, K].
      pull_chunk: static streaming step; max_blocks: static length of the block axis.
      num_checkpoints, first_seed, seed_chunk, devices, threads: as for ``simulate``.
      memory_budget: bytes per device.
      paired: grid point ``i`` runs on instance ``i`` alone (``G == I``).
    """

    key: jax.Array
    policy: Any
    instance: Distribution
    horizons: np.ndarray
    horizon_shape: tuple[int, ...]
    num_seeds: int
    flat: Any
    flat_instance: Distribution
    pull_chunk: int
    max_blocks: int
    num_checkpoints: int
    first_seed: int
    seed_chunk: int | None
    devices: tuple[jax.Device, ...]
    memory_budget: int
    threads: int | None
    paired: bool

    @property
    def num_arms(self) -> int:
        """``K``."""
        return self.flat_instance.batch_shape[-1]

    @property
    def output_shape(self) -> tuple[int, ...]:
        """The leading axes of every output: ``G + I + H + (S,)``, or ``G + H + (S,)`` paired."""
        instances = () if self.paired else self.instance.batch_shape[:-1]
        return (*self.policy.batch_shape, *instances, *self.horizon_shape, self.num_seeds)
