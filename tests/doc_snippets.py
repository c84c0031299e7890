"""Runs the ``python`` code blocks of a documentation page and checks the outputs they show.

A page's blocks run top to bottom in one namespace (later blocks use the names of earlier ones),
which starts empty: a page imports what it uses, as a reader pasting it into a new session must.  A statement's shown output is its trailing comment and the comment lines
right below it; a :class:`Page` says which part of that comment is an output (a regex whose groups
are the shown text) and which expression it shows (the statement itself unless named).  Numbers
are compared at the precision printed; every commented statement of a page is either an output or
listed as not one, so that a new output line cannot go unchecked.

Used by ``tests/test_readme_snippets.py`` (README.md) and the tests of the guides under ``docs/``.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import pickle
import re
import subprocess
import sys

import jax
import numpy as np

from conftest import compiles_with_default_emitters, default_code_generation_env, host_fuses_multiply_add

ROOT = pathlib.Path(__file__).resolve().parent.parent
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")


@dataclasses.dataclass(frozen=True)
class Page:
    """A page and what its commented statements show.

    Attributes:
      path: the page, relative to the repository root (``"docs/guides/measure.md"``).
      outputs: ``(statement as written, regex whose groups are the shown output within the
        statement's comment (comment lines joined by newlines), expression shown or None for the
        statement's own value)``.
      not_outputs: commented statements whose comment is no output.
      not_run: statements that are not run (a signature with no data, say).
      fma_only: outputs shown as a CPU with fused multiply-add computes them, checked only there.
      cpu_only: outputs that are XLA:CPU's own figures at its default emitters, checked on a CPU
        backend compiling with them only (:func:`run_page` runs such a page in a process that does).
      skip_blocks: substrings marking blocks that are not run (e.g. ``"jax.distributed.initialize("``).
    """

    path: str
    outputs: tuple = ()
    not_outputs: tuple = ()
    not_run: tuple = ()
    fma_only: tuple = ()
    cpu_only: tuple = ()
    skip_blocks: tuple = ()

    @property
    def text(self) -> str:
        return (ROOT / self.path).read_text()

    def blocks(self) -> list[str]:
        """The page's python blocks, but those :attr:`skip_blocks` marks."""
        blocks = re.findall(r"```python\n(.*?)```", self.text, flags=re.S)
        return [b for b in blocks if not any(mark in b for mark in self.skip_blocks)]


def statements(block: str) -> list[tuple[ast.stmt, str, str]]:
    """``(node, source, comment)`` per top-level statement: its trailing and following comment lines."""
    lines = block.splitlines()
    out = []
    for node in ast.parse(block).body:
        last = node.end_lineno - 1
        comments = []
        trailing = lines[last][node.end_col_offset :].strip()
        if trailing.startswith("#"):
            comments.append(trailing[1:].strip())
        j = last + 1
        while j < len(lines) and lines[j].lstrip().startswith("#"):
            comments.append(lines[j].lstrip()[1:].strip())
            j += 1
        out.append((node, ast.get_source_segment(block, node), "\n".join(comments)))
    return out


def numbers(value) -> list[float]:
    """The numbers of a value, flattened in display order."""
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in numbers(v)]
    return [float(x) for x in np.ravel(np.asarray(value))]


def agrees(got: float, shown: str) -> bool:
    """``got`` printed at ``shown``'s precision is ``shown``: within half a unit of its last digit.
    Pages show float64 reductions to at most 10 significant digits (the digits every CPU with FMA
    gives); a full-length number is refused, so that no tolerance hides a promise."""
    want = float(shown)
    mantissa = shown.split("e")[0].lstrip("-")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if len(mantissa.replace(".", "").lstrip("0")) > 12:
        return False
    scale = 10.0 ** int(shown.split("e")[1]) if "e" in shown else 1.0
    return abs(got - want) <= 0.5 * 10.0**-decimals * scale * (1 + 1e-12)


def unchecked(page: Page, blocks: list[str] | None = None) -> tuple[set, set]:
    """``(commented statements neither an output nor listed as none, outputs no statement shows)``."""
    blocks = page.blocks() if blocks is None else blocks
    commented = {source for block in blocks for _, source, comment in statements(block) if comment}
    checked = {s for s, _, _ in page.outputs}
    assert set(page.fma_only) <= checked and set(page.cpu_only) <= checked
    return commented - checked - set(page.not_outputs) - set(page.not_run), checked - commented


def _check(page: Page, statement: str, value, comment: str, namespace: dict) -> list[str]:
    failures = []
    for _, pattern, expression in (o for o in page.outputs if o[0] == statement):
        match = re.search(pattern, comment, flags=re.S)
        if not match:
            failures.append(f"{statement}: no output matching {pattern!r} in {comment!r}")
            continue
        shown = " ".join(match.groups())
        got = value if expression is None else eval(expression, namespace)
        dtype = re.search(r"dtype=(\w+)", shown)
        if dtype:
            if str(got.dtype) != dtype.group(1):
                failures.append(f"{statement}: shown dtype {dtype.group(1)}, got {got.dtype}")
            shown = shown.replace(dtype.group(0), "")
        tokens, values = _NUMBER.findall(shown), numbers(got)
        if len(tokens) != len(values) or not all(agrees(g, t) for g, t in zip(values, tokens, strict=False)):
            failures.append(f"{statement}: shown {shown!r}, got {got!r}")
    return failures


def run_blocks(page: Page, blocks: list[str], namespace: dict | None = None) -> list[str]:
    """Runs ``blocks`` of ``page`` in ``namespace`` (a new, empty one if None) and returns the
    failures of their shown outputs (empty if none)."""
    if namespace is None:
        namespace = {}
    failures = []
    fuses = host_fuses_multiply_add()
    on_cpu = jax.default_backend() == "cpu" and compiles_with_default_emitters()
    for block in blocks:
        for node, source, comment in statements(block):
            if source in page.not_run:
                continue
            if isinstance(node, ast.Expr):
                value = eval(compile(ast.Expression(node.value), f"<{page.path}>", "eval"), namespace)
                if (fuses or source not in page.fma_only) and (on_cpu or source not in page.cpu_only):
                    failures += _check(page, source, value, comment, namespace)
            else:
                exec(compile(ast.Module([node], []), f"<{page.path}>", "exec"), namespace)
    return failures


def run_page(page: Page) -> list[str]:
    """Runs every python block of ``page`` in one namespace; the failures of its shown outputs.

    A page that shows XLA:CPU's own figures (:attr:`Page.cpu_only`) runs in a new process compiling
    with XLA's default CPU emitters (``conftest.default_code_generation_env``) where this one does not."""
    if page.cpu_only and jax.default_backend() == "cpu" and not compiles_with_default_emitters():
        script = (f"import pickle, sys; sys.path.insert(0, {str(ROOT / 'tests')!r}); import doc_snippets; "
                  "sys.stdout.buffer.write(pickle.dumps(doc_snippets.run_page(pickle.load(sys.stdin.buffer))))")
        child = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(page), cwd=ROOT,
                               env=default_code_generation_env(), capture_output=True, timeout=600)
        assert child.returncode == 0, child.stderr.decode()
        return pickle.loads(child.stdout)
    return run_blocks(page, page.blocks())
