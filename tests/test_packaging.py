"""The wheel and the source distribution, built as a packager builds them, and the wheel installed.

One module-scoped build: the source tree (the files git tracks or would track, as in a clean
checkout) is copied out of the repository, so the working tree gets no build output; a fresh
virtual environment gets the setuptools that ``[build-system] requires`` names (from the package
index, as pip's own build isolation gets it); setuptools' PEP 517 hooks build the sdist, then the
wheel from the unpacked sdist (as ``python -m build`` does, so the sdist is shown to be enough to
build from); the wheel is installed into the environment, which sees the running environment's
packages (jax, numpy, ...) after its own, and the package is imported and its command run from a
directory outside the repository.

What goes where (MANIFEST.in): the wheel holds the package alone, ``htb_jax/`` and its
``.dist-info`` (no tests, experiments, notebooks, docs or benchmarks); the sdist holds the whole
source tree the test suite runs on (the tests read README.md, BENCHMARKS.md, docs/, notebooks/,
experiments/ and benchmarks/), all but the repository's own dot files (``.ci/``, ``.gitignore``).
"""

import email.parser
import os
import pathlib
import re
import shutil
import site
import subprocess
import sys
import tarfile
import tomllib
import types
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# The one place the version is written (pyproject.toml reads it as its dynamic version).
VERSION = re.search(r'^__version__ = "(.+)"$', (ROOT / "htb_jax" / "_src" / "version.py").read_text(), re.M).group(1)
# setuptools' own files in an sdist, beside the source tree.
SDIST_ADDED = re.compile(r"PKG-INFO|setup\.cfg|htb_jax\.egg-info/.*")

BUILD = """
import os, pathlib, sys, tarfile
import setuptools.build_meta as backend
dist = pathlib.Path(sys.argv[1])
sdist = dist / backend.build_sdist(str(dist))
with tarfile.open(sdist) as archive:
    archive.extractall(dist / "unpacked", filter="data")
(tree,) = (dist / "unpacked").iterdir()
os.chdir(tree)
print(sdist.name, backend.build_wheel(str(dist)), sep="\\n")
"""
IMPORT = "import htb_jax, htb_jax.frontier, htb_jax.theory; print(htb_jax.__version__, htb_jax.__file__)"


def source_tree():
    """The repository's files as a clean checkout holds them (tracked, or untracked but not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return sorted(p for p in set(listed.split("\0")) if p and (ROOT / p).is_file())


def run(argv, cwd, env):
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("packaging")
    files = source_tree()
    src = tmp / "src"
    for path in files:
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, src / path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    # The environment: its own site-packages first, then the running environment's (a .pth file; the
    # running environment may itself be a virtual environment, whose packages --system-site-packages
    # would not show).  Not the repository: the installed wheel must be what is imported.
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    python = venv / "bin" / "python"
    purelib = pathlib.Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               tmp, env).strip())
    (purelib / "running_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--ignore-installed", "--no-deps"]
    run([*pip, *PYPROJECT["build-system"]["requires"]], tmp, env)

    dist = tmp / "dist"
    dist.mkdir()
    sdist_name, wheel_name = run([str(python), "-c", BUILD, str(dist)], src, env).splitlines()[-2:]  # after its log
    run([*pip, "--no-index", "--no-compile", str(dist / wheel_name)], tmp, env)

    # The import and the command at once (each mostly imports jax), from outside the repository.
    outside = tmp / "elsewhere"
    outside.mkdir()
    procs = [subprocess.Popen(argv, cwd=outside, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for argv in ([str(python), "-c", IMPORT], [str(venv / "bin" / "htb-jax"), "--help"])]
    (imported, import_err), (usage, usage_err) = (proc.communicate() for proc in procs)
    return types.SimpleNamespace(
        files=files, purelib=purelib, sdist=dist / sdist_name, wheel=dist / wheel_name,
        imported=(procs[0].returncode, imported, import_err), usage=(procs[1].returncode, usage, usage_err))


def test_wheel_holds_the_package_alone(built):
    names = zipfile.ZipFile(built.wheel).namelist()
    dist_info = f"htb_jax-{VERSION}.dist-info/"
    assert built.wheel.name == f"htb_jax-{VERSION}-py3-none-any.whl"
    assert {n for n in names if not n.startswith(dist_info)} == {p for p in built.files if p.startswith("htb_jax/")}
    assert {n.split("/")[0] for n in names} == {"htb_jax", dist_info.rstrip("/")}


def test_wheel_metadata_license_and_console_script(built):
    wheel = zipfile.ZipFile(built.wheel)
    dist_info = f"htb_jax-{VERSION}.dist-info/"
    assert wheel.read(dist_info + "licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    metadata = email.parser.BytesParser().parsebytes(wheel.read(dist_info + "METADATA"))
    assert (metadata["Name"], metadata["Version"]) == ("htb-jax", VERSION)
    assert (metadata["License-Expression"], metadata["License-File"]) == ("Apache-2.0", "LICENSE")
    assert "Development Status :: 3 - Alpha" in metadata.get_all("Classifier")
    urls = dict(url.split(", ") for url in metadata.get_all("Project-URL"))
    assert set(urls) >= {"Homepage", "Documentation", "Source", "Changelog"}
    entry_points = wheel.read(dist_info + "entry_points.txt").decode()
    assert "[console_scripts]\nhtb-jax = htb_jax._src.cli:main\n" in entry_points


def test_sdist_is_the_source_tree(built):
    top = f"htb_jax-{VERSION}/"
    assert built.sdist.name == f"htb_jax-{VERSION}.tar.gz"
    with tarfile.open(built.sdist) as archive:
        members = {m.name.removeprefix(top) for m in archive.getmembers() if m.isfile()}
    assert {"pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "CITATION.cff"} <= members
    assert {m for m in members if not SDIST_ADDED.fullmatch(m)} == {
        p for p in built.files if not p.split("/")[0].startswith(".")}


def test_installed_wheel_imports_outside_the_repository(built):
    returncode, out, err = built.imported
    assert returncode == 0, err
    version, module = out.split()
    assert version == VERSION
    assert pathlib.Path(module) == built.purelib / "htb_jax" / "__init__.py"


def test_installed_console_script_prints_usage(built):
    returncode, out, err = built.usage
    assert returncode == 0, err
    assert out.startswith("usage: htb-jax")
    assert "frontier" in out and "sweep" in out


def test_release_files_name_the_package_version():
    citation = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf'^version: "?{re.escape(VERSION)}"?$', citation, re.MULTILINE)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(r"^## (?!Unreleased)(\S+)", changelog, re.MULTILINE).group(1) == VERSION
    assert (ROOT / "LICENSE").read_text().split()[:4] == ["Apache", "License", "Version", "2.0,"]
