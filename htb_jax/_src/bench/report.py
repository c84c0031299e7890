"""The benchmark's report, rendered from a results dict alone (no simulation): ``results.json``,
``report.md`` with its PNG figures, a self-contained ``report.html`` and ``scorecard.tex``, a
LaTeX table of the scorecard that a paper's appendix can ``\\input``.

The Markdown and HTML pages are rendered from one list of blocks (headings, paragraphs, tables,
figures), so they show the same text and the same numbers; :func:`scorecard_rows` gives the
scorecard's numbers to both and to the LaTeX table.
"""

from __future__ import annotations

import base64
import collections
import html
import json
import math
import re
from pathlib import Path

import numpy as np

from htb_jax._src.bench import report_figures
from htb_jax._src.bench.suite import SIZES, VERSION
from htb_jax._src.frontier.measurement import _t
from htb_jax._src.resumable import moved_into_place
from htb_jax._src.validation import check_path, given

_TOP = ("suite", "size", "key", "versions", "device", "command", "policies", "experiments", "frontier")
_POLICY = ("name", "knows", "round_cost", "user", "wall_s")
_EXPERIMENT = ("name", "axis", "description", "score", "settings", "cells", "curves", "scores", "ratios", "ranks")
_SETTING = ("label", "axis_value", "instance", "num_arms", "horizon", "seeds", "uniform_regret")
_CELL = ("horizon", "mean", "mean_low", "mean_high", "median", "q90", "score")
_ROW = ("policy", "family", "eps", "t_min", "t_max", "seeds", "d", "d_low", "d_high", "d_finite_t",
        "c", "c_low", "c_high", "c_finite_t", "off_frontier", "note")


def _require(where: str, value, keys: tuple[str, ...]) -> None:
    if not isinstance(value, dict):
        raise TypeError(f"{where} must be a dict (results of htb.bench.run); got {given(where, value)}.")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(map(repr, missing))} (results of htb.bench.run).")


def _check_results(results) -> None:
    """The keys of the results schema that the report reads, and one cell and curve per setting."""
    _require("results", results, _TOP)
    if results["suite"] != VERSION:
        raise ValueError(f"results['suite'] must be {VERSION!r}, the suite this htb_jax reports; "
                         f"got {given('suite', results['suite'])}.")
    if results["size"] not in SIZES:
        raise ValueError(f"results['size'] must be one of {', '.join(map(repr, SIZES))}; "
                         f"got {given('size', results['size'])}.")
    names = []
    for i, p in enumerate(results["policies"]):
        _require(f"results['policies'][{i}]", p, _POLICY)
        names.append(p["name"])
    if not names:
        raise ValueError("results['policies'] must name at least one policy; got [].")
    for i, e in enumerate(results["experiments"]):
        where = f"results['experiments'][{i}]"
        _require(where, e, _EXPERIMENT)
        for j, s in enumerate(e["settings"]):
            _require(f"{where}['settings'][{j}]", s, _SETTING)
        for key in ("cells", "curves"):
            for name, entries in e[key].items():
                if name not in names:
                    raise ValueError(f"{where}['{key}'] names {name!r}, which is not in results['policies'].")
                if len(entries) != len(e["settings"]):
                    raise ValueError(f"{where}['{key}'][{name!r}] must hold one entry per setting "
                                     f"({len(e['settings'])}); got {len(entries)}.")
                for j, cell in enumerate(entries):
                    if key == "cells" and cell is not None:
                        _require(f"{where}['cells'][{name!r}][{j}]", cell, _CELL)
                        for field in _CELL:
                            _number(f"{where}['cells'][{name!r}][{j}][{field!r}]", cell[field])
        for name, score in e["scores"].items():
            _number(f"{where}['scores'][{name!r}]", score)
        for name, ratio in e["ratios"].items():
            if ratio is not None:
                _require(f"{where}['ratios'][{name!r}]", ratio, ("value", "low", "high", "best"))
                for field in ("value", "low", "high"):
                    _number(f"{where}['ratios'][{name!r}][{field!r}]", ratio[field])
    for i, r in enumerate(results["frontier"]):
        _require(f"results['frontier'][{i}]", r, _ROW)


def _number(where: str, value) -> None:
    """A number of the results: a real number, or None where JSON holds NaN or nothing was measured."""
    if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                                            np.floating))):
        raise TypeError(f"{where} must be a number or None; got {given(where, value)}.")


def _plain(value):
    """The results as JSON holds them: NumPy numbers as Python numbers, arrays as lists, NaN and inf as None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def _num(value) -> str:
    """Four significant digits; whole numbers from 1000 to 10^7 (a regret of 10125, not 1.012e+04)."""
    if value is None:
        return "-"
    return f"{value:.0f}" if 1e3 <= abs(value) < 1e7 else f"{value:.4g}"


def _interval(mid, low, high, fmt=_num) -> str:
    return f"{fmt(mid)} [{fmt(low)}, {fmt(high)}]"


def _fixed(value) -> str:
    """Two decimals (scores and ratios)."""
    return "-" if value is None else f"{value:.2f}"


def _exponent(value) -> str:
    """Three decimals (the frontier's slopes)."""
    return "-" if value is None else f"{value:.3f}"


def scorecard_rows(results: dict) -> list[dict]:
    """The scorecard's numbers: one row per policy, in the order of ``results["policies"]``.

    Args:
      results: a results dict (see ``htb.bench.run``).

    Returns:
      One dict per policy: ``policy``, ``user``, ``knows``, ``round_cost``, ``wall_s`` and
      ``experiments``, which maps each experiment's name to its ``score`` (in [0, 1]), ``rank``
      (1: lowest mean normalised regret; on the worst case, highest score), ``ratio``, ``ratio_low``,
      ``ratio_high`` (the ratio of its mean normalised regret to the best peer's, ``best``, with its 95%
      paired bootstrap interval); ``None`` where the policy
      reached none of the experiment's settings.
    """
    _check_results(results)
    rows = []
    for p in results["policies"]:
        cells = {}
        for e in results["experiments"]:
            ratio = e["ratios"].get(p["name"]) or {}
            cells[e["name"]] = dict(
                score=e["scores"].get(p["name"]), rank=e["ranks"].get(p["name"]), ratio=ratio.get("value"),
                ratio_low=ratio.get("low"), ratio_high=ratio.get("high"), best=ratio.get("best"),
            )
        rows.append(dict(policy=p["name"], user=bool(p["user"]), knows=p["knows"], round_cost=p["round_cost"],
                         wall_s=p["wall_s"], experiments=cells))
    return rows


def _score_cell(cell: dict) -> str:
    """``0.91 (#2) 1.31 [1.12, 1.55]``: score, rank, ratio to the best peer with its interval."""
    if cell["score"] is None and cell["ratio"] is None:
        return "not reached"
    parts = [] if cell["score"] is None else [_fixed(cell["score"])]
    if cell["rank"] is not None:
        parts.append(f"(#{cell['rank']})")
    if cell["ratio"] is not None:
        parts.append(_interval(cell["ratio"], cell["ratio_low"], cell["ratio_high"], _fixed))
    return " ".join(parts)


def _reach(results: dict) -> dict[str, int | None]:
    """Each policy's largest horizon reached in any experiment (None: none)."""
    reach = {p["name"]: None for p in results["policies"]}
    for e in results["experiments"]:
        for name, cells in e["cells"].items():
            for c in cells:
                if c is not None:
                    reach[name] = max(reach[name] or 0, int(c["horizon"]))
    return reach


def _regret_cell(cell, reach, horizon: int) -> str:
    """A setting's regret cell: mean [interval] · median · 90% quantile, at ``T = ...`` where the policy
    ran to another horizon than the setting's (the worst case runs the slow policies to a shorter one)."""
    if cell is None:
        return "not reached" + ("" if reach is None else f" (reaches T = {reach})")
    at = "" if int(cell["horizon"]) == int(horizon) else f" at T = {int(cell['horizon'])}"
    return (f"{_interval(cell['mean'], cell['mean_low'], cell['mean_high'])} · "
            f"{_num(cell['median'])} · {_num(cell['q90'])}{at}")


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "experiment"


def _experiment_blocks(results: dict, e: dict, figure: str | None, reach: dict) -> list:
    names = [p["name"] for p in results["policies"]]
    user = {p["name"]: p["user"] for p in results["policies"]}
    best = collections.Counter(r["best"] for r in e["ratios"].values() if r is not None).most_common()
    blocks = [("h", 3, f"{e['name']} (axis: {e['axis']})"), ("p", e["description"]), ("p", f"Score: {e['score']}")]
    if best:
        others = [f"{b} for {', '.join(n for n, r in e['ratios'].items() if r is not None and r['best'] == b)}"
                  for b, _ in best[1:]]
        blocks.append(("p", f"Regret ratios are to the best peer, {best[0][0]}"
                            + (f" ({'; '.join(others)})." if others else ".")))
    blocks.append(("table", ["setting", "axis value", "instance", "K", "T", "seeds", "uniform regret"],
                   [([s["label"], _num(s["axis_value"]), s["instance"], str(s["num_arms"]), str(s["horizon"]),
                      str(s["seeds"]), _num(s["uniform_regret"])], False) for s in e["settings"]],
                   "lrlrrrr"))
    blocks.append(("p", "Regret at each setting's horizon: mean [95% interval] · median · 90% quantile."))
    cells = e["cells"]
    blocks.append(("table", ["policy", *(s["label"] if f"T = {s['horizon']}" in s["label"]
                                         else f"{s['label']} (T = {s['horizon']})" for s in e["settings"])],
                   [([n, *(_regret_cell(c, reach[n], s["horizon"])
                           for c, s in zip(cells.get(n, [None] * len(e["settings"])), e["settings"], strict=True))],
                     user[n]) for n in names],
                   "l" + "r" * len(e["settings"])))
    if figure is not None:
        blocks.append(("img", figure, f"{e['name']}: regret curves per setting"))
    return blocks


def _frontier_blocks(results: dict) -> list:
    head = ["policy", "family", "eps", "T", "seeds", "d [95%]", "d finite T", "c [95%]", "c finite T",
            "off frontier", "note"]
    rows = [([r["policy"], r["family"], _num(r["eps"]), f"{_t(r['t_min'])}..{_t(r['t_max'])}", str(r["seeds"]),
              _interval(r["d"], r["d_low"], r["d_high"], _exponent), _exponent(r["d_finite_t"]),
              _interval(r["c"], r["c_low"], r["c_high"], _exponent), _exponent(r["c_finite_t"]),
              _exponent(r["off_frontier"]), r["note"]], False) for r in results["frontier"]]
    return [
        ("h", 2, "Frontier placement"),
        ("p", "Finite-T slopes of the worst-case regret (d) and of the fixed instance's regret (c) with their 95% "
              "intervals; 'finite T': the slopes the schedule implies over the same horizons (- where none is known); "
              "'off frontier': c + d (1+eps)/eps - (1+eps)/eps, 0 on Theorem 1's line and negative beyond it "
              "(Theorem 1 bounds exponents as T -> inf, over every law with a finite moment of order 1 + eps: the "
              "stable arms, a lighter-tailed family, may place a policy beyond its line)."),
        ("table", head, rows, "llrlrrrrrrl"),
        ("img", "frontier.png", "frontier placement against Theorem 1's line"),
    ]


def scorecard_markdown(results: dict) -> str:
    """The report's scorecard as a Markdown table (what ``htb-jax bench`` prints on stdout): one row per
    policy, the user's in bold, one column per experiment with its score, rank and ratio to the best peer.

    Args:
      results: the results dict of :func:`htb_jax.bench.run` (or read back from its
        ``results.json``).

    Returns:
      The Markdown table, without a trailing newline.

    Raises:
      TypeError, ValueError: for a dict that is not a results dict of ``htb.bench.run``.
    """
    _check_results(results)
    return _markdown([_scorecard_table(results)]).rstrip("\n")


def _scorecard_table(results: dict) -> tuple:
    names = [e["name"] for e in results["experiments"]]
    return ("table", ["policy", *names],
            [([r["policy"], *(_score_cell(r["experiments"][n]) for n in names)], r["user"])
             for r in scorecard_rows(results)],
            "l" + "r" * len(names))


def _blocks(results: dict, figures: dict[str, str]) -> list:
    """The report as a list of blocks: ``("h", level, text)``, ``("p", text)``, ``("code", text)``,
    ``("list", items)``, ``("table", header, [(cells, emphasised)], aligns)``, ``("img", file, alt)``."""
    versions = ", ".join(f"{k} {v}" for k, v in results["versions"].items())
    rows = scorecard_rows(results)
    reach = _reach(results)
    blocks = [
        ("h", 1, f"htb_jax benchmark {results['suite']}: report"),
        ("list", [f"suite: {results['suite']}", f"size: {results['size']}", f"key: {results['key']}",
                  f"device: {results['device']}", f"versions: {versions}"]),
        *([("p", "Command:"), ("code", results["command"])] if results["command"] else
          [("p", "Run from Python (htb.bench.run).")]),
        ("h", 2, "Profile"),
        ("img", "profile.png", "profile: the experiments' scores per policy"),
        ("h", 2, "Scorecard"),
        ("p", "Per experiment: the score in [0, 1] (higher is better), the rank among all policies (#1: lowest mean "
              "normalised regret; on the worst case, highest score) and the regret ratio, the ratio of the mean "
              "normalised regret to the best peer's (the policy itself excluded), with its 95% paired bootstrap "
              "interval. Emphasised: the policies under test."),
        _scorecard_table(results),
        ("h", 2, "Experiments"),
    ]
    for e in results["experiments"]:
        blocks += _experiment_blocks(results, e, figures[e["name"]], reach)
    if results["frontier"]:
        blocks += _frontier_blocks(results)
    blocks += [
        ("h", 2, "Wall time"),
        ("table", ["policy", "knows", "round cost", "wall time (s)"],
         [([r["policy"], r["knows"], r["round_cost"], _num(r["wall_s"])], r["user"]) for r in rows], "lllr"),
    ]
    return blocks


def _md_text(text: str) -> str:
    """Text that Markdown shows as written: its inline marks, table bars, ``$`` (math where dollar math is
    on) and ``& < >`` backslashed (read as written in a terminal too: ``\\<lambda\\>``, not
    ``&lt;lambda&gt;``), a leading ``#`` backslashed."""
    text = re.sub(r"([\\`*_|&<>$])", r"\\\1", str(text))
    return "\\" + text if text.startswith("#") else text


def _markdown(blocks: list) -> str:
    out = []
    for block in blocks:
        kind = block[0]
        if kind == "h":
            out.append(f"{'#' * block[1]} {_md_text(block[2])}")
        elif kind == "p":
            out.append(_md_text(block[1]))
        elif kind == "code":
            out.append(f"```\n{block[1]}\n```")
        elif kind == "list":
            out.append("\n".join(f"- {_md_text(item)}" for item in block[1]))
        elif kind == "table":
            _, head, rows, aligns = block
            lines = ["| " + " | ".join(map(_md_text, head)) + " |",
                     "|" + "|".join("---:" if a == "r" else "---" for a in aligns) + "|"]
            for cells, emph in rows:
                shown = [_md_text(c) for c in cells]
                if emph:
                    shown[0] = f"**{shown[0]}**"
                lines.append("| " + " | ".join(shown) + " |")
            out.append("\n".join(lines))
        else:
            out.append(f"![{_md_text(block[2])}]({block[1]})")
    return "\n\n".join(out) + "\n"


_CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:0.85em}th,td{border:1px solid #ccc;padding:3px 6px}
th{background:#f2f2f2}td.r{text-align:right;white-space:nowrap}tr.user td{font-weight:bold;background:#fff6d5}
img{max-width:100%}pre{background:#f6f6f6;padding:0.6em;overflow-x:auto}"""


def _html(blocks: list, directory: Path, title: str) -> str:
    esc = html.escape
    out = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{esc(title)}</title>\n"
           f"<style>\n{_CSS}\n</style>\n</head>\n<body>"]
    for block in blocks:
        kind = block[0]
        if kind == "h":
            out.append(f"<h{block[1]}>{esc(block[2])}</h{block[1]}>")
        elif kind == "p":
            out.append(f"<p>{esc(block[1])}</p>")
        elif kind == "code":
            out.append(f"<pre><code>{esc(block[1])}</code></pre>")
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{esc(item)}</li>" for item in block[1]) + "</ul>")
        elif kind == "table":
            _, head, rows, aligns = block
            lines = ["<table>", "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]
            for cells, emph in rows:
                tds = "".join(f"<td class=\"{a}\">{esc(c)}</td>" for c, a in zip(cells, aligns, strict=True))
                lines.append(f"<tr class=\"user\">{tds}</tr>" if emph else f"<tr>{tds}</tr>")
            out.append("\n".join([*lines, "</table>"]))
        else:
            data = base64.b64encode((directory / block[1]).read_bytes()).decode("ascii")
            out.append(f"<p><img src=\"data:image/png;base64,{data}\" alt=\"{esc(block[2])}\"></p>")
    return "\n".join([*out, "</body>\n</html>"]) + "\n"


_TEX = {"\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}


def _tex_escape(text: str) -> str:
    r"""``text`` as LaTeX typesets it literally: ``\ _ % & # $ { } ~ ^`` escaped, ``< > |`` as text symbols
    (the OT1 font encoding would print them as other glyphs)."""
    return "".join(_TEX.get(ch, ch) for ch in str(text))


def _latex(results: dict) -> str:
    rows = scorecard_rows(results)
    names = [e["name"] for e in results["experiments"]]
    versions = ", ".join(f"{k} {v}" for k, v in results["versions"].items())
    run = _tex_escape(f"{results['suite']} (size {results['size']}, key {results['key']}; {versions})")
    caption = (f"Scorecard of the heavy-tailed bandit benchmark {run}. Per experiment: "
               r"score in $[0, 1]$, rank (\#1: lowest mean normalised regret; on the worst case, highest score) "
               r"and regret ratio (of mean normalised regrets) to the best peer with its 95\% paired bootstrap "
               r"interval. Bold: the policies under test.")
    lines = [
        f"% Scorecard of the htb_jax benchmark suite {results['suite']}, size {results['size']}, key {results['key']}.",
        "% Needs \\usepackage{booktabs} and \\usepackage{graphicx}"
        + ("; its labels' characters beyond ASCII a Unicode engine (xelatex, lualatex)." if any(
            ord(ch) > 127 for r in rows for ch in r["policy"]) else "."),
        r"\begin{table}[ht]", r"\centering", r"\resizebox{\linewidth}{!}{%",
        r"\begin{tabular}{l" + "r" * len(names) + "}", r"\toprule",
        " & ".join(["Policy", *map(_tex_escape, names)]) + r" \\", r"\midrule",
    ]
    for r in rows:
        name = _tex_escape(r["policy"])
        if r["user"]:
            name = rf"\textbf{{{name}}}"
        elif name.startswith("["):
            name = "{}" + name  # not read as the optional argument of the \\ or \midrule before it
        cells = [name,
                 *(_tex_escape(_score_cell(r["experiments"][n])) for n in names)]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}}", rf"\caption{{{caption}}}",
              rf"\label{{tab:htb-bench-{_file_stem(results['suite'])}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_report(results: dict, directory) -> dict[str, Path]:
    """Write the benchmark's report of ``results`` into ``directory`` (created if missing).

    Files: ``results.json`` (the results in the schema's key order; NaN and infinities, which JSON
    lacks, written as ``null``), ``report.md`` (title with suite, size, device, versions and command;
    the profile; the scorecard; per experiment its description, score, settings, regret table and
    curves; the frontier rows and figure; the wall time per policy) with its figures beside it
    (``profile.png``, ``regret-<experiment>.png`` for each experiment with curves, ``frontier.png``
    where there are frontier rows),
    ``report.html`` (the same blocks, every figure embedded as a base64 data URI) and
    ``scorecard.tex`` (a booktabs table of the scorecard, to ``\\input``).  The files are
    written into a temporary folder inside ``directory`` and moved into place together once all are
    written (an interrupted write leaves the earlier report whole); the figures an earlier report in
    ``directory`` drew (those its ``report.md`` shows) that this one does not draw are removed, and no
    other file.

    Args:
      results: a results dict (see ``htb.bench.run``).
      directory: the folder to write into.

    Returns:
      The paths written, keyed by file name.
    """
    check_path("directory", directory)
    _check_results(results)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    earlier = _report_figures(directory / "report.md")
    with moved_into_place(directory) as scratch:  # never a report of two runs' files
        written = _write_files(results, Path(scratch))
    for name in earlier - set(written):
        (directory / name).unlink(missing_ok=True)
    return {name: directory / name for name in written}


def _report_figures(report: Path) -> set[str]:
    """The figures an earlier report in the folder drew (the images its ``report.md`` shows, of the
    names this module gives them); none where there is no report: a file the benchmark did not
    write is never deleted."""
    if not report.is_file():
        return set()
    shown = re.findall(r"!\[[^\]]*\]\(([^)/\\]+\.png)\)", report.read_text(errors="replace"))
    return {name for name in shown if name == "frontier.png" or re.fullmatch(r"regret-[\w.-]+\.png", name)}


def _write_files(results: dict, directory: Path) -> list[str]:
    """Writes the report's files into ``directory`` (see :func:`write_report`); returns their names."""
    paths = {}

    def path(name: str) -> Path:
        paths[name] = directory / name
        return paths[name]

    path("results.json").write_text(json.dumps(_plain(results), indent=1, allow_nan=False) + "\n")
    results = json.loads(paths["results.json"].read_text())
    import matplotlib

    # Labels as written: a policy named "$x_$" was read as mathtext, and its syntax error lost the report.
    with matplotlib.rc_context({"text.parse_math": False}):
        report_figures.plot_profile(results, path("profile.png"))
        figures = {}
        for e in results["experiments"]:
            if not any(c is not None for curves in e["curves"].values() for c in curves):
                figures[e["name"]] = None  # no curve to draw (the worst case's fits have their own figure)
                continue
            figures[e["name"]] = f"regret-{_file_stem(e['name'])}.png"
            report_figures.plot_curves(results, e, path(figures[e["name"]]))
        if results["frontier"]:
            report_figures.plot_frontier(results, path("frontier.png"))
    blocks = _blocks(results, figures)
    path("report.md").write_text(_markdown(blocks))
    path("report.html").write_text(_html(blocks, directory, f"htb_jax benchmark {results['suite']}: report"))
    path("scorecard.tex").write_text(_latex(results))
    return list(paths)
