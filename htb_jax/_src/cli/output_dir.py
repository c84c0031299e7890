"""The output directory of a command: checked (by trying) before anything is printed or computed,
made by process 0 alone under ``jax.distributed``."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping

import jax

from htb_jax._src.resumable import moved_into_place


def check_output_dir(path: str) -> None:
    """``ValueError`` unless ``path`` is a writable directory or one that can be created; leaves nothing behind."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"the output directory must be a path; got out={path!r}.")
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise ValueError(f"cannot create the output directory {path!r}: it is a file")
        if not os.access(path, os.W_OK | os.X_OK):
            raise ValueError(f"the output directory {path!r} is not writable.")
        try_output_dir(path)
        return
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"cannot create the output directory {path!r}: {parent!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot create the output directory {path!r}: {parent!r} is not writable")
    try_output_dir(path)


def try_output_dir(path: str) -> None:
    """``ValueError`` where ``path`` cannot be created or written, found by trying: the missing
    directories and one file in ``path`` are made and removed again.

    ``os.access`` answers for the permissions alone: a root user may "write" anywhere, also where
    nothing can be created (``/proc/x``) or on a read-only mount.  Under ``jax.distributed`` only
    process 0, which writes the results, tries.
    """
    if jax.process_index() != 0:
        return
    missing = []
    parent = os.path.abspath(path)
    while not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    created = []
    try:
        for directory in reversed(missing):
            os.mkdir(directory)
            created.append(directory)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".htb-jax-write-test-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        if missing and len(created) < len(missing):
            raise ValueError(f"cannot create the output directory {path!r}: {e.strerror}") from None
        raise ValueError(f"the output directory {path!r} is not writable ({e.strerror}).") from None
    finally:
        for directory in reversed(created):
            try:
                os.rmdir(directory)
            except OSError:
                pass


def write_together(directory: str, writers: Mapping[str, Callable[[str], None]]) -> dict[str, str]:
    """Writes a command's output files into ``directory`` together (:func:`moved_into_place`):
    ``write(path)`` of each ``name -> write`` makes its file. Returns ``name -> path``."""
    with moved_into_place(directory) as scratch:
        for name, write in writers.items():
            write(os.path.join(scratch, name))
    return {name: os.path.join(directory, name) for name in writers}


def write_text(text: str) -> Callable[[str], None]:
    """A writer for :func:`write_together`: ``text`` into the file at its path."""

    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(text)
    return write


def add_restart_argument(parser) -> None:
    """``--restart``: delete the chunks stored in ``--out`` and start again (see :mod:`htb_jax._src.resumable`)."""
    parser.add_argument(
        "--restart", action="store_true",
        help="delete what --out stores of the runs this command makes, whatever run wrote it, and compute them "
        "again: for sweep and frontier, the manifest and the chunks in --out; for bench, those of every run it "
        "makes (its policy's and the peers', under --out/runs/), other policies' runs kept. Nothing else is "
        "deleted. Without it a stored run of another configuration, or chunks another program computed (a "
        "policy's, a law's or htb_jax's code changed, or htb_jax's, jax's or jaxlib's version), is refused and "
        "nothing is deleted",
    )


def make_output_dir(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the output directory {path!r}: {e.strerror}") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"the output directory {path!r} is not writable.")
