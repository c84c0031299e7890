"""The ``htb-jax`` command line: ``frontier`` (:mod:`.frontier_command`), ``sweep``
(:mod:`.sweep_command`) and ``bench`` (:mod:`.bench_command`), their argument types (:mod:`.arguments`) and output directory
(:mod:`.output_dir`)."""

from __future__ import annotations

import atexit
import difflib
import os
import signal
import sys

import htb_jax  # noqa: F401  (enables x64 before anything is traced)
from htb_jax._src import distributed, interrupt_guard, resumable
from htb_jax._src.cli.arguments import Parser
from htb_jax._src.cli.bench_command import add_bench_parser, run_bench
from htb_jax._src.cli.frontier_command import add_frontier_parser, run_frontier
from htb_jax._src.cli.sweep_command import add_sweep_parser, run_sweep
from htb_jax._src.protocol_checks import USER_CODE_NOTE


def main(argv=None) -> int:
    """Runs the command line ``htb-jax ARGV`` and returns its exit status; from the command line
    itself (``argv`` None) the process ends here (:func:`end_process`), and Ctrl-C and SIGTERM are
    also recorded (:func:`~htb_jax._src.resumable.stop_handler`) where their default handlers are set."""
    if argv is None:
        interrupt_guard.hand_over()  # the import's handler, kept while the command's modules imported
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, resumable.stop_handler)
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # a scheduler's time limit: stop as on Ctrl-C
            signal.signal(signal.SIGTERM, resumable.stop_handler)
    status = _run(argv)
    if argv is None:
        end_process(status)
    return status


def end_process(status: int) -> None:
    """Ends the command line's process with ``status`` once the command is done: the functions
    registered with :mod:`atexit` run (JAX's, a user module's), the standard streams are flushed,
    and Python's finalization, which only frees memory, is skipped.

    That finalization took 0.45 to 0.7 s after ``htb-jax frontier`` on a 2-core AMD EPYC (tearing
    down the objects of JAX, XLA and matplotlib), more than the fits and the table together.
    Every file the command writes is closed by then.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone (``| head``) or a stream closed: nothing more to show
            pass
    os._exit(status)


def _run(argv) -> int:
    parser = Parser(
        prog="htb-jax",
        description="htb_jax: simulate heavy-tailed bandits and the AdaR-ETC regret frontier.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_frontier_parser(sub)
    add_sweep_parser(sub)
    add_bench_parser(sub)
    given = sys.argv[1:] if argv is None else list(argv)  # (argv stays None: the command line itself)
    args, extra = parser.parse_known_args(given)
    if extra:  # refused by the parser of the command they follow, so that its help is the one pointed to
        after = args.command is not None and extra[0] in given[given.index(args.command) + 1:]
        (sub.choices[args.command] if after else parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:  # usage errors are one line on stderr, status 2
        print("htb-jax: error: give a command: frontier (the T-frontier, the main job), sweep or bench "
              "(see 'htb-jax --help')", file=sys.stderr)
        return 2
    try:
        # Joining the other processes comes first: checking a configuration already uses the devices.
        # (bench runs on one host: it has no such flags)
        if hasattr(args, "coordinator") and distributed.check_arguments(
            args.coordinator, args.num_processes, args.process_id
        ):
            distributed.initialize(args.coordinator, args.num_processes, args.process_id)
            if signal.getsignal(signal.SIGTERM) is resumable.stop_handler:  # jax's preemption notifier took it
                signal.signal(signal.SIGTERM, resumable.stop_handler)
        distributed.check_backend()
        distributed.check_same_command(args)  # before anything is read or written (several processes only)
        if args.command == "bench":  # its report records the command line
            return run_bench(args, given)
        return run_frontier(args) if args.command == "frontier" else run_sweep(args)
    except (ValueError, TypeError, OSError) as e:
        if isinstance(e, OSError):  # a full disk names no file: "htb-jax: error: : No space left on device"
            message = f"{e.filename}: {e.strerror or e}" if e.filename else f"{e.strerror or e} (writing the results)"
        else:
            message = str(e)
        print(f"htb-jax: error: {_one_line(message, e)}", file=sys.stderr)
        return 2
    except Exception as e:
        # Any other error the user's policy or law raised when called before the run (an AttributeError
        # of a misspelt name, say): the checks noted which function raised it.
        if not any(note.startswith(USER_CODE_NOTE) for note in getattr(e, "__notes__", ())):
            raise
        message = f"{type(e).__name__}: {e}"
        if isinstance(e, AttributeError) and e.name is not None and e.obj is not None:  # what Python's traceback adds
            close = difflib.get_close_matches(e.name, [n for n in dir(e.obj) if not n.startswith("_")], n=1)
            message += f". Did you mean: {close[0]!r}?" if close else ""
        print(f"htb-jax: error: {_one_line(message, e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C: one line, status 130 (128 + SIGINT), every finished chunk kept
        terminated = resumable.interrupt_signal() == signal.SIGTERM
        print(f"htb-jax: {interrupted(e, 'terminated' if terminated else 'interrupted')}", file=sys.stderr)
        status = 128 + (signal.SIGTERM if terminated else signal.SIGINT)
        if argv is None:  # the command line itself: end at once (see end_after_interrupt)
            end_after_interrupt(status)
        return status


def _one_line(message: str, error: BaseException) -> str:
    """A message of several lines (JAX's, on a traced value) by its first, then the notes that say
    what raised it and what to do (not JAX's own, on its filtered traceback: ``"-----..."``)."""
    notes = [" ".join(note.split()) for note in getattr(error, "__notes__", ()) if not note.startswith("---")]
    return " ".join([(message.splitlines() or [""])[0], *notes])


def end_after_interrupt(status: int = 130) -> None:
    """Ends the process with ``status`` (130 after Ctrl-C, 143 after SIGTERM) at once, without
    Python's finalization.

    A SIGINT that lands while JAX initializes its backend or compiles can leave XLA's objects in a
    state whose destructors crash at exit (a segmentation fault in about one run in five, measured
    with SIGINT 2 to 3 s into ``htb-jax sweep``). Every stored chunk is already on disk, renamed
    whole. :func:`main` called with arguments (from Python) returns 130 instead.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def interrupted(error: KeyboardInterrupt, stopped: str = "interrupted") -> str:
    """The line a command prints when stopped (``stopped``: ``"interrupted"`` by Ctrl-C, ``"terminated"``
    by SIGTERM): how many chunks are stored, and how to resume."""
    if isinstance(error, resumable.Interrupted) and error.directory is not None:
        unit = error.unit if error.total != 1 else error.unit.removesuffix("s")  # "the first of 1 run"
        if error.stored == 0 and error.unit == "runs":  # a run's own chunks may be stored
            return (f"{stopped} before the first of {error.total} {unit} was finished; the same command resumes "
                    f"from what {error.directory} stores")
        if error.stored == 0:
            return f"{stopped} before the first of {error.total} {unit} was stored in {error.directory}"
        return (
            f"{stopped}: {error.stored} of {error.total} {unit} stored in {error.directory}; the same "
            "command resumes from them"
        )
    return f"{stopped}; the chunks already stored are kept, and the same command resumes from them"
