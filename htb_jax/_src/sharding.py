"""One compiled program per sweep, on one device or with the seeds sharded over several."""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np


@functools.lru_cache(maxsize=128)
def seed_sharded_program(kernel: Callable, static, devices: tuple, seed_axis: int) -> Callable:
    """``jit`` of ``kernel(key, policy, instance, horizons, first_seed, static=static)``.

    With several devices the seed axis (``seed_axis`` of every output) is
    sharded over a one-axis ``Mesh``: device ``d`` simulates
    ``static.num_seeds`` consecutive seeds from ``first_seed + d *
    static.num_seeds``.  A seed's numbers depend on its global index alone, so
    the result is the same on any number of devices.

    Args:
      kernel: the per-device program.
      static: its hashable static configuration (with ``num_seeds`` per device).
      devices: the devices (a tuple, for caching).
      seed_axis: position of the seed axis in the outputs.
    """
    if len(devices) == 1:
        return jax.jit(functools.partial(kernel, static=static))
    mesh = jax.sharding.Mesh(np.asarray(devices), ("seeds",))

    def on_devices(key, policy, instance, horizons, first_seed):
        index = jax.lax.axis_index("seeds").astype(jnp.int64)
        return kernel(key, policy, instance, horizons, first_seed + index * static.num_seeds, static=static)

    on_devices.__name__ = f"{kernel.__name__}_on_devices"
    return jax.jit(
        jax.shard_map(
            on_devices,
            mesh=mesh,
            in_specs=(jax.sharding.PartitionSpec(),) * 5,
            out_specs=jax.sharding.PartitionSpec(*([None] * seed_axis), "seeds"),
            check_vma=False,
        )
    )
