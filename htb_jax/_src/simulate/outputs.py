"""The arrangement of a program's outputs into an :class:`~htb_jax._src.outcome.Outcome`.

Each path's program returns flat axes (configurations g-major, a padded seed
axis); these jitted functions give the Outcome its leading axes grid +
instance + horizon + seed: the fast path's one small program per output, the
engine's one program.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.outcome import Outcome


def _arrange_fast_path(parts, grid_shape, instance_shape, horizon_shape, seed_shape, paired=False) -> Outcome:
    """[*seed, F, G*H, ...] arrays -> grid + instance + horizon + seed (+ trailing), a padded seed
    axis cut to ``seed_shape``; ``paired``: grid + horizon + seed, grid point ``i`` on instance ``i``
    (``G = F``).  One small program per output: XLA:CPU compiles seven such programs in under half
    the time it takes to compile the seven transpositions as one."""
    return Outcome(*(_arrange(a, grid_shape, instance_shape, horizon_shape, seed_shape, paired) for a in parts))


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4, 5))
def _arrange(a, grid_shape, instance_shape, horizon_shape, seed_shape, paired):
    """One output of :func:`_arrange_fast_path`."""
    lead = len(seed_shape)
    f = int(np.prod(instance_shape, dtype=int))
    g = int(np.prod(grid_shape, dtype=int))
    h = int(np.prod(horizon_shape, dtype=int))
    if lead:
        a = a[: seed_shape[0]]
    trailing = a.shape[lead + 2 :]
    a = a.reshape(*seed_shape, f, g, h, *trailing)
    order = (lead + 1, lead, lead + 2, *range(lead), *range(lead + 3, a.ndim))
    a = jnp.transpose(a, order)
    if paired:
        return a[jnp.arange(g), jnp.arange(f)].reshape(*grid_shape, *horizon_shape, *seed_shape, *trailing)
    return a.reshape(*grid_shape, *instance_shape, *horizon_shape, *seed_shape, *trailing)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _arrange_engine(outputs, shape, record_arms: bool):
    """The engine's ``[G, F, H, S_padded, ...]`` outputs -> the Outcome with leading axes ``shape``
    (grid + instance + horizon + seed), the padded seeds cut, one program."""
    num_seeds = shape[-1]
    curve, pulls, committed, exploration, estimates, checkpoints, arms = (a[:, :, :, :num_seeds] for a in outputs)
    parts = (curve[..., -1], pulls, committed, exploration, estimates, checkpoints, curve)
    outcome = Outcome(*(a.reshape(*shape, *a.shape[4:]) for a in parts))
    if record_arms:
        outcome = dataclasses.replace(outcome, arms=arms.reshape(*shape, arms.shape[-1]))
    return outcome
