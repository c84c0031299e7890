"""Validation of a simulation's arguments at the boundary, in Python, before tracing.

:func:`check_simulation` checks every argument of
:func:`~htb_jax._src.simulate.program.simulate` (and of ``memory_plan``) that
does not depend on the path taken; the path-specific limits (pulls per arm of
the per-pull sampler, the engine's largest horizon) are checked where the path
is prepared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_float32_resolution, check_instance
from htb_jax._src.instances import gaps as instance_gaps
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.memory import check_memory_budget
from htb_jax._src.policies import adar_etc as adar_etc_lib
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.protocol_checks import check_policy_instance
from htb_jax._src.reward_table import MAX_SEEDS
from htb_jax._src.simulate.fast_path import SAMPLERS, takes_fast_path
from htb_jax._src.simulate.schedule import MAX_PULL_CHUNK
from htb_jax._src.validation import (
    check_choice,
    check_devices,
    check_flag,
    check_integer,
    check_untraced,
    concrete,
    given,
)

# The round-by-round engine counts rounds in int32.
MAX_ENGINE_HORIZON = 2**31 - 1
# Rounds of a regret curve: 10^19 was taken, then refused as a memory budget of 6e20 bytes the user never gave.
MAX_CHECKPOINTS = 2**20


def _check_engine_run(policy, horizons: np.ndarray, sampler: str, engine: Any, record_arms: Any) -> None:
    """``ValueError`` for what a run round by round cannot do: a horizon beyond its int32 rounds, or a
    sampler of the fast path's estimates (it reads the reward table per pull: the sampler was ignored)."""
    if np.max(horizons) > MAX_ENGINE_HORIZON:
        raise ValueError(
            f"horizon (T) must be at most {MAX_ENGINE_HORIZON} (2^31 - 1) for a policy run round by round, whose "
            f"rounds are int32 (AdaR-ETC and Empirical ETC on the fast path reach 10^18); got horizon (T)="
            f"{int(np.max(horizons))}."
        )
    if sampler not in ("auto", "per_pull"):
        how = " with engine=True" if engine is True else " with record_arms=True" if record_arms is True else ""
        raise ValueError(
            f"sampler={sampler!r} draws the fast path's estimates (AdaR-ETC and Empirical ETC, without engine or "
            f"record_arms); {type(policy).__name__}{how} runs round by round, reading the reward table per pull: "
            f"give sampler='auto' or 'per_pull'."
        )


def _horizons(horizon) -> tuple[np.ndarray, tuple[int, ...]]:
    """The horizons, checked, as i64[H] flattened and their shape ``H``."""
    if isinstance(horizon, jax.core.Tracer):
        raise ValueError("horizon must be concrete (a Python int or a sequence of ints); got a traced value.")
    check_integer("horizon (T)", horizon, 1, maximum=10**18)
    h = concrete(horizon)
    if h is None:
        raise TypeError(
            f"horizon (T) must be an integer in [1, {10**18}] or a sequence of them; "
            f"got horizon (T)={horizon!r} ({type(horizon).__name__})."
        )
    if h.size == 0:
        raise ValueError(
            f"horizon (T) must be an integer in [1, {10**18}] or a non-empty sequence of them; "
            f"got horizon (T)={horizon!r}."
        )
    h = np.asarray(h, np.int64)
    return h.reshape(-1), h.shape


def _check_pull_chunk(pull_chunk) -> None:
    """``pull_chunk`` is ``None`` (the default) or an integer in ``[1, MAX_PULL_CHUNK]``."""
    if pull_chunk is not None:
        check_integer("pull_chunk", pull_chunk, 1, maximum=MAX_PULL_CHUNK, one=True)


def check_simulation(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizon: int | Sequence[int],
    num_seeds: int,
    *,
    first_seed: int,
    engine: bool,
    record_arms: bool,
    num_checkpoints: int,
    pull_chunk: int | None,
    seed_chunk: int | None,
    devices: Sequence[jax.Device] | None,
    sampler: str,
    memory_budget: int | None,
    threads: int | None,
    paired: bool,
) -> tuple[jax.Array, int, np.ndarray, tuple[int, ...], tuple[jax.Device, ...]]:
    """Checks the arguments of :func:`~htb_jax._src.simulate.program.simulate` (the same names).

    Returns:
      ``(key, num_arms, horizons, horizon_shape, devices)``: the threefry
      key, ``K``, i64[H] the flat horizons and their shape ``H``, and the
      devices as a non-empty tuple.

    Raises:
      TypeError, ValueError: naming the argument, its admissible values and the value given.
    """
    check_untraced("simulate compiles and runs its own program", ". A grid of policies or instances is one simulate "
                   "call already; for a gradient of the regret use htb.smoothed_regret or htb.regret_proxy.",
                   key=key, policy=policy, instance=instance, horizon=horizon, num_seeds=num_seeds,
                   first_seed=first_seed, num_checkpoints=num_checkpoints, pull_chunk=pull_chunk,
                   seed_chunk=seed_chunk, memory_budget=memory_budget, threads=threads, engine=engine,
                   record_arms=record_arms, paired=paired)
    check_policy_instance("policy", policy, "simulate")
    key = as_threefry_key(key)
    check_instance(instance, function="htb.simulate", needs=("from_bits", "mean"))
    k = instance_num_arms(instance)
    horizons, horizon_shape = _horizons(horizon)
    adar_etc_lib.check_arms_and_horizon(k, horizons)
    check_choice("sampler", sampler, SAMPLERS)
    for name, flag in (("engine", engine), ("record_arms", record_arms), ("paired", paired)):
        check_flag(name, flag)  # before takes_fast_path reads them (an array's truth value failed in NumPy)
    if not takes_fast_path(policy, engine, record_arms):  # round by round
        _check_engine_run(policy, horizons, sampler, engine, record_arms)
    check_integer("num_seeds", num_seeds, 1, one=True)
    check_integer("first_seed", first_seed, 0, maximum=MAX_SEEDS - 1, one=True)
    if int(first_seed) + int(num_seeds) > MAX_SEEDS:  # as Python ints: two uint32 wrapped (a warning)
        raise ValueError(
            f"first_seed + num_seeds must be at most 2^32 = {MAX_SEEDS} (seeds are uint32; seed "
            f"s + 2^32 would repeat seed s); got first_seed + num_seeds={first_seed} + {num_seeds}."
        )
    check_integer("num_checkpoints", num_checkpoints, 2, maximum=MAX_CHECKPOINTS, one=True)
    if seed_chunk is not None:
        check_integer("seed_chunk", seed_chunk, 1, one=True)
    if threads is not None:
        check_integer("threads", threads, 1, one=True)
        if threads > 1 and jax.process_count() > 1:
            raise ValueError(
                f"threads must be 1 under several processes (jax.distributed); got threads={threads} with "
                f"{jax.process_count()} processes."
            )
    _check_pull_chunk(pull_chunk)
    check_memory_budget(memory_budget)
    check_devices("devices", devices)
    if paired and tuple(policy.batch_shape) != tuple(instance.batch_shape[:-1]):
        raise ValueError(
            f"paired=True runs grid point i on instance i alone: the policy's batch shape must equal the "
            f"instances' batch shape without K; got policy batch shape {tuple(policy.batch_shape)} and "
            f"instance batch shape {tuple(instance.batch_shape)} (K = {k})."
        )
    for name, value, shape in (("policy", policy, tuple(policy.batch_shape)),
                               ("instance", instance, tuple(instance.batch_shape[:-1]))):
        if 0 in shape:  # nothing to run: it failed deep inside (a division by zero, a list without a shape)
            raise ValueError(f"simulate needs at least one {name}; got {given(name, value)}, whose grid is empty "
                             f"(batch shape {shape}).")
    check_float32_resolution(instance)
    instance_gaps(instance)  # refuses means that are not finite, at the instance's own indices
    devices = tuple(jax.devices() if devices is None else devices)
    if not devices:
        raise ValueError("devices must name at least one device.")
    return key, k, horizons, horizon_shape, devices
