"""Every number the README's Python example shows as an output is what the code gives today.

The ``python`` code blocks of README.md run statement by statement, in README order, in one
namespace (``doc_snippets``).  A statement's output is shown in its trailing comment and the
comment lines right below it; ``README_PAGE.outputs`` says which part of that comment is the
output and which expression it shows (the statement itself unless named).  Numbers are compared
at the precision printed; every commented statement is either an output or listed as none, so a
new output line cannot go unchecked.  The guides' examples are checked page by page by their own
tests (``tests/test_guides_*.py``).
"""

from __future__ import annotations

from doc_snippets import Page, run_page, unchecked

README_PAGE = Page(
    "README.md",
    outputs=(
        # (statement as written in the README, regex whose groups are the shown output within the
        # statement's comment (comment lines joined by newlines), expression shown or None).
        ("htb.summarize(out).mean.round(0)", r"columns T\n(.*)$", None),
    ),
)


def test_every_commented_statement_is_checked():
    assert unchecked(README_PAGE) == (set(), set())


def test_readme_outputs_are_current():
    assert len(README_PAGE.blocks()) == 1
    assert run_page(README_PAGE) == []
