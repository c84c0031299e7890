"""The GPU suite's checks: the accelerator's results against the CPU path's, with the same key.

:func:`compute_side` computes, on one side (the accelerator, or the CPU), what
the checks compare: the reward words of four seeds, the first seeds of the
AdaR-ETC sweep, of UCB1 through the engine and of the T-frontier.
:func:`compare` gives the verdicts of two sides:

* equal bit for bit where the documentation promises it on any machine: the reward
  words (threefry), the exploration lengths ``L_T``, the checkpoints, and the
  regret of every seed whose pull counts are equal;
* statistically otherwise (the GPU's elementary functions round differently
  in the last bit, so a near-tie can go the other way): the mean regret of
  every configuration within :data:`Z_TOLERANCE` standard errors of the two
  samples (two-sample, unpaired, so conservative for these mostly identical
  draws), and the fraction of seeds with equal pull counts at least
  :data:`SAME_PULLS_MIN`.

On a CPU both sides are the same device (:func:`on_the_cpu_alone`), so the
checks compare the CPU path with itself and pass by construction.
"""

from __future__ import annotations

import dataclasses
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_engine  # noqa: E402
import bench_sweep  # noqa: E402
from gpu_size import Size  # noqa: E402
from progress import note  # noqa: E402

import htb_jax as htb  # noqa: E402
from htb_jax._src import frontier  # noqa: E402
from htb_jax._src.reward_table import seed_keys, table_words  # noqa: E402

Z_TOLERANCE = 5.0  # standard errors, for the statistical checks
SAME_PULLS_MIN = 0.9  # least fraction of seeds whose pull counts must be equal across backends
WORDS_CHECK = "reward words (threefry), 4 seeds x 10 arms x 256 pulls x 2 words"


@dataclasses.dataclass
class Check:
    name: str
    passed: bool
    detail: str


def equal_check(name: str, a, b) -> Check:
    a, b = np.asarray(a), np.asarray(b)
    same = a.shape == b.shape and np.array_equal(a, b)
    detail = "equal bit for bit" if same else f"differ in {np.mean(a != b) if a.shape == b.shape else 'shape'}"
    return Check(name, bool(same), detail)


def mean_check(name: str, a, b) -> Check:
    """Means over the last (seed) axis agree within Z_TOLERANCE standard errors, cell by cell."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    na, nb = a.shape[-1], b.shape[-1]
    diff = np.abs(a.mean(-1) - b.mean(-1))
    se = np.sqrt(a.var(-1, ddof=1) / na + b.var(-1, ddof=1) / nb)
    scale = np.maximum(np.abs(a.mean(-1)), 1.0)
    degenerate = se == 0
    z = np.where(degenerate, 0.0, diff / np.where(degenerate, 1.0, se))
    ok = bool(np.all(z <= Z_TOLERANCE) and np.all(diff[degenerate] <= 1e-12 * scale[degenerate]))
    return Check(name, ok, f"max mean difference {float(z.max()):.2f} s.e. (tolerance {Z_TOLERANCE:g}); "
                           f"identical seeds {float(np.mean(a == b)):.3f}")


def pulls_checks(name: str, accel, cpu) -> list[Check]:
    """Pull counts equal for most seeds; regret equal bit for bit wherever the pull counts are."""
    pulls_a, pulls_c = np.asarray(accel.pulls), np.asarray(cpu.pulls)
    same = np.all(pulls_a == pulls_c, axis=-1)  # [..., S]
    frac = float(np.mean(same))
    regret_a, regret_c = np.asarray(accel.regret), np.asarray(cpu.regret)
    regret_same = bool(np.array_equal(regret_a[same], regret_c[same]))
    return [
        Check(f"{name}: seeds with equal pull counts", frac >= SAME_PULLS_MIN,
              f"{frac:.3f} (at least {SAME_PULLS_MIN})"),
        Check(f"{name}: regret given equal pull counts", regret_same,
              "equal bit for bit" if regret_same else "differs"),
    ]


def cpu_devices():
    try:
        return jax.devices("cpu")
    except RuntimeError:  # JAX_PLATFORMS excludes the CPU
        return None


@dataclasses.dataclass(frozen=True)
class Side:
    """What the checks compare, computed on one side (the accelerator, or the CPU) with the same key."""

    words: np.ndarray  # u32[4, 10, 256, 2] reward words: 4 seeds x 10 arms x 256 pulls x 2 words
    sweep: htb.Outcome  # the sweep's first n seeds
    engine: htb.Outcome  # UCB1's first n seeds
    frontier_exploration: np.ndarray  # i64[G, H] L_T of every T-frontier schedule and horizon
    frontier_regret: np.ndarray  # f64[G, F + 1, H, m] the T-frontier's first m seeds


def compute_side(size: Size, config: frontier.TFrontierConfig, devices=None, frontier_runs=None) -> Side:
    """The compared results on ``devices`` (default: JAX's default devices, the accelerator).

    ``frontier_runs`` (the frontier part's runs) stand in for the T-frontier's first seeds where given.
    """
    n = size.check_seeds
    key = jax.random.key(0)
    where = "the CPU" if devices is not None else "the default devices"

    # Reward words: threefry is integer arithmetic, the same bits on every backend.
    keys = seed_keys(key, 4)
    if devices is not None:
        keys = jax.device_put(keys, devices[0])  # the program runs where its input lives
    words = jax.jit(lambda ks: jax.vmap(lambda k: table_words(k, 10, 0, 256, 2))(ks))(keys)

    # Sweep (fast path) and the engine's UCB1, first n seeds.
    policy, instance, _, _ = bench_sweep.workload(size.sweep_horizon)
    sweep = htb.simulate(key, policy, instance, size.sweep_horizon, n, devices=devices)
    engine = htb.simulate(key, htb.UCB1(), bench_engine.instance(), size.engine_horizon, n, devices=devices)
    note(f"checks: reward words, sweep and engine on {where}")

    # T-frontier: its first m seeds.
    m = min(n, config.num_seeds)
    if frontier_runs is None:
        runs = htb.simulate(jax.random.key(int(config.key)), frontier.t_frontier_policy(config),
                            config.family.instances(), list(config.horizons), m, devices=devices)
        exploration, regret = runs.exploration[:, 0, :, 0], runs.regret
    else:
        exploration, regret = frontier_runs.exploration, frontier_runs.regret[..., :m]
    note(f"checks: T-frontier on {where}")
    return Side(np.asarray(words), sweep, engine, np.asarray(exploration), np.asarray(regret))


def compare(accel: Side, cpu: Side) -> list[Check]:
    """The verdicts of the checks of ``accel`` against ``cpu``: bit for bit where the documentation
    promises it on any machine, statistically otherwise."""
    checks = [equal_check(WORDS_CHECK, accel.words, cpu.words)]
    checks.append(equal_check("sweep: exploration L_T", accel.sweep.exploration, cpu.sweep.exploration))
    checks.append(equal_check("sweep: checkpoints", accel.sweep.checkpoints, cpu.sweep.checkpoints))
    checks += pulls_checks("sweep", accel.sweep, cpu.sweep)
    checks.append(mean_check("sweep: mean regret per grid point", accel.sweep.regret, cpu.sweep.regret))
    checks.append(equal_check("engine UCB1: checkpoints", accel.engine.checkpoints, cpu.engine.checkpoints))
    checks += pulls_checks("engine UCB1", accel.engine, cpu.engine)
    checks.append(mean_check("engine UCB1: mean regret", accel.engine.regret, cpu.engine.regret))
    checks.append(equal_check("frontier: exploration L_T", accel.frontier_exploration,
                              cpu.frontier_exploration))
    checks.append(mean_check("frontier: mean regret per (alpha, member, T)", accel.frontier_regret,
                             cpu.frontier_regret))
    return checks


def check_against_cpu(size: Size, config: frontier.TFrontierConfig, frontier_runs=None) -> list[Check]:
    """The checks against the CPU path; ``frontier_runs`` (the frontier part's runs) are compared where
    given, else the frontier's first seeds are run on the accelerator here."""
    cpu = cpu_devices()
    if cpu is None:
        return [Check("CPU backend visible", False, "jax.devices('cpu') failed: run without JAX_PLATFORMS=cuda")]
    return compare(compute_side(size, config, frontier_runs=frontier_runs), compute_side(size, config, cpu))


def on_the_cpu_alone() -> bool:
    """Whether the "accelerator" is the CPU: both sides of the checks are then the same device."""
    return jax.default_backend() == "cpu"
