"""The engine path: any policy round by round, through :mod:`htb_jax._src.engine`.

Every policy but :class:`AdaRETC` and :class:`EmpiricalETC`, or any policy
with ``engine=True`` or ``record_arms=True``, runs here.  This module sizes
the engine (:class:`~htb_jax._src.policy_protocol.EngineSpec`, with a static bound on
an ETC commit's block sizes) and builds its program
(:func:`prepare_engine_path`); AdaR-ETC through the engine equals the fast
path bit for bit.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import engine as engine_lib
from htb_jax._src import mom
from htb_jax._src.memory import MemoryPlan
from htb_jax._src.policies.adar_etc import ExploreThenCommit
from htb_jax._src.sharding import gather
from htb_jax._src.simulate.outputs import _arrange_engine, _on_host
from htb_jax._src.simulate.request import Request
from htb_jax._src.simulate.schedule import _schedule_maxima, max_blocks


def _commit_block_bounds(policy: Any, horizons: np.ndarray, num_arms: int, blocks: int) -> tuple[int, int | None, int]:
    """The engine's static bounds on an ETC commit's blocks over the flat policy's
    ``commit_horizons`` (``EngineSpec.max_blocks``, ``max_block_size`` and ``min_block_size``).

    Returns:
      the block axis: ``blocks`` (the runs' horizons') or, where a commit horizon is longer (an
      anytime epoch reaching past the run), :func:`~htb_jax._src.simulate.schedule.max_blocks` of
      it; the largest block size, rounded by :func:`~htb_jax._src.mom.static_block_sizes`; the
      smallest nonzero one, rounded by :func:`~htb_jax._src.mom.static_smallest_block_size`.
      ``(blocks, None, 1)`` (any size) for a policy without such commits.
    """
    if not isinstance(policy, ExploreThenCommit):
        return blocks, None, 1
    commits = np.asarray(policy.commit_horizons(horizons))
    _, _, largest, smallest = _schedule_maxima(policy, commits, num_arms)
    return (max(blocks, max_blocks(num_arms, commits)), mom.static_block_sizes(int(largest)),
            mom.static_smallest_block_size(int(smallest)))


def check_arms_in_range(name: str, pulls: Any, num_seeds: int, horizons: np.ndarray, num_arms: int) -> None:
    """``ValueError`` where a run's pulls do not sum to its horizon: its policy's ``act`` returned an
    arm outside ``[0, K)`` (:func:`~htb_jax._src.engine.out_of_range_unsigned`), whose pulls the
    engine did not count.

    Args:
      name: the policy's class name, for the message.
      pulls: i64[G, F, H, S_padded, K] the engine's pull counts (NumPy or concrete jax arrays).
      num_seeds: ``S``, the seeds before padding.
      horizons: i64[H] the horizons.
      num_arms: ``K``.
    """
    totals = np.sum(np.asarray(pulls), axis=-1) if _on_host([pulls]) else np.asarray(jnp.sum(pulls, axis=-1))
    short = totals[..., :num_seeds] != np.asarray(horizons)[:, None]  # bool[G, F, H, S]
    if short.any():
        raise ValueError(
            f"{name}'s kernel.act must return an arm in [0, {num_arms}); it returned another in "
            f"{_runs(short, horizons)}, whose pulls the engine could not count: its regret would be wrong, so none "
            f"is returned."
        )


def _runs(bad: np.ndarray, horizons: np.ndarray) -> str:
    """The runs ``bad`` (bool[G, F, H, S]) flags, for a message: how many, and where the first is."""
    g, f, h, s = (int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {bad.size} runs (the first: grid point {g}, instance {f}, T={int(horizons[h])}, "
            f"seed {s})")


def check_summaries(name: str, committed: Any, exploration: Any, num_seeds: int, horizons: np.ndarray,
                    num_arms: int) -> None:
    """``ValueError`` where a run's :class:`~htb_jax._src.policy_protocol.PolicySummary` lies outside its
    range: ``committed`` in ``[-1, K)``, ``exploration`` in ``[0, T]`` (the Outcome documents them so, and
    ``htb.frontier.measure`` reads the exploration).

    Args:
      name: the policy's class name, for the message.
      committed: i32[G, F, H, S_padded] the summaries' committed arms.
      exploration: i64[G, F, H, S_padded] their exploration rounds.
      num_seeds: ``S``, the seeds before padding.
      horizons: i64[H] the horizons.
      num_arms: ``K``.
    """
    t = np.asarray(horizons)[:, None]
    for field, values, low, high, bounds in (("committed", committed, -1, num_arms - 1, f"[-1, {num_arms})"),
                                             ("exploration", exploration, 0, t, "[0, T]")):
        values = np.asarray(values)[..., :num_seeds]
        bad = (values < low) | (values > high)
        if bad.any():
            raise ValueError(f"{name}'s kernel.summary must report {field} in {bounds}; it reported "
                             f"{int(values[bad][0])} in {_runs(bad, horizons)}.")


def prepare_engine_path(request: Request, record_arms: bool) -> tuple[MemoryPlan, Any]:
    """The engine's program for a validated simulation (see
    :func:`~htb_jax._src.simulate.program.prepare`).

    Args:
      request: the validated simulation, its horizons at most
        :data:`~htb_jax._src.simulate.checks.MAX_ENGINE_HORIZON` (checked there).
      record_arms: as for :func:`~htb_jax._src.simulate.program.simulate`.

    Returns:
      ``(plan, run)``: the :class:`MemoryPlan`; ``run()`` gives the Outcome
      with leading axes ``G + I + H + (S,)`` (``G + H + (S,)`` paired), ``run.lower()`` the lowered program,
      ``run.trace()`` the traced one and ``run.arguments`` its arguments.
    """
    r = request
    k = r.num_arms
    spec = engine_lib.EngineSpec(k, int(r.horizons.max()), r.pull_chunk,
                                 *_commit_block_bounds(r.flat, r.horizons, k, r.max_blocks))
    program, args, plan = engine_lib.prepare_engine(
        r.key, r.flat, r.flat_instance, r.horizons, r.num_seeds, spec=spec, num_checkpoints=r.num_checkpoints,
        first_seed=r.first_seed, seed_chunk=r.seed_chunk, devices=r.devices, memory_budget=r.memory_budget,
        record_arms=record_arms, threads=r.threads, paired=r.paired,
    )

    def run_engine():
        outputs = gather(program(*args))
        if not isinstance(outputs[1], jax.core.Tracer):  # a concrete run: its counts are checked
            check_arms_in_range(type(r.flat).__name__, outputs[1], r.num_seeds, r.horizons, k)
            check_summaries(type(r.flat).__name__, outputs[2], outputs[3], r.num_seeds, r.horizons, k)
        return _arrange_engine(outputs, r.output_shape, record_arms)

    run_engine.lower = lambda: program.lower(*args)
    run_engine.trace = lambda: program.trace(*args)
    run_engine.arguments = args
    return plan, run_engine
