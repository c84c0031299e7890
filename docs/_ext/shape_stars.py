"""Array shapes in docstrings, such as ``f64[*G, *I]``, rendered as code.

The docstrings give shapes as ``dtype[axes]`` in plain text (``f32[K, n]``, ``f64[*G, *I]``,
``f32[broadcast(words.shape[:-1], batch_shape)]``). Read as reStructuredText, a ``*G`` opens
an emphasis and a ``[:-1]`` ends napoleon's type of a "Returns:" entry, and both warn. This
wraps each shape in an inline literal before napoleon reads the docstring, outside inline
literals and doctest lines.
"""

from __future__ import annotations

import re

_START = re.compile(r"(?<![\w`\\])(?:bool|[fiuc](?:8|16|32|64)?)\[")
_LITERAL = re.compile(r"(``.*?``)")


def _wrap_shapes(text: str) -> str:
    out, pos = [], 0
    for match in _START.finditer(text):
        if match.start() < pos:
            continue
        depth, end = 0, None
        for j in range(match.end() - 1, len(text)):
            depth += {"[": 1, "]": -1}.get(text[j], 0)
            if depth == 0:
                end = j + 1
                break
        if end is None:  # the shape goes on past the line: leave it
            continue
        out += [text[pos : match.start()], "``", text[match.start() : end], "``"]
        pos = end
    return "".join(out) + text[pos:]


def _process(app, what, name, obj, options, lines) -> None:
    for i, line in enumerate(lines):
        if "[" in line and not line.lstrip().startswith((">>>", "...")):
            parts = _LITERAL.split(line)  # odd indices are inline literals, left alone
            lines[i] = "".join(p if k % 2 else _wrap_shapes(p) for k, p in enumerate(parts))


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")
    # Before napoleon (priority 500) turns the Google sections into fields.
    app.connect("autodoc-process-docstring", _process, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
