"""BENCHMARKS.md and benchmarks/HISTORY.md: links that resolve, and a summary table a reader can scan.

Pure text parsing: every relative Markdown link in the two files (and every link into them
from README.md and experiments/README.md) must name an existing file and, with an
``#anchor``, a heading of that file under GitHub's anchor rules; the summary table at the
top of BENCHMARKS.md must have its columns and one row per headline comparison, each with
a date and a command.
"""

from __future__ import annotations

import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
HISTORY = ROOT / "benchmarks" / "HISTORY.md"
LINKING_IN = (ROOT / "README.md", ROOT / "experiments" / "README.md")

COLUMNS = ["comparison", "today's figure", "target", "met?", "machine", "date", "command", "details"]
# One row per headline comparison: a pattern that its "comparison" cell, and no other, matches.
HEADLINES = {
    "sweep against the strongest NumPy": r"sweep.*numpy",
    "engine against SMPyBandits": r"engine.*smpybandits",
    "engine against per-round Python loops": r"engine.*per-round python loops",
    "every policy against its reference loop": r"every .*policy.*reference loop",
    "samplers against Pareto": r"reward families.*pareto",
    "order statistic against block sums": r"order statistic.*block sums",
    "scaling": r"^scaling",
    "stable arms by their block law": r"^stable arms",
    "tuning": r"tuning",
    "GPU": r"\bgpu\b",
    "first run of the main job": r"^first run",
    "the benchmark suite": r"^`htb-jax bench`",
}

_FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def _prose_lines(text: str):
    """The lines outside fenced code blocks, code spans removed: where Markdown links and headings live."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lowercased, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@functools.cache
def anchors(path: pathlib.Path) -> frozenset[str]:
    """Every heading anchor of a Markdown file; a repeated one gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        m = _HEADING.match(line)
        if not m:
            continue
        slug = github_anchor(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return frozenset(out)


def links(path: pathlib.Path) -> list[str]:
    """The targets of the Markdown links (and images) of a file, outside code."""
    found = []
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        found += _LINK.findall(_CODE_SPAN.sub("", line))
    return found


def broken_links(path: pathlib.Path, only_into: tuple[pathlib.Path, ...] | None = None) -> list[str]:
    """The relative links of ``path`` that do not resolve (only those meant for ``only_into``, if given)."""
    broken = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...: not relative
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path.resolve()
        meant = dest in only_into or dest.name in {p.name for p in only_into} if only_into else True
        if not meant:  # a link to one of those names in a wrong directory still counts
            continue
        if not dest.exists():
            broken.append(f"{path.relative_to(ROOT)}: {target} (no file {file_part})")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            where = dest.relative_to(ROOT)
            broken.append(f"{path.relative_to(ROOT)}: {target} (no heading #{anchor} in {where})")
    return broken


def summary_table() -> list[list[str]]:
    """The rows (header first) of the first table under BENCHMARKS.md's "Where htb_jax stands" heading."""
    lines = BENCHMARKS.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^##\s+Where htb_jax stands\s*$", line))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in _CODE_SPAN.sub(lambda m: m.group(0).replace("|", "/"),
                                                                 line).strip().strip("|").split("|")])
        elif rows or line.startswith("#"):
            break
    assert rows, "no table under '## Where htb_jax stands'"
    return [rows[0]] + rows[2:]  # without the |---| line


def test_github_anchor_rules():
    assert github_anchor("2026-11-24 (night), CPU: 2 cores (AMD EPYC, AVX-512), jax 0.10.2") == (
        "2026-11-24-night-cpu-2-cores-amd-epyc-avx-512-jax-0102")
    assert github_anchor("binomial quantiles under `vmap`") == "binomial-quantiles-under-vmap"
    assert github_anchor("the p-robust estimator at p = 2") == "the-p-robust-estimator-at-p--2"
    assert github_anchor("AdaR-ETC sweep: htb_jax against NumPy's") == "adar-etc-sweep-htb_jax-against-numpys"


@pytest.mark.parametrize("path", [BENCHMARKS, HISTORY], ids=lambda p: p.name)
def test_links_resolve(path):
    assert path.exists()
    assert links(path), f"{path.name} has no links"
    assert broken_links(path) == []


def test_links_into_benchmarks_resolve():
    into = (BENCHMARKS.resolve(), HISTORY.resolve())
    assert [b for path in LINKING_IN for b in broken_links(path, only_into=into)] == []


def test_benchmarks_and_history_link_each_other():
    assert any(t.split("#")[0] == "benchmarks/HISTORY.md" for t in links(BENCHMARKS))
    assert any(t.split("#")[0] == "../BENCHMARKS.md" for t in links(HISTORY))


def test_summary_table_has_one_row_per_headline_comparison():
    header, *rows = summary_table()
    assert header == COLUMNS
    assert all(len(row) == len(COLUMNS) for row in rows), [row[0] for row in rows if len(row) != len(COLUMNS)]
    cell = {name: i for i, name in enumerate(COLUMNS)}
    for name, pattern in HEADLINES.items():
        matching = [row[0] for row in rows if re.search(pattern, row[0], re.I)]
        assert len(matching) == 1, f"{name}: rows {matching}"
    assert len(rows) == len(HEADLINES), [row[0] for row in rows]
    for row in rows:
        assert re.search(r"\b\d{4}-\d{2}-\d{2}\b", row[cell["date"]]), f"{row[0]}: no YYYY-MM-DD date"
        commands = re.findall(r"`([^`]+)`", row[cell["command"]])
        runs = [c for c in commands if c.startswith(("python ", "htb-jax"))]
        assert runs, f"{row[0]}: no command"
        for command in runs:
            for script in re.findall(r"\S+\.py\b", command):
                assert (ROOT / script).exists(), f"{row[0]}: {script} does not exist"
        assert row[cell["today's figure"]] and row[cell["target"]] and row[cell["met?"]], row[0]
        assert "benchmarks/HISTORY.md#" in row[cell["details"]], f"{row[0]}: no link into the history"
