"""The documentation site (docs/): it builds with warnings as errors, documents every public
name, has no broken internal link or anchor, and lists every flag of the command line.

One build (about 30 s on 2 cores) serves every test of the file.
"""

from __future__ import annotations

import html.parser
import pathlib
import subprocess
import sys
import time
import urllib.parse

import pytest

import htb_jax
from htb_jax._src import cli

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built into a temporary folder, with ``-W --keep-going``: (html folder, seconds)."""
    out = tmp_path_factory.mktemp("docs")
    args = ["-W", "--keep-going", "-j", "1", "-q", "-b", "html", "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    start = time.perf_counter()
    build = subprocess.run(
        [sys.executable, "-c", f"from sphinx.cmd.build import build_main; raise SystemExit(build_main({args!r}))"],
        capture_output=True, text=True,
    )
    seconds = time.perf_counter() - start
    print(f"docs build: {seconds:.1f} s", file=sys.stderr)
    return out / "html", seconds, build


def test_builds_without_warnings(site):
    _, seconds, build = site
    assert build.returncode == 0, f"the docs build failed after {seconds:.0f} s:\n{build.stderr}{build.stdout}"


class _Page(html.parser.HTMLParser):
    """The ids and the link targets of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@pytest.fixture(scope="module")
def pages(site):
    """Every HTML page of the built site, parsed: {path: _Page}."""
    root, _, build = site
    if build.returncode != 0:
        pytest.skip("the build failed (see test_builds_without_warnings)")
    parsed = {}
    for path in root.rglob("*.html"):
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        parsed[path] = page
    return parsed


def _public_names():
    for module in (htb_jax, htb_jax.bench, htb_jax.frontier, htb_jax.theory):
        for name in module.__all__:
            yield module.__name__, name


def test_every_public_name_has_a_reference_page(site, pages):
    root = site[0]
    missing = []
    for module, name in _public_names():
        full = f"{module}.{name}"
        if full in ("htb_jax.bench", "htb_jax.frontier", "htb_jax.theory"):  # the modules: a group page each
            page, anchor = root / "api" / f"{name}.html", f"module-{full}"
        else:
            page, anchor = root / "api" / "_autosummary" / f"{full}.html", full
        if page not in pages or anchor not in pages[page].ids:
            missing.append(full)
    assert not missing, f"public names without a reference page: {missing} (add them to a page of docs/api/)"
    # And no page for a name that left __all__ (a reference to an API that is no longer public).
    public = {f"{module}.{name}" for module, name in _public_names()}
    stale = sorted(p.stem for p in (root / "api" / "_autosummary").glob("*.html") if p.stem not in public)
    assert not stale, f"reference pages of names not in any __all__: {stale} (remove them from docs/api/)"


def test_internal_links_and_anchors_resolve(site, pages):
    root = site[0]
    broken = []
    for path, page in pages.items():
        for href in page.hrefs:
            url = urllib.parse.urlsplit(href)
            if url.scheme or url.netloc:
                continue
            target = (path.parent / urllib.parse.unquote(url.path)).resolve() if url.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(root)}: {href} (no such file)")
            elif url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if urllib.parse.unquote(url.fragment) not in ids:
                    broken.append(f"{path.relative_to(root)}: {href} (no such anchor)")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:50])


def test_every_markdown_table_is_rendered_as_a_table(site, pages):
    # A notebook's Markdown output read as CommonMark (no tables), or a cell holding an unescaped "|"
    # (`E|X|^(1+eps)`), left a table as a paragraph of pipes.
    root = site[0]
    raw = sorted(str(path.relative_to(root)) for path in pages if "<p>| " in path.read_text(encoding="utf-8"))
    assert not raw, f"pages showing a Markdown table as text: {raw}"
    tutorials = sorted((root / "tutorials").glob("*.html"))
    assert [p.name for p in tutorials if "<table" not in p.read_text(encoding="utf-8")] == ["index.html"]


def _command_parsers(monkeypatch):
    """The subcommands of the parser ``htb-jax`` itself builds, by name."""
    built = []

    def capture(parser, argv=None):
        built.append(parser)
        raise SystemExit(0)

    monkeypatch.setattr(cli.Parser, "parse_known_args", capture)
    with pytest.raises(SystemExit):
        cli.main([])
    (subparsers,) = [a for a in built[0]._actions if a.choices and a.dest == "command"]
    return subparsers.choices


def test_cli_page_lists_every_option(site, pages, monkeypatch):
    text = (site[0] / "cli.html").read_text(encoding="utf-8")
    commands = _command_parsers(monkeypatch)
    assert set(commands) == {"bench", "frontier", "sweep"}
    starts = {name: text.index(f'id="htb-jax-{name}"') for name in commands}
    bounds = sorted(starts.values()) + [len(text)]
    missing = []
    for name, parser in commands.items():
        section = text[starts[name] : bounds[bounds.index(starts[name]) + 1]]
        shown = {token.rstrip(",") for token in _pre_spans(section)}
        missing += [f"{name} {option}" for a in parser._actions for option in a.option_strings if option not in shown]
    assert not missing, f"options missing from the command-line page: {missing}"


def _pre_spans(section: str) -> list[str]:
    """The words of the inline literals of a piece of HTML (Sphinx writes each in a span)."""
    marker = '<span class="pre">'
    return [chunk.split("</span>", 1)[0] for chunk in section.split(marker)[1:]]
