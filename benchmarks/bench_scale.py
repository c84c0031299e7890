"""How a sweep scales: seeds, horizons and the memory budget, in one run.

Prints three tables (markdown):

1. throughput against the number of seeds (1 .. 10^5): AdaR-ETC (order-free)
   on K = 10 equal-gap Pareto(1.5) arms, gap 0.5, T = 10^5, per-pull sampler;
2. throughput against the horizon (10^3 .. 10^15): the same policy on
   Theorem 1's two-point instance (``lower_bound_pair``, K = 10, gap 0.1,
   spike probability 10^-3) with the exact block-sum sampler;
3. the seed chunk each memory budget gives, its estimated peak and the
   compiled program's measured peak (``memory_analysis()``) against the budget,
   for the fast path and the round-by-round engine, with the wall time of
   one call (compilation included where the measurement did not cache it).

Times are the best of ``--repeats`` runs after a warm-up call (compilation is
reported separately).

    python benchmarks/bench_scale.py            # full size
    python benchmarks/bench_scale.py --quick    # 1..10^4 seeds, fewer repeats: a few minutes on 2 cores
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import jax
import numpy as np

import htb_jax as htb

MiB = 2**20


def timed(call, repeats: int) -> tuple[float, float]:
    """(first call incl. compilation, best of ``repeats`` later calls), seconds; ``call`` returns
    arrays (any pytree of them, an Outcome say), waited for."""
    start = time.perf_counter()
    jax.block_until_ready(call())
    first = time.perf_counter() - start
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(call())
        best = min(best, time.perf_counter() - start)
    return first, best


def seeds_table(max_seeds: int, repeats: int, horizon: int = 10**5, stream=None) -> str:
    """Throughput against seeds; each row printed to ``stream`` (stdout by default) as it is measured."""
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
    policy = htb.AdaRETC.order_free()
    lines = [
        "| seeds | seed chunk x chunks (per device) | first call (s) | best (s) | seeds/s | simulated rounds/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), file=stream or sys.stdout, flush=True)
    seeds = 1
    while seeds <= max_seeds:
        plan = htb.memory_plan(jax.random.key(0), policy, nu, horizon, seeds)
        first, best = timed(lambda s=seeds: htb.simulate(jax.random.key(1), policy, nu, horizon, s), repeats)
        lines.append(
            f"| {seeds} | {plan.seed_chunk} x {plan.num_chunks} | {first:.2f} | {best:.4f} | "
            f"{seeds / best:.3g} | {seeds * horizon / best:.3g} |"
        )
        print(lines[-1], file=stream or sys.stdout, flush=True)
        seeds *= 10
    return "\n".join(lines)


def horizons_table(seeds: int, repeats: int, max_exponent: int, min_exponent: int = 3, stream=None) -> str:
    """Throughput against the horizon; rows printed to ``stream`` (stdout by default) as measured."""
    _, nu = htb.lower_bound_pair(num_arms=10, gap=0.1, spike_prob=1e-3)
    policy = htb.AdaRETC.order_free()
    lines = [
        f"| T | L_T | first call (s) | best (s) | seeds/s ({seeds} seeds) | simulated rounds/s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), file=stream or sys.stdout, flush=True)
    for e in range(min_exponent, max_exponent + 1):
        horizon = 10**e
        call = lambda h=horizon: htb.simulate(jax.random.key(1), policy, nu, h, seeds, sampler="block_sums")  # noqa: E731
        first, best = timed(call, repeats)
        length = int(policy.exploration_length(10, horizon))
        lines.append(
            f"| 1e{e} | {length} | {first:.2f} | {best:.4f} | {seeds / best:.3g} | {seeds * horizon / best:.3g} |"
        )
        print(lines[-1], file=stream or sys.stdout, flush=True)
    return "\n".join(lines)


def budget_table(seeds: int, engine_seeds: int, *, horizon: int = 10**5, engine_horizon: int = 2000,
                 budgets=(2 * MiB, 8 * MiB, 32 * MiB, 128 * MiB, None), stream=None) -> str:
    """Chunks and peaks against the memory budget; rows printed to ``stream`` (stdout by default) as measured."""
    pareto = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
    cases = [
        (f"fast path, AdaR-ETC, T={horizon:.0e}".replace("e+0", "e"), htb.AdaRETC.order_free(), pareto, horizon, seeds),
        (f"engine, ForceMoM(0.6), T={engine_horizon}", htb.ForceMoM(0.6), pareto, engine_horizon, engine_seeds),
    ]
    lines = [
        "| program | seeds | budget | seed chunk x chunks | estimated peak | measured peak | measured / budget | wall (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), file=stream or sys.stdout, flush=True)
    one = jax.devices()[:1]
    for name, policy, nu, horizon, s in cases:
        reference = None
        for budget in budgets:
            try:
                plan = htb.memory_plan(jax.random.key(0), policy, nu, horizon, s, devices=one,
                                       memory_budget=budget, measure=True)
            except ValueError as e:
                lines.append(f"| {name} | {s} | {budget / MiB:g} MiB | refused: {e} | | | | |")
                print(lines[-1], file=stream or sys.stdout, flush=True)
                continue
            start = time.perf_counter()
            out = htb.simulate(jax.random.key(0), policy, nu, horizon, s, devices=one, memory_budget=budget)
            regret = np.asarray(out.regret)
            wall = time.perf_counter() - start
            reference = regret if reference is None else reference
            assert np.array_equal(regret, reference), "a budget changed a number"
            label = "default" if budget is None else f"{budget / MiB:g} MiB"
            measured = plan.measured_peak
            lines.append(
                f"| {name} | {s} | {label} ({plan.memory_budget / MiB:g} MiB) | {plan.seed_chunk} x {plan.num_chunks} "
                f"| {plan.estimated_peak / MiB:.2f} MiB | "
                + (f"{measured / MiB:.2f} MiB | {measured / plan.memory_budget:.3f}" if measured else "n/a | n/a")
                + f" | {wall:.2f} |"
            )
            print(lines[-1], file=stream or sys.stdout, flush=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="up to 10^4 seeds, 1 repeat, 100 seeds per horizon")
    parser.add_argument("--max-seeds", type=int, default=None, help="largest seed count (default 1e5; 1e4 with --quick)")
    parser.add_argument("--horizon-seeds", type=int, default=None, help="seeds per horizon (default 1000; 100 with --quick)")
    parser.add_argument("--max-horizon-exponent", type=int, default=15, help="largest T = 10^e (default 15)")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (default 3; 1 with --quick)")
    parser.add_argument("--only", choices=("seeds", "horizons", "memory"), action="append",
                        help="run only these tables (repeatable; default all three)")
    args = parser.parse_args()
    max_seeds = args.max_seeds or (10**4 if args.quick else 10**5)
    horizon_seeds = args.horizon_seeds or (100 if args.quick else 1000)
    repeats = args.repeats or (1 if args.quick else 3)
    devices = jax.devices()
    print(f"backend: {jax.default_backend()} ({len(devices)} x {devices[0].device_kind}), jax {jax.__version__}, "
          f"default memory budget {htb.default_memory_budget() / MiB:g} MiB per device\n")
    only = set(args.only or ("seeds", "horizons", "memory"))
    if "seeds" in only:
        print("## Throughput against seeds\n")
        seeds_table(max_seeds, repeats)
    if "horizons" in only:
        print("\n## Throughput against the horizon (block sums)\n")
        horizons_table(horizon_seeds, repeats, args.max_horizon_exponent)
    if "memory" in only:
        print("\n## Memory budget: chunk, estimated and measured peak (one device)\n")
        budget_table(1000 if args.quick else 10**4, 64 if args.quick else 256)


if __name__ == "__main__":
    main()
