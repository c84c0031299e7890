"""The Median-of-Means drawn as one order statistic against exact block sums, in one run.

    python benchmarks/bench_order_statistic.py [--seeds 64] [--repeats 3]

Workload: the default of ``htb-jax frontier`` (9 AdaR-ETC schedules x Theorem 1's 22
two-point instances x 13 horizons 10^3 .. 10^15, K = 2), the same seeds and key through
``sampler="block_sums"`` (one binomial variate per Median-of-Means block) and
``sampler="order_statistic"`` (one Beta level per seed, arm and horizon, and one binomial
quantile per arm and configuration).  Prints the first call (compilation included), the
best of ``--repeats`` later calls, the ratio, and the agreement of the two samplers' mean
regrets (they agree in law, not draw by draw) in standard errors.  Then the cost of one
configuration against the horizon, 10^3 .. 10^18, for both samplers.
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from bench_scale import timed

import htb_jax as htb
from htb_jax._src import frontier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    config = frontier.TFrontierConfig()
    policy = frontier.t_frontier_policy(config)
    instances = config.family.instances()
    key = jax.random.key(config.key)
    runs = policy.batch_shape[0] * instances.batch_shape[0] * len(config.horizons) * args.seeds
    print(f"backend: {jax.default_backend()} ({len(jax.devices())} x {jax.devices()[0].device_kind}), jax {jax.__version__}")
    print(
        f"workload: htb-jax frontier default, {policy.batch_shape[0]} schedules x {instances.batch_shape[0]} "
        f"two-point instances x {len(config.horizons)} horizons x {args.seeds} seeds = {runs} runs\n"
    )
    print(f"{'sampler':<16} {'first call (s)':>15} {'best (s)':>10} {'runs/s':>11}")
    results, last = {}, {}

    def run(sampler):
        last[sampler] = htb.simulate(key, policy, instances, list(config.horizons), args.seeds, sampler=sampler)
        return last[sampler]

    for sampler in ("block_sums", "order_statistic"):
        first, best = timed(lambda s=sampler: run(s), args.repeats)
        results[sampler] = (best, np.asarray(last[sampler].regret))
        print(f"{sampler:<16} {first:>15.2f} {best:>10.3f} {runs / best:>11.3g}")
    ratio = results["block_sums"][0] / results["order_statistic"][0]
    print(f"\nratio block_sums / order_statistic (best): {ratio:.1f}x")
    a, b = results["block_sums"][1], results["order_statistic"][1]
    se = np.sqrt(a.var(-1, ddof=1) / a.shape[-1] + b.var(-1, ddof=1) / b.shape[-1])
    spread = np.abs(a.mean(-1) - b.mean(-1))
    random = se > 1e-9 * np.maximum(np.abs(a.mean(-1)), 1.0)  # not a rounding-level spread
    z = spread[random] / se[random]
    print(
        f"agreement in law: {np.sum(~random)} of {se.size} cells are deterministic (no spread over seeds) "
        f"and differ by at most {np.max(spread[~random], initial=0.0):.2g}; over the other {z.size}, "
        "|mean regret difference| / SE: "
        f"median {np.median(z):.2f}, max {np.max(z):.2f}, share above 3: {np.mean(z > 3):.3f}"
    )

    print("\none configuration (alpha = 2/3, eps = 1) on the spike instance beta = 1e-3, K = 2, 1000 seeds:")
    print(f"{'T':>6} {'B_T':>5} {'block_sums best (s)':>20} {'order_statistic best (s)':>25} {'ratio':>7}")
    single = htb.AdaRETC(eps=1.0, alpha=2 / 3, q=0.0)
    spike = htb.lower_bound_pair(2, 1.0, 1e-3)[1]
    for exponent in (3, 6, 9, 12, 15, 18):
        horizon = 10**exponent
        best = {}
        for sampler in ("block_sums", "order_statistic"):
            _, best[sampler] = timed(
                lambda s=sampler, t=horizon: htb.simulate(key, single, spike, t, 1000, sampler=s), args.repeats
            )
        blocks = int(htb.num_blocks(2, horizon))
        print(
            f"{f'1e{exponent}':>6} {blocks:>5} {best['block_sums']:>20.4f} {best['order_statistic']:>25.4f} "
            f"{best['block_sums'] / best['order_statistic']:>7.1f}"
        )


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing
    main()
