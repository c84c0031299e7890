"""What one round of the engine costs on the default device, and the two choices made for GPUs.

On a GPU the engine's round costs about the same whatever its number of lanes (seeds): the
round loop waits on kernel launches and on the host reading each loop condition, not on memory.
Two choices follow, each timed here against its alternative in the same run, on the same
device, with the same reward tables (the share of runs whose regrets are equal is printed: 1 on a
CPU; on a GPU two programs may round a draw differently, docs/guides/reproducibility.md):

1. **A family's instances side by side** with the seeds (one ``vmap``: one pass of rounds for
   ``F`` instances) against one after another (``F`` passes): ForceMoM and AdaR-UCB on ``F``
   two-point instances (``htb.lower_bound_pair``).  The engine takes side by side off a CPU
   (``engine.instances_side_by_side``).
2. **AdaR-UCB's bisections unrolled** (its sorted-buffer searches, about 15 steps each, several
   a round) against looped (a GPU loop inside the round loop).  The engine unrolls them off a
   CPU (``adaptive_threshold._unrolled``).
3. **A policy told each member's own parameter, paired with its members** (``simulate(...,
   paired=True)``: one program, the pairs side by side off a CPU) against one member at a time
   (``F`` programs' runs, as ``htb.frontier.measure`` ran such a policy before): Robust UCB told
   each member's ``u`` at ``eps = 1``.

Prints a Markdown table: per program and variant, the first call (compilation included), the
best of ``--repeats`` calls, milliseconds per round, the ratio of the alternative's time
to the chosen one's, and the share of equal regrets (``bench_scale.timed``).  ``--size auto`` is
``full`` on a GPU (1024 seeds, F = 12, T = 1000) and ``toy`` elsewhere (8 seeds, F = 3, T = 200:
seconds on a CPU); ``--only TEXT`` times the programs whose name contains ``TEXT``.

    python benchmarks/bench_engine_rounds.py [--size auto|toy|full] [--repeats 2] [--only TEXT]
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


def run_timed(call, repeats: int) -> tuple[float, float, np.ndarray]:
    """``(first call s, best call s, regret)`` of ``call()`` (an Outcome's regret, or an array of them)
    on the default device, timed by ``bench_scale.timed`` (the regret of the last call)."""
    last = {}

    def timed_call():
        last["regret"] = call()
        return last["regret"]

    first, best = timed(timed_call, repeats)
    return first, best, np.asarray(last["regret"])


def simulate_regret(policy, family, horizon: int, seeds: int, **options):
    """``call()``: the regret of ``htb.simulate`` with these arguments."""
    return lambda: htb.simulate(jax.random.key(0), policy, family, horizon, seeds, **options).regret


def one_member_at_a_time(policies, family, horizon: int, seeds: int):
    """``call()``: each member's regret from a ``simulate`` of its own policy on it alone, stacked [F, S]."""
    members = [jax.tree.map(lambda p, f=f: p[f : f + 1], family) for f in range(family.batch_shape[0])]
    return lambda: jnp.concatenate(
        [htb.simulate(jax.random.key(0), p, m, horizon, seeds).regret for p, m in zip(policies, members, strict=True)]
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("auto", "toy", "full"), default="auto")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", default="", help="time only the programs whose name contains this")
    args = parser.parse_args(argv)
    size_name = ("full" if jax.default_backend() == "gpu" else "toy") if args.size == "auto" else args.size
    size = SIZES[size_name]
    seeds, horizon = size["seeds"], size["horizon"]
    family = htb.lower_bound_pair(2, 1.0, jnp.logspace(-3.0, -0.3, size["members"]))[1]
    device = jax.devices()[0]
    print(f"bench_engine_rounds --size {size_name}: {device.platform}, {device.device_kind}; jax {jax.__version__}; "
          f"{seeds} seeds, F = {size['members']} two-point instances, T = {horizon}\n")
    toggle = lambda module, name, value: lambda: choice(module, name, value)  # noqa: E731
    same = contextlib.nullcontext
    u = jnp.max(family.abs_moment(1.0), axis=-1)  # each member's E|X|^2 bound
    told = [htb.RobustUCB(1.0, u=float(v)) for v in u]
    cases = [  # (program, [(variant, context, call): the chosen variant first, then its alternative])
        ("ForceMoM(0.6)", [
            ("instances side by side", toggle(engine, "instances_side_by_side", True),
             simulate_regret(htb.ForceMoM(rho=0.6), family, horizon, seeds)),
            ("one after another", toggle(engine, "instances_side_by_side", False),
             simulate_regret(htb.ForceMoM(rho=0.6), family, horizon, seeds)),
        ]),
        ("AdaR-UCB", [
            ("instances side by side", toggle(engine, "instances_side_by_side", True),
             simulate_regret(htb.AdaRUCB(), family, horizon, seeds)),
            ("one after another", toggle(engine, "instances_side_by_side", False),
             simulate_regret(htb.AdaRUCB(), family, horizon, seeds)),
        ]),
        ("AdaR-UCB", [
            ("bisections unrolled", toggle(adaptive_threshold, "_unrolled", True),
             simulate_regret(htb.AdaRUCB(), family, horizon, seeds)),
            ("looped", toggle(adaptive_threshold, "_unrolled", False), simulate_regret(htb.AdaRUCB(), family, horizon, seeds)),
        ]),
        ("Robust UCB told each member's u", [
            ("paired with its members", same, simulate_regret(htb.RobustUCB(1.0, u=u), family, horizon, seeds, paired=True)),
            ("one member at a time", same, one_member_at_a_time(told, family, horizon, seeds)),
        ]),
    ]
    print("| program | variant | first call (s) | best (s) | ms per round | alternative / chosen | equal regrets |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for program, variants in (case for case in cases if args.only in case[0]):
        results = {}
        for label, context, call in variants:
            with context():
                results[label] = run_timed(call, args.repeats)
        (chosen, _, _), (alternative, _, _) = variants
        equal = np.mean(results[chosen][2] == results[alternative][2])
        for label in (chosen, alternative):
            first, best, _ = results[label]
            ratio = f"{results[alternative][1] / results[chosen][1]:.2f}x" if label == chosen else ""
            shared = f"{equal:.3f}" if label == chosen else ""
            print(f"| {program} | {label} | {first:.2f} | {best:.3f} | {1e3 * best / horizon:.3f} | {ratio} | {shared} |")


if __name__ == "__main__":
    main()
