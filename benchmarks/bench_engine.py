"""Round-by-round engine against SMPyBandits and per-round Python loops, in one run.

Workload (issue 12): UCB1 on K = 10 equal-gap Gaussian arms (unit variance,
gap 0.1), T = 10^4 rounds, 256 seeds, with the default device settings a user
gets (no ``XLA_FLAGS``: on a CPU one JAX device).  In the same run: SMPyBandits
0.9.7's ``UCB`` on the same arms (``pip install SMPyBandits==0.9.7``; the
script aliases ``scipy.special.btdtri``, which recent SciPy removed), and
per-round Python loops in the style of classic bandit libraries
(``benchmarks/python_loop_bandits.py``) for UCB1 and Robust UCB with the
median of means; the Python sides run fewer seeds (their rates are per
seed-round).  SMPyBandits and the engine's UCB1 are timed in turn, one engine
call then one SMPyBandits seed, so that the load of a shared machine reaches
both alike; each side's rate is its fastest.  The stronger baselines, in the
same run: SMPyBandits with its seeds spread over every core (a process pool,
wall time, as its evaluator can run repetitions), and both policies in NumPy
over 256 seeds (``ucb1_over_seeds``, ``robust_ucb_mom_over_seeds``: a Python
loop over rounds, every seed's round in one array expression; Robust UCB's
with prefix sums and cached estimates, as the engine's).  Also printed: the engine with
every CPU core its own JAX device (a subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=<cores>``) and, with
``--profile``, the JAX profiler's top operations of the UCB1 run.

    python benchmarks/bench_engine.py [--seeds 256] [--loop-seeds 8] [--smpy-seeds 8] [--profile]
    python benchmarks/bench_engine.py --every-policy [--policy-horizon 2000] [--policy-seeds 64]

``--every-policy`` times every round-by-round policy (the literature's peers
included) against its plain-Python per-round loop, the tests' reference
(``tests/reference_*.py``, written from the policies' definitions in their
sources), on the same K = 10 Gaussian arms and reward tables, and
checks that both play the same arms on the loop's seeds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import multiprocessing
import os
import subprocess
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiling import format_ops, top_ops  # noqa: E402
from progress import note  # noqa: E402
from python_loop_bandits import (  # noqa: E402
    RobustUCBMoMLoop,
    UCB1Loop,
    gaussian_draw,
    gaussian_over_seeds,
    robust_ucb_mom_over_seeds,
    run,
    smpybandits_seed,
    smpybandits_ucb,
    ucb1_over_seeds,
)

import htb_jax as htb  # noqa: E402
from htb_jax._src import round_stream  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import reference_adar_ucb  # noqa: E402
import reference_lee_lim  # noqa: E402
import reference_policies  # noqa: E402
import reference_robust_ucb_f  # noqa: E402

K, T, SEEDS, GAP, SCALE = 10, 10**4, 256, 0.1, 1.0
FORCED_DEVICES_FLAG = "--xla_force_host_platform_device_count"
PROFILE_SEEDS = 10**4  # the profiled call's seeds at most


def instance():
    return htb.equal_gap(htb.Gaussian(loc=0.0, scale=SCALE), num_arms=K, gap=GAP)


def policies():
    return {"UCB1": htb.UCB1(), "Robust UCB (MoM)": htb.RobustUCB(1.0, v=SCALE**2, estimator="mom")}


def engine_calls(policy, seeds: int, horizon: int, devices=None, threads=None):
    """The engine, compiled and warmed up: ``call(i)`` runs key ``i + 1`` and returns its
    ``(seconds, regret f64[seeds])``."""
    nu, options = instance(), dict(devices=devices, threads=threads)
    jax.block_until_ready(htb.simulate(jax.random.key(0), policy, nu, horizon, seeds, **options).regret)

    def call(i):
        start = time.perf_counter()
        regret = jax.block_until_ready(htb.simulate(jax.random.key(i + 1), policy, nu, horizon, seeds,
                                                    **options).regret)
        return time.perf_counter() - start, np.asarray(regret)

    return call


def loop_calls(make, horizon: int):
    """A per-round loop: ``call(i)`` plays one seed (the next of one generator) and returns its
    ``(seconds, regret)``."""
    means = np.asarray(instance().mean())
    rng = np.random.default_rng(0)

    def call(i):
        start = time.perf_counter()
        regret = run(make(), means, gaussian_draw(SCALE), horizon, rng)
        return time.perf_counter() - start, regret

    return call


def engine_rate(policy, seeds: int, horizon: int, repeats: int = 3, devices=None, threads=None):
    """Seed-rounds per second of the fastest of ``repeats`` calls, and the last call's regret."""
    times, regrets = zip(*map(engine_calls(policy, seeds, horizon, devices, threads), range(repeats)), strict=True)
    return seeds * horizon / min(times), regrets[-1]


def loop_rate(make, seeds: int, horizon: int):
    """Rounds per second of the fastest seed (each seed is one timed run, as the engine's best
    of several calls), and every seed's regret."""
    times, regrets = zip(*map(loop_calls(make, horizon), range(seeds)), strict=True)
    return horizon / min(times), np.asarray(regrets)


def paired_rates(policy, make, seeds: int, horizon: int, repeats: int, loop_seeds: int):
    """The engine's and a per-round loop's rates timed in turn (engine call ``i``, then the loop's
    seed ``i``), so that the load of a shared machine reaches both alike; each side's fastest.

    Returns:
      ``(engine rate, engine regret f64[seeds], loop rate, loop regret f64[loop_seeds])`` from
      ``max(repeats, loop_seeds)`` engine calls after a warm-up and ``loop_seeds`` loop seeds.
    """
    engine, loop = engine_calls(policy, seeds, horizon), loop_calls(make, horizon)
    engine_runs, loop_runs = [], []
    for i in range(max(repeats, loop_seeds)):
        engine_runs.append(engine(i))
        if i < loop_seeds:
            loop_runs.append(loop(i))
    (engine_times, engine_regrets), (loop_times, loop_regrets) = (zip(*runs, strict=True)
                                                                  for runs in (engine_runs, loop_runs))
    return (seeds * horizon / min(engine_times), engine_regrets[-1], horizon / min(loop_times),
            np.asarray(loop_regrets))


def smpybandits_processes_rate(seeds: int, horizon: int, processes: int) -> tuple[float, np.ndarray]:
    """SMPyBandits' UCB with its seeds spread over ``processes`` processes (a pool started and warmed
    up first): rounds per second of the wall time, the fastest of ``seeds // processes`` (at least one)
    calls that each play ``processes`` seeds at once, and every seed's regret."""
    means = np.asarray(instance().mean())
    calls = max(1, seeds // processes)
    spawn = multiprocessing.get_context("spawn")  # no fork of a process that runs JAX's threads
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=spawn) as pool:
        list(pool.map(smpybandits_seed, *zip(*[(means, SCALE, 10, i) for i in range(processes)], strict=True)))
        times, regrets = [], []
        for c in range(calls):
            start = time.perf_counter()
            done = list(pool.map(smpybandits_seed,
                                 *zip(*[(means, SCALE, horizon, c * processes + i) for i in range(processes)],
                                      strict=True)))
            times.append(time.perf_counter() - start)
            regrets += [regret for _, regret in done]
    return processes * horizon / min(times), np.asarray(regrets)


def forced_devices_rate(seeds: int, horizon: int) -> tuple[float, int] | None:
    """The engine's UCB1 rate with every CPU core a JAX device (a subprocess: the flag is read at import)."""
    if jax.default_backend() != "cpu" or FORCED_DEVICES_FLAG in os.environ.get("XLA_FLAGS", ""):
        return None
    env = dict(os.environ, XLA_FLAGS=f"{FORCED_DEVICES_FLAG}={os.cpu_count()}")
    cmd = [sys.executable, os.path.abspath(__file__), "--engine-only", "--seeds", str(seeds), "--horizon", str(horizon)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["rate"], result["devices"]


_draw_rounds = jax.jit(jax.vmap(round_stream.uniforms, in_axes=(None, 0, None)), static_argnums=2)


def _levels(seed_key, horizon: int):
    """The round stream's ``(U, 1 - U)`` of rounds ``1..horizon`` as lists of Python float pairs."""
    u, v = (np.asarray(a).tolist() for a in _draw_rounds(seed_key, np.arange(1, horizon + 1), K))
    return list(zip(u, v, strict=True))


def every_policy():
    """``name -> (policy, loop)``: ``loop(rewards, horizon, levels)`` plays the policy in Python floats
    (``levels``: the round stream's draws of the seed, for the randomised policies)."""
    r = reference_policies
    return {
        "UCB1": (htb.UCB1(), lambda x, h, levels: r.ucb1(x, h)),
        "Robust UCB (MoM)": (htb.RobustUCB(1.0, v=SCALE**2, estimator="mom"),
                             lambda x, h, levels: r.robust_ucb(x, h, 1.0, SCALE**2, "mom")),
        "Robust UCB (trunc.)": (htb.RobustUCB(1.0, u=1.0 + SCALE**2, estimator="truncated"),
                                lambda x, h, levels: r.robust_ucb(x, h, 1.0, 1.0 + SCALE**2, "truncated")),
        "ForceMoM": (htb.ForceMoM(rho=2 / 3), lambda x, h, levels: r.force_mom(x, h, 2 / 3)[0]),
        "AdaR-UCB": (htb.AdaRUCB(), lambda x, h, levels: reference_adar_ucb.adar_ucb(x, h)[0]),
        "R-UCB (mean)": (htb.RobustUCBf(kind="R-UCB", estimator="mean", m=2.1, a=0.0),
                         lambda x, h, levels: reference_robust_ucb_f.reference(x, h, "R-UCB", "mean", 2.1, 0.0)[0]),
        "R-UCB-G (trunc.)": (htb.RobustUCBf(kind="R-UCB-G", estimator="truncated", m=1.0, a=2.0),
                             lambda x, h, levels: reference_robust_ucb_f.reference(x, h, "R-UCB-G", "truncated",
                                                                                1.0, 2.0)[0]),
        "APE2 (p=2)": (htb.APE2(p=2.0), lambda x, h, levels: reference_lee_lim.lee_lim(
            x, h, "ape2", 2.0, 1.0, "frechet", levels)[0]),
        "MR-UCB (p=2)": (htb.MRUCB(p=2.0), lambda x, h, levels: reference_lee_lim.lee_lim(x, h, "mr_ucb", 2.0, 1.0)[0]),
        "MR-APE (p=2)": (htb.MRAPE(p=2.0), lambda x, h, levels: reference_lee_lim.lee_lim(
            x, h, "mr_ape", 2.0, 1.0, "uniform", levels)[0]),
    }


def policy_rates(horizon: int = 2000, seeds: int = 64, loop_seeds: int = 1, repeats: int = 2) -> list[dict]:
    """Engine and plain-Python seed-rounds/s of every policy, and whether they play the same arms."""
    nu = instance()
    key = jax.random.key(7)
    seed_keys = htb.seed_keys(key, loop_seeds)
    tables = [np.asarray(htb.reward_table(seed_keys[s], nu, horizon)).tolist() for s in range(loop_seeds)]
    levels = [_levels(seed_keys[s], horizon) for s in range(loop_seeds)]  # inputs, drawn outside the timing
    rows = []
    for name, (policy, loop) in every_policy().items():
        rate, _ = engine_rate(policy, seeds, horizon, repeats)
        engine_arms = np.asarray(htb.simulate(key, policy, nu, horizon, loop_seeds, record_arms=True).arms)
        start = time.perf_counter()
        loop_arms = [loop(tables[s], horizon, levels[s]) for s in range(loop_seeds)]
        loop_rate_ = loop_seeds * horizon / (time.perf_counter() - start)
        same = all(np.array_equal(engine_arms[s], loop_arms[s]) for s in range(loop_seeds))
        rows.append(dict(name=name, engine=rate, loop=loop_rate_, same_arms=same))
    return rows


def policy_report(rows: list[dict], horizon: int, seeds: int, loop_seeds: int) -> str:
    lines = [
        f"backend: {jax.default_backend()} ({len(jax.devices())} x {jax.devices()[0].device_kind}), "
        f"jax {jax.__version__}, {os.cpu_count()} cores; default device settings",
        f"workload: K={K} Gaussian arms (scale {SCALE}), gap {GAP}, T={horizon}; engine {seeds} seeds, "
        f"Python reference loop {loop_seeds} seed(s) on the same reward table",
        "",
        f"{'policy':20s} {'engine':>12s} {'Python loop':>12s} {'ratio':>8s}  same arms   (seed-rounds/s)",
    ]
    for r in rows:
        lines.append(f"{r['name']:20s} {r['engine']:12.3e} {r['loop']:12.3e} {r['engine'] / r['loop']:7.0f}x  "
                     f"{'yes' if r['same_arms'] else 'NO'}")
    return "\n".join(lines)


def run_benchmark(seeds: int = SEEDS, horizon: int = T, *, loop_seeds: int = 8, smpy_seeds: int = 8,
                  repeats: int = 3, forced_devices: bool = True, profile: bool = False,
                  robust_seeds: int | None = None, robust_ucb: bool = True, trace_path: str | None = None) -> dict:
    """Every figure of the benchmark, in a dict.

    ``robust_seeds`` (default ``seeds``): seeds of the Robust UCB (MoM) engine run, whose
    state grows with the horizon; ``robust_ucb=False`` runs UCB1 alone.  With ``profile``,
    ``trace_path`` keeps the profiler's trace of the UCB1 call.
    """
    r = {"seeds": seeds, "horizon": horizon, "smpy_seeds": smpy_seeds, "backend": jax.default_backend(),
         "devices": len(jax.devices()),
         "device_kind": jax.devices()[0].device_kind, "jax": jax.__version__, "cores": os.cpu_count()}
    rows = []
    adapter = smpybandits_ucb(K) if smpy_seeds > 0 else None
    cases = zip(
        policies().items(),
        (lambda: UCB1Loop(K), lambda: RobustUCBMoMLoop(K, 1.0, SCALE**2)),
        (loop_seeds, max(1, loop_seeds // 4)),
        (seeds, robust_seeds or seeds),
        strict=True,
    )
    for (name, policy), make, n_loop, n_engine in list(cases)[: 2 if robust_ucb else 1]:
        if name == "UCB1" and adapter is not None:  # the target's ratio: timed in turn with SMPyBandits
            rate, regret, r["smpy_rate"], r["smpy_regret"] = paired_rates(
                policy, adapter, n_engine, horizon, repeats, smpy_seeds
            )
            r["ratio_smpy"] = rate / r["smpy_rate"]
        else:
            rate, regret = engine_rate(policy, n_engine, horizon, repeats)
        note(f"engine: {name}, {n_engine} seeds, {rate:.3e} seed-rounds/s")
        rate_loop, regret_loop = loop_rate(make, n_loop, horizon) if n_loop > 0 else (math.nan, np.zeros(2))
        note(f"engine: {name}'s Python loop, {n_loop} seeds")
        rows.append(dict(name=name, seeds=n_engine, engine=rate, loop=rate_loop, regret=regret,
                         regret_loop=regret_loop))
        # NumPy over the seeds (at most SEEDS of them: a rate per seed-round), best of two
        n_vec, means = min(n_engine, SEEDS), np.asarray(instance().mean())
        timed_runs = []
        for i in range(2):
            draw = gaussian_over_seeds(means, SCALE, np.random.default_rng(i))
            start = time.perf_counter()
            if name == "UCB1":
                vec_regret = ucb1_over_seeds(means, n_vec, horizon, draw)
            else:
                vec_regret = robust_ucb_mom_over_seeds(means, 1.0, SCALE**2, n_vec, horizon, draw)
            timed_runs.append(time.perf_counter() - start)
        r.setdefault("vectorised", {})[name] = dict(seeds=n_vec, rate=n_vec * horizon / min(timed_runs),
                                                    regret=vec_regret, engine=rate)
        note(f"engine: {name} in NumPy over {n_vec} seeds")
    r["rows"] = rows
    processes = os.cpu_count() or 1
    if adapter is not None and processes > 1:  # SMPyBandits' seeds over every core, as its evaluator can
        r["smpy_processes"] = processes
        r["smpy_processes_rate"], r["smpy_processes_regret"] = smpybandits_processes_rate(
            smpy_seeds, horizon, processes)
        r["ratio_smpy_processes"] = rows[0]["engine"] / r["smpy_processes_rate"]
        note(f"engine: SMPyBandits over {processes} processes")
    policy = policies()["UCB1"]
    r["threads"] = htb.memory_plan(jax.random.key(0), policy, instance(), horizon, seeds).threads
    r["one_thread_rate"], _ = engine_rate(policy, seeds, horizon, repeats, threads=1)
    note("engine: UCB1 with threads=1")
    if forced_devices:
        forced = forced_devices_rate(seeds, horizon)
        if forced is not None:
            r["forced_rate"], r["forced_devices"] = forced
    if profile:
        nu, policy = instance(), policies()["UCB1"]
        # At most PROFILE_SEEDS seeds: a GPU's 10^6 give a trace of about 5 x 10^5 events (the sweep's, capped
        # alike, took over 200 s to read at 2.3 x 10^5 on an H200)
        r["profile_seeds"] = profile_seeds = min(seeds, PROFILE_SEEDS)
        call = lambda: htb.simulate(jax.random.key(1), policy, nu, horizon, profile_seeds).regret
        jax.block_until_ready(call())  # compiled before the profiler starts (a new size if seeds > PROFILE_SEEDS)
        r["profile"] = top_ops(call, 12, save_as=trace_path)
        note("engine: profiled")
    return r


def report(r: dict) -> str:
    horizon = r["horizon"]
    lines = [
        f"backend: {r['backend']} ({r['devices']} x {r['device_kind']}), jax {r['jax']}, {r['cores']} cores; "
        f"default device settings (XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r})",
        f"workload: K={K} Gaussian arms (scale {SCALE}), gap {GAP}, T={horizon}, {r['seeds']} seeds; "
        f"the engine runs {r['threads']} concurrent execution(s) per device (simulate's default threads)",
        "",
        f"{'policy':18s} {'engine':>12s} {'Python loop':>12s} {'ratio':>8s}   (seed-rounds/s)",
    ]
    for row in r["rows"]:
        lines.append(f"{row['name']:18s} {row['engine']:12.3e} {row['loop']:12.3e} {row['engine'] / row['loop']:7.0f}x")
    for name, v in r.get("vectorised", {}).items():
        lines.append(f"{'' if name != 'UCB1' else chr(10)}engine {name} / {name} in NumPy over {v['seeds']} "
                     f"seeds (a Python loop over rounds, python_loop_bandits): {v['engine']:.3e} / "
                     f"{v['rate']:.3e} = {v['engine'] / v['rate']:.1f}x")
    if "smpy_rate" in r:
        lines.append(f"{'SMPyBandits UCB':18s} {'':12s} {r['smpy_rate']:12.3e}")
        lines.append(f"\nengine UCB1 / SMPyBandits 0.9.7 UCB, same arms, timed in turn ({r['smpy_seeds']} rounds): "
                     f"{r['rows'][0]['engine']:.3e} / {r['smpy_rate']:.3e} = {r['ratio_smpy']:.0f}x   (target >= 1000x)")
        if "smpy_processes_rate" in r:
            lines.append(f"engine UCB1 / SMPyBandits UCB over {r['smpy_processes']} processes (seeds side by "
                         f"side, wall time): {r['rows'][0]['engine']:.3e} / {r['smpy_processes_rate']:.3e} = "
                         f"{r['ratio_smpy_processes']:.0f}x")
    else:
        lines.append("\nSMPyBandits not run (pip install SMPyBandits==0.9.7 for the target's comparison)")
    line = f"engine UCB1 with threads=1: {r['one_thread_rate']:.3e} seed-rounds/s"
    if "smpy_rate" in r:
        line += f" ({r['one_thread_rate'] / r['smpy_rate']:.0f}x SMPyBandits)"
    lines.append(line)
    if "forced_rate" in r:
        line = (f"engine UCB1 with {FORCED_DEVICES_FLAG}={r['forced_devices']}: {r['forced_rate']:.3e} seed-rounds/s")
        if "smpy_rate" in r:
            line += f" ({r['forced_rate'] / r['smpy_rate']:.0f}x SMPyBandits)"
        lines.append(line)
    lines.append("\nagreement (mean regret / T, +- 2 s.e.):")

    def fmt(x):
        if x.size < 2:
            return f"{x.mean() / horizon:.4f} (one seed)"
        return f"{x.mean() / horizon:.4f} +- {2 * x.std(ddof=1) / math.sqrt(x.size) / horizon:.4f}"

    for row in r["rows"]:
        lines.append(f"  {row['name']:23s} engine {fmt(row['regret'])}   loop {fmt(row['regret_loop'])}")
    for name, v in r.get("vectorised", {}).items():
        lines.append(f"  {name + ' NumPy':23s} {fmt(v['regret'])}")
    if "smpy_regret" in r:
        lines.append(f"  {'SMPyBandits UCB':23s} {fmt(r['smpy_regret'])}")
    if "smpy_processes_regret" in r:
        label = f"SMPyBandits, {r['smpy_processes']} procs"
        lines.append(f"  {label:23s} {fmt(r['smpy_processes_regret'])}")
    if "profile" in r:
        lines.append(f"\nwhere the engine's UCB1 time goes (JAX profiler, one call of {r['profile_seeds']} seeds, "
                     "self time per XLA operation):")
        lines.append(format_ops(*r["profile"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--horizon", type=int, default=T)
    parser.add_argument("--loop-seeds", type=int, default=8)
    parser.add_argument("--smpy-seeds", type=int, default=8)
    parser.add_argument("--profile", action="store_true", help="print the JAX profiler's top operations")
    parser.add_argument("--engine-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--every-policy", action="store_true",
                        help="every round-by-round policy against its plain-Python reference loop")
    parser.add_argument("--policy-horizon", type=int, default=2000)
    parser.add_argument("--policy-seeds", type=int, default=64)
    args = parser.parse_args()
    if args.every_policy:
        rows = policy_rates(args.policy_horizon, args.policy_seeds, max(1, args.loop_seeds // 8))
        print(policy_report(rows, args.policy_horizon, args.policy_seeds, max(1, args.loop_seeds // 8)))
        return
    if args.engine_only:
        rate, _ = engine_rate(htb.UCB1(), args.seeds, args.horizon)
        print(json.dumps({"rate": rate, "devices": len(jax.devices())}))
        return
    print(report(run_benchmark(args.seeds, args.horizon, loop_seeds=args.loop_seeds, smpy_seeds=args.smpy_seeds,
                               profile=args.profile)))


if __name__ == "__main__":
    main()
