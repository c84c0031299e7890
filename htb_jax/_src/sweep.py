"""AdaR-ETC regret sweeps over ``(alpha, q)`` grids and horizons: run, tabulate, plot.

A sweep is one call of :func:`htb_jax.simulate` per chunk of seeds (the same
compiled program each time; seed ``s`` draws from ``fold_in(key, s)`` alone,
so the chunking never changes a number), reported as a table of mean regret
with standard errors and a log-log figure of regret against the horizon.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.adar_etc import AdaRETC
from htb_jax._src.distributions import Pareto
from htb_jax._src.instances import equal_gap
from htb_jax._src.simulate import simulate
from htb_jax._src.validation import check_integer, check_interval


@dataclasses.dataclass(frozen=True)
class SweepConfig:
    """An AdaR-ETC sweep on an equal-gap Pareto instance.

    Attributes:
      num_arms: ``K``.
      gap: ``Delta`` of the equal-gap instance (means ``(Delta, 0, ..., 0)``).
      pareto_shape: tail index of the Pareto arms (``E|X|^(1+eps)`` is finite
        iff ``1 + eps < pareto_shape``).
      eps: tail exponent the schedules are designed for.
      alphas: grid of ``alpha`` values.
      qs: grid of ``q`` values.
      horizons: horizons ``T``.
      num_seeds: seeds per grid point.
      seed_chunk: seeds per call of the compiled program (progress granularity).
      key: integer seed of the root ``jax.random.key``.
    """

    num_arms: int = 10
    gap: float = 0.1
    pareto_shape: float = 2.5
    eps: float = 1.0
    alphas: tuple[float, ...] = (2 / 3, 0.75, 0.85, 0.95)
    qs: tuple[float, ...] = (0.0, 1 / 3)
    horizons: tuple[int, ...] = (10**3, 10**4, 10**5, 10**6)
    num_seeds: int = 200
    seed_chunk: int = 50
    key: int = 0

    def validate(self) -> None:
        check_integer("num_arms", self.num_arms, 2)
        check_interval("gap", self.gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval(
            "pareto_shape", self.pareto_shape, 1.0 + self.eps, np.inf, low_closed=False, high_closed=False,
            where=f"(the arms need a finite (1+eps)-moment for eps={self.eps:g})",
        )
        check_integer("num_seeds", self.num_seeds, 2)
        check_integer("seed_chunk", self.seed_chunk, 1)
        check_integer("horizons", list(self.horizons), 1, maximum=10**18)
        AdaRETC(eps=self.eps, alpha=np.asarray(self.alphas)[:, None], q=np.asarray(self.qs)[None, :])

    def policy(self) -> AdaRETC:
        return AdaRETC(
            eps=self.eps,
            alpha=jnp.asarray(self.alphas, jnp.float64)[:, None],
            q=jnp.asarray(self.qs, jnp.float64)[None, :],
        )

    def instance(self) -> Pareto:
        return equal_gap(Pareto(loc=0.0, shape=self.pareto_shape), self.num_arms, self.gap)


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """Per-seed regrets of a sweep, f64[len(alphas), len(qs), len(horizons), num_seeds]."""

    config: SweepConfig
    regret: np.ndarray
    exploration: np.ndarray  # i64[A, Q, H]
    best_arm_rate: np.ndarray  # f64[A, Q, H], fraction of seeds committing to arm 0
    seconds: float


def progress_bar(done: int, total: int, started: float, stream) -> None:
    """A progress bar over seed chunks (one line per update when not on a terminal)."""
    elapsed = time.perf_counter() - started
    eta = elapsed / done * (total - done) if done else float("nan")
    width = 30
    filled = int(width * done / total)
    line = (
        f"  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} seeds  "
        f"{elapsed:6.1f}s elapsed  ETA {eta:5.1f}s"
    )
    tty = getattr(stream, "isatty", lambda: False)()
    stream.write(("\r" + line) if tty else (line + "\n"))
    stream.flush()


def run_sweep(
    config: SweepConfig,
    progress: Callable[[int, int, float, object], None] | None = progress_bar,
    stream=None,
) -> SweepResult:
    """Runs the sweep, chunk of seeds by chunk of seeds, showing progress on ``stream`` (stderr)."""
    config.validate()
    stream = sys.stderr if stream is None else stream
    key = jax.random.key(config.key)
    policy, instance = config.policy(), config.instance()
    started = time.perf_counter()
    regrets, committed = [], []
    exploration = None
    for first in range(0, config.num_seeds, config.seed_chunk):
        count = min(config.seed_chunk, config.num_seeds - first)
        out = simulate(key, policy, instance, list(config.horizons), count, first_seed=first)
        regrets.append(np.asarray(out.regret))
        committed.append(np.asarray(out.committed))
        exploration = np.asarray(out.exploration[..., 0])
        if progress is not None:
            progress(first + count, config.num_seeds, started, stream)
    if progress is not None and getattr(stream, "isatty", lambda: False)():
        stream.write("\n")
    regret = np.concatenate(regrets, axis=-1)
    best = np.mean(np.concatenate(committed, axis=-1) == 0, axis=-1)
    return SweepResult(config, regret, exploration, best, time.perf_counter() - started)


def table_rows(result: SweepResult) -> list[dict]:
    """One row per (alpha, q, T): exploration length, mean regret, standard error, commit rate.

    ``best_arm_rate`` is NaN where ``L_T = T`` (no commit).
    """
    c = result.config
    rows = []
    for a, alpha in enumerate(c.alphas):
        for b, q in enumerate(c.qs):
            for h, horizon in enumerate(c.horizons):
                r = result.regret[a, b, h]
                explored = int(result.exploration[a, b, h])
                rows.append(
                    dict(
                        alpha=float(alpha),
                        q=float(q),
                        beta=(1.0 - alpha) * (1.0 + c.eps) / c.eps,
                        horizon=int(horizon),
                        exploration=explored,
                        mean_regret=float(np.mean(r)),
                        stderr=float(np.std(r, ddof=1) / math.sqrt(r.size)),
                        best_arm_rate=float(result.best_arm_rate[a, b, h]) if explored < horizon else math.nan,
                    )
                )
    return rows


def format_table(rows: Sequence[dict]) -> str:
    """A markdown table of :func:`table_rows`."""
    head = (
        "| alpha | q | beta | T | L_T | mean regret | std. err. | P(commit to best) |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )

    def rate(r):
        return "no commit" if math.isnan(r["best_arm_rate"]) else f"{r['best_arm_rate']:.3f}"

    def two_digits(x):
        return f"{float(f'{x:.2g}'):g}"

    lines = [
        f"| {r['alpha']:.3f} | {r['q']:.3f} | {r['beta']:.3f} | {r['horizon']:.0e} | {r['exploration']} "
        f"| {r['mean_regret']:.4g} | {two_digits(r['stderr'])} | {rate(r)} |"
        for r in rows
    ]
    return head + "\n".join(lines)


def write_csv(rows: Sequence[dict], path) -> None:
    keys = list(rows[0])
    with open(path, "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(repr(r[k]) if isinstance(r[k], float) else str(r[k]) for k in keys) + "\n")


def plot(result: SweepResult, path) -> None:
    """Log-log regret against ``T`` per ``(alpha, q)``, mean with a standard-error band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = result.config
    horizons = np.asarray(c.horizons, float)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(c.alphas)))
    styles = ["-", "--", ":", "-."]
    for a, alpha in enumerate(c.alphas):
        for b, q in enumerate(c.qs):
            r = result.regret[a, b]
            mean = r.mean(-1)
            se = r.std(-1, ddof=1) / math.sqrt(r.shape[-1])
            label = f"alpha={alpha:.3g}, q={q:.3g}"
            ax.plot(horizons, mean, styles[b % 4], color=colors[a], marker="o", ms=3, label=label)
            ax.fill_between(horizons, np.maximum(mean - se, 1e-9), mean + se, color=colors[a], alpha=0.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("mean regret (± 1 s.e.)")
    ax.set_title(
        f"AdaR-ETC, eps={c.eps:g}: K={c.num_arms} Pareto({c.pareto_shape:g}) arms, gap {c.gap:g}, "
        f"{c.num_seeds} seeds",
        fontsize=9,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
