"""Tuned ``(alpha, q)`` on heavy-tailed instances against simulate's grid argmin of the same objective.

``tune_schedule(proxy="smoothed", tune_q=True, polish=129)`` minimises one
instance's mean regret, ``log R`` (``lam = 0``; the family is the instance
itself), on seven Student-t(2.4) arms (means 0.25, 0, .., 0, scale 1,
``eps = 1``) and on three equal-gap Pareto(1.5) arms (gap 0.25, ``eps = 0.4``,
the largest tenth below the tail's 0.5), per-pull sampler, 256 seeds, ``T = 10^4, 10^5`` and
``2 x 10^5``: Adam(0.1) x 100 steps from two starts (``alpha`` at 0.02 and
0.97 of its range, ``q`` in the middle of its), widths 0.05 -> 0.002, then
the polish (129 schedules across the whole range of the exploration length,
129 alphas over the best +- 0.05, then the lengths of the teeth around the best
where a tooth's minimum sits: 6 teeth of 20 at K = 7, 16 of 8 at K = 3).  Against it, the argmin of the same
objective computed by ``simulate`` on a grid of 60 alphas x 9 q, same seeds.
The schedule acts only through the exploration length ``L``, so many
``(alpha, q)`` share an ``L`` and its objective: the comparison is of the
objective and of ``L``.  Writes ``experiments/tune_heavy_tails/``
(``tuned_vs_grid.csv``, ``table.md``, ``tune_heavy_tails.png``).

    python experiments/tune_heavy_tails.py            # tune, simulate the grid, tabulate and plot
    python experiments/tune_heavy_tails.py --replot   # the figure again from tuned_vs_grid.csv in --out
"""

from __future__ import annotations

import csv
import pathlib
import sys
import time

import command_line  # the experiments' shared command line
import jax
import jax.numpy as jnp
import numpy as np
import optax

import htb_jax as htb
from htb_jax import theory

OUT = pathlib.Path(__file__).resolve().parent / "tune_heavy_tails"
KEY = 7
SEEDS = 256
HORIZONS = (10**4, 10**5, 2 * 10**5)
STEPS = 100
STARTS = (0.02, 0.97)  # initial alpha, as a fraction of the admissible range
POLISH = 129
GRID_ALPHAS, GRID_QS = 60, 9
CASES = (  # name, instance (batch (K,)), eps
    ("Student-t(2.4), K=7", lambda: htb.StudentT(loc=jnp.array([0.25] + [0.0] * 6), df=2.4, scale=1.0), 1.0),
    ("Pareto(1.5), K=3", lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.25), 0.4),
)


def tuned(make, eps, horizon) -> dict:
    """``tune_schedule`` from the two starts, the lower final objective kept (``seconds``: the tuning's)."""
    key = jax.random.key(KEY)
    instance = make()
    family = jax.tree.map(lambda p: p[None], instance.broadcast())  # the instance itself, batch (1, K)
    lo, q_max = float(theory.balanced_alpha(eps)), eps / (1 + 2 * eps)
    run = jax.jit(htb.tune_schedule, static_argnames=("eps", "horizon", "num_seeds", "num_steps", "optimizer",
                                                         "tune_q", "proxy", "sampler", "polish"))
    started = time.perf_counter()
    res = [run(key, eps=eps, family=family, reference=instance, horizon=horizon, num_seeds=SEEDS, lam=0.0,
               num_steps=STEPS, optimizer=optax.adam(0.1), init_alpha=lo + (1 - lo) * start, init_q=q_max / 2,
               tune_q=True, proxy="smoothed", sampler="per_pull", polish=POLISH)
           for start in STARTS]
    pick = int(np.argmin([float(r.final_objective) for r in res]))
    return dict(tuned_alpha=float(res[pick].alpha), tuned_q=float(res[pick].q),
                tuned_objective=float(res[pick].final_objective), seconds=time.perf_counter() - started)


def against_grid(name, make, eps, horizon, tuned: dict) -> tuple[dict, dict]:
    """``simulate`` on the grid and at the ``tuned`` schedule: the CSV's row and the grid's objective
    against ``L`` (the figure's)."""
    key = jax.random.key(KEY)
    instance = make()
    k = instance.batch_shape[-1]
    lo, q_max = float(theory.balanced_alpha(eps)), eps / (1 + 2 * eps)
    alphas, qs = np.meshgrid(lo + (1 - lo) * np.linspace(0.0, 0.995, GRID_ALPHAS),
                             np.linspace(0.0, q_max, GRID_QS), indexing="ij")
    policy = htb.AdaRETC(eps=eps, alpha=np.append(alphas.ravel(), tuned["tuned_alpha"]),
                         q=np.append(qs.ravel(), tuned["tuned_q"]))
    regret = np.asarray(htb.simulate(key, policy, instance, horizon, SEEDS, sampler="per_pull").regret)  # [G+1, S]
    objective = np.log(regret.mean(-1))
    lengths = np.asarray(policy.exploration_length(k, horizon))
    best = int(np.argmin(objective[:-1]))
    row = dict(
        instance=name, eps=eps, T=horizon, tuned_alpha=tuned["tuned_alpha"], tuned_q=tuned["tuned_q"],
        tuned_length=int(lengths[-1]), tuned_objective=tuned["tuned_objective"],
        tuned_objective_simulate=float(objective[-1]), grid_alpha=float(alphas.ravel()[best]),
        grid_q=float(qs.ravel()[best]), grid_length=int(lengths[best]), grid_objective=float(objective[best]),
        # standard error of log(mean R) at the grid's argmin (delta method)
        objective_stderr=float(regret[best].std(ddof=1) / np.sqrt(SEEDS) / regret[best].mean()),
        seconds=tuned["seconds"],
    )
    return row, dict(lengths=lengths[:-1], objective=objective[:-1])


def table_md(rows, seconds) -> str:
    out = [
        f"tune_schedule(proxy='smoothed', lam = 0: log of the instance's mean regret, tune_q=True, polish={POLISH}) "
        f"against the argmin of the same objective computed by simulate on {GRID_ALPHAS} alphas x {GRID_QS} q "
        f"({SEEDS} seeds, the same key, per-pull sampler; Adam(0.1) x {STEPS} steps from two starts, widths "
        "0.05 -> 0.002). L: the exploration length, through which alone the schedule acts; J = log(mean regret); "
        "std. err.: of J at the grid's argmin.",
        "",
        "| instance | eps | T | tuned (alpha, q) | L tuned | grid argmin (alpha, q) | L grid | J tuned (exact) "
        "| J grid min | J tuned - J grid | std. err. | seconds |",
        "|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['instance']} | {r['eps']:g} | {r['T']:.0e} | ({r['tuned_alpha']:.4f}, {r['tuned_q']:.4f}) "
            f"| {r['tuned_length']} | ({r['grid_alpha']:.4f}, {r['grid_q']:.4f}) | {r['grid_length']} "
            f"| {r['tuned_objective']:.4f} | {r['grid_objective']:.4f} "
            f"| {r['tuned_objective'] - r['grid_objective']:+.4f} | {r['objective_stderr']:.4f} | {r['seconds']:.0f} |"
        )
    out += ["", f"Wall time: {seconds:.0f} s."]
    return "\n".join(out)


def plot(rows, curves, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(len(CASES), len(HORIZONS), figsize=(12.0, 6.5), squeeze=False)
    for r in rows:
        i = [c[0] for c in CASES].index(r["instance"])
        ax = axes[i, HORIZONS.index(r["T"])]
        c = curves[(r["instance"], r["T"])]
        ax.plot(c["lengths"], c["objective"], ".", ms=3, color="0.5", label="simulate, 60 x 9 grid")
        ax.plot([r["tuned_length"]], [r["tuned_objective"]], "r*", ms=11, label="tuned")
        ax.set_xscale("log")
        # plain numbers (1800, 2000): where L spans less than a decade the minor ticks are labelled too, and
        # the default 1.8x10^3, 2x10^3, ... run into each other
        for set_formatter in (ax.xaxis.set_major_formatter, ax.xaxis.set_minor_formatter):
            set_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False))
        ax.set_title(f"{r['instance']}, T = {r['T']:.0e}", fontsize=9)
        ax.set_xlabel("exploration length L")
        ax.set_ylabel("log mean regret")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args_parser.add_argument("--replot", action="store_true",
                             help="draw the figure again from tuned_vs_grid.csv in --out: the grid is simulated "
                             "again (about 30 s on 2 cores), the tuning is not re-run")
    args = args_parser.parse_args()
    out = args.out
    if args.replot:
        command_line.require_recorded(args_parser, args, "--replot", "tuned_vs_grid.csv")
        replot(out)
        return
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    rows, curves = [], {}
    for name, make, eps in CASES:
        for horizon in HORIZONS:
            row, curve = against_grid(name, make, eps, horizon, tuned(make, eps, horizon))
            rows.append(row)
            curves[(name, horizon)] = curve
            print(f"{name}, T={horizon:.0e}: {row['seconds']:.0f} s", flush=True)
    htb.frontier.write_csv(rows, out / "tuned_vs_grid.csv")
    plot(rows, curves, out / "tune_heavy_tails.png")
    table = table_md(rows, time.perf_counter() - started)
    (out / "table.md").write_text(table + "\n")
    print(table)


def replot(out: pathlib.Path) -> None:
    """The figure from ``tuned_vs_grid.csv``'s tuned schedules and the grid simulated again, which must give
    the CSV's grid argmin and objectives (the same key and seeds)."""
    with open(out / "tuned_vs_grid.csv", newline="") as f:
        rows = [{k: v if k == "instance" else float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    curves = {}
    for r in rows:
        make, eps = next((make, eps) for name, make, eps in CASES if name == r["instance"])
        again, curves[(r["instance"], r["T"])] = against_grid(r["instance"], make, eps, int(r["T"]), r)
        differ = [k for k, v in again.items() if k != "instance" and not np.isclose(v, r[k], rtol=1e-9, atol=0)]
        if differ:
            sys.exit(f"--replot: the grid simulated again differs from tuned_vs_grid.csv in {', '.join(differ)} "
                     f"({r['instance']}, T = {r['T']:.0e}); the figure is not redrawn")
    plot(rows, curves, out / "tune_heavy_tails.png")


if __name__ == "__main__":
    main()
