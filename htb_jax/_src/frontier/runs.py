"""Runs of a batch of policies on a family: per-seed regrets, chunk by chunk of seeds, resumable."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
import zipfile
from collections.abc import Sequence

import jax
import numpy as np

from htb_jax._src.chunk_store import ChunkStore, Remedy, check_store_dir, run_chunks
from htb_jax._src.fingerprint import Program, identity_repr
from htb_jax._src.frontier.families import ParetoFamily, SpikeFamily, StableFamily, check_family
from htb_jax._src.frontier.scale import family_scale
from htb_jax._src.memory import check_host_results
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.protocol_checks import check_policy_instance
from htb_jax._src.resumable import check_root_key, default_seed_chunk, root_key_data, seed_chunks
from htb_jax._src.simulate.fast_path import SAMPLERS
from htb_jax._src.simulate.program import simulate
from htb_jax._src.sweep import progress_bar
from htb_jax._src.sweep import write_csv as _write_csv
from htb_jax._src.validation import (
    check_choice,
    check_flag,
    check_increasing,
    check_instance_type,
    check_integer,
    check_nonempty,
    check_path,
    check_real,
    given,
)


def _check_runs(name: str, runs) -> None:
    check_instance_type(name, runs, FamilyRuns, "a FamilyRuns (from run_family or load_runs)")


@dataclasses.dataclass(frozen=True)
class FamilyRuns:
    """Per-seed regrets of a batch of policies on a :class:`SpikeFamily`, :class:`ParetoFamily` or :class:`StableFamily`.

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
    family: SpikeFamily | ParetoFamily | StableFamily
    seconds: float
    resumed_chunks: int = 0

    def __post_init__(self):
        """``ValueError`` naming the field for runs that no run gives: shapes that disagree with each other or
        with the family or hold no schedule, horizon or seed; horizons that are not integers ``>= 1``; a
        regret that is not a finite pseudo-regret ``>= 0``; a negative exploration (they failed deep in a
        fit).  Horizons may come in any order and repeat (an anytime run's checkpoints), and exploration be 0
        (index policies).  The arrays are kept as f64, i64 and i64 (a list as its array)."""
        check_family("family", self.family)
        regret, exploration = np.asarray(self.regret), np.asarray(self.exploration)
        horizons = np.asarray(self.horizons)
        if horizons.ndim != 1:
            raise ValueError(f"FamilyRuns horizons must be i64[H]; got shape {horizons.shape}.")
        check_integer("FamilyRuns horizons", horizons, 1)
        members = self.family.num_members + 1
        if regret.ndim != 4 or regret.shape[1:3] != (members, horizons.size) or 0 in regret.shape:
            raise ValueError(f"FamilyRuns regret must be f64[G, F + 1, H, S] with F + 1 = {members} (the family's "
                             f"members and its fixed instance), H = {horizons.size} horizons and G, H, S >= 1; got "
                             f"shape {regret.shape}.")
        if regret.dtype.kind not in "fiu":
            raise TypeError(f"FamilyRuns regret must be an array of real numbers; got dtype {regret.dtype}.")
        bad = ~(np.isfinite(regret) & (regret >= 0))
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"FamilyRuns regret must be finite and >= 0 (a pseudo-regret); got {regret[at]} at "
                             f"index {at}.")
        if exploration.shape != (regret.shape[0], horizons.size):
            raise ValueError(f"FamilyRuns exploration must be i64[G, H] = {(regret.shape[0], horizons.size)}, one "
                             f"L_T per schedule and horizon; got shape {exploration.shape}.")
        check_integer("FamilyRuns exploration", exploration, 0)
        check_real("FamilyRuns seconds", self.seconds, "a number of seconds (NaN where unknown)")
        check_integer("FamilyRuns resumed_chunks", self.resumed_chunks, 0, one=True)
        for name, value, dtype in (("regret", regret, np.float64), ("exploration", exploration, np.int64),
                                   ("horizons", horizons, np.int64)):
            object.__setattr__(self, name, np.asarray(value, dtype))

    def scale(self, eps: float) -> np.ndarray:
        """``U_eps`` of each family member, f64[F + 1] (computed once per family and ``eps``)."""
        return family_scale(self.family, eps).copy()


def run_family(
    policy: AdaRETC,
    family: SpikeFamily | ParetoFamily | StableFamily,
    horizons: Sequence[int],
    num_seeds: int,
    *,
    key: int = 0,
    seed_chunk: int | None = None,
    progress: bool = True,
    store: str | None = None,
    restart: bool = False,
    sampler: str = "auto",
) -> FamilyRuns:
    """Simulates a flat batch of schedules (grid shape ``(G,)``) on the family, chunk of seeds by chunk.

    Seed ``s`` draws from ``fold_in(key, s)`` alone, so the chunking changes nothing.

    Args:
      policy: a policy of flat grid shape ``(G,)``: its parameters 1-D arrays (one schedule: arrays of
        one element).
      family: the instances, a :class:`SpikeFamily`, a :class:`ParetoFamily` or a
        :class:`StableFamily` (``F`` members, then the fixed instance).
      horizons: the horizons ``T``, ``H`` increasing ints in ``[1, 10^18]`` (each a separate run).
      num_seeds: seeds per schedule, member and horizon, ``S >= 2``.
      key: the integer seed of ``jax.random.key(key)``, in ``[0, 2^32 - 1]`` (an integer, not a
        key: a resumable run stores its chunks under it).
      seed_chunk: seeds per call of ``simulate``, the resume unit (default: 8 on a CPU; off a CPU
        every seed, at most 4096 a chunk, since an accelerator's call costs about the same whatever
        its seeds).
      sampler: ``simulate``'s sampler of the exploration rewards, one of ``"auto"``, ``"per_pull"``,
        ``"block_sums"``, ``"order_statistic"``.  On a :class:`StableFamily`, ``"auto"`` takes the
        block sums (``B_T`` standard draws per arm and horizon); ``"order_statistic"`` draws each
        estimate as one order statistic, the same law at a cost that does not grow with ``T``.
      store: a directory: every finished chunk is written there atomically with a manifest, and a
        run started again reads back the intact chunks instead of recomputing them.  A directory
        holding another run, or chunks that another program computed (the code of the policy, of
        the family's law or of htb_jax changed, or the version of htb_jax, jax or jaxlib), is
        refused (``ValueError``), as is one where nothing can be written, before anything runs.
      restart: delete what ``store`` holds and start again instead of refusing it.
      progress: draw a progress bar of the chunks on standard error.

    Returns:
      A :class:`FamilyRuns`: ``regret`` f64[G, F + 1, H, S], ``exploration`` i64[G, H] (``L_T``),
      ``horizons`` i64[H], the family, the wall time and the number of chunks read back from
      ``store``.

    Raises:
      ValueError: where the regrets, f64[G, F + 1, H, S] held twice at the end, would exceed the host's
        memory (before anything runs).
      Interrupted: a ``KeyboardInterrupt`` on Ctrl-C, after every finished chunk is stored.
    """
    check_policy_instance("policy", policy, "run_family")
    if len(policy.batch_shape) != 1:
        raise ValueError(
            f"policy must be a flat batch of schedules, grid shape (G,); got a policy of grid shape "
            f"{tuple(policy.batch_shape)}: give its parameters as 1-D arrays (one schedule: arrays of one element)."
        )
    check_family("family", family)
    family.validate()
    check_nonempty("horizons", horizons)
    check_integer("horizons", list(horizons), 1, maximum=10**18)
    check_increasing("horizons", list(horizons))  # a horizon repeated would weigh twice in the fits
    check_integer("num_seeds", num_seeds, 2, one=True)
    check_root_key(key)
    if seed_chunk is None:
        seed_chunk = default_seed_chunk(num_seeds)
    check_integer("seed_chunk", seed_chunk, 1, one=True)
    check_flag("progress", progress)
    check_flag("restart", restart)
    check_choice("sampler", sampler, SAMPLERS)
    layout = seed_chunks(num_seeds, seed_chunk)
    check_family_results(num_seeds, policy.batch_shape[0], family, len(horizons),
                         "run fewer seeds or schedules, or several run_family runs with other keys")
    chunk_store = None
    if store is not None:
        check_path("store", store)
        check_store_dir(store, STORE_REMEDY)
        identity = {
            "experiment": "run_family", "policy": identity_repr(policy), "family": identity_repr(family),
            "horizons": [int(h) for h in horizons], "num_seeds": int(num_seeds), "sampler": sampler,
        }
        chunk_store = open_family_store(policy, family, horizons, key, sampler, store, identity, layout, restart,
                                        STORE_REMEDY)
    return family_runs(policy, family, horizons, layout, key, progress, chunk_store, sampler)


def check_family_results(num_seeds: int, num_schedules: int, family, num_horizons: int, remedy: str) -> None:
    """``ValueError`` where the regrets a run of ``num_schedules`` schedules on ``family`` returns,
    f64[G, F + 1, H, S], held twice at its end (the chunks' and their concatenation), exceed the host's
    memory (:func:`~htb_jax._src.memory.check_host_results`): refused before anything is computed.
    ``remedy`` says what to run instead."""
    check_host_results(int(num_seeds), 2 * 8 * num_schedules * (family.num_members + 1) * num_horizons, remedy)


# How a user of the Python functions that take ``store=`` names the way out of a refused store.
STORE_REMEDY = Remedy(directory="store", restart="restart=True")


def family_calls(policy, family, horizons: Sequence[int], key: int, sampler: str) -> list[dict]:
    """The ``simulate`` call of every chunk of :func:`run_family`, but its seeds."""
    return [dict(key=jax.random.key(key), policy=policy, instance=family.instances(), horizon=list(horizons),
                 sampler=sampler)]


def open_family_store(policy, family, horizons, key, sampler, directory: str, identity: dict, layout, restart: bool,
                      remedy: Remedy) -> ChunkStore:
    """The store of a family's runs in ``directory``, checked against ``identity``
    and the runs' program (traced, nothing compiled)."""
    program = Program(family_calls(policy, family, horizons, key, sampler))
    return ChunkStore(directory, identity, root_key_data(key), layout, program, restart=restart, remedy=remedy)


def family_runs(policy, family, horizons, layout, key: int, progress: bool, store: ChunkStore | None,
                sampler: str) -> FamilyRuns:
    """:func:`run_family`, checked, with its layout and its store opened."""
    (call,) = family_calls(policy, family, horizons, key, sampler)

    def compute(first: int, count: int) -> dict[str, np.ndarray]:
        out = simulate(**call, num_seeds=count, first_seed=first)
        return {"regret": np.asarray(out.regret), "exploration": np.asarray(out.exploration)[:, 0, :, 0]}

    started = time.perf_counter()
    parts, resumed = run_chunks(layout, compute, store, progress_bar if progress else None, sys.stderr)
    regret = np.concatenate([part["regret"] for part in parts], axis=-1)
    exploration = parts[-1]["exploration"]
    seconds = time.perf_counter() - started
    return FamilyRuns(regret, exploration, np.asarray(horizons, np.int64), family, seconds, resumed)


def save_runs(runs: FamilyRuns, path) -> None:
    """Per-seed regrets and exploration lengths as NPZ (``regret`` f64[G, F+1, H, S]).

    Args:
      runs: the :class:`FamilyRuns` to save (its ``regret``, ``exploration`` and ``horizons``,
        and the family's values for :func:`load_runs` to compare with the family it is given).
      path: the file, a string, a ``pathlib.Path`` or an open binary file; NumPy appends
        ``.npz`` to a name without it.
    """
    _check_runs("runs", runs)
    check_path("path", path, file_object=True)
    np.savez_compressed(path, regret=runs.regret, exploration=runs.exploration, horizons=runs.horizons,
                        family=np.array(_family_values(runs.family)))


def load_runs(path, family: SpikeFamily | ParetoFamily | StableFamily) -> FamilyRuns:
    """The runs :func:`save_runs` wrote (``seconds`` is NaN), on the family they were run on.

    Args:
      path: the file :func:`save_runs` wrote, a string, a ``pathlib.Path`` or an open binary
        file (a name without ``.npz`` is read with it where no file of that name exists).
      family: the :class:`SpikeFamily`, :class:`ParetoFamily` or :class:`StableFamily` the runs
        were run on.

    Returns:
      A :class:`FamilyRuns` with ``regret`` f64[G, F + 1, H, S], ``exploration`` i64[G, H],
      ``horizons`` i64[H], ``family``, ``seconds = nan`` and ``resumed_chunks = 0``.

    Raises:
      ValueError: where the stored members are not ``family``'s: another family's ``U_eps`` would
        normalise them silently.  Runs saved with their family's values are compared with them; older
        ones by their number of members alone (``F + 1``, its ``F`` and the fixed instance).
    """
    check_path("path", path, file_object=True)
    check_family("family", family)
    def not_runs(why: str) -> ValueError:  # another file gave NumPy's pickle message or a KeyError
        return ValueError(f"path must be a file save_runs wrote (the arrays regret, exploration and horizons); "
                          f"{path} is not one ({why})")

    try:
        data = np.load(_npz(path))
    except (ValueError, EOFError, zipfile.BadZipFile):  # NumPy's message offered to unpickle it; an empty file
        raise not_runs("NumPy reads no arrays from it") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise not_runs(f"one array of shape {np.shape(data)}")
    with data:
        missing = [name for name in ("regret", "exploration", "horizons") if name not in data.files]
        if missing:
            raise not_runs(f"it lacks {', '.join(missing)}")
        regret = data["regret"]
        if regret.ndim != 4 or regret.shape[1] != family.num_members + 1:
            raise ValueError(
                f"family must be the family the runs in {path} were run on: they hold {regret.shape[1] - 1} "
                f"members and the fixed instance (regret of shape {regret.shape}); got a {type(family).__name__} "
                f"of {family.num_members} members."
            )
        runs = FamilyRuns(regret, data["exploration"], data["horizons"], family, math.nan)
        stored = str(data["family"]) if "family" in data.files else None
    if stored is not None:
        try:
            saved = json.loads(stored)
        except json.JSONDecodeError:
            raise not_runs("its family entry is not the JSON save_runs writes") from None
        if not isinstance(saved, dict):
            raise not_runs("its family entry is not the JSON save_runs writes")
        given = json.loads(_family_values(family))
        differ = next((name for name in (*saved, *given) if saved.get(name) != given.get(name)), None)
        if differ is not None:
            raise ValueError(f"family must be the family the runs in {path} were run on; they differ in "
                             f"{differ}: {saved.get(differ, 'none')} there, {given.get(differ, 'none')} here.")
    return runs


def _family_values(family) -> str:
    """A family's class and fields as JSON, every number as a float (``1``, ``np.int64(1)``, ``1.0`` and a
    0-d array alike) and an array as a list."""
    fields = {f.name: np.asarray(getattr(family, f.name), np.float64).tolist() for f in dataclasses.fields(family)}
    return json.dumps({"class": type(family).__name__, **fields})


def _npz(path):
    """``path`` as :func:`save_runs` wrote it: :func:`numpy.savez_compressed` appends ``.npz`` to a name
    without it (a file of the name as given is read where there is one)."""
    if isinstance(path, (str, os.PathLike)) and not os.path.exists(path) and not os.fspath(path).endswith(".npz"):
        return os.fspath(path) + ".npz"
    return path


def write_csv(rows: Sequence[dict], path) -> None:
    """Table rows (dicts with the same keys, as ``Measurement.row()`` or ``TFrontierResult.rows``) as CSV.

    A header, then one line per row; floats written exactly (``repr``), fields
    holding a comma or a quote quoted, the file written atomically.

    Args:
      rows: a non-empty list or tuple of dicts with the same keys (in any order); the
        columns are the first row's keys, in its order.
      path: the file (a string or ``pathlib.Path``).
    """
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"rows must be a non-empty list or tuple of dicts; got {given('rows', rows)}.")
    columns = list(rows[0])
    for i, row in enumerate(rows):
        missing, extra = [k for k in columns if k not in row], [k for k in row if k not in columns]
        if missing or extra:
            differ = " and ".join(([f"lacks {missing}"] if missing else []) + ([f"adds {extra}"] if extra else []))
            raise ValueError(f"rows must share the first row's keys {columns} (the CSV's columns); rows[{i}] {differ}.")
    check_path("path", path)
    _write_csv(rows, path)
