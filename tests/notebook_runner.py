"""Runs the notebooks as a bare runtime would: a fresh virtual environment, a real Jupyter kernel.

The environment holds ipykernel and nothing else (no system site packages), so each notebook's
first cell must install htb_jax itself: from this checkout, by default, as Jupyter runs it from
``notebooks/`` (``HTB_JAX_SOURCE = ".."``), or from ``HTB_JAX_SOURCE`` where it is set.
``tests/test_notebooks.py`` uses it to check the stored notebooks; run it directly to execute
the notebooks again and store them with their new outputs:

    python tests/notebook_runner.py                      # every notebook
    python tests/notebook_runner.py notebooks/frontier.ipynb
    HTB_JAX_SOURCE=/path/to/checkout python tests/notebook_runner.py   # install htb_jax from there

Each stored Markdown table carries ``{"htb_jax": {"check": ...}}`` in its output metadata (the
notebooks' ``show``): ``"exact"`` for outputs every x86-64 CPU with FMA computes bit for bit
(docs/guides/reproducibility.md), ``"rounded"`` for reductions over seeds
(means, fits, bootstrap intervals), equal to a few units in the last place and so, once
rounded for display, to one unit of the last digit shown.  What the code cells print (run counts,
a memory plan) is compared as it is, but for its times.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "htb-jax-fresh"
# What the first cell prints once htb_jax imports: the versions the stored outputs were made with.
VERSIONS = re.compile(r"htb_jax (\S+), jax (\S+), jaxlib (\S+); devices: (.*)")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
# A time in printed text ("in 4.9 s", "1,484 runs per second"): the one thing a run may print otherwise.
TIMING = re.compile(r"\d[\d,]*(?:\.\d+)?(?= s\b| runs per second)")


def make_venv(path: pathlib.Path) -> pathlib.Path:
    """A virtual environment at ``path`` with ipykernel only; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
    python = path / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "ipykernel"], check=True, capture_output=True,
                   env={**os.environ, "PIP_COMPILE": "0"})
    return python


def first_cell_install(python: pathlib.Path, scratch: pathlib.Path, *, source: str | None = None,
                       extra_cells: tuple[str, ...] = ()):
    """Runs the first code cell of the first notebook (every notebook's install cell) alone in a kernel of
    ``python``, in ``notebooks/`` (its default source ``..`` is this checkout) or, given a ``source``,
    in ``scratch`` with ``HTB_JAX_SOURCE`` set to it; returns the executed ``nbformat`` notebook (that
    cell, then ``extra_cells``)."""
    import nbformat

    first = code_cells(nbformat.read(NOTEBOOKS[0], as_version=4))[0]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(first.source)])
    path = scratch / "install.ipynb"
    nbformat.write(nb, path)
    return execute(path, python, NOTEBOOKS[0].parent if source is None else scratch, source=source,
                   extra_cells=extra_cells)


def uninstall_htb_jax(python: pathlib.Path) -> None:
    """Removes htb_jax (not its dependencies) so that the next notebook's first cell installs it."""
    subprocess.run([str(python), "-m", "pip", "uninstall", "-q", "-y", "htb-jax"], check=True, capture_output=True)


@contextlib.contextmanager
def exclusive(lock: pathlib.Path):
    """Holds an exclusive lock on ``lock`` (one environment shared by several pytest-xdist workers)."""
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def kernel_env(source: str | None) -> dict[str, str]:
    """This process's environment for the kernel, with ``HTB_JAX_SOURCE`` (unset for ``None``: the
    install cell's default) and nothing that would let the kernel import htb_jax without installing
    it (``PYTHONPATH``, an active virtual environment).

    ``PIP_COMPILE=0`` makes the first cell's ``pip install`` skip byte-compiling what it installs
    (jax's modules are then compiled when imported): 30 s less on a 2-core CPU, 2 s more per import.
    Without ``PYTHONDONTWRITEBYTECODE`` a kernel keeps what it compiled, so the next kernel of the same
    environment imports jax, IPython and matplotlib in a third of the time.

    What a notebook prints of its memory plan is the same where it is stored and where it is checked:
    ``HTB_JAX_THREADS=2``, two executions per device on any machine (a 2-core CPU's default, where the
    notebooks are stored; the test suite's workers run one, and the plan's chunks follow).  The kernel
    also compiles with XLA's default CPU emitters, as a user's does (the test suite's processes run older
    ones, tests/conftest.py).
    """
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", "HTB_JAX_SOURCE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(PIP_COMPILE="0", HTB_JAX_THREADS="2")
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith("--xla_cpu_use_fusion_emitters")]
    env["XLA_FLAGS"] = " ".join(flags)
    if source is not None:
        env.update(HTB_JAX_SOURCE=source)
    return env


def execute(path: pathlib.Path, python: pathlib.Path, cwd: pathlib.Path, *, source: str | None = None,
            extra_cells: tuple[str, ...] = (), timeout: int = 900):
    """Runs the notebook at ``path`` top to bottom in a kernel of ``python``, working directory ``cwd``.

    Returns the executed ``nbformat`` notebook (outputs, and per-cell timings in
    ``cell.metadata.execution``).  ``extra_cells`` are appended code cells, for checks only.
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell(code) for code in extra_cells]
    with tempfile.TemporaryDirectory() as specs:
        spec = pathlib.Path(specs) / KERNEL
        spec.mkdir()
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (fresh environment)",
            "language": "python",
        }))
        km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=KernelSpecManager(kernel_dirs=[specs]))
        client = NotebookClient(nb, km=km, timeout=timeout, resources={"metadata": {"path": str(cwd)}})
        # cleanup_kc: shut the kernel down once the notebook has run.  nbclient keeps alive a kernel whose
        # manager it was given, and each left running held about 0.5 GiB and a tenth of a core to the end
        # of the test run.
        client.execute(env=kernel_env(source), cleanup_kc=True)
    return nb


def cell_seconds(cell) -> float:
    """Wall time of one executed code cell, from the timestamps nbclient records."""
    times = cell.metadata["execution"]
    start, end = (datetime.datetime.fromisoformat(times[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


def run_seconds(nb) -> float:
    """Seconds the code cells took after the first (install) cell: the notebook's run time."""
    return sum(cell_seconds(c) for c in code_cells(nb)[1:])


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def text_output(cell) -> str:
    """Everything the cell printed (both streams)."""
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def versions(nb) -> dict[str, str]:
    """htb_jax, jax and jaxlib versions and the devices, as the first cell printed them."""
    match = VERSIONS.search(text_output(code_cells(nb)[0]))
    if match is None:
        raise AssertionError("the first cell did not print 'htb_jax X, jax Y, jaxlib Z; devices: ...'")
    return dict(zip(("htb_jax", "jax", "jaxlib", "devices"), match.groups(), strict=True))


def checked_tables(nb) -> list[tuple[int, str, str]]:
    """``(code cell index, check, markdown)`` of every Markdown output ``show`` marked for checking."""
    tables = []
    for i, cell in enumerate(code_cells(nb)):
        for out in cell.get("outputs", []):
            check = out.get("metadata", {}).get("htb_jax", {}).get("check")
            if check is not None:
                tables.append((i, check, out["data"]["text/markdown"]))
    return tables


def printed(nb, cells: int | None = None) -> list[tuple[int, str]]:
    """``(code cell index, text)`` of what each code cell but the first (the install) printed, among the
    first ``cells``, with every time (:data:`TIMING`) replaced by ``#``."""
    return [(i, TIMING.sub("#", text)) for i, cell in enumerate(code_cells(nb)[:cells])
            if i and (text := text_output(cell))]


def images(nb) -> list[bytes]:
    """The PNG figures of every output, decoded."""
    import base64

    return [base64.b64decode(o["data"]["image/png"]) for c in code_cells(nb) for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]


def same_to_last_digit(computed: str, stored: str) -> bool:
    """Equal text, and equal numbers to one unit of the last digit shown (``2.5e-02``: 1e-4)."""
    a, b = computed.splitlines(), stored.splitlines()
    if len(a) != len(b) or [NUMBER.sub("#", x) for x in a] != [NUMBER.sub("#", y) for y in b]:
        return False
    for x, y in zip(a, b, strict=True):
        for u, v in zip(NUMBER.findall(x), NUMBER.findall(y), strict=True):
            mantissa, _, exponent = v.lower().partition("e")
            decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
            unit = 10.0 ** (int(exponent or 0) - decimals)
            if abs(float(u) - float(v)) > unit * (1 + 1e-9):
                return False
    return True


def store(path: pathlib.Path, python: pathlib.Path, source: str | None) -> float:
    """Executes the notebook in ``notebooks/``, as Jupyter runs it there (its install cell prints
    ``installing htb-jax from ..``, no path of this machine), and writes it back with its outputs;
    returns its run time."""
    import nbformat

    original = nbformat.read(path, as_version=4)
    nb = execute(path, python, path.parent, source=source)
    nb.metadata = original.metadata  # the kernel spec the notebook names, not the test's
    nbformat.write(nb, path)
    return run_seconds(nb)


def main(argv: list[str]) -> None:
    paths = [pathlib.Path(p).resolve() for p in argv] or NOTEBOOKS
    source = os.environ.get("HTB_JAX_SOURCE")  # another checkout, e.g. a clean export; default ".."
    with tempfile.TemporaryDirectory() as root:
        python = make_venv(pathlib.Path(root) / "venv")
        for path in paths:
            uninstall_htb_jax(python)
            print(f"{path.relative_to(ROOT)}: {store(path, python, source):.1f} s after the install cell")


if __name__ == "__main__":
    main(sys.argv[1:])
