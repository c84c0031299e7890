"""Tests of the benchmark's report (htb_jax/_src/bench/report.py and report_figures.py).

One small but complete results dict, written here by hand (three policies, one of them the
user's; two experiments; a setting one policy did not reach; an experiment it reached nowhere;
two frontier rows with the keys of ``htb.frontier.Measurement.row()``), is rendered once per
module.  The tables of report.md, report.html and scorecard.tex are parsed back and every
number they show is compared with the dict's: a shown number must be the dict's rounded to the
digits shown (within half a unit of its last digit).
"""

from __future__ import annotations

import base64
import copy
import html
import json
import math
import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest

from htb_jax._src.bench import report

USER = "my_pol 50%"
ODD = "Robust<script>UCB & co"  # a peer whose name HTML and LaTeX must escape


def _cell(horizon, mean, low, high, median, q90, score):
    return dict(horizon=horizon, mean=mean, mean_low=low, mean_high=high, median=median, q90=q90, score=score)


def _curve(horizon, scale):
    rounds = [1, 10, 100, horizon]
    mean = [scale * (t / horizon) ** 0.7 for t in rounds]
    return dict(rounds=rounds, mean=mean, low=[0.8 * m for m in mean], high=[1.25 * m for m in mean])


def _setting(label, value, horizon, arms=4):
    return dict(label=label, axis_value=value, instance=f"Pareto(loc=[...], shape={value})", num_arms=arms,
                horizon=horizon, seeds=16, uniform_regret=0.375 * horizon)


def _results() -> dict:
    tail = [_setting("Pareto a = 2.5", 2.5, 3000), _setting("Pareto a = 1.8", 1.8, 10000),
            _setting("Pareto a = 1.3", 1.3, 30000)]
    arms = [_setting("K = 50", 50, 30000, 50), _setting("K = 100", 100, 100000, 100)]
    frontier_keys = dict(horizons=21, t_min=100000, t_max=10000000, seeds=1024, anytime=False, block_share=0.0167,
                         worst_normalized=483268.703125, worst_member=6, fixed_regret=23601.0)
    return {
        "suite": "ht-v1", "size": "cpu", "key": 0,
        "versions": {"htb_jax": "0.1.0", "jax": "0.4.35", "jaxlib": "0.4.35"},
        "device": "cpu: AMD EPYC 7B13 (2 cores)",
        "command": "htb-jax bench --policy 'mymod:MyPolicy()' --size cpu",
        "policies": [
            {"name": "UCB1", "knows": "nothing", "round_cost": "O(K)", "user": False, "wall_s": 12.34},
            {"name": ODD, "knows": "u, eps", "round_cost": "O(t)", "user": False, "wall_s": 1234.5},
            {"name": USER, "knows": "nothing", "round_cost": "O(K)", "user": True, "wall_s": 3.217},
        ],
        "experiments": [
            {"name": "tail", "axis": "moment order 1 + eps", "description": "Pareto arms whose tail index falls.",
             "score": "One minus the mean regret over the uniform policy's, averaged over settings.",
             "settings": tail,
             "cells": {"UCB1": [_cell(3000, 85.14, 80.02, 90.21, 84.0, 120.5, 0.7731),
                                _cell(10000, 412.6, 380.9, 450.3, 401.2, 611.8, 0.89),
                                _cell(30000, 15321.7, 14100.2, 16789.4, 15002.0, 22040.9, 0.3619)],
                       ODD: [_cell(3000, 61.27, 55.55, 67.91, 60.0, 99.9, 0.9455),
                             _cell(10000, 300.02, 270.45, 333.33, 290.5, 450.25, 0.92), None],
                       USER: [_cell(3000, 70.05, 65.1, 75.6, 69.5, 101.25, 0.9377),
                              _cell(10000, 250.5, 230.5, 271.75, 245.0, 390.0, 0.9333),
                              _cell(30000, 9876.5, 9100.25, 10650.5, 9800.0, 14000.0, 0.1221)]},
             "curves": {"UCB1": [_curve(3000, 85.14), _curve(10000, 412.6), _curve(30000, 15321.7)],
                        ODD: [_curve(3000, 61.27), _curve(10000, 300.02), None],
                        USER: [_curve(3000, 70.05), _curve(10000, 250.5), _curve(30000, 9876.5)]},
             "scores": {"UCB1": 0.6743, ODD: 0.9327, USER: 0.6644},
             "ratios": {"UCB1": {"value": 1.3117, "low": 1.1204, "high": 1.5531, "best": USER},
                        ODD: {"value": 0.9149, "low": 0.8333, "high": 1.0021, "best": USER},
                        USER: {"value": 0.8123, "low": 0.7401, "high": 0.9015, "best": "UCB1"}},
             "ranks": {"UCB1": 3, ODD: 1, USER: 2}},
            {"name": "arms", "axis": "number of arms K", "description": "Many arms, one good.",
             "score": "One minus the normalised regret, averaged over settings.",
             "settings": arms,
             "cells": {"UCB1": [_cell(30000, 2000.5, 1900.25, 2100.75, 1995.0, 2400.0, 0.5),
                                _cell(100000, 7000.25, 6800.5, 7200.0, 6990.0, 8000.0, 0.4444)],
                       ODD: [None, None],
                       USER: [_cell(30000, 1500.0, 1400.5, 1600.25, 1490.0, 1800.0, 0.6667),
                              _cell(100000, 5000.75, 4800.0, 5200.5, 4990.0, 6000.0, 0.5556)]},
             "curves": {"UCB1": [_curve(30000, 2000.5), _curve(100000, 7000.25)], ODD: [None, None],
                        USER: [_curve(30000, 1500.0), _curve(100000, 5000.75)]},
             "scores": {"UCB1": 0.4722, ODD: None, USER: 0.6111},
             "ratios": {"UCB1": {"value": 1.3999, "low": 1.35, "high": 1.4512, "best": USER}, ODD: None,
                        USER: {"value": 0.7143, "low": 0.6891, "high": 0.7407, "best": "UCB1"}},
             "ranks": {"UCB1": 2, ODD: None, USER: 1}},
        ],
        "frontier": [
            dict(policy="UCB1", family="two-point", eps=1.0, **frontier_keys, d=0.7255234979200732,
                 d_low=0.7243004635810404, d_high=0.726840478764123, d_finite_t=0.7243375467562055,
                 c=-0.34963928377138975, c_low=-0.35861161207714837, c_high=-0.33907060770840025,
                 c_finite_t=0.6229198723881104, off_frontier=-0.8985922879312433, seconds=math.nan,
                 note="finite-T slope, T in [1e+05, 1e+07]; beyond Theorem 1's line, which bounds exponents "
                      "(T -> inf); c < 0: the fixed instance's regret falls over the range"),
            dict(policy=USER, family="two-point", eps=1.0, **frontier_keys, d=0.776, d_low=0.710, d_high=0.823,
                 d_finite_t=None, c=0.103, c_low=0.020, c_high=0.240, c_finite_t=None, off_frontier=-0.344,
                 seconds=41.5, note="finite-T slope, T in [1e+05, 1e+07]"),
        ],
    }


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The report of :func:`_results`, written once (about a second of figures)."""
    results = _results()
    directory = tmp_path_factory.mktemp("report")
    return results, directory, report.write_report(copy.deepcopy(results), directory)


def _shows(text: str, value) -> bool:
    """Whether ``text`` shows ``value``: ``-`` for None, else ``value`` rounded to the digits shown."""
    if value is None:
        return text == "-"
    shown = Decimal(text)
    return abs(float(shown) - value) <= 0.5 * 10.0 ** shown.as_tuple().exponent * (1 + 1e-9)


def _check_interval(text: str, mid, low, high) -> None:
    m = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", text)
    assert m, text
    for shown, value in zip(m.groups(), (mid, low, high), strict=True):
        assert _shows(shown, value), (text, mid, low, high)


def _check_score(text: str, entry: dict) -> None:
    if entry["score"] is None:
        assert text == "not reached"
        return
    m = re.fullmatch(r"(\S+) \(#(\d+)\) (.+)", text)
    assert m, text
    assert _shows(m[1], entry["score"]) and int(m[2]) == entry["rank"], (text, entry)
    _check_interval(m[3], entry["ratio"], entry["ratio_low"], entry["ratio_high"])


def _check_tables(tables: list[list[list[str]]], results: dict) -> None:
    """The report's tables, header first, against ``results``: scorecard, per experiment its settings and
    regret tables, the frontier rows and the wall time."""
    policies = results["policies"]
    names = [p["name"] for p in policies]
    experiments = results["experiments"]
    assert len(tables) == 1 + 2 * len(experiments) + 2
    score, *rest = tables
    assert score[0] == ["policy", *(e["name"] for e in experiments)]
    assert [row[0] for row in score[1:]] == names
    for row in score[1:]:
        for e, text in zip(experiments, row[1:], strict=True):
            ratio = e["ratios"][row[0]] or {}
            _check_score(text, dict(score=e["scores"][row[0]], rank=e["ranks"][row[0]], ratio=ratio.get("value"),
                                    ratio_low=ratio.get("low"), ratio_high=ratio.get("high")))
    reach = {"UCB1": 100000, ODD: 10000, USER: 100000}
    for i, e in enumerate(experiments):
        settings, regrets = rest[2 * i], rest[2 * i + 1]
        assert len(settings) == len(e["settings"]) + 1
        for row, s in zip(settings[1:], e["settings"], strict=True):
            assert row[0] == s["label"] and row[2] == s["instance"]
            assert [int(v) for v in row[3:6]] == [s["num_arms"], s["horizon"], s["seeds"]]
            assert _shows(row[1], s["axis_value"]) and _shows(row[6], s["uniform_regret"])
        assert regrets[0][1:] == [f"{s['label']} (T = {s['horizon']})" for s in e["settings"]]
        assert [row[0] for row in regrets[1:]] == names
        for row in regrets[1:]:
            for text, cell in zip(row[1:], e["cells"][row[0]], strict=True):
                if cell is None:
                    assert text == f"not reached (reaches T = {reach[row[0]]})"
                    continue
                mean, median, q90 = text.split(" · ")
                _check_interval(mean, cell["mean"], cell["mean_low"], cell["mean_high"])
                assert _shows(median, cell["median"]) and _shows(q90, cell["q90"]), text
    frontier, wall = rest[-2:]
    assert len(frontier) == len(results["frontier"]) + 1
    for row, r in zip(frontier[1:], results["frontier"], strict=True):
        assert row[:3] == [r["policy"], r["family"], f"{r['eps']:g}"] and row[3] == "1e+05..1e+07"
        assert int(row[4]) == r["seeds"] and row[10] == r["note"]
        _check_interval(row[5], r["d"], r["d_low"], r["d_high"])
        _check_interval(row[7], r["c"], r["c_low"], r["c_high"])
        for text, key in ((row[6], "d_finite_t"), (row[8], "c_finite_t"), (row[9], "off_frontier")):
            assert _shows(text, r[key]), (text, key)
    assert [row[:3] for row in wall[1:]] == [[p["name"], p["knows"], p["round_cost"]] for p in policies]
    assert all(_shows(row[3], p["wall_s"]) for row, p in zip(wall[1:], policies, strict=True))


def _md_tables(text: str) -> tuple[list, list]:
    """The Markdown tables (cells unescaped) and the bold first cells."""
    tables, bold, current = [], [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        if re.fullmatch(r"\|(-+:?\|)+", line):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if cells[0].startswith("**"):
            cells[0] = cells[0][2:-2]
            bold.append(cells[0])
        cells = [html.unescape(re.sub(r"\\(.)", r"\1", c)) for c in cells]
        if current is None:
            current = []
            tables.append(current)
        current.append(cells)
    return tables, [html.unescape(re.sub(r"\\(.)", r"\1", b)) for b in bold]


class _Page(HTMLParser):
    """An HTML page's tables (text per cell), its rows of class user, its images and any script."""

    def __init__(self):
        super().__init__()
        self.tables, self.user_rows, self.images, self.tags = [], [], [], []
        self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
            self.tables[-1].append(self._row)
            if attrs.get("class") == "user":
                self.user_rows.append(self._row)
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "img":
            self.images.append(attrs["src"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._row.append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _tex_rows(text: str) -> list[list[str]]:
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
    return [line.removesuffix(" \\\\").split(" & ") for line in body.strip().splitlines()]


def test_markdown_shows_the_dicts_numbers(written):
    """Every number of report.md's tables is the dict's, rounded as shown; catches a table that reads the wrong
    field (median for mean, low for high), the wrong setting or policy, a value rounded to other digits."""
    results, directory, _ = written
    tables, bold = _md_tables((directory / "report.md").read_text())
    _check_tables(tables, results)
    assert set(bold) == {USER}


def test_null_cell_reads_not_reached_with_reach(written):
    """A setting a policy did not reach reads 'not reached' with the largest horizon it reached, and an
    experiment it reached nowhere reads 'not reached' in the scorecard; catches 0, nan or an empty cell."""
    _, directory, _ = written
    text = (directory / "report.md").read_text()
    assert "| not reached (reaches T = 10000) |" in text
    assert text.count("not reached (reaches T = 10000)") == 3  # tail at T = 30000, arms at both
    scorecard = _md_tables(text)[0][0]
    assert scorecard[2] == [ODD, "0.93 (#1) 0.91 [0.83, 1.00]", "not reached"]


def test_html_has_the_markdowns_tables(written):
    """report.html holds the same tables as report.md, cell for cell, with the user's row marked; catches a
    renderer that drops a table, a row or a column, or marks the wrong policy."""
    results, directory, _ = written
    page = _Page()
    page.feed((directory / "report.html").read_text())
    md_tables, _ = _md_tables((directory / "report.md").read_text())
    assert page.tables == md_tables
    _check_tables(page.tables, results)
    assert {row[0] for row in page.user_rows} == {USER}


def test_html_escapes_text_and_embeds_every_figure(written):
    """A policy named with <script> shows as text, and every image is a PNG data URI with nothing fetched from
    elsewhere; catches unescaped names (a script injected into the page) and links to the PNG files."""
    _, directory, paths = written
    text = (directory / "report.html").read_text()
    page = _Page()
    page.feed(text)
    assert "script" not in page.tags and "<script>" not in text
    assert "Robust&lt;script&gt;UCB &amp; co" in text
    assert not re.search(r"(src|href)=\"(?!data:)", text)
    pngs = sorted(name for name in paths if name.endswith(".png"))
    assert pngs == ["frontier.png", "profile.png", "regret-arms.png", "regret-tail.png"]
    assert len(page.images) == len(pngs)
    prefix = "data:image/png;base64,"
    assert all(src.startswith(prefix) for src in page.images)
    embedded = {base64.b64decode(src[len(prefix):]) for src in page.images}
    assert embedded == {(directory / name).read_bytes() for name in pngs}


def test_markdown_links_its_figures_relatively(written):
    """report.md links each PNG by its file name beside it; catches absolute paths and missing files."""
    _, directory, paths = written
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (directory / "report.md").read_text())
    assert sorted(links) == sorted(name for name in paths if name.endswith(".png"))
    assert all((directory / link).read_bytes().startswith(b"\x89PNG") for link in links)


def test_markdown_escapes_with_backslashes(written):
    """report.md (which the command prints to the terminal) escapes ``< > &`` with backslashes, which Markdown
    renders as written and a terminal reads; catches ``&lt;script&gt;`` in the printed scorecard."""
    _, directory, _ = written
    text = (directory / "report.md").read_text()
    assert "Robust\\<script\\>UCB \\& co" in text and "&lt;" not in text


def test_latex_scorecard(written):
    """scorecard.tex: a booktabs tabular, one column per experiment, each cell the dict's score, rank and ratio,
    the user's name bold, names escaped and the suite in the caption; catches an unescaped % (which comments out
    the rest of the row), _ or & and a missing column."""
    results, directory, _ = written
    text = (directory / "scorecard.tex").read_text()
    assert text.index("\\toprule") < text.index("\\midrule") < text.index("\\bottomrule")
    assert "\\begin{tabular}{lrr}" in text and "\\caption{" in text and "ht-v1" in text.split("\\caption{")[1]
    rows = _tex_rows(text)
    assert [r[0] for r in rows] == ["UCB1", "Robust\\textless{}script\\textgreater{}UCB \\& co",
                                    "\\textbf{my\\_pol 50\\%}"]
    for row, card in zip(rows, report.scorecard_rows(results), strict=True):
        for text_cell, e in zip(row[1:], results["experiments"], strict=True):
            _check_score(text_cell.replace("\\#", "#"), card["experiments"][e["name"]])


def test_latex_escapes_every_special_character():
    r"""Each of \ _ % & # $ { } ~ ^ in a policy name is escaped, a name opening with [ is guarded and the caption's
    versions escaped; catches a backslash escaped after the others (\_ would become \textbackslash{}_), a row read as
    \\[...] and a raw _ in the caption."""
    results = _results()
    for e in results["experiments"]:
        for key in ("cells", "curves", "scores", "ratios", "ranks"):
            e[key]["[a]\\b_c%d&e#f$g{h}i~j^k"] = e[key].pop("UCB1")
    results["policies"][0]["name"] = "[a]\\b_c%d&e#f$g{h}i~j^k"
    results["versions"]["jax"] = "0.4.35_local"
    text = report._latex(results)
    assert "benchmark ht-v1 (size cpu, key 0; htb\\_jax 0.1.0, jax 0.4.35\\_local, jaxlib 0.4.35)." in text
    first = _tex_rows(text)[0][0]
    assert first == ("{}[a]\\textbackslash{}b\\_c\\%d\\&e\\#f\\$g\\{h\\}i\\textasciitilde{}j"
                     "\\textasciicircum{}k")


def test_a_label_with_dollars_or_beyond_ascii_is_shown_as_written(tmp_path):
    """A policy named "$x_$" was read by matplotlib as mathtext, whose syntax error lost the report after
    every run; Markdown with dollar math read it as math; pdflatex stops at "π" (the header now says what
    compiles it)."""
    results = _results()
    for e in results["experiments"]:
        for key in ("cells", "curves", "scores", "ratios", "ranks"):
            e[key]["$x_$ π"] = e[key].pop(USER)
    results["policies"][-1]["name"] = "$x_$ π"
    paths = report.write_report(results, tmp_path)
    assert all(paths[name].read_bytes().startswith(b"\x89PNG") for name in paths if name.endswith(".png"))
    assert "\\$x\\_\\$ π" in (tmp_path / "report.md").read_text()
    header = (tmp_path / "scorecard.tex").read_text().splitlines()[1]
    assert header.endswith("; its labels' characters beyond ASCII a Unicode engine (xelatex, lualatex).")
    assert report._latex(_results()).splitlines()[1].endswith("\\usepackage{graphicx}.")


def test_results_json_round_trips(written):
    """results.json loads back as the dict, keys in the schema's order, NaN written as null; catches sorted
    keys, NaN written as the non-JSON token NaN, and numbers written as strings."""
    results, directory, _ = written
    text = (directory / "results.json").read_text()
    assert "NaN" not in text
    loaded = json.loads(text)
    expected = copy.deepcopy(results)
    expected["frontier"][0]["seconds"] = None
    assert loaded == expected
    assert list(loaded) == list(results) and list(loaded["experiments"][0]) == list(results["experiments"][0])


def test_scorecard_rows(written):
    """scorecard_rows: one row per policy in order, each experiment's score, rank and ratio from the dict, None
    where the policy has none; catches rows keyed by the wrong policy and a missing ratio read as a crash."""
    results, _, _ = written
    rows = report.scorecard_rows(results)
    assert [(r["policy"], r["user"]) for r in rows] == [("UCB1", False), (ODD, False), (USER, True)]
    assert rows[0]["experiments"]["tail"] == dict(score=0.6743, rank=3, ratio=1.3117, ratio_low=1.1204,
                                                  ratio_high=1.5531, best=USER)
    assert rows[1]["experiments"]["arms"] == dict(score=None, rank=None, ratio=None, ratio_low=None,
                                                  ratio_high=None, best=None)


def test_refuses_a_malformed_results_dict(tmp_path):
    """A missing key, a cell list of the wrong length and a non-dict are refused, naming what is wrong; catches a
    KeyError from deep inside the rendering, after some files were written."""
    results = _results()
    del results["experiments"][1]["ranks"]
    with pytest.raises(ValueError, match=r"results\['experiments'\]\[1\] lacks 'ranks'"):
        report.write_report(results, tmp_path)
    results = _results()
    results["experiments"][0]["cells"]["UCB1"].pop()
    with pytest.raises(ValueError, match=r"one entry per setting \(3\); got 2"):
        report.write_report(results, tmp_path)
    with pytest.raises(TypeError, match="results must be a dict"):
        report.scorecard_rows([1, 2])
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("where, value, message", [
    (("suite",), "ht-v0", r"results\['suite'\] must be 'ht-v1'.*got suite='ht-v0'"),
    (("size",), "tpu", r"results\['size'\] must be one of 'cpu', 'gpu'; got size='tpu'"),
    (("experiments", 0, "scores", "UCB1"), "0.47", r"\['scores'\]\['UCB1'\] must be a number or None.*'0.47' \(str\)"),
    (("experiments", 0, "cells", "UCB1", 1, "mean"), [412.6], r"\['cells'\]\['UCB1'\]\[1\]\['mean'\] must be a number"),
    (("experiments", 1, "ratios", "UCB1", "low"), True, r"\['ratios'\]\['UCB1'\]\['low'\] must be a number"),
])
def test_refuses_results_of_another_suite_or_with_a_value_that_is_not_a_number(tmp_path, where, value, message):
    """Results of an unknown suite or size, or a score, cell or ratio that is not a number, are refused by name
    before anything is written. Catches a report titled with a suite this htb_jax does not run, and a string
    score failing deep inside the formatting after the figures were drawn."""
    results = _results()
    *path, last = where
    target = results
    for step in path:
        target = target[step]
    target[last] = value
    with pytest.raises((ValueError, TypeError), match=message):
        report.write_report(results, tmp_path)
    assert not list(tmp_path.iterdir())


def test_an_experiment_without_curves_gets_no_empty_figure(tmp_path):
    """An experiment whose curves are all null (the worst case's, fitted by measure) draws no regret figure
    and links none; the others still do. Catches an empty figure of blank panels in the report."""
    results = _results()
    last = results["experiments"][-1]
    last["curves"] = {name: [None] * len(curves) for name, curves in last["curves"].items()}
    paths = report.write_report(results, tmp_path)
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", last["name"]).strip("-")
    assert f"regret-{stem}.png" not in paths and not (tmp_path / f"regret-{stem}.png").exists()
    assert f"regret-{stem}.png" not in (tmp_path / "report.md").read_text()
    first = re.sub(r"[^A-Za-z0-9_-]+", "-", results["experiments"][0]["name"]).strip("-")
    assert f"regret-{first}.png" in paths


def test_a_report_written_again_removes_the_figures_it_no_longer_draws(tmp_path):
    """A second report into the same folder with fewer experiments (``--only``) leaves no figure of the
    first beside it; other files stay. Catches a stale ``regret-*.png`` that report.md does not link."""
    results = _results()
    first = report.write_report(results, tmp_path)
    (tmp_path / "notes.png").write_bytes(b"")  # not the report's: kept
    results["experiments"] = results["experiments"][:1]
    results["frontier"] = []
    second = report.write_report(results, tmp_path)
    drawn = {p.name for p in tmp_path.glob("*.png")}
    assert drawn == {name for name in second if name.endswith(".png")} | {"notes.png"}
    assert len([name for name in first if name.startswith("regret-")]) > 1


def test_a_report_deletes_no_figure_an_earlier_report_did_not_draw(tmp_path):
    """A folder that never held a report keeps its own regret-*.png and frontier.png (before: every
    such file the new report did not draw was deleted, as ``htb-jax frontier --out`` writes frontier.png)."""
    results = _results()
    results["frontier"] = []
    (tmp_path / "frontier.png").write_bytes(b"the user's")
    (tmp_path / "regret-mine.png").write_bytes(b"the user's")
    report.write_report(results, tmp_path)
    assert (tmp_path / "frontier.png").read_bytes() == (tmp_path / "regret-mine.png").read_bytes() == b"the user's"


def test_a_report_interrupted_while_written_leaves_the_earlier_one_whole(tmp_path, monkeypatch):
    """Ctrl-C after some files of a new report are written: the folder still holds the earlier report, every
    file of it, and no temporary folder. Catches results.json of one run beside report.md of another."""
    results = _results()
    report.write_report(results, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    results["command"] = "htb-jax bench --policy another:Policy()"

    def interrupted(results):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "_latex", interrupted)  # the last file written
    with pytest.raises(KeyboardInterrupt):
        report.write_report(results, tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
