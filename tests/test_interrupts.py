"""Ctrl-C during a command: one line, status 130, every finished chunk kept and none half-written.

The interrupt is raised at chosen moments inside the run (a ``KeyboardInterrupt`` where Python
would raise it for SIGINT): while the first chunk computes, while the second does, while a chunk
file is being written, and between a chunk's rename and the manifest's update; the same command
then resumes and ends with the uninterrupted run's outputs.  ``tests/test_resumable.py`` sends a
real SIGINT to a running command.
"""

import contextlib
import io
import signal
import sys

import pytest

from htb_jax._src import chunk_store, resumable
from htb_jax._src.cli import interrupted, main

SWEEP = ["sweep", "--arms", "3", "--alphas", "0.8", "--qs", "0", "--horizons", "1000,3000", "--pareto-shape", "3",
         "--seeds", "6", "--seed-chunk", "2"]
FRONTIER = ["frontier", "--eps", "1", "--alphas-per-eps", "1", "--horizons", "1e3,1e4,1e5", "--fit-from", "1e3",
            "--seeds", "6", "--seed-chunk", "2"]
POLICY = ["frontier", "--policy", "htb_jax:UCB1()", "--eps", "1", "--horizons", "100,200", "--fit-from", "100",
          "--anytime", "no", "--seeds", "6", "--seed-chunk", "2"]
# Where each command calls simulate, once per chunk of seeds.
SIMULATES = {"sweep": "htb_jax._src.sweep", "frontier": "htb_jax._src.frontier.runs",
             "policy": "htb_jax._src.frontier.measure"}
COMMANDS = {"sweep": SWEEP, "frontier": FRONTIER, "policy": POLICY}


def _interrupt_call(monkeypatch, module: str, call: int):
    """``simulate`` in ``module`` raises KeyboardInterrupt on its ``call``-th call (1-based)."""
    target = sys.modules[module]
    original = target.simulate
    calls = []

    def simulate(*args, **kwargs):
        calls.append(None)
        if len(calls) == call:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(target, "simulate", simulate)


def _run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """Each command's stdout, run without interruption."""
    tables = {}
    for name, argv in COMMANDS.items():
        out = tmp_path_factory.mktemp(name)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
            assert main([*argv, "--out", str(out)]) == 0
        tables[name] = buffer.getvalue()
    return tables


@pytest.mark.parametrize("command", list(COMMANDS))
def test_ctrl_c_between_chunks_prints_one_line_and_the_command_resumes(tmp_path, monkeypatch, capsys, command,
                                                                        uninterrupted):
    """Ctrl-C while the second of three chunks computes, in each command.

    Catches the traceback of a ``KeyboardInterrupt`` through JAX (any line but the last), a status
    other than 130, a table printed for a partial run, a finished chunk lost, and a count of stored
    chunks that disagrees with the disk."""
    out = tmp_path / "out"
    argv = [*COMMANDS[command], "--out", str(out)]
    with monkeypatch.context() as m:
        _interrupt_call(m, SIMULATES[command], 2)
        status, printed, err = _run(argv, capsys)
    assert status == 130 and printed == ""
    assert err.splitlines()[-1] == (
        f"htb-jax: interrupted: 1 of 3 chunks stored in {out}; the same command resumes from them")
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert sorted(p.name for p in (out / "chunks").iterdir()) == ["chunk-00000.npz"]
    status, printed, err = _run(argv, capsys)
    assert status == 0 and "resumed: 1 " in err
    assert printed == uninterrupted[command]


def test_ctrl_c_at_every_moment_of_a_chunk_keeps_whole_chunks_only(tmp_path, monkeypatch, capsys, uninterrupted):
    """The sweep interrupted before its first chunk is stored, in the middle of writing a chunk's file,
    and between a chunk's rename and the manifest's update; started again each time, it ends with
    the uninterrupted run's table.

    Catches a chunk written in place (a half file left under its final name), a temporary file left
    behind, a chunk whose manifest entry is missing refused on resume, and a message that counts the
    chunks in the manifest rather than on disk."""
    out = tmp_path / "out"
    argv = [*SWEEP, "--out", str(out)]

    with monkeypatch.context() as m:
        _interrupt_call(m, SIMULATES["sweep"], 1)
        status, _, err = _run(argv, capsys)
    assert status == 130
    assert err.splitlines()[-1] == f"htb-jax: interrupted before the first of 3 chunks was stored in {out}"

    original_write = chunk_store.atomic_write

    def write_half_of_chunk_1(path, write):
        if not path.endswith("chunk-00001.npz"):
            return original_write(path, write)

        def half(f):
            buffer = io.BytesIO()
            write(buffer)
            f.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
            raise KeyboardInterrupt

        return original_write(path, half)

    with monkeypatch.context() as m:
        m.setattr(chunk_store, "atomic_write", write_half_of_chunk_1)
        status, _, err = _run(argv, capsys)
    assert status == 130
    assert err.splitlines()[-1] == f"htb-jax: interrupted: 1 of 3 chunks stored in {out}; the same command resumes from them"
    assert sorted(p.name for p in (out / "chunks").iterdir()) == ["chunk-00000.npz"]  # no half file, no .tmp

    def interrupted_manifest(self):  # chunk 1 renamed into place, the manifest's entry for it not yet written
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(chunk_store.ChunkStore, "_write_manifest", interrupted_manifest)
        status, _, err = _run(argv, capsys)
    assert status == 130
    assert err.splitlines()[-1] == f"htb-jax: interrupted: 2 of 3 chunks stored in {out}; the same command resumes from them"

    status, printed, err = _run(argv, capsys)
    assert status == 0 and "resumed: 2 of 3 chunks" in err and "damaged" not in err
    assert printed == uninterrupted["sweep"]


def test_the_command_line_ends_at_once_after_an_interrupt(monkeypatch, capsys):
    # Run as the command line (argv None), Ctrl-C ends the process at once (os._exit(130)), skipping
    # Python's finalization, where XLA's half-initialized objects can crash it (SIGSEGV instead of
    # status 130); main called with arguments returns 130. Catches main returning, or calling
    # sys.exit, after an interrupt of the command line, and an os._exit from Python callers.
    import htb_jax._src.cli as cli

    class ExitCalledError(Exception):
        pass

    def exit_(status):
        raise ExitCalledError(status)

    def interrupted_sweep(args):
        raise KeyboardInterrupt

    installed = {}
    monkeypatch.setattr(cli.os, "_exit", exit_)
    monkeypatch.setattr(cli, "run_sweep", interrupted_sweep)
    monkeypatch.setattr(cli.sys, "argv", ["htb-jax", "sweep"])
    monkeypatch.setattr(cli.signal, "signal", lambda signum, handler: installed.setdefault(signum, handler))
    # As in a terminal (a pytest-xdist worker, like a shell's background job, may have its own handlers).
    monkeypatch.setattr(cli.signal, "getsignal", lambda signum: {signal.SIGINT: signal.default_int_handler,
                                                                 signal.SIGTERM: signal.SIG_DFL}[signum])
    with pytest.raises(ExitCalledError) as exited:
        cli.main()
    assert exited.value.args == (130,)
    # The command line records Ctrl-C and SIGTERM (a scheduler's time limit); main from Python installs nothing.
    assert installed == {signal.SIGINT: resumable.stop_handler, signal.SIGTERM: resumable.stop_handler}
    assert cli.main(["sweep"]) == 130
    assert capsys.readouterr().err.count("htb-jax: interrupted;") == 2
    assert len(installed) == 2


def test_ctrl_c_while_the_outputs_are_written_leaves_the_earlier_ones_whole(tmp_path, monkeypatch, capsys,
                                                                           uninterrupted):
    """Interrupted while drawing its figure, the last of its three files, a sweep leaves the files of the
    run before it, all three, and no temporary folder. Catches sweep.csv and sweep.npz of one run beside
    sweep.png of another (they were written one by one into place)."""
    from htb_jax._src import sweep as sweep_lib

    out = tmp_path / "out"
    argv = [*SWEEP, "--out", str(out)]
    assert _run(argv, capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert {"sweep.csv", "sweep.npz", "sweep.png"} <= set(before)

    def interrupted(result, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_lib, "plot", interrupted)
    (out / "sweep.csv").write_text("an earlier run's table\n")
    before["sweep.csv"] = b"an earlier run's table\n"
    status, _, err = _run(argv, capsys)
    assert status == 130 and err.splitlines()[-1].startswith("htb-jax: interrupted")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["chunks"]


def test_a_bench_stopped_inside_its_first_run_says_the_run_resumes():
    """A benchmark stopped before any run finished may have stored chunks of that run (the worst case's
    two-point part): the line says it resumes from them. Catches "before the first of 1 runs was stored",
    which reads as if nothing were kept."""
    line = interrupted(resumable.Interrupted(0, 1, "out", "runs"))
    assert line == "interrupted before the first of 1 run was finished; the same command resumes from what out stores"
    assert interrupted(resumable.Interrupted(0, 3, "out")) == "interrupted before the first of 3 chunks was stored in out"
    assert interrupted(resumable.Interrupted(0, 1, "out")) == "interrupted before the first of 1 chunk was stored in out"
