"""The store of a resumable run: every finished chunk of seeds on disk, atomically, under a manifest.

An output directory holds

* ``manifest.json``: the run's configuration, its root key, the chunk layout
  (``[first_seed, num_seeds]`` per chunk), the fingerprint of the program that
  computes its chunks (:mod:`htb_jax._src.fingerprint`: the traced simulation
  program and its arguments, the versions of htb_jax, jax and jaxlib), the
  versions of NumPy and Python, the backend and devices, and the SHA-256 of
  every chunk file written;
* ``chunks/chunk-NNNNN.npz``: the results of one chunk of seeds, with the
  SHA-256 of its arrays inside.

A chunk is written atomically (:func:`~htb_jax._src.resumable.atomic_write`), so a run
killed at any moment leaves complete chunks and, at worst, a temporary file that the next
run deletes.  A chunk is used only if the file hashes to the manifest's digest, it loads,
its arrays hash to the digest stored inside it, and it holds the seeds the layout assigns
it; anything else is recomputed, never merged.  A directory whose manifest describes
another configuration is refused (:class:`ForeignStoreError`), as is one that holds chunk
files but no manifest, and one whose chunks another program computed
(:class:`StaleStoreError`: a policy's or a law's code changed, or htb_jax's, jax's or
jaxlib's version), unless the run is told to ``restart``: then the old manifest and chunks
are deleted first, and nothing stored is deleted otherwise.

Under ``jax.distributed`` every process runs the run (each simulation spans all hosts) and
reads the directory, which must be on a file system they all share; only process 0 writes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping

import jax
import numpy as np

from htb_jax._src import directory_lock
from htb_jax._src import fingerprint as fingerprint_lib
from htb_jax._src.output_dir import check_output_dir, described
from htb_jax._src.pytree import keyed_by
from htb_jax._src.resumable import Interrupted, atomic_write, check_interrupt, digest, remove_unmoved_outputs
from htb_jax._src.validation import shown

MANIFEST = "manifest.json"
CHUNK_DIR = "chunks"
FORMAT = 2  # 2: the manifest records the program's fingerprint


def environment() -> dict:
    """Versions, backend and devices, for the manifest."""
    devices = jax.devices()
    return {
        "versions": {**fingerprint_lib.versions(), "numpy": np.__version__, "python": platform.python_version()},
        "backend": jax.default_backend(),
        "device_kind": devices[0].device_kind,
        "num_devices": len(devices),
        "process_count": jax.process_count(),
    }


class ForeignStoreError(ValueError):
    """A store that holds another run (another configuration, chunk layout or root key), chunk files
    without a manifest, or a manifest that cannot be read, or that another running command is
    writing: one line, naming the directory, what differs and the way out. Nothing stored is deleted.

    A ``ValueError``, so that whatever refuses bad input refuses it too; its own class, so that a
    caller can catch it alone and let any other error show its traceback::

        try:
            m = htb.frontier.measure(policy, 1.0, horizons, 64, store="runs/mine")
        except htb.ForeignStoreError as e:  # StaleStoreError included
            print(e)  # ...; give another store, or restart=True to delete its chunks and start again
    """


class StaleStoreError(ForeignStoreError):
    """A store of the same configuration whose chunks another program computed: the code of a
    policy, of a reward law or of htb_jax changed, or the version of htb_jax, jax or jaxlib."""


@dataclasses.dataclass(frozen=True)
class Remedy:
    """How a caller names the way out of a refused store: its directory argument and its restart flag."""

    directory: str = "--out"
    restart: str = "--restart"

    def __str__(self) -> str:
        return f"give another {self.directory}, or {self.restart} to delete its chunks and start again"


CLI_REMEDY = Remedy()


@dataclasses.dataclass(frozen=True)
class FolderRemedy(Remedy):
    """The way out of a refused run among others in one directory (the benchmark's): delete the
    run's ``folder`` alone, the others kept, or give another directory, or restart every run."""

    folder: str = ""

    def __str__(self) -> str:
        return (f"delete {self.folder} to compute its runs again (the other runs stored there are kept), give "
                f"another {self.directory}, or {self.restart} to compute every run of this command again")


def _program_change(old: dict, program: dict | fingerprint_lib.Program) -> str | None:
    """What differs between a stored fingerprint and this run's (``None``: nothing); a
    :class:`~htb_jax._src.fingerprint.Program` is traced only where its inputs do not match."""
    stored = old.get("program")
    if not isinstance(stored, dict):
        return "its manifest, written by an older htb_jax, records no fingerprint of the program"
    if isinstance(program, fingerprint_lib.Program):
        program = program.resolve(stored)
    changed = [
        f"{name} {stored.get(name)} there, {program.get(name)} here"
        for name in ("htb_jax", "jax", "jaxlib")
        if stored.get(name) != program.get(name)
    ]
    if changed:
        return "; ".join(changed)
    if stored.get("program_sha256") != program.get("program_sha256"):
        backend = jax.default_backend()
        where = "" if old.get("backend") in (None, backend) else f"; computed on {old['backend']}, this is {backend}"
        return f"the simulation program changed: the code of its policy or its reward law, a parameter's value, or htb_jax{where}"
    return None


def read_manifest(directory: str, config: dict, root_key, layout, program: dict | fingerprint_lib.Program,
                  remedy: Remedy) -> dict | None:
    """The manifest in ``directory`` (``None`` if there is none), checked against a sweep.

    Args:
      directory: the output directory.
      config: the sweep's identity (JSON-able).
      root_key: the root key's data.
      layout: ``[(first_seed, num_seeds), ...]``.
      program: the run's :func:`~htb_jax._src.fingerprint.fingerprint`, or its
        :class:`~htb_jax._src.fingerprint.Program` (traced only where its inputs do not match).
      remedy: how the caller's user gives another directory or restarts, for the message.

    Raises:
      ForeignStoreError: one line, if the manifest cannot be read or describes
        another configuration, chunk layout or root key.
      StaleStoreError: one line, if its chunks were computed by another program.
    """
    path = os.path.join(directory, MANIFEST)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            old = json.load(f)
        old_config, old_layout = old["config"], old["chunks"]
        if not (isinstance(old_config, dict) and isinstance(old_layout, list)
                and isinstance(old["chunk_sha256"], dict) and isinstance(old["root_key"], list)):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        raise ForeignStoreError(f"{path} is not a readable htb-jax sweep manifest; {remedy}") from None
    config = json.loads(json.dumps(config))

    def shown_setting(settings: dict, name: str) -> str:  # an identity leaves some defaults out
        if name not in settings:
            return "the default"
        value, other = settings[name], (config if settings is old_config else old_config).get(name)
        if isinstance(value, dict) and isinstance(other, dict):  # a family: the fields that differ
            value = {k: v for k, v in value.items() if other.get(k) != v}
        return shown(value, 100)  # a value of hundreds of characters (a grid of gaps) is cut

    def experiment(settings: dict) -> str:  # a sweep's identity names none
        return settings.get("experiment", "sweep")

    changed = [  # another experiment's settings differ in every name: the experiment says it all
        f"a {experiment(old_config)} run there, a {experiment(config)} run here"
    ] if experiment(old_config) != experiment(config) else [
        f"{name}: {shown_setting(old_config, name)} there, {shown_setting(config, name)} here"
        for name in sorted(set(old_config) | set(config))
        if old_config.get(name) != config.get(name)
    ]
    if not changed and old_layout != [[int(a), int(b)] for a, b in layout]:
        changed = [
            f"chunk layout: {len(old_layout)} chunks of up to {max((b for _, b in old_layout), default=0)} seeds there, "
            f"{len(layout)} of up to {max(int(b) for _, b in layout)} here: another seed chunk"
        ]
    new_key = [int(x) for x in np.asarray(root_key).ravel()]
    if not changed and old.get("root_key") != new_key:
        changed = [f"root key: {_shown_key(old.get('root_key'))} there, {_shown_key(new_key)} here"]
    if changed:
        raise ForeignStoreError(
            f"the output directory {directory!r} holds a run with another configuration "
            f"({'; '.join(changed)}); {remedy}"
        )
    stale = _program_change(old, program)
    if stale is not None:
        raise StaleStoreError(
            f"the output directory {directory!r} holds chunks computed by another program ({stale}); {remedy}"
        )
    return old


def _shown_key(words) -> str:
    """A stored root key's data as the key it is: ``jax.random.key(3)`` for ``[0, 3]``, else the data."""
    if isinstance(words, list) and len(words) == 2 and words[0] == 0 and isinstance(words[1], int):
        return f"jax.random.key({words[1]})"
    return f"key data {words!r}"


def _salt(store: ChunkStore | None) -> str | None:
    """The key of the programs that compute ``store``'s chunks: its fingerprint where its program holds a
    user's code (no ``inputs_sha256``), so that they are traced from the code its fingerprint traced
    (:func:`~htb_jax._src.pytree.keyed_by`); ``None`` otherwise (htb_jax's own code is the installed one)."""
    if store is None or "inputs_sha256" in store.program:
        return None
    return hashlib.sha256(json.dumps(store.program, sort_keys=True).encode()).hexdigest()


def run_chunks(
    layout: list[tuple[int, int]],
    compute: Callable[[int, int], dict[str, np.ndarray]],
    store: ChunkStore | None = None,
    progress: Callable[..., None] | None = None,
    stream=None,
) -> tuple[list[dict[str, np.ndarray]], int]:
    """Every chunk's arrays: read back from ``store`` where intact, else ``compute(first, count)``.

    Each computed chunk is saved to ``store`` (if any) before the next starts,
    then ``progress(done, total, started, stream, initial=, chunk=)`` is called
    (``initial``: seeds read back, so an ETA extrapolates from computed seeds only).

    Returns:
      ``(parts, resumed)``: the arrays of every chunk in layout order, and how
      many chunks were read back.

    Raises:
      Interrupted: on ``KeyboardInterrupt``, with the chunks stored so far (a
        chunk being written is either whole on disk or absent).
    """
    stream = sys.stderr if stream is None else stream
    total = sum(count for _, count in layout)
    started = time.perf_counter()
    parts = [store.load(i) if store is not None else None for i in range(len(layout))]
    resumed = sum(part is not None for part in parts)
    initial = done = sum(count for part, (_, count) in zip(parts, layout, strict=True) if part is not None)
    salt = _salt(store)
    try:
        for i, (first, count) in enumerate(layout):
            if parts[i] is not None:
                continue
            check_interrupt()
            with keyed_by(salt):
                parts[i] = compute(first, count)
            if store is not None:
                store.save(i, parts[i])
            done += count
            if progress is not None:
                chunks_done = sum(part is not None for part in parts)  # a recomputed chunk may precede stored ones
                progress(done, total, started, stream, initial=initial, chunk=(chunks_done, len(layout)))
    except KeyboardInterrupt:
        if store is None:
            raise Interrupted(0, len(layout), None) from None
        store.discard()
        raise Interrupted(store.stored(), len(layout), store.directory) from None
    except BaseException:
        if store is not None:
            store.discard()
        raise
    finally:
        if progress is not None and getattr(stream, "isatty", lambda: False)():
            stream.write("\n")
    return parts, resumed


def check_store_dir(directory: str, remedy: Remedy = CLI_REMEDY) -> None:
    """``ValueError`` unless a :class:`ChunkStore` can write into ``directory`` (found by trying: see
    :func:`~htb_jax._src.output_dir.check_output_dir`), which must not hold a file where its chunks go.

    Called by the functions that take a store before they compute anything, and by :class:`ChunkStore`.
    """
    directory = os.fspath(directory)
    name = None if remedy.directory.startswith("--") else remedy.directory
    check_output_dir(directory, name)
    chunk_dir = os.path.join(directory, CHUNK_DIR)
    if os.path.exists(chunk_dir) and not os.path.isdir(chunk_dir):
        raise ValueError(f"{described(directory, name)} holds a file {CHUNK_DIR!r} where its chunks go; "
                         f"give another {remedy.directory}, or move the file")
    if os.path.isdir(chunk_dir):
        check_output_dir(chunk_dir, name)


class ChunkStore:
    """The chunks and manifest of one sweep in ``directory``.

    A new manifest is written just before the first chunk, so a run that
    fails before computing anything leaves none behind.

    Args:
      directory: the output directory, made where it is missing (process 0), and locked while the
        store is used.
      config: the sweep's identity, a JSON-able dict (what must match to resume).
      root_key: u32[2] the root key's data.
      layout: ``[(first_seed, num_seeds), ...]`` per chunk.
      program: the :func:`~htb_jax._src.fingerprint.fingerprint` of what computes the chunks
        (must match too), or its :class:`~htb_jax._src.fingerprint.Program`: traced only for a
        new store, or where the stored fingerprint's inputs do not match this run's.
      stream: where notes on recomputed chunks go (stderr).
      restart: delete the manifest and chunks the directory holds (of whatever run) and start
        again, instead of refusing them or resuming from them.
      remedy: how the caller's user gives another directory or restarts, for refusals.

    Raises:
      ValueError: if ``directory`` cannot be made or written (tried at once, leaving nothing behind), or
        holds a file where the chunks' directory goes.
      ForeignStoreError: if ``directory`` holds a manifest of another sweep, one that cannot
        be read, or chunk files without a manifest (and ``restart`` is false).
      StaleStoreError: if its chunks were computed by another program (and ``restart`` is false).
    """

    def __init__(self, directory: str, config: dict, root_key, layout, program: dict | fingerprint_lib.Program,
                 stream=None, restart: bool = False, remedy: Remedy = CLI_REMEDY):
        self.directory = directory
        self.chunk_dir = os.path.join(directory, CHUNK_DIR)
        self.stream = sys.stderr if stream is None else stream
        self.layout = [[int(a), int(b)] for a, b in layout]
        self.config = json.loads(json.dumps(config))
        root_key = [int(x) for x in np.asarray(root_key).ravel()]
        self.writer = jax.process_index() == 0
        self.remedy = remedy
        self._lock = None
        self.written = False  # a new manifest is written with the first chunk, not before
        check_store_dir(directory, remedy)
        # A missing directory is made and locked now, so that a second command into it is refused at once;
        # _made: the highest of the folders made (None: it was there), removed by discard.
        self._made = None
        if self.writer:
            path = os.path.realpath(directory)  # as the file system resolves it: a symlink, then ".."
            while not os.path.isdir(path):
                self._made, path = path, os.path.dirname(path)
            os.makedirs(directory, exist_ok=True)
        try:
            self._open(root_key, program, restart)
        except BaseException:
            self.discard()
            raise

    def _open(self, root_key: list[int], program: dict | fingerprint_lib.Program, restart: bool) -> None:
        """Takes the lock, reads the manifest (or deletes it: ``restart``) and sets :attr:`manifest`."""
        directory, remedy = self.directory, self.remedy
        if self.writer:
            self._hold()
            remove_unmoved_outputs(directory)
        if restart:
            old = None  # every process ignores what is there; process 0 deletes it
            if self.writer:
                self._delete_stored()
        else:
            old = read_manifest(directory, self.config, root_key, self.layout, program, remedy)
            if old is None and self._chunk_files():
                raise ForeignStoreError(
                    f"the output directory {directory!r} holds chunk files but no {MANIFEST} that says which run "
                    f"computed them; {remedy}"
                )
        if isinstance(program, fingerprint_lib.Program):  # the stored fingerprint where its inputs matched
            program = program.fingerprint() if old is None else program.resolve(old["program"])
        self.program = dict(program)
        self.written = old is not None
        # Temporary files left by a run killed mid-write: the chunks', and the manifest's where the lock is
        # held (a command on a file system without locks might be writing its own manifest).
        left = []
        if self.writer and os.path.isdir(self.chunk_dir):
            left += [os.path.join(self.chunk_dir, n) for n in os.listdir(self.chunk_dir) if n.endswith(".tmp")]
        if self.writer and self._lock is not None:
            left += [os.path.join(directory, n) for n in os.listdir(directory)
                     if n.startswith(f".{MANIFEST}.") and n.endswith(".tmp")]
        for path in left:
            os.remove(path)
        if old is not None:
            path = os.path.join(directory, MANIFEST)
            self.manifest = {**old, "program": self.program}
            if self.program != old["program"]:  # traced, the same program: its inputs' key recorded for the next
                self._write_manifest()
            env = environment()
            if old.get("versions") != env["versions"]:
                self.stream.write(
                    f"note: {path} was written with {old.get('versions')}; resuming with {env['versions']}\n"
                )
        else:
            self.manifest = {
                "format": FORMAT,
                "kind": "htb_jax sweep",
                "config": self.config,
                "root_key": root_key,
                "key_impl": "threefry2x32",
                "chunks": self.layout,
                "program": self.program,
                **environment(),
                "chunk_sha256": {},
            }

    def _hold(self) -> None:
        """Takes the directory's lock (:mod:`~htb_jax._src.directory_lock`), or refuses a directory that another
        running command writes into."""
        try:
            self._lock = directory_lock.hold(self.directory)
        except directory_lock.InUseError as in_use:
            raise ForeignStoreError(
                f"the output directory {self.directory!r} is being written by another running command"
                f"{in_use.owner}; wait for it to end, or give another {self.remedy.directory}"
            ) from None

    def discard(self) -> None:
        """Removes the folders this store made (the directory and its missing parents), if no chunk was
        written: a run that fails or is stopped before its first chunk leaves none behind (one that holds
        other files stays)."""
        if self._made is None or self.written:
            return
        if self._lock is not None:  # removed while held: a command that takes it later sees it gone
            os.remove(os.path.join(self.directory, directory_lock.LOCK))
            directory_lock.release(self.directory, self._lock)
            self._lock = None
        path = os.path.realpath(self.directory)
        while True:
            try:
                os.rmdir(path)
            except OSError:  # not empty: something else was put there
                break
            if path == self._made:
                break
            path = os.path.dirname(path)
        self._made = None

    def __del__(self):
        try:
            directory_lock.release(self.directory, getattr(self, "_lock", None))
        except Exception:  # noqa: BLE001 -- at interpreter exit the modules may be gone; the OS releases the lock
            pass

    def _chunk_files(self) -> list[str]:
        """The paths of the chunk files in the directory, of whatever run."""
        if not os.path.isdir(self.chunk_dir):
            return []
        return [os.path.join(self.chunk_dir, name) for name in sorted(os.listdir(self.chunk_dir))
                if name.startswith("chunk-") and name.endswith(".npz")]

    def _delete_stored(self) -> None:
        """Deletes the manifest and every chunk file (``restart``; temporary files go as on every start);
        nothing else in the directory."""
        path = os.path.join(self.directory, MANIFEST)
        if os.path.exists(path):
            os.remove(path)
        for chunk in self._chunk_files():
            os.remove(chunk)

    def _write_manifest(self) -> None:
        if not self.writer:
            return
        text = json.dumps(self.manifest, indent=2, sort_keys=True) + "\n"
        atomic_write(os.path.join(self.directory, MANIFEST), lambda f: f.write(text.encode()))

    def stored(self) -> int:
        """How many of the layout's chunk files are on disk (each whole: a file appears by an atomic rename)."""
        return sum(os.path.exists(self.path(i)) for i in range(len(self.layout)))

    def path(self, index: int) -> str:
        return os.path.join(self.chunk_dir, f"chunk-{index:05d}.npz")

    def load(self, index: int) -> dict[str, np.ndarray] | None:
        """Chunk ``index`` if it is on disk and intact, else ``None`` (a damaged file is deleted).

        Intact: the file's SHA-256 equals the manifest's (where the manifest
        has it: a run killed between the chunk's rename and the manifest's
        update leaves none), the arrays hash to the digest stored inside,
        and they hold the seeds the layout assigns to the chunk.
        """
        path = self.path(index)
        if not os.path.exists(path):
            return None
        first, count = self.layout[index]
        try:
            with open(path, "rb") as f:
                raw = f.read()
            expected = self.manifest["chunk_sha256"].get(str(index))
            ok = expected is None or hashlib.sha256(raw).hexdigest() == expected
            if ok:
                with np.load(io.BytesIO(raw), allow_pickle=False) as data:
                    arrays = {name: data[name] for name in data.files}
                stored = str(arrays.pop("sha256"))
                ok = stored == digest(arrays)
                ok = ok and int(arrays["first_seed"]) == first and int(arrays["num_seeds"]) == count
        except Exception:  # truncated zip, bad CRC, missing arrays: all mean "recompute"
            ok = False
        if ok:
            if expected is None and self.writer:  # a run killed between its rename and the manifest's update
                self.manifest["chunk_sha256"][str(index)] = hashlib.sha256(raw).hexdigest()
                self._write_manifest()
            return arrays
        self.stream.write(f"note: {path} is damaged or incomplete; recomputing it\n")
        if self.writer:
            os.remove(path)
        self.manifest["chunk_sha256"].pop(str(index), None)
        return None

    def save(self, index: int, arrays: Mapping[str, np.ndarray]) -> None:
        """Writes chunk ``index`` atomically, then records its digest in the manifest (process 0 only)."""
        if not self.writer:
            return
        os.makedirs(self.chunk_dir, exist_ok=True)  # also where a manifest was left without its chunks
        if not self.written:  # the manifest before any chunk: a chunk file never lies outside one
            if os.path.exists(os.path.join(self.directory, MANIFEST)):
                raise ForeignStoreError(
                    f"the output directory {self.directory!r} got a {MANIFEST} from another command while this "
                    f"one computed its first chunk; {self.remedy}"
                )
            self._write_manifest()
            self.written = True
        first, count = self.layout[index]
        arrays = {**arrays, "first_seed": np.int64(first), "num_seeds": np.int64(count)}
        arrays = {name: np.asarray(a) for name, a in arrays.items()}
        buffer = io.BytesIO()
        np.savez(buffer, sha256=np.str_(digest(arrays)), **arrays)
        data = buffer.getvalue()
        atomic_write(self.path(index), lambda f: f.write(data))
        self.manifest["chunk_sha256"][str(index)] = hashlib.sha256(data).hexdigest()
        self._write_manifest()
