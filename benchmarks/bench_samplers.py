"""Every reward family's draw rate against Pareto's, in one run.

Two measures per family (issue 12, part 2), with the default device settings
a user gets (no ``XLA_FLAGS``):

1. the engine: UCB1 on K = 10 equal-gap arms (gap 0.1), T = 10^4, 256 seeds,
   seed-rounds/s (every round draws one reward from the reward table);
2. the raw transform: ``from_bits`` on pre-drawn 64-bit words (samples/s),
   and the reward table (threefry words + ``from_bits``, samples/s).

Prints each rate and its ratio to Pareto's; the target is every family within
2x of Pareto (ratio >= 0.5).

    python benchmarks/bench_samplers.py [--seeds 256] [--samples 4000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import jax.numpy as jnp

import htb_jax as htb
from htb_jax._src import reward_table as table_lib

K, T, GAP = 10, 10**4, 0.1
FAMILIES = {
    "Pareto(2.5)": htb.Pareto(loc=0.0, shape=2.5),
    "Gaussian": htb.Gaussian(loc=0.0, scale=1.0),
    "Student-t(3)": htb.StudentT(loc=0.0, df=3.0),
    "Student-t(30)": htb.StudentT(loc=0.0, df=30.0),
    "Frechet(2.5)": htb.Frechet(loc=0.0, shape=2.5),
    "LogNormal(1)": htb.LogNormal(loc=0.0, sigma=1.0),
    "TwoPoint(1e-3)": htb.TwoPoint(low=0.0, high=1.0, p=1e-3),
}


def calls(base, seeds: int, samples: int):
    """The three timed calls of one family (compiled by a first call each)."""
    instance = htb.equal_gap(base, num_arms=K, gap=GAP)
    key = jax.random.key(0)
    arms = table_lib.expand_pulls(instance)
    pulls = samples // K
    words = jax.random.bits(jax.random.key(1), (K, pulls, instance.num_words), jnp.uint64)
    from_bits = jax.jit(lambda arms, w: arms.from_bits(w))
    table = jax.jit(lambda key, inst: table_lib._reward_table(key, inst, jnp.int64(0), pulls))
    fns = (
        lambda: htb.simulate(key, htb.UCB1(), instance, T, seeds).regret,
        lambda: from_bits(arms, words),
        lambda: table(jax.random.key(2), instance),
    )
    for fn in fns:
        jax.block_until_ready(fn())
    return fns, (seeds * T, K * pulls, K * pulls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=256)
    parser.add_argument("--samples", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"backend: {jax.default_backend()} ({len(jax.devices())} x {jax.devices()[0].device_kind}), "
          f"jax {jax.__version__}")
    print(f"engine: UCB1, K={K} equal-gap arms (gap {GAP}), T={T}, {args.seeds} seeds; "
          f"transform: {args.samples:.0e} samples\n")
    prepared = {name: calls(base, args.seeds, args.samples) for name, base in FAMILIES.items()}
    # Best of the repeats, the families interleaved in every repeat so that a shared machine's
    # load reaches all of them alike.
    best = {name: [math.inf] * 3 for name in FAMILIES}
    for _ in range(args.repeats):
        for name, (fns, _) in prepared.items():
            for i, fn in enumerate(fns):
                start = time.perf_counter()
                jax.block_until_ready(fn())
                best[name][i] = min(best[name][i], time.perf_counter() - start)
    rows = {name: tuple(n / t for n, t in zip(prepared[name][1], best[name], strict=True)) for name in FAMILIES}
    ref = rows["Pareto(2.5)"]
    print(f"{'family':16s} {'engine seed-rounds/s':>21s} {'/Pareto':>8s} {'from_bits samples/s':>20s} "
          f"{'/Pareto':>8s} {'table samples/s':>16s} {'/Pareto':>8s}")
    for name, (engine, bits, table) in rows.items():
        print(f"{name:16s} {engine:21.3e} {engine / ref[0]:8.2f} {bits:20.3e} {bits / ref[1]:8.2f} "
              f"{table:16.3e} {table / ref[2]:8.2f}")
    worst = min(min(r[i] / ref[i] for i in range(3)) for r in rows.values())
    print(f"\nslowest family relative to Pareto: {worst:.2f}   (target >= 0.5: within 2x)")


if __name__ == "__main__":
    main()
