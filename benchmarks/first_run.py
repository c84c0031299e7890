"""The first run a newcomer makes: ``htb-jax frontier`` in a fresh process, timed from outside.

Each run is a new Python process with a new output directory, so it pays
everything a first run pays: starting Python, importing htb_jax and jax,
tracing and compiling every program, simulating, fitting, drawing and writing
the figure and the files.  Only matplotlib's font list, built once per machine
the first time matplotlib is imported, is not rebuilt.  The script prints the
machine, the command, and the median and range over the runs of

* the import of htb_jax's command line (``python -c "import htb_jax._src.cli"``),
* the whole command, from starting the process to its exit, and
* the seconds the command prints itself (its runs of seeds, compilation included),

first without a persistent compilation cache, then (``--cache``) with JAX's
cache on disk (``JAX_COMPILATION_CACHE_DIR``,
``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0``): one run fills it, the
timed runs read it.  ``--programs`` also counts the programs XLA compiles in
one more (untimed) run, from JAX's compilation log.

    python benchmarks/first_run.py [--runs 5] [--cache] [--programs]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COMMAND = ["frontier"]
_PRINTED = re.compile(r"^([0-9.]+) s \(compilation included\)", re.MULTILINE)


def machine() -> str:
    """The CPU model, the cores this process may use, the OS, Python's and jax's versions."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    jax_version = subprocess.run([sys.executable, "-c", "import jax; print(jax.__version__)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
    return f"{model}, {cores} cores, {platform.system()}, Python {platform.python_version()}, jax {jax_version}"


def entry_point() -> list[str]:
    """``htb-jax`` next to this Python if installed there, else the same entry point through ``python -m htb_jax``."""
    script = os.path.join(os.path.dirname(sys.executable), "htb-jax")
    if os.path.exists(script):
        return [script]
    return [sys.executable, "-m", "htb_jax"]


def timed(argv: list[str], env: dict) -> tuple[float, str]:
    """Wall seconds of one process, and what it wrote to stderr; a failure stops the script."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return seconds, done.stderr


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s ({min(values):.2f}..{max(values):.2f}) over {len(values)} runs"


def measure(runs: int, env: dict, scratch: str) -> None:
    """Prints the three timings of ``runs`` fresh runs under ``env``."""
    imports, totals, printed = [], [], []
    for _ in range(runs):
        imports.append(timed([sys.executable, "-c", "import htb_jax._src.cli"], env)[0])
        out = tempfile.mkdtemp(dir=scratch)
        seconds, stderr = timed([*entry_point(), *COMMAND, "--out", os.path.join(out, "frontier")], env)
        totals.append(seconds)
        found = _PRINTED.search(stderr)
        if found:
            printed.append(float(found.group(1)))
    print(f"  import htb_jax._src.cli:          {summary(imports)}")
    print(f"  htb-jax frontier, whole command:  {summary(totals)}")
    if printed:
        print(f"  printed by it (runs, compiling):  {summary(printed)}")


def count_programs(env: dict, scratch: str) -> int:
    """The programs XLA compiles in one run of the command (JAX's compilation log)."""
    logged = dict(env, JAX_LOG_COMPILES="1")
    _, stderr = timed([*entry_point(), *COMMAND, "--out", os.path.join(scratch, "logged")], logged)
    return stderr.count("Finished XLA compilation")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each kind (default %(default)s)")
    parser.add_argument("--cache", action="store_true", help="also time runs that read JAX's compilation cache")
    parser.add_argument("--programs", action="store_true", help="also count the programs one run compiles")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE"))}
    scratch = tempfile.mkdtemp(prefix="htb_jax_first_run_")
    try:
        print(f"machine: {machine()}")
        print(f"command: {' '.join(['htb-jax', *COMMAND])} --out <a new directory>, a new process each run")
        print("without a persistent compilation cache:")
        measure(args.runs, env, scratch)
        if args.cache:
            cached = dict(env, JAX_COMPILATION_CACHE_DIR=os.path.join(scratch, "jax-cache"),
                          JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
            timed([*entry_point(), *COMMAND, "--out", os.path.join(scratch, "filling")], cached)
            print("with JAX's compilation cache on disk, filled by one run before:")
            measure(args.runs, cached, scratch)
        if args.programs:
            print(f"programs compiled by one run without the cache: {count_programs(env, scratch)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
