"""The engine path: any policy round by round, through :mod:`htb_jax._src.engine`.

Every policy but :class:`AdaRETC` and :class:`EmpiricalETC`, or any policy
with ``engine=True`` or ``record_arms=True``, runs here.  This module sizes
the engine (:class:`~htb_jax._src.engine.EngineSpec`, with a static bound on
an ETC commit's block sizes) and builds its program
(:func:`prepare_engine_path`); AdaR-ETC through the engine equals the fast
path bit for bit.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from htb_jax._src import engine as engine_lib
from htb_jax._src import mom
from htb_jax._src.distributions import Distribution
from htb_jax._src.memory import MemoryPlan
from htb_jax._src.policies.adar_etc import ExploreThenCommit
from htb_jax._src.sharding import gather
from htb_jax._src.simulate.outputs import _arrange_engine
from htb_jax._src.simulate.schedule import _schedule_maxima
from htb_jax._src.validation import check_integer

MAX_ENGINE_HORIZON = 2**31 - 1


def _commit_block_size_bound(policy: Any, horizons: np.ndarray, num_arms: int) -> int | None:
    """The engine's static bound on an ETC commit's block sizes (``EngineSpec.max_block_size``):
    the largest block size over the flat policy's ``commit_horizons``, rounded by
    :func:`~htb_jax._src.mom.static_block_sizes`; ``None`` for a policy without such commits."""
    if not isinstance(policy, ExploreThenCommit):
        return None
    commits = policy.commit_horizons(horizons)
    return mom.static_block_sizes(int(_schedule_maxima(policy, commits, num_arms)[2]))


def prepare_engine_path(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizons: np.ndarray,
    horizon_shape: tuple[int, ...],
    num_seeds: int,
    *,
    flat: Any,
    flat_instance: Distribution,
    pull_chunk: int,
    max_blocks: int,
    num_checkpoints: int,
    first_seed: int,
    seed_chunk: int | None,
    devices: tuple[jax.Device, ...],
    memory_budget: int,
    record_arms: bool,
    threads: int | None,
) -> tuple[MemoryPlan, Any]:
    """The engine's program for a validated simulation (see
    :func:`~htb_jax._src.simulate.program.prepare`).

    Args:
      key: the threefry key.
      policy: the policy grid (shape ``G``).
      instance: the instance (batch shape ``I + (K,)``).
      horizons: i64[H] the flat horizons, at most :data:`MAX_ENGINE_HORIZON`
        (else a ``ValueError``); horizon_shape: their shape ``H``.
      num_seeds: ``S``.
      flat: the flat policy grid [G] (:func:`~htb_jax._src.simulate.schedule._flatten`).
      flat_instance: the instances, parameters [F, K].
      pull_chunk: static streaming step; max_blocks: static length of the block axis.
      num_checkpoints, first_seed, seed_chunk, devices, record_arms, threads: as for
        :func:`~htb_jax._src.simulate.program.simulate`.
      memory_budget: bytes per device.

    Returns:
      ``(plan, run)``: the :class:`MemoryPlan`; ``run()`` gives the Outcome
      with leading axes ``G + I + H + (S,)``, ``run.lower()`` the lowered program.
    """
    k = flat_instance.batch_shape[-1]
    check_integer("horizon (T)", horizons, 1, maximum=MAX_ENGINE_HORIZON)
    spec = engine_lib.EngineSpec(k, int(horizons.max()), pull_chunk, max_blocks,
                                 _commit_block_size_bound(flat, horizons, k))
    program, args, plan = engine_lib.prepare_engine(
        key, flat, flat_instance, horizons, num_seeds, spec=spec, num_checkpoints=num_checkpoints,
        first_seed=first_seed, seed_chunk=seed_chunk, devices=devices, memory_budget=memory_budget,
        record_arms=record_arms, threads=threads,
    )
    instance_shape = instance.batch_shape[:-1]

    def run_engine():
        shape = (*policy.batch_shape, *instance_shape, *horizon_shape, num_seeds)
        return _arrange_engine(gather(program(*args)), shape, record_arms)

    run_engine.lower = lambda: program.lower(*args)
    return plan, run_engine
