"""Resumable runs: seeds in chunks, each finished chunk stored before the next starts.

A run's seeds are laid out in chunks (:func:`seed_chunks`);
:func:`~htb_jax._src.chunk_store.run_chunks` reads back the chunks its store holds intact and
computes the others, storing each as it finishes.  Seed ``s`` draws from ``fold_in(key, s)`` alone, so the
resumed run equals an uninterrupted one bit for bit.  Files are written atomically
(:func:`atomic_write`: a temporary file in the same directory, flushed to disk and renamed over
its final name, atomic on POSIX), so a run killed at any moment leaves whole files.

An interrupted run (Ctrl-C, or the command line's SIGTERM) raises :class:`Interrupted`, a
``KeyboardInterrupt`` that says how many chunks are stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping

import jax
import numpy as np

from htb_jax._src.interrupt_guard import in_gc_callback
from htb_jax._src.reward_table import MAX_SEEDS
from htb_jax._src.validation import check_integer, shown

MAX_CHUNKS = 100_000  # one file per chunk
MAX_KEY = 2**32 - 1


def check_layout(num_seeds: int, seed_chunk: int) -> None:
    """``ValueError`` unless ``num_seeds`` seeds in chunks of ``seed_chunk`` make a layout we can run.

    At most ``2^32`` seeds (they are uint32) and at most :data:`MAX_CHUNKS`
    chunks (one file each), checked before any list of chunks is built.
    """
    check_integer("num_seeds", num_seeds, 1, maximum=MAX_SEEDS, one=True)
    check_integer("seed_chunk", seed_chunk, 1, one=True)
    if -(-int(num_seeds) // int(seed_chunk)) > MAX_CHUNKS:
        least = -(-int(num_seeds) // MAX_CHUNKS)
        raise ValueError(
            f"seed_chunk must be at least {least} for num_seeds={int(num_seeds)} (at most {MAX_CHUNKS} chunks, "
            f"one file each); got seed_chunk={int(seed_chunk)}."
        )


def check_root_key(key: int) -> None:
    """``ValueError`` unless ``key`` is an integer seed of ``jax.random.key`` in ``[0, 2^32 - 1]``.

    A resumable run stores its chunks under this seed, so it takes the seed, not a key:
    ``TypeError`` naming that, where a ``jax.random.key`` (or ``PRNGKey``) is given.
    """
    if isinstance(key, jax.Array) and (
        jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) or (key.dtype == np.uint32 and key.shape == (2,))
    ):
        raise TypeError(
            f"key must be the integer seed in [0, {MAX_KEY}], the n of jax.random.key(n): a resumable run "
            f"stores its chunks under that seed; got the random key {shown(key)}."
        )
    check_integer("key", key, 0, maximum=MAX_KEY, one=True)


CPU_SEED_CHUNK = 8
ACCELERATOR_SEED_CHUNK = 4096


def default_seed_chunk(num_seeds: int, cpu_chunk: int = CPU_SEED_CHUNK) -> int:
    """Seeds per chunk where a caller names none: ``cpu_chunk`` on a CPU; off a CPU, every seed up
    to :data:`ACCELERATOR_SEED_CHUNK`.  An accelerator's call costs about the same whatever its
    seeds: on an H100 the engine's round 0.62 ms at 93 seeds and 0.72 to 0.80 ms at 4096 (ForceMoM),
    the fast path's call at ``T = 10^5`` 6.4 ms for 1 seed and 10.3 ms for 10^4
    (benchmarks/HISTORY.md, the GPU suite's 2026-11-26 runs).  So fewer chunks are less time:
    ``peers.ipynb``'s frontier, 1024 seeds to ``T = 10^4`` a policy, had not finished after 255 s
    in chunks of 8.  ``simulate``'s memory plan still splits a chunk that would not fit the device.

    Args:
      num_seeds: the seeds to run, ``S >= 1``.
      cpu_chunk: the chunk on a CPU (the caller's own default).

    Returns:
      The chunk size, at most ``num_seeds`` off a CPU, and never so small that the seeds take more than
      :data:`MAX_CHUNKS` chunks (a default that :func:`check_layout` refused named a ``seed_chunk`` the
      user never gave).
    """
    least = -(-int(num_seeds) // MAX_CHUNKS)
    if jax.default_backend() == "cpu":
        return max(cpu_chunk, least)
    return max(min(int(num_seeds), ACCELERATOR_SEED_CHUNK), least)


def seed_chunks(num_seeds: int, seed_chunk: int) -> list[tuple[int, int]]:
    """``[(first_seed, num_seeds), ...]``: the chunk layout of ``num_seeds`` seeds in chunks of ``seed_chunk``.

    Raises:
      ValueError: see :func:`check_layout`.
    """
    check_layout(num_seeds, seed_chunk)
    num_seeds, seed_chunk = int(num_seeds), int(seed_chunk)
    return [(first, min(seed_chunk, num_seeds - first)) for first in range(0, num_seeds, seed_chunk)]


def root_key_data(key: int) -> np.ndarray:
    """u32[2] the data of the root key ``jax.random.key(key)``, as the manifest records it."""
    check_root_key(key)
    return np.asarray(jax.random.key_data(jax.random.key(int(key))))


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a resumable run: every chunk finished before it is stored, and the same call
    resumes from them. A ``KeyboardInterrupt``, so that code that stops on Ctrl-C stops on it.

    Attributes:
      stored: chunks (or, for the benchmark, runs) on disk, read back or computed, of ``total``.
      directory: the store's directory (``None``: the run stored nothing).
      unit: what ``stored`` counts: ``"chunks"`` or ``"runs"``.
    """

    def __init__(self, stored: int, total: int, directory: str | None, unit: str = "chunks"):
        super().__init__(f"interrupted: {stored} of {total} {unit} stored in {directory}")
        self.stored, self.total, self.directory, self.unit = stored, total, directory, unit


_stop_signal: int | None = None  # the signal the command line's handler saw (SIGINT or SIGTERM)


def stop_handler(signum, frame) -> None:
    """The command line's Ctrl-C, and SIGTERM (a scheduler's time limit): raises ``KeyboardInterrupt``
    as Python's own Ctrl-C does, and records the signal, so that :func:`check_interrupt` raises it
    again where Python dropped it, and the command says which signal stopped it.  Inside a
    garbage-collection callback it only records it: raised there, it is printed as "Exception
    ignored" with a traceback and dropped (the run went on to its end)."""
    global _stop_signal
    _stop_signal = signum
    if in_gc_callback(frame):  # raised there, Python prints "Exception ignored" and a traceback, and drops it
        return  # check_interrupt raises it between chunks
    raise KeyboardInterrupt


def interrupt_signal() -> int | None:
    """The signal :func:`stop_handler` saw, or ``None``."""
    return _stop_signal


def check_interrupt() -> None:
    """``KeyboardInterrupt`` if :func:`stop_handler` saw a signal: long runs call it between chunks."""
    if _stop_signal is not None:
        raise KeyboardInterrupt


def digest(arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of named arrays: names, dtypes, shapes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str, write) -> None:
    """Writes ``path`` through ``write(file)`` into a temporary file in the same directory,
    ``fsync``s it and renames it over ``path``: readers see the old file or the whole new one."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600 would hide results from the rest of a group
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_dir(directory)


OUTPUTS_PREFIX = ".htb-jax-outputs-"


def remove_unmoved_outputs(directory: str) -> None:
    """Deletes the folders :func:`moved_into_place` left in ``directory`` when a command was killed (``kill -9``)
    while it wrote its outputs (a store calls it holding the directory's lock: no other command writes there)."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith(OUTPUTS_PREFIX) and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def moved_into_place(directory) -> Iterator[str]:
    """A temporary folder inside ``directory`` for a command's output files: once the ``with`` block
    has written them all, they are moved into ``directory`` together, so that a command interrupted
    while writing leaves the earlier outputs whole, never a mix of two runs' files (an exception
    inside the block moves nothing)."""
    with tempfile.TemporaryDirectory(dir=directory, prefix=OUTPUTS_PREFIX) as scratch:
        yield scratch
        for name in sorted(os.listdir(scratch)):
            os.replace(os.path.join(scratch, name), os.path.join(directory, name))
