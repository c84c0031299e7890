"""One writer per output directory: an advisory lock that a second run into the same directory is refused by.

Two commands started with the same ``--out`` (two jobs of a cluster, two terminals) each read the
directory when they open it, and before either has written a manifest neither sees the other: each
would write its own manifest and chunks over the other's, and both would end "successfully" with one
run's results lost.  The process that writes a store therefore holds ``flock`` on the file
:data:`LOCK` in its directory while it computes; another process that opens the store then is
refused in one line.  The operating system releases the lock when the process ends, however it ends
(``kill -9`` included), so no stale lock is ever left to remove.

Where ``fcntl`` is missing (Windows) or the file system refuses locks, no lock is taken and two runs
into one directory go undetected, as before.
"""

from __future__ import annotations

import errno
import os
from typing import IO

LOCK = ".htb-jax.lock"

# The lock file each directory's store of this process holds, by real path: one run at a time uses a
# directory in a process, so a store opened again there (a notebook's cell run again while the first
# store is still referenced by a traceback) takes the lock over instead of refusing itself.
_HELD: dict[str, IO[str]] = {}


class InUseError(Exception):
    """Another running process holds the lock: ``owner`` says which (``" (process 123)"``, or ``""``)."""

    def __init__(self, owner: str):
        super().__init__(owner)
        self.owner = owner


def hold(directory: str) -> IO[str] | None:
    """Takes the lock of ``directory`` (which exists) for this process.

    Returns:
      The open lock file (kept open while the store is used), or ``None`` where locks are not available.

    Raises:
      InUseError: if another running process holds the lock.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    real = os.path.realpath(directory)
    held = _HELD.pop(real, None)
    if held is not None:
        held.close()
    handle = open(os.path.join(directory, LOCK), "a+")  # noqa: SIM115 -- kept open while the store is used
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        handle.seek(0)
        pid = handle.read().strip()
        handle.close()
        if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return None  # a file system without locks
        raise InUseError(f" (process {pid})" if pid.isdigit() else "") from None
    try:  # the file locked is still the directory's (a store that made the directory removes both)
        current, opened = os.stat(os.path.join(directory, LOCK)), os.fstat(handle.fileno())
        gone = (current.st_ino, current.st_dev) != (opened.st_ino, opened.st_dev)
    except FileNotFoundError:
        gone = True
    if gone:
        handle.close()
        raise InUseError("")
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    _HELD[real] = handle
    return handle


def release(directory: str, handle: IO[str] | None) -> None:
    """Releases a lock :func:`hold` returned, unless another store of this process took it over since."""
    if handle is None:
        return
    real = os.path.realpath(directory)
    if _HELD.get(real) is handle:
        del _HELD[real]
    handle.close()
