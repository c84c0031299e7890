"""The htb-jax command line: the sweep end to end, and one-line errors with exit status 2."""

import csv

import pytest

from htb_jax._src.cli import main

SMALL = ["sweep", "--arms", "3", "--alphas", "2/3,0.9", "--qs", "0", "--horizons", "1000,5000",
         "--seeds", "4", "--seed-chunk", "2", "--pareto-shape", "3"]


def test_sweep_writes_table_csv_and_figure(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("| alpha | q | beta | T | L_T | mean regret")
    assert out.count("\n| 0.") == 4  # 2 alphas x 1 q x 2 horizons
    assert "4/4 seeds" in err
    rows = list(csv.DictReader(open(tmp_path / "sweep.csv")))
    assert len(rows) == 4 and {r["horizon"] for r in rows} == {"1000", "5000"}
    assert (tmp_path / "sweep.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--eps", "1.5"], r"eps must lie in (0, 1]; got eps=1.5"),
        (["--pareto-shape", "1.8"], "pareto_shape must lie in (2, inf) (the arms need a finite (1+eps)-moment"),
        (["--alphas", "0.5"], "alpha must lie in [0.666667, 1) for eps=1; got alpha=0.5"),
        (["--horizons", "0"], "horizons must be an integer in [1, 1000000000000000000]; got horizons=0"),
        (["--arms", "1"], "num_arms must be an integer >= 2; got num_arms=1"),
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


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "sweep" in capsys.readouterr().out
