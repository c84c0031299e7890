"""Every notebook runs top to bottom in a fresh environment where its first cell installed htb_jax, and
reproduces its stored tables.

One virtual environment, made here with ipykernel only (no system site packages, so the htb_jax
of this process is invisible), serves every notebook.  Every notebook starts with the same install
cell; it runs once per session, alone, in a real Jupyter kernel of that environment, and must
install htb_jax from ``HTB_JAX_SOURCE``, set to this checkout, as on a bare Colab runtime.  Then
each notebook runs top to bottom in a kernel of that environment (``tests/notebook_runner.py``):
its first cell finds the installed htb_jax.
The tables each notebook marks ``"exact"`` must equal the stored ones character for character,
those marked ``"rounded"`` (reductions over seeds) to one unit of the last digit shown, on a CPU
with FMA (where the reproducibility guide promises them); with another jax or jaxlib than
the stored run's, a difference says so (``python tests/notebook_runner.py`` stores new outputs).
"""

from __future__ import annotations

import os
import pathlib
import re
import sys
import tomllib

import nbformat
import pytest
from notebook_runner import (
    NOTEBOOKS,
    ROOT,
    checked_tables,
    code_cells,
    exclusive,
    execute,
    first_cell_install,
    images,
    make_venv,
    printed,
    run_seconds,
    same_to_last_digit,
    text_output,
    versions,
)

from conftest import host_fuses_multiply_add

# What the appended check cell prints: where the kernel imported htb_jax from.
WHERE = "htb_jax imported from "
WHERE_CELL = f"print({WHERE!r} + str(pathlib.Path(htb.__file__).parent))"
# Where each notebook opens on Colab (its first Markdown cell links there).
COLAB = "https://colab.research.google.com/github/htb-jax/htb_jax/blob/main/notebooks"


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory):
    """The fresh environment's root, after the install cell ran there, and that executed cell (and the
    check cell after it): made once per session, shared by its pytest-xdist workers."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's directory, above each worker's own
    venv, installed = shared / "notebook-venv", shared / "notebook-install" / "installed.ipynb"
    with exclusive(shared / "notebook-venv.lock"):
        if not installed.exists():
            python = make_venv(venv)
            installed.parent.mkdir(exist_ok=True)
            nb = first_cell_install(python, installed.parent, extra_cells=(WHERE_CELL,))
            nbformat.write(nb, installed.with_suffix(".partial"))
            installed.with_suffix(".partial").rename(installed)
    return venv, nbformat.read(installed, as_version=4)


def _imported_from(nb) -> pathlib.Path:
    return pathlib.Path(text_output(code_cells(nb)[-1]).removeprefix(WHERE).strip())


def test_there_are_five_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["frontier.ipynb", "gpu_showcase.ipynb", "peers.ipynb", "tune_schedule.ipynb",
                                           "your_data.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_notebook_has_its_outputs(path):
    nb = nbformat.read(path, as_version=4)
    cells = code_cells(nb)
    assert all(c.execution_count == i for i, c in enumerate(cells, 1)), "stored from one run, top to bottom"
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert versions(nb)["devices"] == "[CpuDevice(id=0)]"  # the stored outputs are a CPU run
    assert images(nb) and all(png.startswith(b"\x89PNG") for png in images(nb))
    assert {check for _, check, _ in checked_tables(nb)} == {"exact", "rounded"}
    first = "".join(cells[0].source).splitlines()
    assert 'HTB_JAX_SOURCE = os.environ.get("HTB_JAX_SOURCE", DEFAULT_SOURCE)' in first  # the one install setting
    assert f"[open this notebook in Colab]({COLAB}/{path.name})" in nb.cells[0].source


def test_every_notebook_starts_with_the_same_install_cell():
    # So that the one install below stands for each notebook's.
    first = {"".join(code_cells(nbformat.read(p, as_version=4))[0].source) for p in NOTEBOOKS}
    assert len(first) == 1


def test_install_cell_defaults_to_the_checkout_above_else_the_projects_repository(tmp_path, monkeypatch):
    # The cell's settings, run alone (before its try: nothing is installed): Jupyter in notebooks/ takes
    # "..", a Colab runtime (in /content, no checkout above) the repository pyproject.toml names, and
    # an HTB_JAX_SOURCE in the environment wins.
    settings = "".join(code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))[0].source).split("\ntry:")[0]
    source = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Source"]

    def chosen(cwd):
        monkeypatch.chdir(cwd)
        scope = {}
        exec(settings, scope)
        return scope["HTB_JAX_SOURCE"], scope["driver"], scope["extra"]

    monkeypatch.delenv("HTB_JAX_SOURCE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi: no driver, no CUDA extra
    assert chosen(ROOT / "notebooks") == ("..", None, "")
    (tmp_path / "content").mkdir()
    assert chosen(tmp_path / "content") == (f"git+{source}.git", None, "")
    (tmp_path / "other" / "notebooks").mkdir(parents=True)  # a notebook copied into another project's folder
    (tmp_path / "other" / "pyproject.toml").write_text('[project]\nname = "another"\n')
    assert chosen(tmp_path / "other" / "notebooks")[0] == f"git+{source}.git"  # not that project's build
    monkeypatch.setenv("HTB_JAX_SOURCE", "/content/htb_jax-0.1.0-py3-none-any.whl")
    assert chosen(ROOT / "notebooks")[0] == "/content/htb_jax-0.1.0-py3-none-any.whl"
    assert COLAB == f"https://colab.research.google.com/github/{source.removeprefix('https://github.com/')}/blob/main/notebooks"


def test_install_cell_says_when_htb_jax_is_installed_and_its_source_unused(monkeypatch, capsys, tmp_path):
    # htb_jax importable (this process): nothing is installed, and a source set by the user is named as unused
    # (it was ignored without a word).
    cell = "".join(code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))[0].source)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HTB_JAX_SOURCE", "/content/htb_jax-0.1.0-py3-none-any.whl")
    exec(cell, {})
    out = capsys.readouterr().out
    assert out.startswith("HTB_JAX_SOURCE = '/content/htb_jax-0.1.0-py3-none-any.whl' is not used: htb_jax is "
                          "installed already"), out
    assert "installing" not in out
    monkeypatch.delenv("HTB_JAX_SOURCE")
    monkeypatch.chdir(ROOT / "notebooks")
    exec(cell, {})
    assert capsys.readouterr().out.startswith("htb_jax ")  # the default source: no word about it


def test_install_cell_builds_a_checkout_afresh(tmp_path, monkeypatch):
    # pip keeps the wheels it builds from a local path under that path: without --no-cache-dir a checkout
    # changed since an earlier install was installed as it was then (a stale htb_jax ran the notebooks'
    # checks).  A git URL keeps pip's cache.  htb_jax made unimportable, pip recorded and failing.
    import subprocess

    cell = "".join(code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))[0].source)
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    monkeypatch.setitem(sys.modules, "htb_jax", None)  # import htb_jax: ModuleNotFoundError
    calls = []
    monkeypatch.setattr(subprocess, "run",
                        lambda args, **kw: calls.append(args) or subprocess.CompletedProcess(args, 1, "", ""))
    for source, fresh in ((str(ROOT), True), ("git+https://github.com/htb-jax/htb_jax.git", False)):
        monkeypatch.setenv("HTB_JAX_SOURCE", source)
        with pytest.raises(RuntimeError, match="pip install"):
            exec(cell, {})
        assert calls[-1][2:4] == ["pip", "install"] and ("--no-cache-dir" in calls[-1]) is fresh, calls[-1]


def test_install_cell_picks_cuda_wheels_by_the_nvidia_driver(tmp_path, monkeypatch):
    # CUDA 13 wheels need a driver >= 580: an older one gets the [cuda12] extra, and the other CUDA's plugin goes.
    settings = "".join(code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))[0].source).split("\ntry:")[0]
    monkeypatch.setenv("PATH", str(tmp_path))
    for version, want in (("580.82.07", ("[cuda]", "12")), ("550.54.15", ("[cuda12]", "13"))):
        smi = tmp_path / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\necho {version}\n")
        smi.chmod(0o755)
        scope = {}
        exec(settings, scope)
        assert (scope["driver"], scope["extra"], scope["other"]) == (int(version.split(".")[0]), *want)


def test_first_cell_installs_htb_jax_into_a_bare_environment(installed_python):
    venv, installed = installed_python
    out = text_output(code_cells(installed)[0])
    assert "installing htb-jax from ..\n" in out, out  # Jupyter's way: run in notebooks/, the checkout above
    versions(installed)  # then imported it, and printed the versions
    where = _imported_from(installed)
    assert where.is_relative_to(venv), f"htb_jax came from {where}, not the fresh environment"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_installs_htb_jax_and_reproduces_its_tables(path, installed_python, tmp_path):
    venv, _ = installed_python  # htb_jax installed there by the first cell (the test above)
    fresh = execute(path, venv / "bin" / "python", tmp_path, extra_cells=(WHERE_CELL,))
    where = _imported_from(fresh)
    assert where.is_relative_to(venv), f"htb_jax came from {where}, not the fresh environment"
    assert "installing" not in text_output(code_cells(fresh)[0])  # it was there already
    assert images(fresh)
    assert run_seconds(fresh) < 60, "a notebook's CPU configuration runs well under a minute"

    stored = nbformat.read(path, as_version=4)
    now, then = versions(fresh), versions(stored)
    if now["devices"] != then["devices"]:
        pytest.skip(f"the stored outputs are a run on {then['devices']}; this kernel has {now['devices']}")
    if not host_fuses_multiply_add():
        pytest.skip("the stored outputs are promised bit for bit only on a CPU with FMA")
    # Another jax or jaxlib draws the same numbers only in law: then a difference is expected.
    versions_note = "" if (now["jax"], now["jaxlib"]) == (then["jax"], then["jaxlib"]) else (
        f" (stored with jax {then['jax']} and jaxlib {then['jaxlib']}, run with {now['jax']} and {now['jaxlib']})"
    )
    tables, stored_tables = checked_tables(fresh), checked_tables(stored)
    assert [(i, check) for i, check, _ in tables] == [(i, check) for i, check, _ in stored_tables], versions_note
    for (i, check, table), (_, _, recorded) in zip(tables, stored_tables, strict=True):
        hint = f"code cell {i + 1} of {path.name} shows another table than the stored one{versions_note}; " \
               f"store it again (python tests/notebook_runner.py) if the change is meant:\n{table}\n---\n{recorded}"
        if check == "exact":
            assert table == recorded, hint
        else:
            assert same_to_last_digit(table, recorded), hint
    fresh_printed, stored_printed = printed(fresh, len(code_cells(stored))), printed(stored)
    assert fresh_printed == stored_printed, (
        f"{path.name} prints other text than the stored one (times apart){versions_note}; store it again "
        f"(python tests/notebook_runner.py) if the change is meant:\n{fresh_printed}\n---\n{stored_printed}")


def test_same_to_last_digit_tolerates_one_unit_of_the_last_digit_only():
    row = "| 0.667 | 0.696 [0.696, 0.696] | 545177.69 | +5.194e-02 | 2095 | finite T: schedule predicts 0.986 |"
    assert same_to_last_digit(row, row)
    near = row.replace("0.696 [", "0.697 [").replace("545177.69", "545177.70").replace("+5.194e-02", "+5.195e-02")
    assert same_to_last_digit(near.replace("2095", "2096"), row)
    assert not same_to_last_digit(row.replace("0.696 [", "0.698 ["), row)
    assert not same_to_last_digit(row.replace("+5.194e-02", "+5.196e-02"), row)
    assert not same_to_last_digit(row.replace("predicts", "expects"), row)
    assert not same_to_last_digit(row + "\n| 1 |", row)


def test_readme_states_each_notebooks_stored_cpu_time():
    section = (ROOT / "README.md").read_text().split("## Notebooks")[1].split("\n## ")[0]
    for path in NOTEBOOKS:
        row = next(line for line in section.splitlines() if line.startswith(f"| [`{path.name}`]"))
        shown = re.search(r"\| (\d+) s \|", row)
        assert shown, f"no CPU time in the README's row of {path.name}"
        assert int(shown.group(1)) == round(run_seconds(nbformat.read(path, as_version=4)))
        gpu = row.rstrip(" |").rsplit("|", 1)[1].strip()  # "not yet measured ..." or "N s on an H100"
        timed = re.fullmatch(r"(\d+) s on an (H100|H200)", gpu)
        assert gpu.startswith("not yet measured") or timed, f"{path.name}: GPU column {gpu!r}"
        if timed:  # a recorded run's figure: the history names the notebook and its time on that card
            entry = (ROOT / "benchmarks" / "HISTORY.md").read_text().split(f"`{path.name}`")
            assert len(entry) > 1 and any(f"{timed.group(1)} s" in part[:400] for part in entry[1:]), path.name
