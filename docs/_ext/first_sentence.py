"""The autosummary tables' one-line summaries cut at a sentence's end, not inside a literal.

Sphinx's ``extract_summary`` cuts a docstring's first line at the first ``". "`` and meant to
try longer cuts while the cut breaks inline markup, but it parses the whole stanza instead of
the cut, so ``Seeds ``0 .. S - 1`` of ...`` gives an unclosed literal and a warning. This
replaces it with the same function parsing the cut.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.ext import autosummary


def extract_summary(doc, settings) -> str:
    """The first sentence of a docstring that parses cleanly (else Sphinx's answer)."""
    summary = _sphinx_extract_summary(doc, settings)
    stanza: list[str] = []
    for line in doc:
        if line.strip():
            stanza.append(line.strip())
        elif stanza:
            break
    if not any(autosummary._parse_summary([summary], settings).findall(nodes.system_message)):
        return summary
    sentences = autosummary.periods_re.split(" ".join(stanza))
    for i in range(1, len(sentences) + 1):
        cut = ". ".join(sentences[:i]).rstrip(".") + "."
        if not any(autosummary._parse_summary([cut], settings).findall(nodes.system_message)):
            return cut
    return summary


_sphinx_extract_summary = autosummary.extract_summary


def setup(app):
    app.setup_extension("sphinx.ext.autosummary")
    autosummary.extract_summary = extract_summary
    return {"parallel_read_safe": True, "parallel_write_safe": True}
