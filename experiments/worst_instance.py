"""The worst instance found by gradient ascent, against the worst case of a grid.

Section 5's normalised regret ``R_T(nu) / U_eps(nu)`` is a supremum over
instances; the T-frontier experiments take it over a grid of instances.
``smoothed_regret`` also differentiates with respect to an instance's
parameters (common-random-number central differences at a relative
half-width), so the worst instance can be searched by gradient instead.
For AdaR-ETC at ``alpha*(1) + 0.01`` (``eps = 1``, ``q = 0``, ``K = 2``,
256 seeds, order-statistic sampler) and ``T = 10^4 .. 10^8``, Adam ascends
``log R / U_eps`` in the log of one parameter:

* Theorem 1's pair (``lower_bound_pair``: arm 0 ``Dirac(1)``, arm 1 a spike
  ``2 / beta`` with probability ``beta``) in the spike probability ``beta``
  (the gap is no parameter here: ``R / U`` does not depend on it);
* two Gaussian arms of unit variance in their gap ``Delta``.

Each ascent runs 60 steps of ``optax.adam(0.1)`` from each of four starts
spread over the range (at 0.1, 0.37, 0.63 and 0.9 of it in log: the ratio has
a cliff just above its maximum and rises again beyond it, and 60 steps of 0.1
cross 6 of the 13 log units of the spike range), with the relative width
shrinking from 0.3 to 0.02; the value recorded at each step is
``simulate``'s exact mean on the seeds, and the best iterate of all starts is
kept.  It is compared with the argmax of
the same ratio computed by ``simulate`` on 200 log-spaced values of the
parameter, with the same seeds.  Writes ``experiments/worst_instance/``
(``worst_instance.csv``, ``table.md``, ``worst_instance.png``).

    python experiments/worst_instance.py
"""

from __future__ import annotations

import pathlib
import time

import command_line  # the experiments' shared command line
import jax
import jax.numpy as jnp
import numpy as np
import optax

import htb_jax as htb
from htb_jax import theory

OUT = pathlib.Path(__file__).resolve().parent / "worst_instance"
KEY = 2026
EPS = 1.0
SEEDS = 256
HORIZONS = (10**4, 10**5, 10**6, 10**7, 10**8)
STEPS = 60
LEARNING_RATE = 0.1
WIDTHS = (0.3, 0.02)  # relative half-width of the differences, first and last step
GRID = 200
STARTS = (0.1, 0.37, 0.63, 0.9)  # fractions of the log range
ALPHA = float(theory.balanced_alpha(EPS)) + 0.01


def _two_point(value):
    return htb.lower_bound_pair(2, 1.0, value)[1]


def _gaussian(value):
    return htb.equal_gap(htb.Gaussian(loc=0.0, scale=1.0), num_arms=2, gap=value)


# name, instance of the parameter, its range (the ascent's box and the grid's span)
FAMILIES = (
    ("Theorem 1 pair, spike probability beta", _two_point, (1e-6, 0.5)),
    ("two Gaussian arms (unit variance), gap", _gaussian, (1e-4, 10.0)),
)


def log_ratio(key, make, horizon, value, width):
    """``log(R_T / U_eps)`` at the parameter ``value``: simulate's exact mean regret on the seeds, with
    smoothed_regret's central-difference gradient in the parameter (relative half-width ``width``)."""
    policy = htb.AdaRETC(eps=EPS, alpha=ALPHA, q=0.0)
    instance = make(value)
    regret = htb.smoothed_regret(key, policy, instance, horizon, SEEDS, 1e-3, instance_width=width,
                                 sampler="order_statistic")
    return jnp.log(regret) - jnp.log(htb.intrinsic_scale(instance, EPS))


def ascend(key, make, horizon, bounds):
    """The best iterate of Adam on ``log_ratio`` in ``log value`` from each start in ``bounds``."""
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    step = jax.jit(jax.value_and_grad(lambda z, w: log_ratio(key, make, horizon, jnp.exp(z), w)))
    optimizer = optax.adam(LEARNING_RATE)
    best_value, best_param = -np.inf, None
    for start in (lo + f * (hi - lo) for f in STARTS):
        z = jnp.asarray(start, jnp.float64)
        state = optimizer.init(z)
        for i in range(STEPS):
            width = WIDTHS[0] * (WIDTHS[1] / WIDTHS[0]) ** (i / (STEPS - 1))
            value, grad = step(z, width)
            if float(value) > best_value:
                best_value, best_param = float(value), float(np.exp(z))
            updates, state = optimizer.update(-grad, state, z)
            z = jnp.clip(optax.apply_updates(z, updates), lo, hi)
    return best_param, best_value


def grid_worst(key, make, horizon, bounds):
    """The grid of parameters and ``log(R_T / U_eps)`` on it, computed by simulate."""
    grid = np.exp(np.linspace(np.log(bounds[0]), np.log(bounds[1]), GRID))
    instance = make(jnp.asarray(grid))
    regret = np.asarray(htb.simulate(key, htb.AdaRETC(eps=EPS, alpha=ALPHA, q=0.0), instance, horizon, SEEDS,
                                     sampler="order_statistic").regret)  # [G, S]
    ratio = regret / np.asarray(htb.intrinsic_scale(instance, EPS))[:, None]
    return grid, np.log(regret.mean(-1)) - np.log(np.asarray(htb.intrinsic_scale(instance, EPS))), ratio


def run() -> tuple[list[dict], dict]:
    key = jax.random.key(KEY)
    rows, curves = [], {}
    for name, make, bounds in FAMILIES:
        for horizon in HORIZONS:
            started = time.perf_counter()
            param, value = ascend(key, make, horizon, bounds)
            seconds = time.perf_counter() - started
            grid, values, ratio = grid_worst(key, make, horizon, bounds)
            best = int(np.argmax(values))
            log_step = (np.log(bounds[1]) - np.log(bounds[0])) / (GRID - 1)
            # standard error of log(mean R / U) at the grid's worst member (delta method)
            stderr = ratio[best].std(ddof=1) / np.sqrt(SEEDS) / ratio[best].mean()
            rows.append(dict(
                family=name, T=horizon, ascent_param=param, ascent_log_ratio=value, grid_param=float(grid[best]),
                grid_log_ratio=float(values[best]), log_ratio_stderr=float(stderr),
                grid_steps_off=float((np.log(param) - np.log(grid[best])) / log_step), seconds=seconds,
            ))
            curves[(name, horizon)] = (grid, values, param, value)
            print(f"{name}, T={horizon:.0e}: {seconds:.0f} s", flush=True)
    return rows, curves


def table_md(rows, seconds) -> str:
    out = [
        f"AdaR-ETC(eps = 1, alpha = alpha*(1) + 0.01 = {ALPHA:.4f}, q = 0), K = 2, {SEEDS} seeds, order-statistic "
        f"sampler. 'ascent': the best iterate of Adam({LEARNING_RATE}) x {STEPS} steps on log(R / U_eps) in the log of "
        f"the parameter, from {len(STARTS)} starts spread over its range, with smoothed_regret's instance gradient (relative width "
        f"{WIDTHS[0]} -> {WIDTHS[1]}); 'grid': the argmax of the same ratio computed by simulate on {GRID} log-spaced "
        "values; 'off': (log ascent - log grid argmax) / grid step; std. err.: of log(R / U) at the grid's argmax.",
        "",
        "| instance family | T | ascent: worst parameter | grid argmax | off | log(R/U) ascent (exact) "
        "| log(R/U) grid max | std. err. | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['family']} | {r['T']:.0e} | {r['ascent_param']:.4g} | {r['grid_param']:.4g} "
            f"| {r['grid_steps_off']:+.1f} | {r['ascent_log_ratio']:.4f} | {r['grid_log_ratio']:.4f} "
            f"| {r['log_ratio_stderr']:.4f} | {r['seconds']:.0f} |"
        )
    out += ["", f"Wall time: {seconds:.0f} s."]
    return "\n".join(out)


def plot(curves, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(FAMILIES), figsize=(10.0, 4.0))
    colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(HORIZONS)))
    for ax, (name, _, _) in zip(axes, FAMILIES, strict=True):
        for horizon, color in zip(HORIZONS, colors, strict=True):
            grid, values, param, value = curves[(name, horizon)]
            ax.plot(grid, values, "-", color=color, lw=1, label=f"simulate, T = {horizon:.0e}")
            ax.plot([param], [value], "o", mfc="none", ms=9, color=color)
        ax.set_xscale("log")
        ax.set_xlabel(name.split(", ")[-1])
        ax.set_ylabel("log(R_T / U_eps)")
        ax.set_title(name.split(",")[0] + " (circles: gradient ascent)", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args = args_parser.parse_args()
    out = args.out
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    rows, curves = run()
    htb.frontier.write_csv(rows, out / "worst_instance.csv")
    plot(curves, out / "worst_instance.png")
    table = table_md(rows, time.perf_counter() - started)
    (out / "table.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
