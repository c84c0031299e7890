"""The directory a run writes into: checked by trying, before anything is computed, and made; by
process 0 alone under ``jax.distributed``."""

from __future__ import annotations

import os
import tempfile

import jax


def check_output_dir(path: str, name: str | None = None) -> None:
    """``ValueError`` unless ``path`` is a writable directory or one that can be created; leaves nothing behind.

    Args:
      path: the directory.
      name: the argument that gave it, for the messages (``store``); ``None``: a command's ``--out``,
        "the output directory".
    """
    if not isinstance(path, str) or not path:
        raise ValueError(f"the output directory must be a path; got out={path!r}.")
    what = described(path, name)
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise ValueError(f"cannot create {what}: it is a file")
        if not os.access(path, os.W_OK | os.X_OK):
            raise ValueError(f"{what} is not writable.")
        try_output_dir(path, name)
        return
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"cannot create {what}: {parent!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot create {what}: {parent!r} is not writable")
    try_output_dir(path, name)


def described(path: str, name: str | None) -> str:
    """``path`` as the messages name it: "the output directory 'x'" or "the directory store='x'"."""
    return f"the output directory {path!r}" if name is None else f"the directory {name}={path!r}"


def try_output_dir(path: str, name: str | None = None) -> None:
    """``ValueError`` where ``path`` cannot be created or written, found by trying: the missing
    directories and one file in ``path`` are made and removed again (``name`` as in
    :func:`check_output_dir`).

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
            raise ValueError(f"cannot create {described(path, name)}: {e.strerror}") from None
        raise ValueError(f"{described(path, name)} is not writable ({e.strerror}).") from None
    finally:
        for directory in reversed(created):
            try:
                os.rmdir(directory)
            except OSError:
                pass


def make_output_dir(path: str) -> None:
    """Makes the (checked) output directory ``path`` and the missing ones above it."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the output directory {path!r}: {e.strerror}") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"the output directory {path!r} is not writable.")
