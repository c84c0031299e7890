"""``sweep.write_csv``, the one CSV writer of the library and the experiments; a sweep's results sized
against the machine's memory."""

import csv
import math
import re

import numpy as np
import pytest

from htb_jax._src.sweep import SweepConfig, SweepResult, format_table, plot, write_csv


def test_write_csv_reads_back_every_field_exactly(tmp_path):
    # NumPy floats must be written as numbers (their repr is "np.float64(...)" in NumPy 2), names
    # holding commas or quotes must be quoted, and every float must read back to the same double.
    rows = [
        dict(instance="Student-t(2.4), K=7", policy='AdaR-ETC "order-free"', seeds=np.int64(64),
             regret=np.float64(1 / 3), gap=0.1 + 0.2, small=np.float32(0.1), exact=True, agrees=np.bool_(False)),
        dict(instance="Pareto(1.5)", policy="UCB1", seeds=8, regret=math.inf, gap=math.nan, small=-0.0,
             exact=False, agrees=np.bool_(True)),
    ]
    path = tmp_path / "rows.csv"
    write_csv(rows, path)
    raw = path.read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n") and b"np." not in raw
    back = list(csv.DictReader(open(path, newline="")))
    assert list(back[0]) == list(rows[0])
    for got, want in zip(back, rows, strict=True):
        assert got["instance"] == want["instance"] and got["policy"] == want["policy"]
        assert int(got["seeds"]) == int(want["seeds"])
        for key in ("regret", "gap", "small"):
            value, expected = float(got[key]), float(want[key])
            assert value == expected or (math.isnan(value) and math.isnan(expected)), key
            assert math.copysign(1.0, value) == math.copysign(1.0, expected)
        assert got["exact"] == str(bool(want["exact"])) and got["agrees"] == str(bool(want["agrees"]))
    assert raw.splitlines()[1].startswith(b'"Student-t(2.4), K=7","AdaR-ETC ""order-free""",64,0.3333333333333333,')


def test_table_shows_every_digit_of_each_horizon():
    # One significant digit ("{:.0e}") printed 2500 as 2e+03 and 10 and 11 both as 1e+01.
    horizons = [1, 10, 11, 1500, 2500, 123456, 10**18, 10**18 - 1]
    rows = [dict(alpha=0.8, q=0.0, beta=0.4, horizon=np.int64(t), exploration=1, mean_regret=1.0, stderr=0.1,
                 best_arm_rate=1.0) for t in horizons]
    shown = [line.split(" | ")[3] for line in format_table(rows).splitlines()[2:]]
    assert shown == ["1e+00", "1e+01", "1.1e+01", "1.5e+03", "2.5e+03", "1.23456e+05", "1e+18",
                     "9.99999999999999999e+17"]


def test_results_larger_than_the_machines_memory_are_refused_before_the_run(monkeypatch):
    # 300 million seeds of the default grid (4 alphas x 2 qs x 4 horizons) would hold 215 GiB at the end of the
    # run: accepted, it computed for hours before it could fail.  Each seed keeps a regret (f64) and a commit
    # (i32) per grid point and horizon, twice at the end (the chunks' arrays and their concatenation).
    from htb_jax._src import memory

    config = SweepConfig(num_seeds=10**5, seed_chunk=4096)
    cells = len(config.alphas) * len(config.qs) * len(config.horizons)
    monkeypatch.setattr(memory, "host_memory", lambda: 2**26)
    with pytest.raises(ValueError, match=re.escape(
            f"num_seeds=100000 seeds make {10**5 * 24 * cells / 2**30:.1f} GiB of results ({24 * cells} bytes a seed), "
            "held in memory at the end of the run and written to disk, more than this machine's 0.1 GiB of memory; "
            "run fewer seeds, or several sweeps with other keys.")):
        config.validate()
    monkeypatch.setattr(memory, "host_memory", lambda: 2**30)
    config.validate()


@pytest.mark.parametrize("alphas, qs, legend, bars", [((0.7, 0.8), (0.0, 0.1), 4, 0), ((0.7, 0.75, 0.8), (0.0, 0.1, 0.2), 3, 1)])
def test_figure_names_few_curves_and_colors_many_by_alpha(monkeypatch, tmp_path, alphas, qs, legend, bars):
    # A 40 x 4 grid drew a 160-entry legend over the whole plot (and matplotlib warned that it could not lay
    # the figure out): beyond 8 curves the alphas go on a color bar and the legend names each q's style.
    import matplotlib.pyplot as plt

    config = SweepConfig(alphas=alphas, qs=qs, horizons=(1000, 10000), num_seeds=4)
    shape = (len(alphas), len(qs), 2)
    regret = np.random.default_rng(0).uniform(50.0, 500.0, (*shape, 4))
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    plot(SweepResult(config, regret, np.ones(shape, np.int64), np.ones(shape), 0.0), tmp_path / "s.png")
    (fig,) = figures
    ax = fig.axes[0]
    assert len(ax.get_legend().get_texts()) == legend and len(fig.axes) == 1 + bars
    if bars:
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["q=0", "q=0.1", "q=0.2"]
