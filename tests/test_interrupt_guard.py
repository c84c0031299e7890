"""A Ctrl-C during ``import htb_jax`` is raised once the import is done, never dropped.

A ``KeyboardInterrupt`` raised inside a garbage-collection callback (jax's ``_xla_gc_callback``, which
runs at any allocation once jax is imported) is printed as "Exception ignored" and dropped: ``htb-jax
sweep`` interrupted 0.3 to 0.75 s after it started then ran to its end with status 0 (about one try in
three).  These tests deliver the signal inside a callback the way the interpreter does.
"""

import gc
import signal
import sys

import pytest

from htb_jax._src import interrupt_guard


@pytest.fixture
def default_handler():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _signal_inside_a_gc_callback():
    """Calls the SIGINT handler from inside a garbage-collection callback, as a signal arriving there."""
    def callback(phase, info):
        if phase == "start":
            signal.getsignal(signal.SIGINT)(signal.SIGINT, sys._getframe())

    gc.callbacks.append(callback)
    try:
        gc.collect()  # Python drops an exception raised in the callback, with "Exception ignored"
    finally:
        gc.callbacks.remove(callback)


def test_a_ctrl_c_inside_a_gc_callback_is_raised_when_the_import_ends(default_handler):
    interrupt_guard.start()
    assert signal.getsignal(signal.SIGINT) is interrupt_guard._handler
    _signal_inside_a_gc_callback()  # recorded, not raised: the import goes on
    with pytest.raises(KeyboardInterrupt):
        interrupt_guard.finish()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's own again
    interrupt_guard.finish()  # raised once


def test_elsewhere_a_ctrl_c_is_raised_at_once_and_ends_the_guard(default_handler):
    # Raised there, it aborts the import: finish() never runs, so the handler restores Python's own itself
    # (it stayed installed, and the command line, which sets its own only over the default, kept it), and
    # forgets a Ctrl-C recorded before (a later import raised it again).
    interrupt_guard.start()
    _signal_inside_a_gc_callback()
    with pytest.raises(KeyboardInterrupt):
        interrupt_guard._handler(signal.SIGINT, sys._getframe())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    interrupt_guard.finish()  # nothing left: nothing raised


def test_importing_htb_jax_leaves_pythons_handler():
    import htb_jax  # noqa: F401  (imported by conftest: the guard started and finished then)

    assert signal.getsignal(signal.SIGINT) is not interrupt_guard._handler and not interrupt_guard._installed


def test_a_programs_own_handler_is_left_alone():
    def own(signum, frame):
        pass

    previous = signal.signal(signal.SIGINT, own)
    try:
        interrupt_guard.start()
        assert signal.getsignal(signal.SIGINT) is own
        interrupt_guard.finish()
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, previous)


def test_in_the_command_line_a_ctrl_c_while_starting_is_one_line_and_status_130(default_handler, monkeypatch, capfd):
    # Raised, it printed the import's traceback (or an ImportError, status 1, inside an extension's
    # initialization); after the import, the command's own modules still import before main() sets its
    # handlers, so the guard's stays until then (hand_over).
    def exit_(status):
        raise SystemExit(status)

    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/htb-jax", "sweep"])
    monkeypatch.setattr(interrupt_guard.os, "_exit", exit_)
    interrupt_guard.start()
    interrupt_guard.finish()
    assert signal.getsignal(signal.SIGINT) is interrupt_guard._handler  # kept for the command's own imports
    with pytest.raises(SystemExit) as stopped:
        interrupt_guard._handler(signal.SIGINT, sys._getframe())
    assert stopped.value.code == 130
    assert capfd.readouterr().err == "htb-jax: interrupted while starting; nothing was run\n"
    interrupt_guard.start()
    _signal_inside_a_gc_callback()  # recorded in the command's imports: main() stops at its hand-over
    with pytest.raises(SystemExit):
        interrupt_guard.hand_over()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
