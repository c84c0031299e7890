"""A Ctrl-C during ``import htb_jax`` is never dropped.

Importing jax registers a garbage-collection callback (``_xla_gc_callback``).  A ``KeyboardInterrupt``
raised inside a garbage-collection callback is printed as "Exception ignored" and dropped: a Ctrl-C
that arrived there during the import (about one in three at 0.3 to 0.75 s into ``htb-jax sweep``)
was lost, and the command ran to its end with status 0.  While htb_jax imports, :func:`start` sets a
handler that records such a signal instead of raising it there, and :func:`finish` raises it once
the import is done (in the ``htb-jax`` command, one line and status 130).  Standard library only: it
runs before jax is imported.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading

_dropped = False  # a SIGINT arrived inside a garbage-collection callback during the import
_installed = False


def in_gc_callback(frame) -> bool:
    """Whether ``frame`` (where a signal arrived) runs inside a garbage-collection callback, such as
    jax's ``_xla_gc_callback``: a ``KeyboardInterrupt`` raised there is dropped."""
    callbacks = {getattr(callback, "__code__", None) for callback in gc.callbacks} - {None}
    while frame is not None:
        if frame.f_code in callbacks:
            return True
        frame = frame.f_back
    return False


def _command_line() -> bool:
    """Whether this process is the ``htb-jax`` command (its console script, ``htb-jax.exe`` on Windows)."""
    name = os.path.basename((getattr(sys, "argv", None) or [""])[0]).split(".")[0]
    return name in ("htb-jax", "htb-jax-script")


def _stop() -> None:
    """The import's Ctrl-C: in the ``htb-jax`` command one line and status 130, as a run's (nothing was run
    or written yet; raised, it printed the import's traceback, or an ``ImportError`` with status 1 where it
    arrived in an extension's initialization); else ``KeyboardInterrupt``."""
    if _command_line():
        os.write(2, b"htb-jax: interrupted while starting; nothing was run\n")
        os._exit(128 + signal.SIGINT)
    raise KeyboardInterrupt


def _handler(signum, frame) -> None:
    global _dropped
    if in_gc_callback(frame):
        _dropped = True
        return
    _restore()  # the import ends here: Python's own handler again, nothing recorded left behind
    _stop()


def _restore() -> None:
    global _installed, _dropped
    if _installed and signal.getsignal(signal.SIGINT) is _handler:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _installed, _dropped = False, False


def start() -> None:
    """Sets the import's SIGINT handler, where Python's default one is set (in the main thread only;
    a handler of the program's own is left alone)."""
    global _installed
    if threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _handler)
        _installed = True


def finish() -> None:
    """Restores Python's default SIGINT handler, then raises the ``KeyboardInterrupt`` of a Ctrl-C
    that arrived inside a garbage-collection callback during the import.  In the ``htb-jax`` command the
    handler stays until the command sets its own (:func:`hand_over`): its own modules still import."""
    global _dropped
    dropped = _dropped
    if _command_line() and _installed:
        _dropped = False
    else:
        _restore()
    if dropped:
        _stop()


def hand_over() -> None:
    """Called by the ``htb-jax`` command before it sets its own handlers: Python's default one again, and
    a Ctrl-C recorded since the import ended stops the command now."""
    dropped = _dropped
    _restore()
    if dropped:
        _stop()
