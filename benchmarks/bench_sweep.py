"""AdaR-ETC sweep: htb_jax against the strongest plain-NumPy sweep we could write, in one run.

Workload (issue 12): K = 10 Pareto(1.5) arms, gap 0.5, T = 10^6, a 16-point
(alpha, q) grid at eps = 1, 1000 seeds.  Both sides run in this process with
the default device settings a user gets (no ``XLA_FLAGS``: on a CPU, one JAX
device using XLA's intra-op threads; NumPy on one thread per core,
``benchmarks/numpy_adar_etc.py``), and each timed repeat runs every side in
turn, so that a shared machine's load reaches all of them alike.  Also
printed: htb_jax with every CPU core its own JAX device (a subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=<cores>``), the NumPy sweep
on one thread, the previous NumPy baseline, where htb_jax's time goes (the
JAX profiler, ``--profile``), and the exact median selection against an XLA
sort (``--selection``).

    python benchmarks/bench_sweep.py [--seeds 1000] [--repeats 5] [--profile] [--selection]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_adar_etc  # noqa: E402
from profiling import format_ops, top_ops  # noqa: E402
from progress import note  # noqa: E402

import htb_jax as htb  # noqa: E402
from htb_jax._src import mom  # noqa: E402

K, SHAPE, GAP, HORIZON, EPS = 10, 1.5, 0.5, 10**6, 1.0
ALPHAS = np.linspace(2 / 3, 0.95, 4)
QS = np.linspace(0.0, 1 / 3, 4)
FORCED_DEVICES_FLAG = "--xla_force_host_platform_device_count"
# The profiled call's seeds at most: at 10^6 seeds (452 seed chunks on an H200) the profiled call did
# not finish within 150 s, while 10^4 seeds (5 chunks) took 0.5 s and show the same operations.
PROFILE_SEEDS = 10**4


def workload(horizon: int = HORIZON):
    alpha, q = (a.ravel() for a in np.meshgrid(ALPHAS, QS, indexing="ij"))
    policy = htb.AdaRETC(eps=EPS, alpha=jnp.asarray(alpha), q=jnp.asarray(q))
    instance = htb.equal_gap(htb.Pareto(loc=0.0, shape=SHAPE), num_arms=K, gap=GAP)
    return policy, instance, alpha, q


def jax_call(seeds: int, horizon: int = HORIZON, devices=None, threads=None):
    policy, instance, _, _ = workload(horizon)
    key = jax.random.key(0)
    return lambda: htb.simulate(key, policy, instance, horizon, seeds, devices=devices, threads=threads)


def timed(fn) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


def forced_devices_seconds(seeds: int, repeats: int, horizon: int) -> tuple[float, int] | None:
    """htb_jax's best time with every CPU core a JAX device (a subprocess: the flag is read at import)."""
    if jax.default_backend() != "cpu" or FORCED_DEVICES_FLAG in os.environ.get("XLA_FLAGS", ""):
        return None
    env = dict(os.environ, XLA_FLAGS=f"{FORCED_DEVICES_FLAG}={os.cpu_count()}".strip())
    cmd = [sys.executable, os.path.abspath(__file__), "--jax-only", "--seeds", str(seeds),
           "--repeats", str(repeats), "--horizon", str(horizon)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["seconds"], result["devices"]


def run(seeds: int = 1000, repeats: int = 5, *, horizon: int = HORIZON, numpy_side: bool = True,
        numpy_seeds: int | None = None, previous_baseline: bool = True, forced_devices: bool = True,
        profile: bool = False, selection: bool = False, trace_path: str | None = None) -> dict:
    """Times the sweep; returns every figure (seconds, rates, ratios) in a dict.

    ``numpy_seeds`` (default ``seeds``) lets the NumPy side run fewer seeds than a GPU does;
    rates are per simulated round, so the ratio compares rates.  With ``profile``, ``trace_path``
    keeps the profiler's trace of that call.
    """
    policy, instance, alpha, q = workload(horizon)
    grid = alpha.size
    rounds = seeds * grid * horizon
    means = np.asarray(instance.mean())
    numpy_seeds = numpy_seeds or seeds
    numpy_rounds = numpy_seeds * grid * horizon
    call = jax_call(seeds, horizon)
    r = {"seeds": seeds, "grid": grid, "horizon": horizon, "rounds": rounds,
         "backend": jax.default_backend(), "devices": len(jax.devices()),
         "device_kind": jax.devices()[0].device_kind, "jax": jax.__version__, "numpy": np.__version__,
         "cores": os.cpu_count()}

    r["jax_first_call"] = timed(call)
    note(f"sweep: htb_jax's first call, compilation included, {r['jax_first_call']:.2f} s")
    np_threads = os.cpu_count() or 1
    sides = {"jax": call}
    if jax.default_backend() == "cpu":
        sides["jax_1_thread"] = jax_call(seeds, horizon, threads=1)
        sides["jax_1_thread"]()  # compiles its program (another seed split)
    r["threads"] = htb.memory_plan(jax.random.key(0), policy, instance, horizon, seeds).threads
    if numpy_side:
        sides["numpy"] = lambda: numpy_adar_etc.sweep(0, means, SHAPE, horizon, EPS, alpha, q, numpy_seeds,
                                                      threads=np_threads)
        sides["numpy_1_thread"] = lambda: numpy_adar_etc.sweep(0, means, SHAPE, horizon, EPS, alpha, q,
                                                               numpy_seeds, threads=1)
        sides["numpy"]()  # warm-up (thread pool, page faults)
    best = {name: math.inf for name in sides}
    for repeat in range(repeats):
        for name, fn in sides.items():
            best[name] = min(best[name], timed(fn))
        note(f"sweep: repeat {repeat + 1} of {repeats}, " + ", ".join(f"{n} {s:.3f} s" for n, s in best.items()))
    out = call()
    regret_jax = np.asarray(out.regret)
    r["jax_seconds"] = best["jax"]
    if "jax_1_thread" in best:
        r["jax_1_thread_seconds"] = best["jax_1_thread"]
    r["jax_rounds_per_s"] = rounds / best["jax"]
    per_arm = int(np.max(np.asarray(htb.exploration_pulls(policy.exploration_length(K, horizon), K))))
    chunk = htb._src.simulate.schedule.default_pull_chunk(K, horizon)
    r["jax_drawn"] = seeds * K * chunk * math.ceil(per_arm / chunk)
    if numpy_side:
        regret_np, drawn_np = sides["numpy"]()
        r["numpy_threads"] = np_threads
        r["numpy_seeds"] = numpy_seeds
        r["numpy_seconds"] = best["numpy"]
        r["numpy_rounds_per_s"] = numpy_rounds / best["numpy"]
        r["numpy_1_thread_rounds_per_s"] = numpy_rounds / best["numpy_1_thread"]
        r["numpy_1_thread_seconds"] = best["numpy_1_thread"]
        r["numpy_drawn"] = drawn_np
        r["ratio"] = r["jax_rounds_per_s"] / r["numpy_rounds_per_s"]
        se = np.sqrt(regret_jax.var(-1, ddof=1) / seeds + regret_np.var(-1, ddof=1) / numpy_seeds)
        z = np.abs(regret_jax.mean(-1) - regret_np.mean(-1)) / np.where(se > 0, se, 1.0)
        r["agreement_max_z"] = float(z.max())
        r["commit_best_jax"] = float(np.mean(np.asarray(out.committed) == 0))
    if previous_baseline and numpy_side:
        start = time.perf_counter()
        numpy_adar_etc.sweep_reference(np.random.default_rng(0), means, SHAPE, horizon, EPS, alpha, q, numpy_seeds)
        r["numpy_previous_seconds"] = time.perf_counter() - start
        r["numpy_previous_rounds_per_s"] = numpy_rounds / r["numpy_previous_seconds"]
    if forced_devices:
        forced = forced_devices_seconds(seeds, repeats, horizon)
        if forced is not None:
            r["jax_forced_seconds"], r["jax_forced_devices"] = forced
            r["jax_forced_rounds_per_s"] = rounds / r["jax_forced_seconds"]
    if profile:
        r["profile_seeds"] = min(seeds, PROFILE_SEEDS)
        profiled = call if r["profile_seeds"] == seeds else jax_call(r["profile_seeds"], horizon)
        if profiled is not call:
            timed(profiled)  # compiles outside the profile
        r["profile"] = top_ops(profiled, 12, save_as=trace_path)
        note("sweep: profiled")
    if selection:
        r.update(selection_figures(seeds, grid, horizon, repeats))
        note("sweep: selection timed")
    return r


def selection_figures(seeds: int, grid: int, horizon: int, repeats: int) -> dict:
    """The exact median selection alone against an XLA sort of the same block means (one device),
    on the sweep's shape and layout (``[blocks, K, grid, seeds]``), in chunks of 8 seeds, for at
    most 1000 seeds (their block means alone are 450 MB)."""
    key = jax.random.key(0)
    seeds = min(seeds, 1000)
    blocks = int(htb.num_blocks(K, horizon))
    chunk = 8
    block_means = jax.random.normal(key, (max(1, seeds // chunk), blocks, K, grid, chunk), jnp.float64)
    counts = jnp.full((K, grid, 1), blocks)
    select = jax.jit(lambda m: jax.lax.map(lambda c: mom.median_of_blocks(c, counts, jnp.float32), m))
    sort = jax.jit(lambda m: jax.lax.map(
        lambda c: jnp.sort(c.astype(jnp.float32), axis=0)[(blocks + 1) // 2 - 1], m))
    np.testing.assert_array_equal(np.asarray(select(block_means)), np.asarray(sort(block_means)))
    t_select = min(timed(lambda: select(block_means)) for _ in range(repeats))
    t_sort = timed(lambda: sort(block_means))
    return {"selection_blocks": blocks, "selection_rows": block_means.shape[0] * chunk * K * grid,
            "selection_seconds": t_select, "sort_seconds": t_sort}


def report(r: dict) -> str:
    lines = [
        f"backend: {r['backend']} ({r['devices']} x {r['device_kind']}), jax {r['jax']}, NumPy {r['numpy']}, "
        f"{r['cores']} cores; default device settings (XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r})",
        f"workload: K={K} Pareto({SHAPE}) arms, gap {GAP}, T={r['horizon']:.0e}, {r['grid']}-point (alpha, q) grid "
        f"at eps={EPS}, {r['seeds']} seeds",
        "",
        f"{'':34s} {'seconds':>9s} {'rounds/s':>12s}",
        f"{'htb_jax ({} device, {} threads)'.format(r['devices'], r['threads']):34s} "
        f"{r['jax_seconds']:9.3f} {r['jax_rounds_per_s']:12.3e}",
    ]
    if "jax_1_thread_seconds" in r:
        lines.append(f"{'htb_jax (1 device, threads=1)':34s} {r['jax_1_thread_seconds']:9.3f} "
                     f"{r['rounds'] / r['jax_1_thread_seconds']:12.3e}")
    if "numpy_seconds" in r:
        seeds_note = "" if r["numpy_seeds"] == r["seeds"] else f" ({r['numpy_seeds']} seeds)"
        lines.append(f"{'numpy, ' + str(r['numpy_threads']) + ' threads' + seeds_note:34s} {r['numpy_seconds']:9.3f} "
                     f"{r['numpy_rounds_per_s']:12.3e}")
        lines.append(f"{'numpy, 1 thread' + seeds_note:34s} {r['numpy_1_thread_seconds']:9.3f} "
                     f"{r['numpy_1_thread_rounds_per_s']:12.3e}")
    if "numpy_previous_seconds" in r:
        lines.append(f"{'previous numpy baseline (1 run)':34s} {r['numpy_previous_seconds']:9.3f} "
                     f"{r['numpy_previous_rounds_per_s']:12.3e}")
    if "jax_forced_seconds" in r:
        name = f"htb_jax, {r['jax_forced_devices']} forced CPU devices"
        lines.append(f"{name:34s} {r['jax_forced_seconds']:9.3f} {r['jax_forced_rounds_per_s']:12.3e}")
    lines.append("")
    if "ratio" in r:
        lines.append(f"ratio htb_jax / numpy (rounds/s, default settings): {r['ratio']:.2f}x   (target >= 2.0)")
        if "jax_forced_seconds" in r:
            lines.append(f"ratio with {FORCED_DEVICES_FLAG}={r['jax_forced_devices']}: "
                         f"{r['jax_forced_rounds_per_s'] / r['numpy_rounds_per_s']:.2f}x")
    lines.append(f"htb_jax first call (compilation included): {r['jax_first_call']:.2f} s")
    lines.append(f"drawn samples: htb_jax {r['jax_drawn']:.3e} (whole streaming chunks), "
                 + (f"numpy {r['numpy_drawn']:.3e}" if "numpy_drawn" in r else ""))
    if "agreement_max_z" in r:
        lines.append(f"agreement: max |mean regret difference| over the grid = {r['agreement_max_z']:.2f} standard "
                     f"errors; commits to the best arm: htb_jax {r['commit_best_jax']:.4f}")
    if "selection_seconds" in r:
        lines.append(f"\nmedian of {r['selection_blocks']} block means, {r['selection_rows']} times (one device): "
                     f"exact bisection {r['selection_seconds']:.3f} s, XLA sort {r['sort_seconds']:.3f} s "
                     f"({r['sort_seconds'] / r['selection_seconds']:.1f}x slower)")
    if "profile" in r:
        lines.append(f"\nwhere htb_jax's time goes (JAX profiler, one call of {r['profile_seeds']} seeds, "
                     "self time per XLA operation):")
        lines.append(format_ops(*r["profile"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--profile", action="store_true", help="print the JAX profiler's top operations")
    parser.add_argument("--selection", action="store_true", help="time the median selection against a sort")
    parser.add_argument("--jax-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.jax_only:
        call = jax_call(args.seeds, args.horizon)
        timed(call)
        seconds = min(timed(call) for _ in range(args.repeats))
        print(json.dumps({"seconds": seconds, "devices": len(jax.devices())}))
        return
    print(report(run(args.seeds, args.repeats, horizon=args.horizon, profile=args.profile,
                     selection=args.selection)))


if __name__ == "__main__":
    main()
