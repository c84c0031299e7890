"""The arrangement of a program's outputs into an :class:`~htb_jax._src.outcome.Outcome`.

Each path's program returns flat axes (configurations g-major, a padded seed
axis); these functions give the Outcome its leading axes grid + instance +
horizon + seed.  Outputs computed on a CPU are arranged by NumPy, with no
program to compile (XLA:CPU took about 0.06 s per output and shape, 0.4 s of
each new simulation's first call), and placed with ``jax.device_put``
(``jnp.asarray`` of a NumPy array compiles an identity program per shape and
dtype); elsewhere, and under a transformation, by jitted programs: the fast
path's one small program per output, the engine's one program.  The
arrangement moves data only, so both give the same bits.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.outcome import Outcome


def _on_host(arrays) -> bool:
    """Whether every array is a NumPy array (as several processes gather them) or a concrete jax
    array on CPU devices (not a tracer, not on an accelerator)."""
    return all(isinstance(a, np.ndarray) or (not isinstance(a, jax.core.Tracer) and
                                             all(d.platform == "cpu" for d in a.devices())) for a in arrays)


def _arrange_fast_path(parts, grid_shape, instance_shape, horizon_shape, seed_shape, paired=False) -> Outcome:
    """[*seed, F, G*H, ...] arrays -> grid + instance + horizon + seed (+ trailing), a padded seed
    axis cut to ``seed_shape``; ``paired``: grid + horizon + seed, grid point ``i`` on instance ``i``
    (``G = F``).  On a CPU by NumPy; elsewhere one small program per output (on XLA:CPU, where it
    was measured, seven such programs compiled in under half the time of the seven transpositions
    as one)."""
    shapes = (grid_shape, instance_shape, horizon_shape, seed_shape, paired)
    if _on_host(parts):
        return Outcome(*(jax.device_put(_arranged(np, np.asarray(a), *shapes)) for a in parts))
    return Outcome(*(_arrange(a, *shapes) for a in parts))


def _arranged(xp, a, grid_shape, instance_shape, horizon_shape, seed_shape, paired):
    """One output of :func:`_arrange_fast_path`, by the array namespace ``xp`` (NumPy or jax.numpy).
    Shapes go to ``reshape`` as tuples: NumPy's takes no empty argument list (``run_on_rewards`` of a
    scalar policy and horizon has no leading axis)."""
    lead = len(seed_shape)
    f = int(np.prod(instance_shape, dtype=int))
    g = int(np.prod(grid_shape, dtype=int))
    h = int(np.prod(horizon_shape, dtype=int))
    if lead:
        a = a[: seed_shape[0]]
    trailing = a.shape[lead + 2 :]
    a = a.reshape((*seed_shape, f, g, h, *trailing))
    order = (lead + 1, lead, lead + 2, *range(lead), *range(lead + 3, a.ndim))
    a = xp.transpose(a, order)
    if paired:
        return a[xp.arange(g), xp.arange(f)].reshape((*grid_shape, *horizon_shape, *seed_shape, *trailing))
    return a.reshape((*grid_shape, *instance_shape, *horizon_shape, *seed_shape, *trailing))


_arrange = jax.jit(functools.partial(_arranged, jnp), static_argnums=(1, 2, 3, 4, 5))


def _arrange_engine(outputs, shape, record_arms: bool) -> Outcome:
    """The engine's ``[G, F, H, S_padded, ...]`` outputs -> the Outcome with leading axes ``shape``
    (grid + instance + horizon + seed), the padded seeds cut: by NumPy on a CPU, else one program."""
    if _on_host(outputs):
        return jax.device_put(_engine_arranged([np.asarray(a) for a in outputs], shape, record_arms))
    return _arrange_engine_program(outputs, shape, record_arms)


def _engine_arranged(outputs, shape, record_arms: bool) -> Outcome:
    """:func:`_arrange_engine` on NumPy or jax arrays (slices and reshapes alone)."""
    num_seeds = shape[-1]
    curve, pulls, committed, exploration, estimates, checkpoints, arms = (a[:, :, :, :num_seeds] for a in outputs)
    parts = (curve[..., -1], pulls, committed, exploration, estimates, checkpoints, curve)
    outcome = Outcome(*(a.reshape((*shape, *a.shape[4:])) for a in parts))
    if record_arms:
        outcome = dataclasses.replace(outcome, arms=arms.reshape((*shape, arms.shape[-1])))
    return outcome


_arrange_engine_program = jax.jit(_engine_arranged, static_argnums=(1, 2))
