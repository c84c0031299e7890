"""The README is what CI runs, and what it shows is current output."""

import pathlib
import re
import subprocess

import numpy as np

from htb_jax._src import sweep as sweep_lib

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _setup_commands():
    block = README.split("<!-- setup-commands:begin -->")[1].split("<!-- setup-commands:end -->")[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("```")]


def test_two_setup_commands_main_job_then_tests():
    first, second = _setup_commands()
    assert first == "python -m pip install . && htb-jax sweep"
    assert second == 'python -m pip install ".[test]" && python -m pytest'


def test_ci_runs_exactly_the_readme_commands():
    assert "pip install" not in (ROOT / ".ci" / "run").read_text()  # nothing of its own
    printed = subprocess.run(
        [str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert printed == _setup_commands()


def test_readme_table_is_the_default_sweep_output():
    shown = [line for line in README.splitlines() if re.match(r"\| 0\.\d{3} \| 0\.\d{3} \|", line)]
    assert len(shown) == 8
    recorded = (ROOT / "experiments" / "default_sweep" / "table.md").read_text().splitlines()
    assert all(line in recorded for line in shown)
    config = sweep_lib.SweepConfig(horizons=(10**6,))
    result = sweep_lib.run_sweep(config, progress=None)
    current = sweep_lib.format_table(sweep_lib.table_rows(result)).splitlines()[2:]
    assert current == shown
    assert np.all(np.isfinite(result.regret))
