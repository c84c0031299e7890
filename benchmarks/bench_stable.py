"""Stable arms by their exact block law: a horizon of 10^18 against 10^3, and the sweep against Pareto's.

Two comparisons, each side timed in this process, every timed repeat running
both sides in turn (a shared machine's load reaches them alike), best call
after a warm-up (compilation apart), default device settings:

* one configuration, K = 10 ``Stable(alpha=1.5, beta=0.5)`` arms, gap 0.5,
  ``AdaRETC(eps=0.4, alpha=0.8, q=0)``, 1000 seeds, at ``T = 10^18`` against
  ``T = 10^3``, by each sampler: ``"order_statistic"`` (one level and one
  tabulated quantile per arm whatever ``B_T``; target: within 2x) and
  ``"block_sums"`` (the default: ``B_T`` standard draws per arm whatever the
  block size, 185 at ``T = 10^3`` and 1014 at ``10^18``);
* the 16-point (alpha, q) sweep of ``benchmarks/bench_sweep.py`` (K = 10, gap
  0.5, ``T = 10^6``, eps = 1, 1000 seeds) on those stable arms by their block
  law, against the same sweep on Pareto(1.5) arms pull by pull.

    python benchmarks/bench_stable.py [--seeds 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_sweep  # noqa: E402

import htb_jax as htb  # noqa: E402

K, GAP = 10, 0.5
STABLE = htb.Stable(loc=0.0, alpha=1.5, beta=0.5)


def horizon_call(horizon: int, seeds: int, sampler: str):
    nu = htb.equal_gap(STABLE, num_arms=K, gap=GAP)
    policy = htb.AdaRETC(eps=0.4, alpha=0.8, q=0.0)
    return lambda: htb.simulate(jax.random.key(0), policy, nu, horizon, seeds, sampler=sampler)


def sweep_call(base, seeds: int, sampler: str):
    policy, _, _, _ = bench_sweep.workload()
    nu = htb.equal_gap(base, num_arms=K, gap=GAP)
    return lambda: htb.simulate(jax.random.key(0), policy, nu, bench_sweep.HORIZON, seeds, sampler=sampler)


def best_times(calls: dict, repeats: int) -> dict:
    for fn in calls.values():
        jax.block_until_ready(fn())  # compile and warm up
    best = {name: float("inf") for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            start = time.perf_counter()
            jax.block_until_ready(fn())
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, {os.cpu_count()} cores, {args.seeds} seeds, "
          f"best of {args.repeats}")
    calls = {(sampler, t): horizon_call(10**t, args.seeds, sampler)
             for sampler in ("order_statistic", "block_sums") for t in (3, 18)}
    horizons = best_times(calls, args.repeats)
    ratios = {}
    for sampler in ("order_statistic", "block_sums"):
        small, large = horizons[sampler, 3], horizons[sampler, 18]
        ratios[sampler] = large / small
        target = " (target <= 2)" if sampler == "order_statistic" else ""
        print(f"one configuration, K={K} Stable(1.5, 0.5) arms, sampler={sampler}: T=10^3 {small:.4f} s, "
              f"T=10^18 {large:.4f} s, ratio {ratios[sampler]:.2f}{target}")
    sweeps = best_times({"stable": sweep_call(STABLE, args.seeds, "auto"),
                         "pareto": sweep_call(htb.Pareto(loc=0.0, shape=1.5), args.seeds, "per_pull")},
                        args.repeats)
    speedup = sweeps["pareto"] / sweeps["stable"]
    print(f"16-point sweep at T=10^6: Stable by its block law {sweeps['stable']:.4f} s, Pareto pull by pull "
          f"{sweeps['pareto']:.4f} s, Stable {speedup:.1f}x faster")
    check = sweep_call(STABLE, 16, "auto")()
    assert bool(jnp.all(jnp.isfinite(check.regret)))
    return dict(horizons=horizons, horizon_ratios=ratios, sweeps=sweeps, sweep_speedup=speedup)


if __name__ == "__main__":
    main()
