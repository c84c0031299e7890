"""The GPU suite: every benchmark at a size that fills the device, checked against the CPU path.

One command runs, on the default JAX backend,

1. the AdaR-ETC sweep benchmark (``bench_sweep.py``: 16-point grid, K = 10
   Pareto(1.5) arms, T = 10^6) against the NumPy sweep, and against htb_jax on
   two CPU cores of the same host (a subprocess pinned to cores 0 and 1);
2. the round-by-round engine benchmark (``bench_engine.py``: UCB1 and Robust
   UCB (MoM) on K = 10 Gaussian arms, T = 10^4) against SMPyBandits and Python
   loops;
3. the scaling benchmark (``bench_scale.py``: seeds, horizons, memory budget);
4. the full-size T-frontier (``experiments/t_frontier.py``'s configuration,
   horizons 10^3 .. 10^18, at ``--frontier-seeds`` seeds),
5. the T-frontier on alpha-stable arms (``experiments/stable_frontier.py``'s
   six families, ``eps`` in {0.5, 0.25}, ``a = 1 + eps + {0.05, 0.3}`` and 2,
   horizons 10^3 .. 10^18, block laws of ``B_T`` standard variates, at 10^5
   seeds),
6. the peers whose round costs O(t) by definition (``experiments/peer_frontier.py``'s
   AdaR-UCB, APE2 p=2, MR-UCB p=2, MR-APE p=2 and Robust UCB told the true
   ``u``), measured by ``htb.frontier.measure`` on Theorem 1's two-point
   family at eps = 1 and 0.5 to T = 10^4 at 1024 seeds (anytime policies read
   at the checkpoints from 10^3 on, MR-UCB and MR-APE run at two horizons per
   decade; at the toy size AdaR-UCB and Robust UCB told each member's u);
   parts 4 to 6 are configured in ``gpu_experiments.py``,

then checks a subset of seeds of the sweep, the engine and the frontier against
the same programs on the CPU with the same key (``gpu_checks.py``): equal bit
for bit where the documentation promises it on any machine, statistically otherwise.
On a CPU both sides are the same device, so the checks compare the CPU path
with itself and pass by construction: the block says so, and
``tests/test_gpu_suite.py`` feeds ``gpu_checks.compare`` a perturbed side (one
reward bit, one regret) to show that each check fails where it should.

It prints a block (date, device, versions, every figure) ready to go at the
top of the GPU suite's section of ``benchmarks/HISTORY.md``, the dated runs,
its figures into the GPU row of ``BENCHMARKS.md``'s summary table, and exits
with status 1 if a check fails.  ``--size auto`` (the
default) is ``full`` on a GPU and ``toy`` elsewhere (``full`` is refused
elsewhere); the toy size runs in about a minute on two CPU cores (53 s on
an AMD EPYC, 2026-11-30), and
``tests/test_gpu_suite.py`` runs it, so the suite cannot rot.

``--profile [DIR]`` runs one more call of the sweep (of at most
``bench_sweep.PROFILE_SEEDS`` seeds) and of the engine's UCB1 (of at most
``bench_engine.PROFILE_SEEDS``) under the JAX profiler: their top operations
go into the block and their traces into ``DIR`` (default
``gpu-suite-profile``; for https://ui.perfetto.dev; on a GPU, the kernels of
the device's streams).

``--parts`` runs some of the parts (``sweep,engine,scale,frontier,stable,peers,checks``;
all by default), so that a suite longer than one call's time limit can be
split across calls.  With ``--out``, the block so far is written to the file
after every part, so a run stopped midway keeps the parts it finished.
``--store DIR`` keeps the frontier, stable and peers parts' finished seed chunks in
``DIR`` (one resumable store per run, as ``htb-jax frontier --out``): the same
command started again after a time limit stopped it reads them back and computes
the rest; the block then says how many chunks were read back, and those parts'
walls cover only the chunks computed.

    python benchmarks/gpu_suite.py [--size auto|toy|full] [--parts P,..] [--frontier-seeds N] [--out FILE]
                                   [--profile [DIR]] [--store DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
import bench_engine  # noqa: E402
import bench_scale  # noqa: E402
import bench_sweep  # noqa: E402
import peer_frontier  # noqa: E402
from gpu_checks import Check, check_against_cpu, on_the_cpu_alone  # noqa: E402
from gpu_experiments import PEERS, frontier_config, measure_peers, stable_configs, store_path  # noqa: E402
from gpu_size import Size  # noqa: E402
from progress import note  # noqa: E402

import htb_jax as htb  # noqa: E402
from htb_jax._src import distributed, frontier  # noqa: E402
from htb_jax._src.chunk_store import ForeignStoreError, Remedy
from htb_jax._src.frontier.runs import STORE_REMEDY
from htb_jax._src.resumable import seed_chunks  # noqa: E402

MiB = 2**20
ENGINE_TARGET = 1e9  # UCB1 seed-rounds/s on one H100/H200 (issue 12)
SWEEP_TARGET = 50.0  # GPU sweep rounds/s over the 2-core CPU figure of the same configuration


SIZES = {
    "toy": Size(
        sweep_seeds=8, sweep_horizon=10**4, numpy_seeds=8, repeats=1,
        engine_seeds=8, engine_horizon=100, robust_seeds=8, robust_ucb=False, loop_seeds=1, smpy_seeds=0,
        scale_max_seeds=1, scale_horizon=10**3, horizon_seeds=4, horizon_exponents=(3, 3),
        budget_seeds=1, budget_engine_seeds=2, budget_horizon=10**3, budget_engine_horizon=50, budgets=(None,),
        frontier_seeds=4, frontier_chunk=4, stable_seeds=4, stable_chunk=4,
        # An anytime peer and one told each member's u (measure's per-horizon runs are tested in
        # tests/test_frontier_measure.py): each peer is one more program to compile.
        peers=("AdaR-UCB", "Robust UCB, true u"), peers_seeds=4, peers_chunk=4, peers_horizon=300, peers_fit_from=30, peers_per_decade=2,
        peers_spike_probs=(1e-2, 0.5), check_seeds=8, cpu_2core=False,
    ),
    "full": Size(
        sweep_seeds=10**6, sweep_horizon=10**6, numpy_seeds=10**4, repeats=3,
        # Robust UCB (MoM) recomputes the pulled arm's Median-of-Means from all its rewards, so a round
        # costs O(t): 8.5e5 seed-rounds/s on 2 CPU cores at T = 10^4, where 10^5 seeds would take 1150 s
        # a call; at 10^5 seeds the engine part did not finish within 120 s on an H200 (2026-11-26).
        engine_seeds=10**6, engine_horizon=10**4, robust_seeds=10**4, robust_ucb=True, loop_seeds=2, smpy_seeds=2,
        scale_max_seeds=10**6, scale_horizon=10**5, horizon_seeds=10**5, horizon_exponents=(3, 15),
        budget_seeds=10**5, budget_engine_seeds=4096, budget_horizon=10**5, budget_engine_horizon=2000,
        budgets=(32 * MiB, 512 * MiB, 8192 * MiB, None),
        frontier_seeds=10**5, frontier_chunk=10**4, stable_seeds=10**5, stable_chunk=10**4,
        # On a GPU the engine's round costs about the same whatever its lanes (ForceMoM on an H100: 0.6 to
        # 0.8 ms at 93, 1623 and 4096 seeds, 2026-11-26), so horizons, not seeds, set the part's time: at
        # T = 3 x 10^4 no 128-seed chunk of AdaR-UCB (then 13 instances one after another) finished within
        # 300 s. The members now run side by side, one pass of rounds a run, and Robust UCB told each
        # member's u runs paired with its members (simulate(..., paired=True)): at T = 10^4 a seed chunk
        # is about 6.8 passes of 10^4 rounds (AdaR-UCB 1, APE2 1, MR-UCB and MR-APE 1.4 each at T = 1e3,
        # 3e3, 1e4, Robust UCB 2: at two eps), the part's two chunks 14 (with the 13 members one at a
        # time, Robust UCB alone took 52).
        peers=PEERS, peers_seeds=1024, peers_chunk=512, peers_horizon=10**4, peers_fit_from=10**3, peers_per_decade=2,
        peers_spike_probs=peer_frontier.SPIKE_PROBS, check_seeds=256, cpu_2core=True,
    ),
}


# -- the suite ---------------------------------------------------------------------------------

PARTS = ("sweep", "engine", "scale", "frontier", "stable", "peers", "checks")


def cpu_2core_sweep(seeds: int, horizon: int, repeats: int) -> float | None:
    """htb_jax's sweep rate (rounds/s) on two cores of this host's CPU: a subprocess pinned to
    cores 0 and 1 with JAX_PLATFORMS=cpu and default XLA settings."""
    if not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        return None
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_sweep.py"),
           "--jax-only", "--seeds", str(seeds), "--repeats", str(repeats), "--horizon", str(horizon)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                          preexec_fn=lambda: os.sched_setaffinity(0, {0, 1}))
    seconds = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
    return seeds * bench_sweep.ALPHAS.size * bench_sweep.QS.size * horizon / seconds


def run_suite(size_name: str, frontier_seeds: int | None = None, parts: Sequence[str] = PARTS,
              on_part: Callable[[str], None] | None = None,
              profile_dir: str | None = None, store_dir: str | None = None) -> tuple[str, list[Check]]:
    """Runs ``parts`` (in the order of :data:`PARTS`) at size ``size_name``.

    With ``store_dir``, the frontier, stable and peers parts keep their finished seed chunks there
    (:func:`store_path`), and read them back when run again.

    With ``profile_dir``, the sweep (at most ``bench_sweep.PROFILE_SEEDS`` seeds) and the engine's
    UCB1 each run one more call under the JAX profiler: the block gets their top operations, and ``profile_dir`` their traces
    (``sweep.trace.json.gz``, ``engine.trace.json.gz``).

    Returns:
      ``(block, checks)``: the Markdown block of the parts run, and the checks
      (empty unless ``"checks"`` is among the parts).  ``on_part`` receives the
      block of the parts finished so far after each part.
    """
    size = SIZES[size_name]
    if frontier_seeds:
        size = dataclasses.replace(size, frontier_seeds=frontier_seeds,
                                   frontier_chunk=min(size.frontier_chunk, frontier_seeds))
    config = frontier_config(size_name, size.frontier_seeds, size.frontier_chunk)
    started = time.perf_counter()
    results, walls = {}, {}
    dev = jax.devices()[0]
    print(f"gpu_suite --size {size_name}: backend {jax.default_backend()}, {len(jax.devices())} x "
          f"{dev.device_kind}; parts {', '.join(p for p in PARTS if p in parts)}", file=sys.stderr, flush=True)

    def trace(name: str) -> str | None:
        return None if profile_dir is None else os.path.join(profile_dir, f"{name}.trace.json.gz")

    def sweep():
        r = bench_sweep.run(size.sweep_seeds, size.repeats, horizon=size.sweep_horizon,
                            numpy_seeds=size.numpy_seeds, previous_baseline=False, forced_devices=False,
                            selection=size_name == "full", profile=profile_dir is not None,
                            trace_path=trace("sweep"))
        cpu2 = cpu_2core_sweep(1000, size.sweep_horizon, size.repeats) if size.cpu_2core else None
        return r, cpu2

    def engine():
        return bench_engine.run_benchmark(size.engine_seeds, size.engine_horizon, loop_seeds=size.loop_seeds,
                                          smpy_seeds=size.smpy_seeds, repeats=size.repeats, forced_devices=False,
                                          robust_seeds=size.robust_seeds, robust_ucb=size.robust_ucb,
                                          profile=profile_dir is not None, trace_path=trace("engine"))

    def scale():
        # The budgets table before the horizons' (a program per horizon, most of the part's time): two
        # H100 runs stopped at their limits within the horizons and never reached it.
        lo, hi = size.horizon_exponents
        # rows to stderr as they are measured (progress); stdout holds the block alone
        seeds = bench_scale.seeds_table(size.scale_max_seeds, size.repeats, size.scale_horizon, stream=sys.stderr)
        budgets = bench_scale.budget_table(size.budget_seeds, size.budget_engine_seeds, horizon=size.budget_horizon,
                                           engine_horizon=size.budget_engine_horizon, budgets=size.budgets,
                                           stream=sys.stderr)
        horizons = bench_scale.horizons_table(size.horizon_seeds, size.repeats, hi, lo, stream=sys.stderr)
        return seeds, horizons, budgets

    def frontier_part():
        return frontier.run_t_frontier(config, progress=False, out_dir=store_path(store_dir, "frontier"))

    def stable():
        stable_size = (size_name, size.stable_seeds, min(size.stable_chunk, size.stable_seeds))
        runs = []
        for a, config in stable_configs(*stable_size):
            label = f"stable index {a:g} eps {config.eps_values[0]:g}"
            runs.append(frontier.run_t_frontier(config, progress=False, out_dir=store_path(store_dir, label)))
            note(f"stable: index {a:g}, eps {config.eps_values[0]:g}")
        return runs

    def peers():
        return measure_peers(size, store_dir)

    def checks():
        runs = results["frontier"].runs if "frontier" in results else None
        return check_against_cpu(size, config, runs)

    for name, part in zip(PARTS, (sweep, engine, scale, frontier_part, stable, peers, checks), strict=True):
        if name not in parts:
            continue
        t = time.perf_counter()
        results[name] = part()
        walls[name] = time.perf_counter() - t
        walls["total"] = time.perf_counter() - started
        print(f"  {name} done ({walls[name]:.0f} s)", file=sys.stderr, flush=True)
        if on_part is not None:
            on_part(render(size_name, size, config, results, walls, profile_dir, store_dir))
    return render(size_name, size, config, results, walls, profile_dir, store_dir), results.get("checks", [])


def _command(size_name: str, size: Size, parts, profile_dir: str | None = None, store_dir: str | None = None) -> str:
    command = f"python benchmarks/gpu_suite.py --size {size_name}"
    if tuple(parts) != PARTS:
        command += f" --parts {','.join(parts)}"
    if size.frontier_seeds != SIZES[size_name].frontier_seeds:
        command += f" --frontier-seeds {size.frontier_seeds}"
    if profile_dir is not None:
        command += f" --profile {profile_dir}"
    if store_dir is not None:
        command += f" --store {store_dir}"
    return command


def _read_back(read: int, chunks: int) -> str:
    """A part's note where some of its ``chunks`` seed chunks were read back from the store."""
    return f" ({read} of {chunks} seed chunks read back from the store: the wall is the rest's)" if read else ""


def _frontier_chunks(result) -> tuple[int, int]:
    """``(read back, all)`` seed chunks of a T-frontier run."""
    return result.runs.resumed_chunks, len(seed_chunks(result.config.num_seeds, result.config.chunk))


def render(size_name: str, size: Size, config: frontier.TFrontierConfig, results: dict, walls: dict,
           profile_dir: str | None = None, store_dir: str | None = None) -> str:
    """The Markdown block of the parts in ``results`` (the ones finished so far)."""
    dev = jax.devices()[0]
    import jaxlib

    today = datetime.date.today().isoformat()
    timing = ", ".join(f"{name} {walls[name]:.0f} s" for name in PARTS if name in walls)
    lines = [
        f"### {today}, {jax.default_backend().upper()}: {len(jax.devices())} x {dev.device_kind}, "
        f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, NumPy {np.__version__}, "
        f"{os.cpu_count()} host cores ({platform.machine()})",
        "",
        "```",
        _command(size_name, size, [p for p in PARTS if p in results], profile_dir, store_dir),
        "```",
        "",
        f"Total wall time {walls.get('total', 0.0):.0f} s ({timing}).",
        "",
        "| measure | value | target |",
        "|---|---:|---:|",
    ]
    if "sweep" in results:
        sweep, cpu2 = results["sweep"]
        lines += [
            f"| sweep: htb_jax, {sweep['seeds']} seeds, simulated rounds/s | {sweep['jax_rounds_per_s']:.3e} | |",
            f"| sweep: NumPy ({sweep['numpy_threads']} threads, {sweep['numpy_seeds']} seeds), simulated rounds/s "
            f"| {sweep['numpy_rounds_per_s']:.3e} | |",
            f"| sweep: htb_jax / NumPy | {sweep['ratio']:.1f}x | >= 2 |",
        ]
        if cpu2 is not None:
            lines.append(f"| sweep: htb_jax on 2 host cores (1000 seeds), simulated rounds/s | {cpu2:.3e} | |")
            lines.append(f"| sweep: {jax.default_backend()} / 2 host cores | {sweep['jax_rounds_per_s'] / cpu2:.1f}x "
                         f"| >= {SWEEP_TARGET:g} |")
    if "engine" in results:
        engine = results["engine"]
        ucb = engine["rows"][0]
        lines.append(f"| engine: UCB1, {ucb['seeds']} seeds, T={engine['horizon']}, seed-rounds/s "
                     f"| {ucb['engine']:.3e} | {'>= 1e9' if jax.default_backend() != 'cpu' else ''} |")
        if len(engine["rows"]) > 1:
            rob = engine["rows"][1]
            lines.append(f"| engine: Robust UCB (MoM), {rob['seeds']} seeds, seed-rounds/s | {rob['engine']:.3e} | |")
        if "smpy_rate" in engine:
            lines.append(f"| engine: UCB1 / SMPyBandits 0.9.7 UCB (same run) | {engine['ratio_smpy']:.0f}x | >= 1000 |")
    if "frontier" in results:
        lines.append(f"| T-frontier: {config.num_seeds} seeds, T to {max(config.horizons):.0e}, wall (s)"
                     f"{_read_back(*_frontier_chunks(results['frontier']))} | {results['frontier'].runs.seconds:.1f} | |")
    if "stable" in results:
        seconds = sum(r.runs.seconds for r in results["stable"])
        read, chunks = np.sum([_frontier_chunks(r) for r in results["stable"]], axis=0)
        lines.append(f"| stable T-frontier: {len(results['stable'])} families, {size.stable_seeds} seeds, "
                     f"T to {max(results['stable'][0].config.horizons):.0e}, wall (s){_read_back(read, chunks)} "
                     f"| {seconds:.1f} | |")
    if "peers" in results:
        lines.append(f"| peers whose round costs O(t): {len(size.peers)} policies, {size.peers_seeds} seeds, "
                     f"T to {size.peers_horizon:.0e}, wall (s){_read_back(*results['peers'][3])} "
                     f"| {results['peers'][2]:.1f} | |")
    if "sweep" in results:
        lines += ["", "Sweep:", "", "```", bench_sweep.report(results["sweep"][0]), "```"]
    if "engine" in results:
        lines += ["", "Engine:", "", "```", bench_engine.report(results["engine"]), "```"]
    if "scale" in results:
        scale_seeds, scale_horizons, scale_memory = results["scale"]
        lines += ["", "Scaling, seeds:", "", scale_seeds, "", "Scaling, horizons (block sums):", "", scale_horizons,
                  "", "Memory budget:", "", scale_memory]
    if "frontier" in results:
        lines += ["", "T-frontier:", "", frontier.t_frontier_table(results["frontier"])]
    if "stable" in results:
        lines += ["", "T-frontier on alpha-stable arms:"]
        for result in results["stable"]:
            lines += ["", frontier.t_frontier_table(result)]
    if "peers" in results:
        measurements, claims = results["peers"][:2]
        lines += ["", "Peers whose round costs O(t), on Theorem 1's two-point family (claims: the sources'):", "",
                  htb.frontier.measurement_table(measurements, claims)]
    if "checks" in results:
        lines += ["", f"Checks against the CPU path, same key, first {size.check_seeds} seeds:", ""]
        if on_the_cpu_alone():
            lines += ["On a CPU both sides run on the same device: the checks compare the CPU path with itself and "
                      "pass by construction, so here they only guard that the comparison runs.", ""]
        lines += ["| check | result | detail |", "|---|---|---|"]
        lines += [f"| {c.name} | {'pass' if c.passed else 'FAIL'} | {c.detail} |" for c in results["checks"]]
    return "\n".join(lines)


def parse_parts(text: str) -> tuple[str, ...]:
    """``"sweep,engine"`` -> the named parts, in the order of :data:`PARTS`; ValueError names the bad one."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PARTS]
    if unknown or not names:
        raise ValueError(f"--parts must be a comma-separated list of {', '.join(PARTS)}; got {text!r}")
    return tuple(p for p in PARTS if p in names)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (``gpu_suite: error: ...``, status 2), as the suite's own refusals."""

    def error(self, message):
        self.exit(2, f"gpu_suite: error: {message} (see --help)\n")


def _count(text: str) -> int:
    """A positive count, ``1000`` or ``1e3``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value >= 1 and value.is_integer()):
        raise argparse.ArgumentTypeError(f"must be a positive integer such as 1000 or 1e5; got {text!r}")
    return int(value)


def main(argv=None) -> int:
    parser = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=("auto", "toy", "full"), default="auto",
                        help="full on a GPU, toy elsewhere (default auto)")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"comma-separated parts to run, of {','.join(PARTS)} (default all)")
    parser.add_argument("--frontier-seeds", type=_count, default=None, help="seeds of the T-frontier run")
    parser.add_argument("--out", default=None, help="also write the block to this file (after every part)")
    parser.add_argument("--store", default=None, metavar="DIR",
                        help="keep the frontier, stable and peers parts' seed chunks in DIR: the same command "
                             "started again reads them back")
    parser.add_argument("--profile", nargs="?", const="gpu-suite-profile", default=None, metavar="DIR",
                        help="profile one call of the sweep and of the engine: top operations in the block, "
                             "traces in DIR (default gpu-suite-profile)")
    args = parser.parse_args(argv)
    try:
        parts = parse_parts(args.parts)
    except ValueError as e:
        print(f"gpu_suite: {e}", file=sys.stderr)
        return 2
    if args.store is not None:
        try:
            os.makedirs(args.store, exist_ok=True)
        except OSError as e:
            print(f"gpu_suite: --store must be a directory that exists or can be made; got {args.store!r} ({e.strerror})",
                  file=sys.stderr)
            return 2
    if args.out is not None:
        try:  # before any part runs: a block that cannot be written would lose the parts' figures at the end
            with open(args.out, "a"):
                pass
        except OSError as e:
            print(f"gpu_suite: --out must be a file that can be written; got {args.out!r} ({e.strerror})",
                  file=sys.stderr)
            return 2
    try:
        distributed.check_backend()  # JAX_PLATFORMS=cuda without jax's CUDA plugin: one line, not jax's assertion
    except ValueError as e:
        print(f"gpu_suite: {e}", file=sys.stderr)
        return 2
    backend = jax.default_backend()
    if args.size == "full" and backend != "gpu":
        print(f"gpu_suite: --size full fills a GPU's memory and time; jax runs on {backend}: use --size toy "
              "(the default here)", file=sys.stderr)
        return 2
    size = args.size if args.size != "auto" else ("full" if backend == "gpu" else "toy")

    def write(block: str) -> None:
        with open(args.out, "w") as f:
            f.write(block + "\n")

    try:
        block, checks = run_suite(size, args.frontier_seeds, parts, on_part=write if args.out else None,
                                  profile_dir=args.profile, store_dir=args.store)
    except ForeignStoreError as e:  # a store holding another run (another --frontier-seeds, another size)
        # The library names its own arguments (out_dir, store, restart=True), which this script has not.
        way_out = f"give another --store, or delete the part's folder in {args.store} to run it again"
        message = str(e)
        for library in (Remedy("out_dir", "restart=True"), STORE_REMEDY):
            message = message.replace(str(library), way_out)
        print(f"gpu_suite: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stopped:  # Ctrl-C: one line and status 130, as htb-jax's commands
        said = str(stopped) if getattr(stopped, "directory", None) else "interrupted"  # htb.Interrupted's count
        kept = f"; the same command resumes from what {args.store} keeps" if args.store else ""
        print(f"gpu_suite: {said}{kept}", file=sys.stderr)
        return 130
    print(block)
    failed = [c for c in checks if not c.passed]
    for c in failed:
        print(f"FAILED: {c.name}: {c.detail}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
