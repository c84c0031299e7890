"""Links inside files that pages include from outside ``docs/``, resolved as on GitHub.

``experiments.md`` includes ``experiments/README.md``, ``benchmarks.md`` includes
``BENCHMARKS.md`` and ``benchmarks/HISTORY.md``. Their links are written relative to the
included file (``[table](peer_frontier/table.md)``, ``[history](benchmarks/HISTORY.md#...)``),
so MyST, which reads them relative to the including page, finds no target. This extension
reads each such link relative to the included file instead:

- a Markdown file that some page includes becomes a link to that page (and its anchor);
- any other file of the repository becomes a download link (Sphinx copies it into the site).

A link that reaches no file stays as it is, and MyST's warning fails the build.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

_INCLUDE = re.compile(r"^(?:```+|:::+)\{include\}\s+(\S+)", re.MULTILINE)


def _scan_includes(app, env, docnames) -> None:
    """Which page includes which file: ``{absolute path: docname}``, read from the sources."""
    included = {}
    for docname in env.found_docs:
        source = Path(env.doc2path(docname))
        if source.suffix != ".md":
            continue
        for target in _INCLUDE.findall(source.read_text(encoding="utf-8")):
            included[str((source.parent / target).resolve())] = docname
    app.htb_included = included


def _target_file(env, node, included_dirs: list[Path]) -> tuple[Path, str | None] | None:
    """The repository file a MyST link outside ``docs/`` points to, and its anchor."""
    if node["refdomain"] == "doc" and os.path.isabs(node["reftarget"]):
        for suffix in env.config.source_suffix:
            path = Path(node["reftarget"] + suffix)
            if path.is_file():
                return path, node.get("reftargetid")
        return None
    if node["refdomain"] is None and included_dirs:
        target, _, anchor = node["reftarget"].partition("#")
        for directory in included_dirs:
            path = (directory / target).resolve()
            if target and path.is_file():
                return path, anchor or None
    return None


def _resolve(app, doctree) -> None:
    env = app.env
    included_dirs = [
        Path(env.srcdir, dep).resolve().parent for dep in doctree.settings.record_dependencies.list
    ]
    for node in list(doctree.findall(addnodes.pending_xref)):
        if node.get("reftype") != "myst":
            continue
        found = _target_file(env, node, included_dirs)
        if found is None:
            continue
        path, anchor = found
        common = {"refdoc": env.docname, "reftype": "myst", "refexplicit": node.get("refexplicit", False)}
        page = app.htb_included.get(str(path))
        if page is not None:
            new = addnodes.pending_xref("", refdomain="doc", reftarget=page, reftargetid=anchor, **common)
        else:
            relative = os.path.relpath(path, Path(env.doc2path(env.docname)).parent)
            new = addnodes.download_reference("", refdomain=None, reftarget=relative, **common)
        new["classes"] = node["classes"]
        new += node.children
        if not new.astext():
            new += nodes.literal(text=path.name)
        node.replace_self(new)


def setup(app):
    app.connect("env-before-read-docs", _scan_includes)
    # Before Sphinx's own doctree-read collectors (priority 500), which register download files.
    app.connect("doctree-read", _resolve, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
