"""Two processes on this machine, joined by ``jax.distributed`` (Gloo on CPU), as two hosts would be.

They give one process's results bit for bit (``simulate`` on the fast path and the engine, and
``htb-jax sweep``); only process 0 touches the output directory (an audit hook in each process
records every write, rename, removal and directory creation under it); and a sweep whose process
is killed resumes from the chunks on disk.
"""

import contextlib
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest

import htb_jax as htb
from conftest import child_xla_flags, cpu_devices
from htb_jax._src import cli

TIMEOUT_S = 240  # per launch of the two processes; both are killed when it runs out

SIMULATE = textwrap.dedent(
    """
    import sys
    from htb_jax._src import distributed
    distributed.initialize(sys.argv[1], 2, int(sys.argv[2]))
    import jax, jax.numpy as jnp, numpy as np
    import htb_jax as htb
    assert jax.process_count() == 2 and len(jax.devices()) == 2, jax.devices()
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    grid = htb.AdaRETC(1.0, jnp.array([0.7, 0.9]), 0.1)
    fast = htb.simulate(jax.random.key(3), grid, nu, [500, 2000], 9)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 9)
    np.savez(sys.argv[3], **{f"fast.{k}": np.asarray(getattr(fast, k)) for k in ("regret", "pulls", "estimates")},
             **{f"engine.{k}": np.asarray(getattr(engine, k)) for k in ("regret", "pulls", "estimates")})
    """
)

# The CLI in a process whose audit hook logs, line by line as they happen (a killed process
# keeps what it logged), every write, rename, removal and directory creation under the output
# directory.
AUDITED_CLI = textwrap.dedent(
    """
    import json, os, sys
    out, log = os.path.realpath(sys.argv[1]), os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    def under_out(path):
        path = os.path.realpath(os.path.abspath(os.fsdecode(path)))
        return path == out or path.startswith(out + os.sep)
    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            mode, flags = args[1], args[2]
            writes = any(c in (mode or "") for c in "wax+") or (mode is None and flags & (os.O_WRONLY | os.O_RDWR))
            if writes and under_out(args[0]):
                os.write(log, (json.dumps(["open", os.fsdecode(args[0])]) + "\\n").encode())
        elif event in ("os.rename", "os.remove", "os.mkdir", "os.rmdir", "os.truncate"):
            path = args[1] if event == "os.rename" else args[0]  # a rename is logged by its target
            if isinstance(path, (str, bytes, os.PathLike)) and under_out(path):
                os.write(log, (json.dumps([event, os.fsdecode(path)]) + "\\n").encode())
    sys.addaudithook(hook)
    from htb_jax._src import cli
    sys.argv = ["htb-jax", *sys.argv[3:]]
    cli.main()  # as the command line runs it: its Ctrl-C and SIGTERM handlers set
    """
)


def _changes(path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _two_processes(commands, tmp_path, env=None):
    """Starts both commands (stdout and stderr to files); kills both on the way out, whatever happens."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=child_xla_flags(), **(env or {}))  # one device each
    procs, logs = [], []
    try:
        for i, command in enumerate(commands):
            log = open(tmp_path / f"process{i}.log", "w+b")
            logs.append(log)
            procs.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                          start_new_session=True))
        yield procs, [tmp_path / f"process{i}.log" for i in range(len(commands))]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for log in logs:
            log.close()


def _wait_all(procs, logs):
    deadline = time.monotonic() + TIMEOUT_S
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"timed out after {TIMEOUT_S} s:\n" + _tails(logs)) from None
    assert all(p.returncode == 0 for p in procs), _tails(logs)


def _tails(logs) -> str:
    return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)


def test_simulate_in_two_processes_equals_one(tmp_path):
    address = f"127.0.0.1:{_free_port()}"
    outs = [tmp_path / f"out{i}.npz" for i in range(2)]
    commands = [[sys.executable, "-c", SIMULATE, address, str(i), str(outs[i])] for i in range(2)]
    with _two_processes(commands, tmp_path) as (procs, logs):
        _wait_all(procs, logs)
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    grid = htb.AdaRETC(1.0, np.array([0.7, 0.9]), 0.1)
    cpu = cpu_devices()[:1]  # the processes' platform (tests/test_sharding.py's one-device program)
    fast = htb.simulate(jax.random.key(3), grid, nu, [500, 2000], 9, devices=cpu)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 9, devices=cpu)
    for out in outs:  # every process holds the whole result
        got = np.load(out)
        for name in ("regret", "pulls", "estimates"):
            np.testing.assert_array_equal(got[f"fast.{name}"], np.asarray(getattr(fast, name)))
            np.testing.assert_array_equal(got[f"engine.{name}"], np.asarray(getattr(engine, name)))


# The shapes of tests/test_resumable.py's sweep: its one-process program serves both.
SWEEP = ["sweep", "--family", "pareto", "--arms", "3", "--gap", "0.3", "--alphas", "0.7,0.9", "--qs", "0",
         "--horizons", "1000,5000", "--seeds", "40", "--seed-chunk", "1", "--key", "5"]
CHUNKS = 40


def _sweep_commands(out, tmp_path, address, run):
    return [
        [sys.executable, "-c", AUDITED_CLI, str(out), str(tmp_path / f"{run}-changes{i}.json"), *SWEEP,
         "--out", str(out), "--coordinator", address, "--num-processes", "2", "--process-id", str(i)]
        for i in range(2)
    ]


def test_sweep_in_two_processes_killed_then_resumed_equals_one(tmp_path, capsys):
    reference = tmp_path / "one"
    assert cli.main([*SWEEP, "--out", str(reference)]) == 0
    capsys.readouterr()
    out = tmp_path / "two"

    # Run 1: both processes start; once process 0 reports its first chunk, it gets SIGTERM (a scheduler's
    # time limit), stops after its chunk with status 143, and process 1, left waiting for it, is killed (-9).
    # Joining the processes installed jax's preemption notifier over the command's SIGTERM handler: process 0
    # went on to the last chunk and ended with status 0.
    commands = _sweep_commands(out, tmp_path, f"127.0.0.1:{_free_port()}", "killed")
    with _two_processes(commands, tmp_path) as (procs, logs):
        deadline = time.monotonic() + TIMEOUT_S
        while f"chunk 1/{CHUNKS}" not in logs[0].read_text(errors="replace"):
            assert time.monotonic() < deadline and procs[0].poll() is None, _tails(logs)
            time.sleep(0.01)
        os.kill(procs[0].pid, signal.SIGTERM)
        assert procs[0].wait(timeout=TIMEOUT_S) == 143, _tails(logs)
        assert "htb-jax: terminated" in logs[0].read_text(errors="replace"), _tails(logs)
        os.killpg(procs[1].pid, signal.SIGKILL)
        procs[1].wait()
    manifest = json.loads((out / "manifest.json").read_text())
    stored = len(manifest["chunk_sha256"])
    assert 1 <= stored < CHUNKS, stored  # process 0 cannot pass the next chunk without process 1

    # Run 2: the same commands resume from the chunks on disk and finish.
    commands = _sweep_commands(out, tmp_path, f"127.0.0.1:{_free_port()}", "resumed")
    with _two_processes(commands, tmp_path) as (procs, logs):
        _wait_all(procs, logs)
        printed = logs[0].read_text()
    assert f"resumed: {stored} of {CHUNKS} chunks read back" in printed, printed

    one, two = np.load(reference / "sweep.npz"), np.load(out / "sweep.npz")
    for name in ("regret", "committed", "exploration", "best_arm_rate", "alphas", "qs", "horizons"):
        np.testing.assert_array_equal(two[name], one[name])
    assert (out / "sweep.csv").read_bytes() == (reference / "sweep.csv").read_bytes()

    # Only process 0 wrote: chunks and manifest in run 1, the rest and the results in run 2.
    for run in ("killed", "resumed"):
        assert _changes(tmp_path / f"{run}-changes1.json") == [], run
    killed = {os.path.basename(p) for _, p in _changes(tmp_path / "killed-changes0.json")}
    resumed = {os.path.basename(p) for _, p in _changes(tmp_path / "resumed-changes0.json")}
    assert {"manifest.json", "chunk-00000.npz"} <= killed, killed
    assert {"manifest.json", "sweep.npz", "sweep.csv", "sweep.png"} <= resumed, resumed


def test_processes_given_other_commands_refuse_before_writing(tmp_path):
    # Process 1 given another --key: both computed their seeds of other runs, and process 0 wrote them as
    # one run (a mean regret of neither key). Both now stop in one line, status 2, with nothing written.
    out = tmp_path / "out"
    commands = _sweep_commands(out, tmp_path, f"127.0.0.1:{_free_port()}", "keys")
    commands[1][commands[1].index("--key") + 1] = "6"
    with _two_processes(commands, tmp_path) as (procs, logs):
        for p in procs:
            p.wait(timeout=TIMEOUT_S)
        assert [p.returncode for p in procs] == [2, 2], _tails(logs)
        for i, log in enumerate(logs):
            err = log.read_text(errors="replace")
            assert (f"htb-jax: error: every process must run the same command and see the same output directory: "
                    f"--key differs between process 0 and process 1 (this is process {i})") in err, err
            assert err.startswith(f"htb-jax: process {i} of 2: joining the others through 127.0.0.1:"), err
    assert not out.exists()
    assert _changes(tmp_path / "keys-changes0.json") == _changes(tmp_path / "keys-changes1.json") == []


def test_the_guides_join_timeout_is_the_codes():
    from htb_jax._src import distributed

    text = " ".join((pathlib.Path(__file__).parent.parent / "docs" / "guides" / "scaling.md").read_text().split())
    assert f"joining waits up to {distributed.INITIALIZATION_TIMEOUT_S} s for every process" in text
    assert f"joining the others through 127.0.0.1:23456 (up to {distributed.INITIALIZATION_TIMEOUT_S} s)" in text


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--coordinator", "127.0.0.1:1234"], "missing --num-processes, --process-id"),
        (["--num-processes", "2", "--process-id", "0"], "missing --coordinator"),
        (["--coordinator", "127.0.0.1", "--num-processes", "2", "--process-id", "0"],
         "--coordinator must be HOST:PORT with a port in [1, 65535]; got '127.0.0.1'"),
        (["--coordinator", "host:70000", "--num-processes", "2", "--process-id", "0"], "got 'host:70000'"),
        (["--coordinator", "host:1234", "--num-processes", "1", "--process-id", "0"],
         "--num-processes must be an integer >= 2; got 1"),
        (["--coordinator", "host:1234", "--num-processes", "2", "--process-id", "2"],
         "--process-id must be an integer in [0, 1]; got 2"),
    ],
)
@pytest.mark.parametrize("command", ["sweep", "frontier"])
def test_bad_process_flags_print_one_line_and_exit_2(command, flags, message, tmp_path, capsys):
    assert cli.main([command, "--out", str(tmp_path / "out"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_importing_htb_jax_starts_no_backend():
    # jax.distributed.initialize() must come before anything that starts XLA's backend, and the
    # command line imports the whole package first: a module that builds an array at import (a law
    # as a constant) breaks every multi-process run. Catches that in 2 s, naming the cause.
    probe = ("import htb_jax, htb_jax._src.cli; from jax._src import xla_bridge; "
             "print(xla_bridge.backends_are_initialized())")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"
