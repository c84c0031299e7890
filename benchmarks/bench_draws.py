"""Reward draws alone, on one core: htb_jax's reward table against the NumPy sweep's draw.

The AdaR-ETC sweep of ``bench_sweep.py`` draws K = 10 Pareto(1.5) arms'
rewards and reduces them to Median-of-Means estimates.  This script times the
draws alone, per sample and on one core (the process is pinned to one CPU
before JAX and NumPy start their threads), so that the sweep's ratio can be
read against what each side pays for its randomness:

* **htb_jax**: the fast path's own draw, ``from_bits`` of the reward table's
  64-bit Threefry words (20 rounds), through a uniform kept at float32 relative
  precision down to ``2^-64``, then ``exp(-log(U) / a)``, written to memory in
  chunks of 8 seeds x 10 arms x 2560 pulls as the fast path streams them;
  compiled at XLA's default 256-bit vectors and at the 512 bits that htb_jax
  asks for (``htb_jax/_src/compiler_options.py``).
* **NumPy**: ``benchmarks/numpy_adar_etc.py``'s draw (``draw_pareto``: ``U^(-1/a)``
  from SFC64's raw 64-bit words, in float32 ufuncs in place), in chunks of 32
  seeds x 10 arms x 2560 pulls, as the sweep draws them.

On the same core it then times both whole sweeps of ``bench_sweep.py``
(1000 seeds, ``threads=1``), and prints each side's cost per reward and what
htb_jax's whole sweep would have to cost per reward to run at twice NumPy's
rate.

    python benchmarks/bench_draws.py [--seeds 1024] [--repeats 7]
"""

from __future__ import annotations

import os

if hasattr(os, "sched_setaffinity"):  # one core, before JAX and NumPy size their thread pools
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

import htb_jax as htb  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_sweep  # noqa: E402
import numpy_adar_etc  # noqa: E402

from htb_jax._src import compiler_options, reward_table  # noqa: E402
from htb_jax._src.loop_hoisting import unhoisted  # noqa: E402

K, SHAPE, GAP, PULLS = 10, 1.5, 0.5, 2560


def htb_jax_draw(seeds: int, options: tuple):
    """A compiled draw of ``seeds`` seeds' tables, f32[chunks, 8, K, PULLS] (fast-path chunks)."""
    arms = reward_table.expand_pulls(htb.equal_gap(htb.Pareto(loc=0.0, shape=SHAPE), num_arms=K, gap=GAP))
    keys = reward_table.seed_keys(jax.random.key(0), seeds).reshape(-1, 8)

    def chunk(keys):
        words = jax.vmap(lambda key: reward_table.table_words(key, K, 0, PULLS, 1))(keys)
        return arms.from_bits(words)

    program = jax.jit(lambda keys: jax.lax.map(unhoisted(chunk), keys), compiler_options=dict(options))
    return lambda: program(keys)


def numpy_draw(seeds: int):
    """``seeds`` seeds' Pareto rewards in chunks of 32 seeds, as ``numpy_adar_etc`` draws them."""
    children = np.random.SeedSequence(0).spawn(seeds // 32)

    def run():
        for child in children:
            y = numpy_adar_etc.draw_pareto(child, (32, K, PULLS), SHAPE)
        return y

    return run


def best_seconds(fn, repeats: int) -> float:
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    seeds = 32 * -(-args.seeds // 32)  # whole chunks: 8 seeds (htb_jax), 32 (NumPy)
    samples = seeds * K * PULLS
    cpu = jax.devices("cpu")[0]
    wide = compiler_options.known(cpu, (compiler_options.VECTOR_WIDTH,))
    sides = [("htb_jax, XLA's default vectors (256 bits)", htb_jax_draw(seeds, ())),
             (f"htb_jax, {'512-bit vectors' if wide else 'this XLA has no vector-width option'}",
              htb_jax_draw(seeds, wide)),
             ("NumPy raw words (numpy_adar_etc)", numpy_draw(seeds))]
    print(f"jax {jax.__version__}, NumPy {np.__version__}; one core "
          f"(affinity {sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else 'not settable'})")
    print(f"workload: {seeds} seeds x {K} Pareto({SHAPE}) arms x {PULLS} pulls = {samples:.3e} rewards\n")
    print(f"{'':44s} {'seconds':>8s} {'ns/reward':>10s}")
    for name, fn in sides:
        seconds = best_seconds(fn, args.repeats)
        print(f"{name:44s} {seconds:8.3f} {seconds / samples * 1e9:10.2f}")

    # The whole sweeps on the same core, per reward each side draws.
    policy, instance, alpha, q = bench_sweep.workload()
    key = jax.random.key(0)
    means = np.asarray(instance.mean(), np.float64)
    drawn = {}

    def numpy_sweep():
        regret, drawn["numpy"] = numpy_adar_etc.sweep(0, means, SHAPE, bench_sweep.HORIZON, bench_sweep.EPS, alpha,
                                                      q, 1000, threads=1)
        return regret

    jax_seconds = best_seconds(lambda: htb.simulate(key, policy, instance, bench_sweep.HORIZON, 1000,
                                                    threads=1).regret, args.repeats)
    numpy_seconds = best_seconds(numpy_sweep, args.repeats)
    jax_rewards = 1000 * K * PULLS  # whole streaming chunks of 2560 pulls
    print("\nwhole sweep, 1000 seeds, one thread:")
    print(f"{'htb_jax (simulate, threads=1)':44s} {jax_seconds:8.3f} {jax_seconds / jax_rewards * 1e9:10.2f}")
    print(f"{'NumPy (numpy_adar_etc.sweep, threads=1)':44s} {numpy_seconds:8.3f} "
          f"{numpy_seconds / drawn['numpy'] * 1e9:10.2f}")
    print(f"htb_jax at twice NumPy's rate would cost {numpy_seconds / 2 / drawn['numpy'] * 1e9:.2f} ns per reward "
          "in all, draw included")


if __name__ == "__main__":
    main()
