"""The GPU suite (benchmarks/gpu_suite.py, its checks in benchmarks/gpu_checks.py) at its toy size
on the CPU, so that it cannot rot.

The suite is written for a GPU; at the toy size it runs every part (sweep, engine, scaling,
T-frontier, T-frontier on alpha-stable arms, the peers whose round costs O(t), the checks against
the CPU path) on whatever backend is there.  On a CPU the "accelerator" and the CPU path are the
same device, so every check must pass with equal results; what this test guards is that every
part still runs and reports, and that the comparison (``gpu_checks.compare``) does fail when one
side is perturbed: one reward bit, one regret.
"""

import dataclasses
import pathlib
import sys

import jax
import numpy as np
import pytest

from conftest import cpu_devices

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
try:
    import gpu_checks
    import gpu_suite
    import profiling
finally:
    sys.path.remove(str(BENCHMARKS))


def test_toy_suite_runs_every_part_and_passes_its_checks(capsys):
    cpu_devices()  # the checks compare with the CPU path
    blocks = []
    block, checks = gpu_suite.run_suite("toy", on_part=blocks.append)
    # The block so far after each part: a run stopped midway keeps the parts it finished.
    assert len(blocks) == len(gpu_suite.PARTS) and blocks[-1] == block
    assert "Sweep:" in blocks[0] and "Engine:" not in blocks[0] and "Checks against" not in blocks[3]
    assert "--parts" not in block  # the command line of a whole run
    assert [c.name for c in checks if not c.passed] == []
    assert len(checks) >= 10
    for part in ("| sweep: htb_jax / NumPy |", "| engine: UCB1,", "Scaling, seeds:", "Scaling, horizons",
                 "Memory budget:", "T-frontier:", "| eps | alpha |", "| peers whose round costs O(t): 2 policies,",
                 "Peers whose round costs O(t)", "Checks against the CPU path"):
        assert part in block, part
    assert block.startswith("### ")
    # Every peer of the toy size at eps = 1 and 0.5, in its order within each eps.
    peers = gpu_suite.SIZES["toy"].peers
    assert len(peers) == 2 and set(peers) <= set(gpu_suite.PEERS)
    rows = [line.split(" | ")[:3] for line in block.splitlines() if "| two-point |" in line]
    assert rows == [["| " + name, "two-point", eps] for eps in ("1", "0.5") for name in peers]
    # On a CPU the checks compare the CPU with itself: the block says they cannot fail.
    assert ("On a CPU both sides run on the same device" in block) == (jax.default_backend() == "cpu")
    # The checks' side at the toy size on the CPU (its programs are the suite's, compiled above)
    # and the comparison's failures where one side is perturbed.
    size = gpu_suite.SIZES["toy"]
    side = gpu_checks.compute_side(size, gpu_suite.frontier_config("toy", size.frontier_seeds, size.frontier_chunk))
    assert [c.name for c in gpu_checks.compare(side, side) if not c.passed] == []
    for perturbation in PERTURBATIONS:
        _the_comparison_fails_where_one_side_is_perturbed(side, perturbation)
    _a_large_change_fails_the_statistical_checks(side)


def test_parts_run_alone_and_the_frontier_check_runs_its_own_seeds(tmp_path, capsys):
    cpu_devices()  # the checks compare with the CPU path
    out, traces = tmp_path / "suite.md", tmp_path / "traces"
    assert gpu_suite.main(["--size", "toy", "--parts", "checks,engine", "--out", str(out),
                           "--profile", str(traces)]) == 0
    block = out.read_text()
    assert f"--parts engine,checks --profile {traces}" in block  # in the order of PARTS
    assert "| engine: UCB1," in block and "Checks against the CPU path" in block
    assert "where the engine's UCB1 time goes" in block
    assert sorted(p.name for p in traces.iterdir()) == ["engine.trace.json.gz"]
    assert "| frontier: exploration L_T | pass |" in block  # run here at the check's seeds
    assert "Sweep:" not in block and "T-frontier:" not in block and "Scaling" not in block and "Peers" not in block


def _one_reward_bit_flipped(side):
    words = side.words.copy()
    words[1, 3, 17, 0] ^= np.uint32(1 << 9)
    return dataclasses.replace(side, words=words)


def _one_regret_changed(outcome, seed=2):
    """The regret of one seed (first grid point) moved by one unit in the last place."""
    regret = np.array(outcome.regret)
    index = (0,) * (regret.ndim - 1) + (seed,)
    regret[index] = np.nextafter(regret[index], np.inf)
    return dataclasses.replace(outcome, regret=regret)


def _one_frontier_length_changed(side):
    exploration = side.frontier_exploration.copy()
    exploration[0, -1] += 1
    return dataclasses.replace(side, frontier_exploration=exploration)


# name: (the perturbation of a side, the checks it must fail)
PERTURBATIONS = {
    "one reward bit": (_one_reward_bit_flipped, [gpu_checks.WORDS_CHECK]),
    "one sweep regret": (lambda side: dataclasses.replace(side, sweep=_one_regret_changed(side.sweep)),
                         ["sweep: regret given equal pull counts"]),
    "one engine regret": (lambda side: dataclasses.replace(side, engine=_one_regret_changed(side.engine)),
                          ["engine UCB1: regret given equal pull counts"]),
    "one frontier L_T": (_one_frontier_length_changed, ["frontier: exploration L_T"]),
}


def _the_comparison_fails_where_one_side_is_perturbed(side, perturbation):
    # On a CPU the suite compares the CPU with itself, which passes whatever the checks do: here
    # the same comparison sees one side changed in one place, in either order.
    perturb, failing = PERTURBATIONS[perturbation]
    other = perturb(side)
    for accel, cpu in ((other, side), (side, other)):
        checks = gpu_checks.compare(accel, cpu)
        assert [c.name for c in checks if not c.passed] == failing, perturbation
        assert all(c.detail != "equal bit for bit" for c in checks if c.name in failing), perturbation


def _a_large_change_fails_the_statistical_checks(side):
    # Every seed's regret of one grid point raised by 6 standard errors of the difference of two
    # means (the mean check's tolerance is 5): the mean check fails, and so does the bitwise one.
    regret = np.array(side.sweep.regret)
    point = (0,) * (regret.ndim - 1)
    regret[point] += 6 * np.sqrt(2 * max(regret[point].var(ddof=1), 1.0) / regret.shape[-1])
    other = dataclasses.replace(side, sweep=dataclasses.replace(side.sweep, regret=regret))
    failed = [c.name for c in gpu_checks.compare(other, side) if not c.passed]
    assert failed == ["sweep: regret given equal pull counts", "sweep: mean regret per grid point"]


@pytest.mark.parametrize("on_cpu", [True, False])
def test_the_block_says_when_the_checks_cannot_fail(monkeypatch, on_cpu):
    monkeypatch.setattr(gpu_suite, "on_the_cpu_alone", lambda: on_cpu)
    size = gpu_suite.SIZES["toy"]
    config = gpu_suite.frontier_config("toy", size.frontier_seeds, size.frontier_chunk)
    block = gpu_suite.render("toy", size, config, {"checks": [gpu_checks.Check("c", True, "d")]}, {})
    assert ("On a CPU both sides run on the same device" in block) == on_cpu
    assert "| c | pass | d |" in block


def test_a_stopped_run_resumes_from_its_store(tmp_path, capsys):
    # The frontier, stable and peers parts keep their seed chunks in --store: a run stopped by a
    # time limit (here: one of the frontier's two chunks lost) and started again reads back what
    # was finished, computes the rest, says so per part, and ends with the same tables.  The toy
    # programs are the ones the toy suite compiled above (8 frontier seeds: two chunks of 4).
    cpu_devices()
    store, first, second = tmp_path / "store", tmp_path / "first.md", tmp_path / "second.md"
    args = ["--size", "toy", "--parts", "frontier,stable,peers", "--frontier-seeds", "8", "--store", str(store)]
    assert gpu_suite.main([*args, "--out", str(first)]) == 0
    assert "read back" not in first.read_text()
    assert sorted(p.name for p in store.iterdir()) == [
        "frontier", "peers-AdaR-UCB", "peers-Robust-UCB-true-u-eps-0.5", "peers-Robust-UCB-true-u-eps-1.0",
        "stable-index-1.8-eps-0.5"]
    (store / "frontier" / "chunks" / "chunk-00001.npz").unlink()
    assert gpu_suite.main([*args, "--out", str(second)]) == 0
    block = second.read_text()
    assert f"--store {store}" in block
    assert "T to 1e+05, wall (s) (1 of 2 seed chunks read back from the store: the wall is the rest's) |" in block
    assert "wall (s) (1 of 1 seed chunks read back from the store: the wall is the rest's) |" in block  # stable
    assert "wall (s) (3 of 3 seed chunks read back from the store: the wall is the rest's) |" in block  # peers

    def tables(text):  # every line but the timings and the command
        return [line for line in text.splitlines() if "wall" not in line.lower() and "--store" not in line]

    assert tables(block) == tables(first.read_text())
    # Another configuration in the same store is refused in one line, before its part computes.
    assert gpu_suite.main([*args[:-4], "--frontier-seeds", "4", "--store", str(store)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("gpu_suite: ") and str(store / "frontier") in err
    # with the script's way out: it has no out_dir or restart=True, which the library's message named
    assert err.endswith(f"give another --store, or delete the part's folder in {store} to run it again")
    (tmp_path / "file").write_text("")
    assert gpu_suite.main([*args[:-1], str(tmp_path / "file")]) == 2
    assert "--store must be a directory that exists or can be made; got" in capsys.readouterr().err


def test_an_error_inside_a_part_keeps_its_traceback(monkeypatch):
    # Only a store holding another run is met with one line and status 2; any other ValueError from
    # a part is a bug, and must surface with its traceback (a main that caught every ValueError,
    # as it once did, fails here).
    def broken(*args, **kwargs):
        raise ValueError("a bug inside the peers part")

    monkeypatch.setattr(gpu_suite, "measure_peers", broken)
    with pytest.raises(ValueError, match="a bug inside the peers part"):
        gpu_suite.main(["--size", "toy", "--parts", "peers"])


def test_an_unwritable_out_and_the_full_size_off_a_gpu_are_refused_before_any_part(tmp_path, capsys, monkeypatch):
    # Before: the part ran to its end and writing the block failed with a traceback (its figures lost), and
    # --size full on a CPU failed inside the sweep on a memory_budget the user never gave.
    monkeypatch.setattr(gpu_suite, "run_suite", lambda *args, **kwargs: pytest.fail("a part ran"))
    assert gpu_suite.main(["--size", "toy", "--out", str(tmp_path / "missing" / "block.md")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("gpu_suite: --out must be a file that can be written; got ")
    if jax.default_backend() != "gpu":
        assert gpu_suite.main(["--size", "full"]) == 2
        assert capsys.readouterr().err.strip() == (
            f"gpu_suite: --size full fills a GPU's memory and time; jax runs on {jax.default_backend()}: use --size "
            "toy (the default here)")


@pytest.mark.parametrize("parts", ["sweep,gpu", "", " , "])
def test_bad_parts_are_refused_in_one_line(parts, capsys):
    assert gpu_suite.main(["--size", "toy", "--parts", parts]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--parts must be a comma-separated list of sweep, engine" in err
    assert repr(parts) in err


@pytest.mark.parametrize("argv, refused", [
    (["--frontier-seeds", "1e3x"], "argument --frontier-seeds: must be a positive integer such as 1000 or 1e5; "
                                   "got '1e3x'"),
    (["--size", "huge"], "argument --size: invalid choice: 'huge' (choose from "),  # quotes vary by Python
])
def test_usage_errors_are_one_line(argv, refused, capsys):
    # argparse printed its whole usage first; 1e3 seeds was refused as no integer
    with pytest.raises(SystemExit) as exited:
        gpu_suite.main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpu_suite: error: {refused}") and err.endswith(" (see --help)\n") and err.count("\n") == 1


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
