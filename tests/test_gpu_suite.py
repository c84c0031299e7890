"""The GPU suite (benchmarks/gpu_suite.py) at its toy size on the CPU, so that it cannot rot.

The suite is written for a GPU; at the toy size it runs every part (sweep, engine, scaling,
T-frontier, the checks against the CPU path) on whatever backend is there.  On a CPU the
"accelerator" and the CPU path are the same device, so every check must pass with equal
results; what this test guards is that every part still runs and reports.
"""

import pathlib
import sys

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"


def test_toy_suite_runs_every_part_and_passes_its_checks(capsys):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import gpu_suite
    finally:
        sys.path.remove(str(BENCHMARKS))
    block, checks = gpu_suite.run_suite("toy")
    assert [c.name for c in checks if not c.passed] == []
    assert len(checks) >= 10
    for part in ("| sweep: htb_jax / NumPy |", "| engine: UCB1,", "Scaling, seeds:", "Scaling, horizons",
                 "Memory budget:", "T-frontier:", "| eps | alpha |", "Checks against the CPU path"):
        assert part in block, part
    assert block.startswith("### ")
