"""What one round of the engine costs on the default device, and the two choices made for GPUs.

On a GPU the engine's round costs about the same whatever its number of lanes (seeds): the
round loop waits on kernel launches and on the host reading each loop condition, not on memory.
Two choices follow, each timed here against its alternative in the same run, on the same
device, with the same reward tables (the share of runs whose regrets are equal is printed: 1 on a
CPU; on a GPU two programs may round a draw differently, README "The same numbers on another
machine"):

1. **A family's instances side by side** with the seeds (one ``vmap``: one pass of rounds for
   ``F`` instances) against one after another (``F`` passes): ForceMoM and AdaR-UCB on ``F``
   two-point instances (``htb.lower_bound_pair``).  The engine takes side by side off a CPU
   (``engine.instances_side_by_side``).
2. **AdaR-UCB's bisections unrolled** (its sorted-buffer searches, about 15 steps each, several
   a round) against looped (a GPU loop inside the round loop).  The engine unrolls them off a
   CPU (``adaptive_threshold._unrolled``).

Prints a Markdown table: per program and variant, the first call (compilation included), the
best of ``--repeats`` calls, milliseconds per round, the ratio of the alternative's time
to the chosen one's, and the share of equal regrets (``bench_scale.timed``).  ``--size auto`` is
``full`` on a GPU (1024 seeds, F = 12, T = 1000) and ``toy`` elsewhere (8 seeds, F = 3, T = 200:
seconds on a CPU).

    python benchmarks/bench_engine_rounds.py [--size auto|toy|full] [--repeats 2]
"""

from __future__ import annotations

import argparse
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from bench_scale import timed

import htb_jax as htb
from htb_jax._src import adaptive_threshold, engine

SIZES = {"toy": dict(seeds=8, members=3, horizon=200), "full": dict(seeds=1024, members=12, horizon=1000)}


@contextlib.contextmanager
def choice(module, name: str, value: bool):
    """``module.name`` answers ``value`` inside the block (compiled programs are dropped on both
    sides, so that each variant is traced and compiled afresh)."""
    saved = getattr(module, name)
    jax.clear_caches()
    setattr(module, name, lambda *_: value)
    try:
        yield
    finally:
        setattr(module, name, saved)
        jax.clear_caches()


def run_timed(policy, family, horizon: int, seeds: int, repeats: int) -> tuple[float, float, np.ndarray]:
    """``(first call s, best call s, regret)`` of ``htb.simulate`` on the default device (the
    regret of the last call)."""
    last = {}

    def call():
        last["out"] = htb.simulate(jax.random.key(0), policy, family, horizon, seeds)
        return last["out"]

    first, best = timed(call, repeats)
    return first, best, np.asarray(last["out"].regret)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("auto", "toy", "full"), default="auto")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    size = SIZES[("full" if jax.default_backend() == "gpu" else "toy") if args.size == "auto" else args.size]
    seeds, horizon = size["seeds"], size["horizon"]
    family = htb.lower_bound_pair(2, 1.0, jnp.logspace(-3.0, -0.3, size["members"]))[1]
    device = jax.devices()[0]
    print(f"bench_engine_rounds --size {args.size}: {device.platform}, {device.device_kind}; jax {jax.__version__}; "
          f"{seeds} seeds, F = {size['members']} two-point instances, T = {horizon}\n")
    cases = [  # (program, chosen variant, alternative, module, name, value when chosen, policy)
        ("ForceMoM(0.6)", "instances side by side", "one after another", engine, "instances_side_by_side", True,
         htb.ForceMoM(rho=0.6)),
        ("AdaR-UCB", "instances side by side", "one after another", engine, "instances_side_by_side", True,
         htb.AdaRUCB()),
        ("AdaR-UCB", "bisections unrolled", "looped", adaptive_threshold, "_unrolled", True, htb.AdaRUCB()),
    ]
    print("| program | variant | first call (s) | best (s) | ms per round | alternative / chosen | equal regrets |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for program, chosen, alternative, module, name, value, policy in cases:
        results = {}
        for label, setting in ((chosen, value), (alternative, not value)):
            with choice(module, name, setting):
                results[label] = run_timed(policy, family, horizon, seeds, args.repeats)
        equal = np.mean(results[chosen][2] == results[alternative][2])
        for label in (chosen, alternative):
            first, best, _ = results[label]
            ratio = f"{results[alternative][1] / results[chosen][1]:.2f}x" if label == chosen else ""
            same = f"{equal:.3f}" if label == chosen else ""
            print(f"| {program} | {label} | {first:.2f} | {best:.3f} | {1e3 * best / horizon:.3f} | {ratio} | {same} |")


if __name__ == "__main__":
    main()
