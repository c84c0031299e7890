"""Round-by-round engine against per-round Python loops, in one run.

Workload (issue spec): UCB1 and Robust UCB (median of means) with K = 10 arms,
T = 10^4 rounds, 256 seeds, on equal-gap Pareto(2.5) arms (gap 0.1).  Prints
seed-rounds/s of the engine and of a per-round Python loop in the style of
classic bandit libraries (``benchmarks/python_loop_bandits.py``), and their
ratio; the loops run fewer seeds (their rate is per seed-round).  If
SMPyBandits is importable it is timed too, on the same arms.

    python benchmarks/bench_engine.py [--loop-seeds 8]
"""

from __future__ import annotations

import argparse
import math
import os
import time

os.environ.setdefault("XLA_FLAGS", f"--xla_force_host_platform_device_count={os.cpu_count()}")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from python_loop_bandits import RobustUCBMoMLoop, UCB1Loop, run  # noqa: E402

import htb_jax as htb  # noqa: E402

K, T, SEEDS, SHAPE, GAP = 10, 10**4, 256, 2.5, 0.1
VARIANCE = SHAPE / ((SHAPE - 1) ** 2 * (SHAPE - 2))  # of a Pareto(2.5) arm: 2.22
SMPY_REFERENCE = 41_000  # SMPyBandits 0.9.7 UCB, seed-rounds/s on this machine (issue)


def engine_rate(policy, instance, devices, repeats=2):
    key = jax.random.key(0)
    jax.block_until_ready(htb.simulate(key, policy, instance, T, SEEDS, devices=devices).regret)
    best = math.inf
    for i in range(repeats):
        start = time.perf_counter()
        out = htb.simulate(jax.random.key(i + 1), policy, instance, T, SEEDS, devices=devices)
        jax.block_until_ready(out.regret)
        best = min(best, time.perf_counter() - start)
    return SEEDS * T / best, np.asarray(out.regret)


def loop_rate(make, means, seeds):
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    regrets = [run(make(), means, SHAPE, T, rng) for _ in range(seeds)]
    return seeds * T / (time.perf_counter() - start), np.asarray(regrets)


def smpybandits_rate(means, seeds):
    try:
        import scipy.special

        if not hasattr(scipy.special, "btdtri"):  # removed from recent SciPy; SMPyBandits imports it
            scipy.special.btdtri = scipy.special.betaincinv
        from SMPyBandits.Policies import UCB
    except Exception:  # noqa: BLE001 - optional comparison
        return None

    class Adapter:
        def __init__(self):
            self.policy = UCB(K)
            self.policy.startGame()

        def choose(self):
            return self.policy.choice()

        def update(self, arm, reward):
            self.policy.getReward(arm, reward)

    return loop_rate(Adapter, means, seeds)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loop-seeds", type=int, default=8)
    args = parser.parse_args()
    instance = htb.equal_gap(htb.Pareto(loc=0.0, shape=SHAPE), num_arms=K, gap=GAP)
    means = np.asarray(instance.mean())
    all_devices, one = jax.devices(), jax.devices()[:1]
    print(f"backend: {jax.default_backend()} ({len(all_devices)} devices), jax {jax.__version__}")
    print(f"workload: K={K} Pareto({SHAPE}) arms, gap {GAP}, T={T}, {SEEDS} seeds\n")

    rows = []
    for name, policy, make, loop_seeds in [
        ("UCB1", htb.UCB1(), lambda: UCB1Loop(K), args.loop_seeds),
        ("Robust UCB (MoM)", htb.RobustUCB(1.0, v=2.25, estimator="mom"),
         lambda: RobustUCBMoMLoop(K, 1.0, 2.25), max(1, args.loop_seeds // 4)),
    ]:
        rate_all, regret = engine_rate(policy, instance, all_devices)
        rate_one, _ = engine_rate(policy, instance, one)
        rate_loop, regret_loop = loop_rate(make, means, loop_seeds)
        rows.append((name, rate_all, rate_one, rate_loop, regret, regret_loop))

    print(f"{'policy':18s} {'engine':>12s} {'engine 1 dev':>13s} {'Python loop':>12s} {'ratio':>8s}   (seed-rounds/s)")
    for name, rate_all, rate_one, rate_loop, _, _ in rows:
        print(f"{name:18s} {rate_all:12.3e} {rate_one:13.3e} {rate_loop:12.3e} {rate_all / rate_loop:7.0f}x")
    print("\ntargets: UCB1 >= 100x the loop, Robust UCB (MoM) >= 20x the loop")

    ucb_rate = rows[0][1]
    smpy = smpybandits_rate(means, 4)
    if smpy is not None:
        print(f"SMPyBandits UCB, same arms, measured now: {smpy:.3e} seed-rounds/s -> engine UCB1 is "
              f"{ucb_rate / smpy:.0f}x")
    print(f"SMPyBandits 0.9.7 UCB, reference figure {SMPY_REFERENCE:.1e} seed-rounds/s -> engine UCB1 is "
          f"{ucb_rate / SMPY_REFERENCE:.0f}x (target >= 1000x)")

    print("\nagreement (mean regret / T, +- 2 s.e.):")
    for name, _, _, _, regret, regret_loop in rows:
        def fmt(r):
            return f"{r.mean() / T:.4f} +- {2 * r.std(ddof=1) / math.sqrt(r.size) / T:.4f}"
        print(f"  {name:18s} engine {fmt(regret)}   loop {fmt(regret_loop)}")


if __name__ == "__main__":
    main()
