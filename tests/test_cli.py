"""The htb-jax command line: the sweep end to end, and one-line errors with exit status 2."""

import csv
import json
import os
import subprocess
import sys
import types

import jax
import numpy as np
import pytest

from htb_jax._src import distributed
from htb_jax._src.cli import main

ANY_FAMILY = ["sweep", "--arms", "3", "--alphas", "2/3,0.9", "--qs", "0", "--horizons", "1000,5000",
              "--seeds", "4", "--seed-chunk", "2"]
SMALL = [*ANY_FAMILY, "--pareto-shape", "3"]  # the default family, pareto


def test_sweep_writes_table_csv_and_figure(tmp_path, capsys):
    # The sweep of test_toml_config_with_flags_overriding_it below (one program for both).
    two_point = ["--family", "two-point", "--spike-prob", "0.05", "--horizons", "1e3,1e6"]
    assert main([*ANY_FAMILY, *two_point, "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("| alpha | q | beta | T | L_T | mean regret")
    assert out.count("\n| 0.") == 4  # 2 alphas x 1 q x 2 horizons
    assert "4/4 seeds" in err
    rows = list(csv.DictReader(open(tmp_path / "sweep.csv")))
    assert len(rows) == 4 and {r["horizon"] for r in rows} == {"1000", "1000000"}
    assert (tmp_path / "sweep.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--eps", "1.5"], r"--eps must lie in (0, 1]; got --eps=1.5"),
        (["--pareto-shape", "1.8"], "--pareto-shape must lie in (2, inf) (the arms need a finite (1+eps)-moment"),
        # another family's parameter would be ignored
        (["--family", "gaussian"], "--pareto-shape=3 is for the pareto family only; with --family='gaussian' it "
                                   "would be ignored"),
        (["--alphas", "0.5"], "--alphas must lie in [0.666667, 1) for eps=1; got --alphas=0.5"),
        (["--horizons", "0"], "--horizons must be an integer in [1, 1000000000000000000]; got --horizons=0"),
        (["--arms", "1"], "--arms must be an integer in [2, 100000]; got --arms=1"),
    ],
)
def test_user_errors_print_one_line_and_exit_2(tmp_path, capsys, extra, message):
    assert main([*SMALL, "--out", str(tmp_path), *extra]) == 2
    _, err = capsys.readouterr()
    assert err.strip().splitlines() == [f"htb-jax: error: {message}."] or message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unwritable_output_directory(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([*SMALL, "--out", str(blocker / "sub")]) == 2
    assert "cannot create the output directory" in capsys.readouterr().err


def test_no_backend_is_one_line(tmp_path, capsys, monkeypatch):
    # JAX_PLATFORMS=cuda without jax's CUDA plugin: jax 0.10 raised a bare AssertionError from inside its backend
    # set-up, shown as a traceback (jax's own failure, made here without changing this process's backend).
    def no_backend(*args, **kwargs):
        raise AssertionError

    jax_without_backend = types.SimpleNamespace(devices=no_backend, config=types.SimpleNamespace(jax_platforms="cuda"))
    monkeypatch.setattr(distributed, "jax", jax_without_backend)
    assert main([*SMALL, "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "htb-jax: error: jax found no backend to run on for JAX_PLATFORMS=cuda: for an NVIDIA GPU install "
        "htb-jax[cuda] (htb-jax[cuda12] under a driver older than 580); else unset JAX_PLATFORMS\n")
    assert not list(tmp_path.iterdir())


def test_no_command_is_a_one_line_usage_error(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "sweep" in captured.err and len(captured.err.splitlines()) == 1


def _status(argv) -> int:
    """main's return value, or the status of the SystemExit argparse raises on a usage error."""
    try:
        return main(argv)
    except SystemExit as e:
        return e.code


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--family", "cauchy"], "--family must be one of pareto, student-t, gaussian, two-point or MODULE:EXPRESSION (one "
         "arm's law of one's own); got --family='cauchy'."),
        (["--family", "student-t", "--df", "1.5"],
         "--df must lie in (2, inf) (the arms need a finite (1+eps)-moment for eps=1); got --df=1.5."),
        (["--family", "two-point", "--spike-prob", "0"], "--spike-prob must lie in (0, 1]; got --spike-prob=0."),
        (["--memory-budget", "0"], "argument --memory-budget: not a positive number of bytes: '0' (e.g. 512MiB, 2GiB)"),
        # a negative size was read, then refused as "--memory-budget=-1073741824"
        (["--memory-budget=-1GiB"], "argument --memory-budget: not a positive number of bytes: '-1GiB'"),
        # argparse takes "-1GiB" for a flag: its message says how to write the value
        (["--memory-budget", "-1GiB"], "argument --memory-budget: expected one argument (a value beginning with '-' "
         "is written --memory-budget=VALUE)"),
        (["--memory-budget", "lots"], "argument --memory-budget: not a number of bytes: 'lots' (e.g. 512MiB, 2GiB)"),
        # a count's example is no fraction
        (["--seeds", "many"], "argument --seeds: not a number: 'many' (e.g. 5000 or 1e7)"),
        (["--seeds", "2.5"], "--seeds must be an integer in [2, 4294967296]; got --seeds=2.5."),  # never truncated
        # the default seed chunk was computed from them first: an OverflowError traceback, and "cannot convert
        # float NaN to integer"
        (["--seeds", "inf"], "--seeds must be an integer in [2, 4294967296]; got --seeds=inf."),
        (["--seeds", "nan"], "--seeds must be an integer in [2, 4294967296]; got --seeds=nan."),
        (["--config", "/nonexistent/sweep.toml"],
         "cannot read the configuration file '/nonexistent/sweep.toml': No such file or directory"),
    ],
)
def test_sweep_input_errors_print_one_line_and_exit_2(tmp_path, capsys, extra, message):
    assert _status([*ANY_FAMILY, "--out", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"htb-jax: error: {message}"), err


def test_toml_config_with_flags_overriding_it(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    out = tmp_path / "out"
    config.write_text(
        'family = "two-point"\nspike_prob = 0.05\nnum_arms = 3\nalphas = ["2/3", 0.9]\nqs = [0]\n'
        f'horizons = [1e3, 1e6]\nnum_seeds = 100\nseed_chunk = 2\nmemory_budget = "64MiB"\nout = "{out}"\n'
    )
    assert main(["sweep", "--config", str(config), "--seeds", "4e0"]) == 0  # as --horizons, 1e3 is an integer
    assert "4/4 seeds" in capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["family"] == "two-point" and manifest["config"]["num_seeds"] == 4
    assert type(manifest["config"]["num_seeds"]) is int
    assert manifest["config"]["horizons"] == [1000, 1000000] and manifest["chunks"] == [[0, 2], [2, 2]]
    assert {"htb_jax", "jax", "jaxlib", "numpy"} <= set(manifest["versions"])
    assert manifest["backend"] == jax.default_backend()
    with np.load(out / "sweep.npz") as data:
        assert data["regret"].shape == (2, 1, 2, 4)
        assert json.loads(str(data["manifest"]))["root_key"] == manifest["root_key"]
    assert len(list(csv.DictReader(open(out / "sweep.csv")))) == 4


def test_toml_errors(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    config.write_text("seeds = 4\n")
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err.startswith(f"htb-jax: error: unknown key 'seeds' in {config} (known: family,")
    config.write_text("num_seeds = 'four'\n")
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (f"htb-jax: error: num_seeds in {config} must be an integer; got 'four' (not a "
                                       "number: 'four' (e.g. 5000 or 1e7))\n")
    # a value out of range is named as the file names it, and by the file; one given as a flag by its flag
    config.write_text("num_seeds = 1\n")
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (f"htb-jax: error: {config}: num_seeds must be an integer in [2, 4294967296]; "
                                       "got num_seeds=1.\n")
    assert main(["sweep", "--config", str(config), "--seeds", "0"]) == 2
    assert capsys.readouterr().err == "htb-jax: error: --seeds must be an integer in [2, 4294967296]; got --seeds=0.\n"
    config.write_text("eps = 1.0\n")  # a flag refused: not the file's, though the message names its eps
    assert main(["sweep", "--config", str(config), "--alphas", "0.1"]) == 2
    assert capsys.readouterr().err.startswith("htb-jax: error: --alphas must lie in [0.666667, 1) for eps=1; ")
    config.write_text('family = "mylaws:"\n')  # the file's family refused: named by the file
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err.startswith(f"htb-jax: error: {config}: family must be MODULE:EXPRESSION ")
    config.write_text("df = 3\n")  # a parameter of the family the file leaves at its default
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (f"htb-jax: error: {config}: df=3 is for the student-t family only; with the "
                                       "default family='pareto' it would be ignored.\n")
    config.write_text("num_seeds = \n")
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err.startswith(f"htb-jax: error: {config} is not valid TOML")
    config.write_bytes(b"\xff\xfe")  # the codec's message named neither the file nor the flag
    assert main(["sweep", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (f"htb-jax: error: {config} is not valid TOML: it must be UTF-8 text; byte 0 "
                                       "is b'\\xff'\n")


def test_read_only_output_directory(tmp_path, capsys, monkeypatch):
    # Root may write anywhere, so the directory is made read-only for the check itself: os.access
    # answers as on a read-only mount (as it does for root there), for this directory only.
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: (
        False if os.fspath(path) == str(locked) and mode & os.W_OK else access(path, mode, **kw)))
    assert main([*SMALL, "--out", str(locked)]) == 2
    assert capsys.readouterr().err == f"htb-jax: error: the output directory {str(locked)!r} is not writable.\n"
    assert list(locked.iterdir()) == []  # refused before anything is written


def test_sweep_help_shows_an_example_and_every_setting(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for needle in ("examples:", "htb-jax sweep --config sweep.toml", "--memory-budget", "--family",
                   "resuming:", "manifest.json", "status 2"):
        assert needle in text


FRONTIER_SMALL = ["frontier", "--seeds", "4", "--seed-chunk", "4", "--horizons", "1e3,1e4", "--fit-from", "1e3",
                  "--eps", "1", "--alphas-per-eps", "1"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs a Linux /proc")
@pytest.mark.parametrize("command", [SMALL, FRONTIER_SMALL], ids=["sweep", "frontier"])
def test_an_output_directory_that_cannot_be_created_is_refused_before_the_banner(capsys, command):
    # /proc lets root pass os.access but creates nothing: refused by trying, one line, status 2.
    assert main([*command, "--out", "/proc/htb-jax-out"]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("htb-jax: error: cannot create the output directory '/proc/htb-jax-out': "
                            "No such file or directory\n")
    assert captured.out == ""


@pytest.mark.parametrize("command", [SMALL, FRONTIER_SMALL], ids=["sweep", "frontier"])
def test_a_read_only_file_system_is_refused_before_the_banner_and_left_as_it_was(tmp_path, capsys, monkeypatch,
                                                                                 command):
    # As on a read-only mount: the directories can be made (here) but no file in them.
    import errno
    import tempfile

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    out = tmp_path / "a" / "b"
    assert main([*command, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"htb-jax: error: the output directory {str(out)!r} is not writable (Read-only file system).\n"
    assert captured.out == "" and list(tmp_path.iterdir()) == []  # what the test made is removed again


@pytest.mark.parametrize(
    "command, on_cpu, off_cpu",
    [
        (["sweep", "--seeds", "200"], "200 seeds in 4 chunks", "200 seeds in 1 chunk;"),
        (["frontier", "--seeds", "64"], "64 seeds in 4 chunks", "64 seeds in 1 chunk;"),
        (["frontier", "--policy", "htb_jax:UCB1()", "--seeds", "16"], "16 seeds in 2 chunks;", "16 seeds in 1 chunk;"),
    ],
    ids=["sweep", "frontier", "frontier-policy"],
)
def test_with_no_seed_chunk_a_command_runs_every_seed_in_one_chunk_off_a_cpu(tmp_path, capsys, monkeypatch, command,
                                                                             on_cpu, off_cpu):
    # The banner, printed once everything is checked, names the chunks; the run itself is stopped there.
    # Each command's own CPU chunk (sweep 50, frontier 16, --policy 8), every seed (up to 4096) off a CPU:
    # catches a command that keeps its CPU chunk on a GPU, or that loses it on a CPU.
    from htb_jax._src import sweep as sweep_lib
    from htb_jax._src.cli import frontier_command
    from htb_jax._src.frontier import t_frontier

    def stop(*args, **kwargs):
        raise ValueError("stopped after the banner")

    for module, name in ((sweep_lib, "run_sweep"), (t_frontier, "run_with_store"), (frontier_command, "run_measure")):
        monkeypatch.setattr(module, name, stop)
    for backend, banner in (("cpu", on_cpu), ("gpu", off_cpu)):
        monkeypatch.setattr(jax, "default_backend", lambda backend=backend: backend)
        assert main([*command, "--out", str(tmp_path / backend)]) == 2
        err = capsys.readouterr().err
        assert banner in err and err.endswith("htb-jax: error: stopped after the banner\n"), err


def test_the_command_line_ends_its_process_after_the_atexit_functions(monkeypatch, capsys):
    # From the command line (argv None) main ends the process itself with the command's status,
    # after the atexit functions (a user's among them) and with both streams flushed; called with
    # arguments it returns. Catches an os._exit that skips atexit, a lost status, and an os._exit
    # reached from Python callers.
    import htb_jax._src.cli as cli

    class ExitCalledError(Exception):
        pass

    events = []

    def exit_(status):
        events.append(("exit", status))
        raise ExitCalledError

    monkeypatch.setattr(cli.os, "_exit", exit_)
    monkeypatch.setattr(cli.atexit, "_run_exitfuncs", lambda: events.append(("atexit",)))
    monkeypatch.setattr(cli.sys, "argv", ["htb-jax"])  # no command: a usage error, status 2
    with pytest.raises(ExitCalledError):
        cli.main()
    assert events == [("atexit",), ("exit", 2)]
    assert cli.main([]) == 2 and events == [("atexit",), ("exit", 2)]
    assert capsys.readouterr().err.count("htb-jax: error: give a command") == 2


def test_a_user_atexit_function_runs_when_the_command_line_ends(tmp_path):
    # The same in a real process: what a user's module registers with atexit still runs (and
    # prints), and the status is the command's.
    code = ("import atexit, sys; import htb_jax._src.cli as cli; atexit.register(print, 'atexit ran'); "
            "sys.argv = ['htb-jax']; cli.main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "atexit ran\n" and "give a command" in done.stderr


def test_matplotlib_is_imported_in_the_background_with_agg(monkeypatch):
    # The commands import matplotlib in a daemon thread while their runs compile: once joined,
    # pyplot is imported under Agg. Without matplotlib the thread ends quietly (no traceback from
    # the thread), leaving the error to the figure's own import. Catches a thread that is not a
    # daemon (it would hold an interrupted command open), a backend left interactive, and an
    # ImportError escaping the thread.
    import threading

    import matplotlib

    from htb_jax._src.cli import background_import

    thread = background_import.import_matplotlib_meanwhile()
    thread.join()
    assert thread.daemon and "matplotlib.pyplot" in sys.modules and matplotlib.get_backend().lower() == "agg"

    uncaught = []
    monkeypatch.setattr(threading, "excepthook", uncaught.append)

    def missing(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(background_import.importlib, "import_module", missing)
    background_import.import_matplotlib_meanwhile().join()
    assert uncaught == []


@pytest.mark.parametrize("file_family", ['family = "pareto"\n', ""], ids=["named", "default"])
def test_family_over_a_config_file_leaves_the_files_other_family_parameters_out(tmp_path, capsys, monkeypatch,
                                                                               file_family):
    # "flags win": --family over a file of another family refused the file's pareto_shape, which no flag could
    # unset, also where the file named no family (the default, pareto). The note names what is left out, once
    # everything is checked: before the banner of a run (stopped there), not before a refusal (it was printed
    # above --seeds 1's error, two lines where a refusal is one).
    from htb_jax._src import sweep as sweep_lib

    def stop(*args, **kwargs):
        raise ValueError("stopped after the banner")

    monkeypatch.setattr(sweep_lib, "run_sweep", stop)
    config = tmp_path / "sweep.toml"
    config.write_text(file_family + "pareto_shape = 2.5\n")
    argv = ["sweep", "--config", str(config), "--family", "student-t", "--df", "3", "--out", str(tmp_path / "out")]
    assert main([*argv, "--seeds", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("htb-jax: error: --seeds must be an integer in [2, "), err
    assert main([*argv, "--seeds", "4"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"--family student-t overrides family = 'pareto' of {config}: its pareto_shape = 2.5 left out"
    assert err[1].startswith("AdaR-ETC sweep: ") and err[2] == "htb-jax: error: stopped after the banner", err


def test_flag_names_names_a_setting_left_at_its_default_as_the_default():
    # A user law's eps range was refused with "got eps=1." where --eps had never been given.
    from htb_jax._src.cli.arguments import flag_names

    with pytest.raises(ValueError) as refused, flag_names({"family": "--family"}, defaults={"eps": "--eps"}):
        raise ValueError("family 'm:Law()' has a finite (1+eps)-moment only for eps < 0.8; got eps=1.")
    assert str(refused.value) == ("family 'm:Law()' has a finite (1+eps)-moment only for eps < 0.8; got the default "
                                  "--eps=1.")
    with pytest.raises(ValueError) as refused, flag_names({"eps": "--eps"}, defaults={}):
        raise ValueError("eps must lie in (0, 1]; got eps=2.")
    assert str(refused.value) == "--eps must lie in (0, 1]; got --eps=2."


def test_flag_names_leaves_a_quoted_expression_as_written():
    # "--policy: 'TruncUCB(eps=1.0, u=x)' failed" was shown as 'TruncUCB(--eps=1.0, u=x)'.
    from htb_jax._src.cli.arguments import flag_names

    with pytest.raises(ValueError) as refused, flag_names({"eps": "--eps", "horizons": "--horizons"}):
        raise ValueError("'TruncUCB(eps=1.0, horizons=2)' failed; eps must lie in (0, 1]; got eps=2.")
    assert str(refused.value) == "'TruncUCB(eps=1.0, horizons=2)' failed; --eps must lie in (0, 1]; got --eps=2."
    # So is a policy's repr: "got --policy=AdaRETC(--eps=0.5, alpha=array([0.8, 0.9]), q=0.0)".
    with pytest.raises(ValueError) as refused, flag_names({"eps": "--eps", "policy": "--policy"}):
        raise ValueError("got policy=AdaRETC(eps=0.5, alpha=array([0.8, 0.9]), q=0.0) (AdaRETC); got eps=2.")
    assert str(refused.value) == "got --policy=AdaRETC(eps=0.5, alpha=array([0.8, 0.9]), q=0.0) (AdaRETC); got --eps=2."


def test_flag_names_names_the_flags_of_a_refused_store():
    # "holds a run with another configuration (seed_chunk: 50 there, 2 here)" named the library's field:
    # the store's own error class kept its message.
    from htb_jax._src.chunk_store import StaleStoreError
    from htb_jax._src.cli.arguments import flag_names

    # The differences as the store writes them ("; " between them, list values); the directory, quoted,
    # as written (it became 'runs/--eps=1').
    names = {"seed_chunk": "--seed-chunk", "num_seeds": "--seeds", "horizons": "--horizons", "eps": "--eps"}
    with pytest.raises(StaleStoreError) as refused, flag_names(names):
        raise StaleStoreError("the output directory 'runs/eps=1' holds a run with another configuration (horizons: "
                              "[1000, 10000] there, [1000] here; num_seeds: 4 there, 8 here; seed_chunk: 50 there, 2 "
                              "here); give another --out")
    assert str(refused.value) == (
        "the output directory 'runs/eps=1' holds a run with another configuration (--horizons: [1000, 10000] there, "
        "[1000] here; --seeds: 4 there, 8 here; --seed-chunk: 50 there, 2 here); give another --out")
    # a quoted value ('pareto' there) kept htb-jax sweep's family its library name
    with pytest.raises(StaleStoreError) as refused, flag_names({"family": "--family"}):
        raise StaleStoreError("the output directory 'S' holds a run with another configuration (family: 'pareto' "
                              "there, 'student-t' here); give another --out")
    assert "(--family: 'pareto' there, 'student-t' here)" in str(refused.value)


def test_a_refused_stores_long_settings_are_cut_and_a_family_shows_what_differs(tmp_path):
    # htb-jax frontier --family stable into a two-point store printed both families whole (1690 characters).
    from htb_jax._src import chunk_store

    old = {"family": {"num_arms": 2, "gap": 1.0, "spike_probs": list(np.geomspace(1e-10, 0.5, 21))},
           "horizons": [10**e for e in range(3, 16)]}
    chunk_store.ChunkStore(str(tmp_path), old, [0, 0], [(0, 1)], {"program_sha256": "0"}).save(0, {"x": np.zeros(1)})
    new = {"family": {"num_arms": 2, "index": 1.75}, "horizons": [1000]}
    with pytest.raises(chunk_store.ForeignStoreError) as refused:
        chunk_store.ChunkStore(str(tmp_path), new, [0, 0], [(0, 1)], {"program_sha256": "0"})
    message = str(refused.value)
    assert "family: {'gap': 1.0, 'spike_probs': [1e-10, " in message and "there, {'index': 1.75} here" in message
    differences = message[message.index("(family"):message.index("); give")]
    assert "num_arms" not in differences and len(differences) < 300, differences
