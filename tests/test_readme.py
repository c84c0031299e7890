"""The README is what CI runs, and what it shows is current output."""

import csv
import importlib
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import jax
import jaxlib
import numpy as np
import pytest

import htb_jax as htb
from conftest import OLDER_EMITTERS, compiles_with_default_emitters, default_code_generation_env
from htb_jax._src import frontier

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _setup_commands():
    block = README.split("<!-- setup-commands:begin -->")[1].split("<!-- setup-commands:end -->")[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("```")]


def test_two_setup_commands_main_job_then_tests():
    first, second = _setup_commands()
    assert first == "python -m pip install . && htb-jax frontier"
    assert second == 'python -m pip install ".[test]" && python -m pytest'


def test_tests_run_each_file_in_one_worker_slowest_files_first(pytestconfig):
    # As docs/getting-started/installation.md says (and conftest.SLOWEST_FIRST orders): without --no-loadscope-reorder,
    # pytest-xdist hands out the files with the most tests first, and the two workers of a run on
    # 2 cores ended 31 s apart (2026-11-26).
    assert pytestconfig.getoption("dist") == "loadfile" or pytestconfig.getoption("numprocesses") in (0, None)
    assert pytestconfig.getoption("loadscopereorder") is False
    options = "-n 2 --dist loadfile --no-loadscope-reorder"
    assert options in (ROOT / "pyproject.toml").read_text()
    assert f"`{options}` in `pyproject.toml`" in (ROOT / "docs" / "getting-started" / "installation.md").read_text()


def test_tests_compile_with_the_older_emitters_as_the_installation_page_says():
    # Where XLA knows the option and XLA_FLAGS does not name it, conftest adds it and every process
    # of the run inherits it; the suite times the page quotes are runs recorded in the history.
    page = (ROOT / "docs" / "getting-started" / "installation.md").read_text()
    assert f"`{OLDER_EMITTERS}`" in page and "`XLA_FLAGS=--xla_cpu_use_fusion_emitters=true`" in page
    flags = os.environ.get("XLA_FLAGS", "").split()
    if jaxlib.__version__.startswith("0.10.") and "--xla_cpu_use_fusion_emitters=true" not in flags:
        assert not compiles_with_default_emitters(), flags  # jaxlib 0.10 knows the option
    assert OLDER_EMITTERS not in default_code_generation_env()["XLA_FLAGS"].split()
    history = (ROOT / "benchmarks" / "HISTORY.md").read_text()
    times = re.findall(r"\b\d{1,2}:\d\d\b", page)
    assert len(times) >= 3 and [t for t in times if t not in history] == [], times


def test_ci_runs_exactly_the_readme_commands():
    assert "pip install" not in (ROOT / ".ci" / "run").read_text()  # nothing of its own
    printed = subprocess.run(
        [str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert printed == _setup_commands()


def _same_table(computed: str, recorded: str) -> bool:
    """Equal text, and equal numbers to one unit of the last digit shown.

    The fits are least squares and bootstrap means over the recorded runs: reductions whose
    last bits depend on the CPU's NumPy and BLAS kernels (docs/guides/reproducibility.md), which
    can move a number rounded to 3 decimals by one unit.
    """
    number = re.compile(r"-?\d+\.\d+|-?\d+")
    a, b = computed.splitlines(), recorded.splitlines()
    if len(a) != len(b) or [number.sub("#", x) for x in a] != [number.sub("#", y) for y in b]:
        return False
    for x, y in zip(a, b, strict=True):
        for u, v in zip(number.findall(x), number.findall(y), strict=True):
            unit = 10.0 ** -len(v.split(".")[1]) if "." in v else 1.0
            if abs(float(u) - float(v)) > unit * (1 + 1e-9):
                return False
    return True


def test_readme_table_is_the_default_frontier_output():
    # The README shows the table `htb-jax frontier --out experiments/frontier_default` printed;
    # its fits follow from the recorded runs, and the runs are what the code draws today
    # (the first chunk of seeds, bit for bit: two-point block sums are binomial counts, and the
    # regret is the same float64 on every machine, see docs/guides/reproducibility.md).
    shown = [line for line in README.splitlines() if re.match(r"\| (1|0\.5|0\.25) \| 0\.\d{3} \|", line)]
    assert len(shown) == 9
    recorded = (ROOT / "experiments" / "frontier_default" / "table.md").read_text()
    assert all(line in recorded.splitlines() for line in shown)
    assert recorded.splitlines()[0].startswith("Fits over T in ") and recorded.splitlines()[0] in README.splitlines()
    assert recorded.rstrip("\n") in (ROOT / "docs" / "getting-started" / "main-job.md").read_text()  # all of it
    config = frontier.TFrontierConfig()
    runs = frontier.load_runs(ROOT / "experiments" / "frontier_default" / "runs.npz", config.family)
    assert runs.regret.shape[-1] == config.num_seeds
    result = frontier.fit_t_frontier(config, runs)
    # On the machine that recorded the table (and on this one, an AMD EPYC with AVX-512) the fits print it
    # character for character; the one unit of the last digit that _same_table allows is for CPUs whose
    # float64 reductions (bootstrap means, least squares) associate differently
    # (docs/guides/reproducibility.md), where a value within an ulp of a rounding boundary prints one unit apart.
    assert _same_table(frontier.t_frontier_table(result) + "\n", recorded)
    # Every slope lies in its interval: catches a fit biased by less than that unit (a worst-case slope
    # 6e-4 high prints 0.697 [0.696, 0.696]).  Where every seed's regret is the same, the interval is the
    # slope itself, computed by another float64 path (a few ulps apart: 1e-12).
    for row in result.rows:
        for fit in ("d", "c"):
            assert row[f"{fit}_low"] - 1e-12 <= row[fit] <= row[f"{fit}_high"] + 1e-12, (fit, row)
    chunk = config.chunk
    fresh = htb.simulate(
        jax.random.key(config.key), frontier.t_frontier_policy(config), config.family.instances(),
        list(config.horizons), chunk,
    )
    np.testing.assert_array_equal(np.asarray(fresh.regret), runs.regret[..., :chunk])
    np.testing.assert_array_equal(np.asarray(fresh.exploration[:, 0, :, 0]), runs.exploration)


def test_every_slope_the_readme_shows_lies_in_its_interval():
    # "0.696 [0.696, 0.696]": the main job's table as printed, and any measured slope shown.
    shown = re.findall(r"(-?\d+\.\d+) \[(-?\d+\.\d+), (-?\d+\.\d+)\]", README)
    assert len(shown) >= 18
    assert [s for s in shown if not float(s[1]) <= float(s[0]) <= float(s[2])] == []


def test_same_table_tolerates_one_unit_of_the_last_digit_only():
    row = "| 1 | 0.667 | 0.696 [0.696, 0.696] | 0.63 | finite T: schedule predicts 0.986 |"
    assert _same_table(row, row.replace("0.696 [", "0.697 [").replace("0.63", "0.62"))
    assert not _same_table(row, row.replace("0.696 [", "0.698 ["))
    assert not _same_table(row, row.replace("0.63", "0.65"))
    assert not _same_table(row, row.replace("predicts", "predicted"))


def test_experiment_tables_are_the_recorded_outputs():
    # Every table row experiments/README.md shows is a line of a Markdown file its command wrote
    # (table.md, or trend.md, smoothed.md, ... for the runs of one script's other modes).
    shown = [
        line for line in (ROOT / "experiments" / "README.md").read_text().splitlines()
        if line.startswith("|") and not line.startswith("|--") and not line.startswith("|---")
    ]
    recorded = set()
    for table in (ROOT / "experiments").glob("*/*.md"):
        recorded.update(table.read_text().splitlines())
    assert len(shown) > 40
    assert [line for line in shown if line not in recorded] == []


def test_headline_numbers_are_benchmarks_figures():
    # The README's headline numbers are quoted from BENCHMARKS.md, with its machines and dates: every
    # figure, machine and date of the section is in BENCHMARKS.md (a figure of no recorded run, or one
    # left behind when BENCHMARKS.md records a new run, fails).
    section = README.split("## Headline numbers")[1].split("\n## ")[0]
    figures = re.findall(r"(?<![\w^.])\d[\d,.–]*(?:e\d+|x)(?!\w)", section)
    dates = re.findall(r"\d{4}-\d{2}-\d{2}", section)
    machines = re.findall(r"AMD EPYC|NVIDIA H\d00|jax \d+\.\d+\.\d+", section)
    assert len(figures) >= 4 and len(dates) >= 3 and len(machines) >= 3, (figures, dates, machines)
    benchmarks = (ROOT / "BENCHMARKS.md").read_text()
    assert [x for x in figures + dates + machines if x not in benchmarks] == []


def test_experiments_notebooks_and_readme_use_public_names_only():
    # What a user runs reaches htb_jax as `import htb_jax as htb`: an experiment, a notebook cell or
    # an example of the README or of a documentation page that needs a name from htb_jax._src shows
    # a gap in the public API.
    sources = {path.name: path.read_text() for path in sorted((ROOT / "experiments").glob("*.py"))}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        sources[path.name] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    sources["README.md"] = "\n".join(re.findall(r"```python\n(.*?)```", README, flags=re.S))
    for path in sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts):
        sources[str(path.relative_to(ROOT))] = "\n".join(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S))
    assert len(sources) > 10 and "import htb_jax as htb" in sources["peers.ipynb"]
    private = {name: sorted(set(re.findall(r"htb_jax\._src[\w.]*|\bhtb\._src[\w.]*", text)))
               for name, text in sources.items()}
    assert {name: found for name, found in private.items() if found} == {}


def test_documentation_roles_name_public_names():
    # A {func}/{class}/{meth} role of a documentation page names a name of the public modules
    # (Sphinx links only those and renders any other as plain text, without a warning).
    import htb_jax as htb

    roles = {}
    for path in sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts):
        for name in re.findall(r"\{(?:func|class|meth)\}`([^`]+)`", path.read_text()):
            roles[name] = str(path.relative_to(ROOT))
    assert len(roles) > 40
    outside = []
    for name, page in roles.items():
        module, *path = name.removeprefix("htb_jax.").split(".")
        owner = getattr(htb, module) if module in ("bench", "frontier", "theory") and path else htb
        top = path[0] if module in ("bench", "frontier", "theory") and path else module
        if top not in owner.__all__:
            outside.append((page, name))
    assert outside == []


def test_installation_page_lists_every_extra_of_pyproject():
    page = (ROOT / "docs" / "getting-started" / "installation.md").read_text()
    listed = re.findall(r"^\| `\.\[(\w+)\]` \|", page, flags=re.M)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert sorted(listed) == sorted(extras)


def test_every_stored_experiment_csv_parses_and_each_interval_holds_its_estimate():
    # worst_case_family.csv had a member's name with an unquoted comma (a row of 11 fields under 10
    # columns), and ten CSVs had a bootstrap end one ulp past the slope it bounds (written before
    # the fits widened such intervals): both would mislead a reader of the files alone.
    columns_of = {"measured": ("low", "high")}
    for path in sorted((ROOT / "experiments").glob("*/*.csv")):
        with open(path, newline="") as f:
            header, *rows = list(csv.reader(f))
        assert {len(row) for row in rows} == {len(header)}, path
        for name in header:
            low, high = columns_of.get(name, (f"{name}_low", f"{name}_high"))
            if low in header and high in header:
                for row in map(dict, (zip(header, row, strict=True) for row in rows)):
                    if row[name] not in ("", "nan"):
                        assert float(row[low]) <= float(row[name]) <= float(row[high]), (path, name, row)


def test_every_experiment_script_parses_its_arguments_first():
    # `python experiments/X.py --help` ran the whole experiment, replacing the recorded results, in ten
    # of the scripts (they read sys.argv, or nothing): each main() parses its command line first.
    # Read as text: importing a script costs a JAX import, running it the experiment.
    scripts = {p.name: p.read_text() for p in sorted((ROOT / "experiments").glob("*.py"))
               if 'if __name__ == "__main__"' in p.read_text()}
    assert len(scripts) >= 12
    first_lines = {name: re.search(r"^def main\(.*\n((?:    .*\n){1,12})", text, flags=re.M) for name, text in scripts.items()}
    assert [n for n, m in first_lines.items() if m is None or "parse_args(" not in m.group(1)] == []
    assert [n for n, text in scripts.items() if "sys.argv" in text] == []


def test_every_experiment_script_writes_into_its_out_flag():
    # A run meant to check a result wrote over the recorded one (no --out in ten scripts; regret_curves'
    # default was relative to the working directory): every main() takes the shared parser's --out and
    # writes nowhere else (OUT, the recorded folder, is the flag's default alone).
    scripts = {p.name: p.read_text() for p in sorted((ROOT / "experiments").glob("*.py"))
               if 'if __name__ == "__main__"' in p.read_text()}
    mains = {name: re.search(r"^def main\(.*?(?=^\S)", text, flags=re.M | re.S).group(0) for name, text in scripts.items()}
    assert [n for n, body in mains.items() if "command_line.parser(__doc__, OUT)" not in body] == []
    assert [n for n, body in mains.items() if len(re.findall(r"\bOUT\b", body)) != 1] == []
    smoothed = (ROOT / "experiments" / "tune_smoothed.py").read_text()  # run by tune_frontier's main with its out
    assert not re.search(r"\bOUT\b", smoothed) and smoothed.count("(out: pathlib.Path") == 3
    spec = importlib.util.spec_from_file_location("command_line", ROOT / "experiments" / "command_line.py")
    command_line = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(command_line)
    parser = command_line.parser("doc", ROOT / "experiments" / "k_frontier")
    assert parser.parse_args([]).out == ROOT / "experiments" / "k_frontier"
    assert parser.parse_args(["--out", "elsewhere"]).out == pathlib.Path("elsewhere")
    assert "by default experiments/k_frontier/" in parser.format_help()


def _script(monkeypatch, name: str, *guarded: str):
    """experiments/<name>.py imported as a module, with each function named in ``guarded`` replaced by one
    that fails the test: a refusal that did not happen would otherwise start the experiment."""
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    module = importlib.import_module(name)
    for attribute in guarded:
        owner, _, function = attribute.rpartition(".")
        def ran(*args, _name=attribute, **kwargs):
            raise AssertionError(f"{_name} ran: the command line was not refused")
        monkeypatch.setattr(getattr(module, owner) if owner else module, function, ran)
    return module


def _refusal(monkeypatch, capsys, module, *argv: str) -> str:
    """The one-line error with which ``module.main()`` refuses ``argv`` (exit status 2)."""
    monkeypatch.setattr(sys, "argv", [f"{module.__name__}.py", *argv])
    with pytest.raises(SystemExit) as exited:
        module.main()
    assert exited.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    prefix = f"{module.__name__}.py: error: "
    assert last.startswith(prefix), last
    return last.removeprefix(prefix)


@pytest.mark.parametrize("name, argv, needed", [
    ("calibration", ["--refit"], "runs.npz"),
    ("t_exponent_vs_eps", ["--refit"], "runs.npz"),
    ("stable_frontier", ["--replot"], "stable_frontier.csv"),
    ("peer_frontier", ["--replot"], "peer_frontier.csv"),
    ("tune_heavy_tails", ["--replot"], "tuned_vs_grid.csv"),
    ("tune_frontier", ["--smoothed", "--tuning-only"], "gradients.csv"),
    ("tune_frontier", ["--replot"], "tune_frontier.csv"),
])
def test_experiment_options_reading_out_refuse_a_folder_without_their_file(monkeypatch, capsys, tmp_path, name,
                                                                          argv, needed):
    # With a fresh --out these died with a FileNotFoundError traceback (stable_frontier after making the folder).
    module = _script(monkeypatch, name)
    fresh = tmp_path / "fresh"
    message = _refusal(monkeypatch, capsys, module, *argv, "--out", str(fresh))
    flag = argv[-1]
    assert message == (f"{flag} reads {needed} from --out; {fresh} has none (the recorded one is in "
                       f"experiments/{name}/, and a run without {flag} writes it)")
    assert not fresh.exists()


@pytest.mark.parametrize("name, guarded, flag, value, refused", [
    ("regret_curves", "htb.simulate", "--horizon", "2", "must be an integer >= 10 such as 5000 or 1e7; got '2'"),
    ("regret_curves", "htb.simulate", "--checkpoints", "1",
     "must be an integer in [2, 1048576] such as 5000 or 1e7; got '1'"),
    ("regret_curves", "htb.simulate", "--seeds", "1", "must be an integer >= 2 such as 5000 or 1e7; got '1'"),
    ("peer_frontier", "measure_entry", "--seeds", "-2", "must be an integer >= 2 such as 5000 or 1e7; got '-2'"),
    ("peer_frontier", "measure_entry", "--slow-horizon", "2.5", "must be an integer >= 4 such as 5000 or 1e7; got '2.5'"),
    # T = 1 (T = 3 at every other checkpoint of an O(t) policy told T) failed in the library with a traceback
    ("peer_frontier", "measure_entry", "--horizon", "1", "must be an integer >= 3 such as 5000 or 1e7; got '1'"),
    ("peer_frontier", "measure_entry", "--slow-horizon", "3", "must be an integer >= 4 such as 5000 or 1e7; got '3'"),
    # a negative key ran (and wrote over the recorded results), 1e20 failed with a traceback
    ("regret_curves", "htb.simulate", "--key", "-1",
     "must be an integer in [0, 4294967295] such as 5000 or 1e7; got '-1'"),
    ("peer_frontier", "measure_entry", "--out", "FILE", "must be a folder; 'FILE' is a file"),
    ("regret_curves", "htb.simulate", "--out", "FILE/sub", "must be a folder that can be made; 'FILE' is a file"),
])
def test_experiment_counts_and_out_are_refused_in_one_line_before_the_run(monkeypatch, capsys, tmp_path, name,
                                                                        guarded, flag, value, refused):
    # These gave a traceback from the library (--horizon 0, --checkpoints 1, --seeds 0) with --out made
    # already, or from the plot (--horizon 2: nothing to log-scale), or from
    # writing the results into a file --out at the end of the whole run; one seed of regret_curves gave
    # every standard error as NaN.
    module = _script(monkeypatch, name, guarded)
    (tmp_path / "file").write_text("")
    value, refused = (text.replace("FILE", str(tmp_path / "file")) for text in (value, refused))
    argv = [flag, value] + (["--out", str(tmp_path / "fresh")] if flag != "--out" else [])
    assert _refusal(monkeypatch, capsys, module, *argv) == f"argument {flag}: {refused}"
    assert not (tmp_path / "fresh").exists()


@pytest.mark.parametrize("argv, refused", [
    (["--tuning-only"], "--tuning-only re-runs the tuning of --smoothed alone; give it with --smoothed"),
    (["--smoothed", "--balanced"], "argument --balanced: not allowed with argument --smoothed"),
    (["--trend", "--balanced"], "argument --balanced: not allowed with argument --trend"),
    (["--smoothed", "--trend"], "argument --trend: not allowed with argument --smoothed"),
    (["--replot", "--smoothed"], "argument --smoothed: not allowed with argument --replot"),
])
def test_tune_frontier_refuses_options_that_conflict(monkeypatch, capsys, tmp_path, argv, refused):
    # --tuning-only without --smoothed started the ~600 s default run; --smoothed --balanced ran --smoothed alone.
    module = _script(monkeypatch, "tune_frontier", "tune_smoothed.smoothed_main", "tune_smoothed.trend_main",
                     "tune_smoothed.balanced_main", "run_eps")
    assert _refusal(monkeypatch, capsys, module, *argv, "--out", str(tmp_path / "fresh")) == refused
    assert not (tmp_path / "fresh").exists()


def test_tune_frontier_replot_draws_the_recorded_csv_without_running(monkeypatch, tmp_path):
    # The figure's legend was moved below the panels by a replot of the recorded CSV; nothing is run.
    module = _script(monkeypatch, "tune_frontier", "tune_smoothed.smoothed_main", "run_eps", "tau_convergence")
    shutil.copy(ROOT / "experiments" / "tune_frontier" / "tune_frontier.csv", tmp_path)
    monkeypatch.setattr(sys, "argv", ["tune_frontier.py", "--replot", "--out", str(tmp_path)])
    module.main()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tune_frontier.csv", "tune_frontier.png"]
    assert (tmp_path / "tune_frontier.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_peer_frontier_refuses_an_empty_only(monkeypatch, capsys, tmp_path):
    # Every name contains "": the whole experiment ran, written under the --only files' names.
    module = _script(monkeypatch, "peer_frontier", "measure_entry")
    assert _refusal(monkeypatch, capsys, module, "--only", "", "--out", str(tmp_path / "fresh")) == (
        "--only must be part of a policy's name, not empty; leave --only out to run every policy")
    assert not (tmp_path / "fresh").exists()


def test_peer_frontier_only_names_the_policies_it_can_match(monkeypatch, capsys, tmp_path):
    # --only NOPE wrote an empty table_only.md and died with an unrelated TypeError.
    module = _script(monkeypatch, "peer_frontier", "measure_entry")
    message = _refusal(monkeypatch, capsys, module, "--only", "NOPE", "--out", str(tmp_path / "fresh"))
    names = [entry.name for entry in module.entries()]
    assert message == (f"--only must be part of a policy's name (case-sensitive), one of: {'; '.join(names)}; "
                       "got 'NOPE'")
    assert "Robust UCB, u/100" in names and not (tmp_path / "fresh").exists()
    assert _refusal(monkeypatch, capsys, module, "--replot", "--only", "UCB1") == (
        "--replot runs nothing and takes no option but --out; got --only")


def test_peer_frontier_table_note_follows_its_horizons(monkeypatch):
    # The note of the recorded table is the one the default horizons give (it was written out by hand), and
    # the table is drawn from the CSV's rows: --replot gives the recorded table.md again.
    module = _script(monkeypatch, "peer_frontier")
    folder = ROOT / "experiments" / "peer_frontier"
    rows = module.read_rows(folder / "peer_frontier.csv")
    parser = module.command_line.parser(module.__doc__, module.OUT)
    module.add_arguments(parser)
    defaults = module.top_horizons(parser.parse_args([]))
    assert defaults == {row["cost"]: row["t_max"] for row in rows}
    assert module.table(rows, defaults) + "\n" == (folder / "table.md").read_text()
    other = module.table(rows, module.top_horizons(parser.parse_args(["--horizon", "1e6", "--slow-horizon", "2e4"])))
    assert "UCB1, R-UCB and R-UCB-G to 1e6, AdaR-ETC on its fast path to 1e7, ForceMoM to 1e6" in other
    assert "(to 20000)" in other and "beta in 1e-5..0.5" in other
