"""Every notebook runs top to bottom against the installed package (magics skipped)."""

import json
import pathlib
import sys
import types

import matplotlib
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _code(path: pathlib.Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    lines = []
    for cell in cells:
        if cell["cell_type"] == "code":
            lines += [line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    shown = []
    display = types.ModuleType("IPython.display")  # records what the notebook displays
    display.display = shown.append
    display.Markdown = lambda text: ("markdown", text)
    display.Image = lambda filename: ("image", pathlib.Path(filename).read_bytes())
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: None  # not inside a kernel (matplotlib asks both)
    ipython.version_info = (9, 0)
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    exec(compile(_code(path), str(path), "exec"), {"__name__": "__main__"})
    for kind, payload in shown:
        assert payload, f"{path.name} displayed an empty {kind}"
