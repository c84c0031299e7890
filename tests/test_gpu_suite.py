"""The GPU suite (benchmarks/gpu_suite.py) at its toy size on the CPU, so that it cannot rot.

The suite is written for a GPU; at the toy size it runs every part (sweep, engine, scaling,
T-frontier, the checks against the CPU path) on whatever backend is there.  On a CPU the
"accelerator" and the CPU path are the same device, so every check must pass with equal
results; what this test guards is that every part still runs and reports.
"""

import pathlib
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
try:
    import gpu_suite
    import profiling
finally:
    sys.path.remove(str(BENCHMARKS))


def test_toy_suite_runs_every_part_and_passes_its_checks(capsys):
    blocks = []
    block, checks = gpu_suite.run_suite("toy", on_part=blocks.append)
    # The block so far after each part: a run stopped midway keeps the parts it finished.
    assert len(blocks) == len(gpu_suite.PARTS) and blocks[-1] == block
    assert "Sweep:" in blocks[0] and "Engine:" not in blocks[0] and "Checks against" not in blocks[3]
    assert "--parts" not in block  # the command line of a whole run
    assert [c.name for c in checks if not c.passed] == []
    assert len(checks) >= 10
    for part in ("| sweep: htb_jax / NumPy |", "| engine: UCB1,", "Scaling, seeds:", "Scaling, horizons",
                 "Memory budget:", "T-frontier:", "| eps | alpha |", "Checks against the CPU path"):
        assert part in block, part
    assert block.startswith("### ")


def test_parts_run_alone_and_the_frontier_check_runs_its_own_seeds(tmp_path, capsys):
    out, traces = tmp_path / "suite.md", tmp_path / "traces"
    assert gpu_suite.main(["--size", "toy", "--parts", "checks,engine", "--out", str(out),
                           "--profile", str(traces)]) == 0
    block = out.read_text()
    assert f"--parts engine,checks --profile {traces}" in block  # in the order of PARTS
    assert "| engine: UCB1," in block and "Checks against the CPU path" in block
    assert "where the engine's UCB1 time goes" in block
    assert sorted(p.name for p in traces.iterdir()) == ["engine.trace.json.gz"]
    assert "| frontier: exploration L_T | pass |" in block  # run here at the check's seeds
    assert "Sweep:" not in block and "T-frontier:" not in block and "Scaling" not in block


@pytest.mark.parametrize("parts", ["sweep,gpu", "", " , "])
def test_bad_parts_are_refused_in_one_line(parts, capsys):
    assert gpu_suite.main(["--size", "toy", "--parts", parts]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--parts must be a comma-separated list of sweep, engine" in err
    assert repr(parts) in err


def test_profile_counts_the_device_timelines_alone_when_there_are_some():
    """On a GPU the host threads that launch kernels wait as long as the kernels run; counting
    them would double the total and put the launches on top."""
    def meta(pid, name):
        return {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}}

    def op(pid, tid, ts, dur, name):
        return {"ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "name": name}

    host = [meta(1, "/host:CPU"), op(1, 7, 0, 900, "KernelLaunch"), op(1, 7, 900, 50, "copy_to_host")]
    device = [meta(2, "/device:GPU:0"), op(2, 3, 10, 600, "while.1"), op(2, 3, 20, 400, "loop_fusion"),
              op(2, 3, 700, 100, "loop_fusion")]
    total, ops, grouped = profiling.operation_times(host + device)
    # Self times in ms: the while loop's 600 us less the fusion nested in it.
    assert total == 0.7 and ops == [("loop_fusion", 0.5, 2), ("while.1", 0.2, 1)]
    assert grouped == [(2, 0.5, 1), (1, 0.2, 1)]
    total, ops, _ = profiling.operation_times(host)  # a CPU: the operations run on host threads
    assert total == 0.95 and ops[0] == ("KernelLaunch", 0.9, 1)
