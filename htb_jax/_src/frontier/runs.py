"""Runs of a batch of policies on a family: per-seed regrets, chunk by chunk of seeds, resumable."""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import time
from collections.abc import Sequence

import jax
import numpy as np

from htb_jax._src.frontier.families import ParetoFamily, SpikeFamily, _check_family
from htb_jax._src.instances import intrinsic_scale
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.resumable import ChunkStore, check_root_key, default_seed_chunk, run_chunks, seed_chunks
from htb_jax._src.simulate.fast_path import SAMPLERS
from htb_jax._src.simulate.program import simulate
from htb_jax._src.sweep import progress_bar
from htb_jax._src.sweep import write_csv as _write_csv
from htb_jax._src.validation import (
    check_choice,
    check_flag,
    check_instance_type,
    check_integer,
    check_nonempty,
    check_path,
    check_policy_instance,
    given,
)


def _check_runs(name: str, runs) -> None:
    check_instance_type(name, runs, FamilyRuns, "a FamilyRuns (from run_family or load_runs)")


@dataclasses.dataclass(frozen=True)
class FamilyRuns:
    """Per-seed regrets of a batch of policies on a :class:`SpikeFamily` or :class:`ParetoFamily`.

    Attributes:
      regret: f64[G, F + 1, H, S] (member ``F`` is the fixed instance).
      exploration: i64[G, H] ``L_T``.
      horizons: i64[H].
      family: the family (to normalize by ``U_eps`` for any ``eps``).
      seconds: wall time, compilation included.
      resumed_chunks: seed chunks read back from a store instead of computed.
    """

    regret: np.ndarray
    exploration: np.ndarray
    horizons: np.ndarray
    family: SpikeFamily | ParetoFamily
    seconds: float
    resumed_chunks: int = 0

    def scale(self, eps: float) -> np.ndarray:
        """``U_eps`` of each family member, f64[F + 1] (computed once per family and ``eps``)."""
        return family_scale(self.family, eps).copy()


@functools.lru_cache(maxsize=64)
def _family_scale(family, eps: float) -> np.ndarray:
    return np.asarray(intrinsic_scale(family.instances(), eps))


def family_scale(family, eps: float) -> np.ndarray:
    """``U_eps`` of each member of a (frozen, hashable) family, f64[F + 1], cached: the stable and Pareto
    families' moments are quadratures of a few seconds on a CPU, asked for once per schedule."""
    try:
        hash(family)
    except TypeError:  # a list among its fields
        return np.asarray(intrinsic_scale(family.instances(), eps))
    return _family_scale(family, float(eps))


def run_family(
    policy: AdaRETC,
    family: SpikeFamily | ParetoFamily,
    horizons: Sequence[int],
    num_seeds: int,
    *,
    key: int = 0,
    seed_chunk: int | None = None,
    progress: bool = True,
    store: ChunkStore | None = None,
    sampler: str = "auto",
) -> FamilyRuns:
    """Simulates a flat batch of schedules (grid shape ``(G,)``) on the family, chunk of seeds by chunk.

    Seed ``s`` draws from ``fold_in(key, s)`` alone, so the chunking changes nothing.

    Args:
      seed_chunk: seeds per call of ``simulate``, the resume unit (default: 8 on a CPU; off a CPU
        every seed, at most 4096 a chunk, since an accelerator's call costs about the same whatever
        its seeds).
      sampler: ``simulate``'s sampler of the exploration rewards, one of ``"auto"``, ``"per_pull"``,
        ``"block_sums"``, ``"order_statistic"``.  On a :class:`StableFamily`, ``"auto"`` takes the
        block sums (``B_T`` standard draws per arm and horizon); ``"order_statistic"`` draws each
        estimate as one order statistic, the same law at a cost that does not grow with ``T``.
      store: if given (its layout ``seed_chunks(num_seeds, seed_chunk)``), every finished chunk is
        written there atomically and intact chunks already there are read back
        instead of recomputed: a killed run started again resumes.
    """
    check_policy_instance("policy", policy, "run_family")
    _check_family("family", family)
    family.validate()
    check_nonempty("horizons", horizons)
    check_integer("horizons", list(horizons), 1, maximum=10**18)
    check_integer("num_seeds", num_seeds, 2)
    check_root_key(key)
    if seed_chunk is None:
        seed_chunk = default_seed_chunk(num_seeds)
    check_integer("seed_chunk", seed_chunk, 1)
    check_flag("progress", progress)
    check_choice("sampler", sampler, SAMPLERS)
    layout = seed_chunks(num_seeds, seed_chunk)
    if store is not None:
        check_instance_type("store", store, ChunkStore, "None or a ChunkStore")
        if store.layout != [[first, count] for first, count in layout]:
            raise ValueError(
                f"store must hold the chunk layout of num_seeds={int(num_seeds)} in chunks of seed_chunk="
                f"{int(seed_chunk)}; got a store of {len(store.layout)} chunks of up to "
                f"{max(count for _, count in store.layout)} seeds: pass the seed_chunk it was made with."
            )
    instances = family.instances()
    root = jax.random.key(key)

    def compute(first: int, count: int) -> dict[str, np.ndarray]:
        out = simulate(root, policy, instances, list(horizons), count, first_seed=first, sampler=sampler)
        return {"regret": np.asarray(out.regret), "exploration": np.asarray(out.exploration[:, 0, :, 0])}

    started = time.perf_counter()
    parts, resumed = run_chunks(layout, compute, store, progress_bar if progress else None, sys.stderr)
    regret = np.concatenate([part["regret"] for part in parts], axis=-1)
    exploration = parts[-1]["exploration"]
    seconds = time.perf_counter() - started
    return FamilyRuns(regret, exploration, np.asarray(horizons, np.int64), family, seconds, resumed)


def save_runs(runs: FamilyRuns, path) -> None:
    """Per-seed regrets and exploration lengths as NPZ (``regret`` f64[G, F+1, H, S])."""
    _check_runs("runs", runs)
    check_path("path", path, file_object=True)
    np.savez_compressed(path, regret=runs.regret, exploration=runs.exploration, horizons=runs.horizons)


def load_runs(path, family: SpikeFamily) -> FamilyRuns:
    """The runs :func:`save_runs` wrote (``seconds`` is NaN)."""
    check_path("path", path, file_object=True)
    _check_family("family", family)
    with np.load(path) as data:
        return FamilyRuns(data["regret"], data["exploration"], data["horizons"], family, math.nan)


def write_csv(rows: Sequence[dict], path) -> None:
    """Table rows (dicts with the same keys, as ``Measurement.row()`` or ``TFrontierResult.rows``) as CSV.

    A header, then one line per row; floats written exactly (``repr``), fields
    holding a comma or a quote quoted, the file written atomically.

    Args:
      rows: a non-empty list or tuple of dicts; the columns are the first row's keys.
      path: the file (a string or ``pathlib.Path``).
    """
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"rows must be a non-empty list or tuple of dicts; got {given('rows', rows)}.")
    check_path("path", path)
    _write_csv(rows, path)
