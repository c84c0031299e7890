"""AdaR-ETC sweep: htb_jax against a vectorised NumPy implementation, in one run.

Workload (issue spec): K = 10 Pareto(1.5) arms, gap 0.5, T = 10^6, a 16-point
(alpha, q) grid at eps = 1, 1000 seeds.  Prints simulated rounds/s and drawn
samples/s for both, their ratio, the raw jax.random sampling rate, and where
htb_jax's time goes (exact median selection against an XLA sort of the same
block means).

    python benchmarks/bench_sweep.py [--seeds 1000] [--repeats 3]

On a CPU the script exposes every core as a JAX device (unless XLA_FLAGS is
already set), so that htb_jax shards the seeds over the cores; jax.random and
NumPy run as they would for a user.
"""

from __future__ import annotations

import argparse
import math
import os
import time

os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={os.cpu_count()}")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from numpy_adar_etc import sweep as numpy_sweep  # noqa: E402

import htb_jax as htb  # noqa: E402
from htb_jax._src import mom  # noqa: E402

K, SHAPE, GAP, HORIZON, EPS = 10, 1.5, 0.5, 10**6, 1.0
ALPHAS = np.linspace(2 / 3, 0.95, 4)
QS = np.linspace(0.0, 1 / 3, 4)


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    seeds = args.seeds

    alpha, q = np.meshgrid(ALPHAS, QS, indexing="ij")
    alpha, q = alpha.ravel(), q.ravel()
    grid = alpha.size
    policy = htb.AdaRETC(eps=EPS, alpha=jnp.asarray(alpha), q=jnp.asarray(q))
    instance = htb.equal_gap(htb.Pareto(loc=0.0, shape=SHAPE), num_arms=K, gap=GAP)
    rounds = seeds * grid * HORIZON

    print(f"backend: {jax.default_backend()} ({len(jax.devices())} x {jax.devices()[0].device_kind}), "
          f"jax {jax.__version__}")
    print(f"workload: K={K} Pareto({SHAPE}) arms, gap {GAP}, T={HORIZON:.0e}, {grid}-point (alpha, q) grid "
          f"at eps={EPS}, {seeds} seeds\n")

    # htb_jax
    key = jax.random.key(0)
    start = time.perf_counter()
    out = htb.simulate(key, policy, instance, HORIZON, seeds)
    jax.block_until_ready(out.regret)
    first_call = time.perf_counter() - start
    t_jax = best_time(lambda: htb.simulate(key, policy, instance, HORIZON, seeds).regret, args.repeats)
    per_arm = int(np.max(np.asarray(htb.exploration_pulls(policy.exploration_length(K, HORIZON), K))))
    chunk = htb._src.simulate.default_pull_chunk(K, HORIZON)
    drawn_jax = seeds * K * chunk * math.ceil(per_arm / chunk)

    # NumPy
    rng = np.random.default_rng(0)
    means = np.asarray(instance.mean())
    t_np, drawn_np = math.inf, 0
    for _ in range(args.repeats):
        start = time.perf_counter()
        regret_np, drawn_np = numpy_sweep(rng, means, SHAPE, HORIZON, EPS, alpha, q, seeds)
        t_np = min(t_np, time.perf_counter() - start)

    # raw jax.random, same number of variates, as a user would call it (default device)
    n = drawn_jax
    uniform = jax.jit(lambda k: jax.random.uniform(k, (n,), jnp.float32))
    pareto = jax.jit(lambda k: jax.random.pareto(k, SHAPE, (n,), jnp.float32))
    jax.block_until_ready(uniform(key)), jax.block_until_ready(pareto(key))
    t_uniform = best_time(lambda: uniform(key), args.repeats)
    t_pareto = best_time(lambda: pareto(key), args.repeats)

    # Median selection alone, on block means of the sweep's shape and layout (per seed:
    # [blocks, K, grid]), in the same chunks of seeds, on one device: exact bisection
    # against an XLA sort of the same rows.
    blocks = int(htb.num_blocks(K, HORIZON))
    chunk = 8
    block_means = jax.random.normal(key, (seeds // chunk, chunk, blocks, K, grid), jnp.float64)
    counts = jnp.full((K, grid), blocks)
    select = jax.jit(lambda m: jax.lax.map(lambda c: mom.median_of_block_means(c, counts, jnp.float32), m))
    sort = jax.jit(lambda m: jax.lax.map(
        lambda c: jnp.sort(c.astype(jnp.float32), axis=-3)[:, (blocks + 1) // 2 - 1], m))
    np.testing.assert_array_equal(np.asarray(select(block_means)), np.asarray(sort(block_means)))
    t_select = best_time(lambda: select(block_means), args.repeats)
    t_sort = best_time(lambda: sort(block_means), 1)
    rows_selected = seeds * K * grid
    one = jax.devices()[:1]
    jax.block_until_ready(htb.simulate(key, policy, instance, HORIZON, seeds, devices=one).regret)
    t_one = best_time(lambda: htb.simulate(key, policy, instance, HORIZON, seeds, devices=one).regret, args.repeats)

    mean_jax = np.asarray(htb.summarize(out).mean)
    se = np.sqrt(np.asarray(out.regret).var(-1, ddof=1) / seeds + regret_np.var(-1, ddof=1) / seeds)
    z = np.abs(mean_jax - regret_np.mean(-1)) / np.where(se > 0, se, 1.0)

    rows = [
        ("htb_jax", t_jax, rounds / t_jax, drawn_jax / t_jax),
        ("numpy", t_np, rounds / t_np, drawn_np / t_np),
    ]
    print(f"{'':10s} {'seconds':>9s} {'rounds/s':>12s} {'drawn samples/s':>16s}")
    for name, t, r, d in rows:
        print(f"{name:10s} {t:9.3f} {r:12.3e} {d:16.3e}")
    print(f"\nratio htb_jax / numpy (rounds/s): {t_np / t_jax:.2f}x   (target >= 1.0)")
    print(f"htb_jax first call (compilation included): {first_call:.2f} s")
    print(f"\nraw jax.random.uniform f32: {n / t_uniform:.3e} samples/s; jax.random.pareto f32: {n / t_pareto:.3e}")
    print(f"htb_jax drawn samples/s / raw uniform rate: {drawn_jax / t_jax / (n / t_uniform):.2f}   (target >= 0.5)")
    print(f"\nmedian of {blocks} block means, {rows_selected} times (one device): exact bisection "
          f"{t_select:.3f} s, XLA sort {t_sort:.3f} s ({t_sort / t_select:.1f}x slower)")
    print(f"the same sweep on one device: {t_one:.3f} s, of which the median selection is about "
          f"{100 * t_select / t_one:.0f}%")
    print(f"\nagreement: max |mean regret difference| over the grid = {z.max():.2f} standard errors")


if __name__ == "__main__":
    main()
