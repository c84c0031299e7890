"""Tuned AdaR-ETC schedules: a lam sweep of tune_schedule next to Theorem 1's line and the grid sweep.

For eps in {1, 0.5} and T = 10^5 (K = 2, Theorem 1's two-point family with
spike probabilities on a quarter-decade grid 1e-3..0.5, reference instance the
fixed spike 0.9, as in the frontier experiment), minimise

    lam log smax_f R_f / U_eps(nu_f) + (1 - lam) log R_ref

over alpha (q = 0, as in the frontier experiment: with K = 2, q and alpha act
on the schedule only through K^q T^beta) with Adam on the Monte-Carlo regret
proxy, for a sweep of lam (one vmapped program per eps), and compare:

* the tuned alpha with the argmin of the same proxy objective on an alpha grid
  (the optimiser's accuracy on this piecewise-smooth objective);
* the tuned alpha at lam = 1 (worst case alone) and at the balanced weight
  lam_bal(eps) = (1+eps)/(1+2eps) with alpha*(eps) = (1+eps)/(1+2eps);
* the finite-T slopes of the two terms in log L, which decide where the
  scalarised optimum sits (see docs/guides/proxies-tuning.md);
* the tuned schedules' (d, c) = (alpha, beta_alpha) -- the theoretical
  exponents at the tuned alpha -- on Theorem 1's line with the grid-swept
  measured points of ``experiments/t_frontier/frontier.csv``.

Also: the Monte-Carlo proxy with rounding restored against ``simulate`` as
tau -> 0, and the analytic proxy's tuned alpha.

Writes ``experiments/tune_frontier/{tune_frontier.csv, tau_convergence.csv,
tune_frontier.png, table.md}``.

**Smoothed proxy** (``--smoothed``, ``htb.smoothed_regret``,
``tune_schedule(proxy="smoothed")``): writes ``gradients.csv`` (the
pathwise proxy, the block-scale envelope and the smoothed regret against
common-random-number central differences of ``simulate`` at ``h`` in
{1e-3, 1e-2}, on Student-t(2.4), Pareto(1.5) and two-point instances),
``tuned_vs_grid.csv`` (the tuned alpha against the argmin of the same
objective computed by ``simulate`` on a grid, ``T = 10^4 .. 10^7``),
``alpha_vs_T.png`` and ``smoothed.md``.  ``--balanced`` does the tuning part at ``lam =
alpha*(1)`` (``tuned_vs_grid_balanced.csv``, ``alpha_vs_T_balanced.png``, ``balanced.md``);
``--trend`` at weights just above it, ``T = 10^4 .. 10^18``, on a family reaching spike
probability 1e-16, with the finite-T indifference weight ``lam_T`` measured at each ``T``
(``tuned_vs_grid_trend.csv``, ``alpha_vs_T_trend.png``, ``trend.md``).  Those three parts are in
``tune_smoothed.py``.

    python experiments/tune_frontier.py             # both parts
    python experiments/tune_frontier.py --smoothed  # the smoothed proxy only
    python experiments/tune_frontier.py --balanced  # tuned alpha against T at lam = alpha*(1)
    python experiments/tune_frontier.py --trend     # tuned alpha against T = 1e4..1e18 near lam_bal
    python experiments/tune_frontier.py --smoothed --tuning-only  # re-run the tuning, keep --out's gradients.csv
    python experiments/tune_frontier.py --replot    # tune_frontier.png again from tune_frontier.csv in --out
"""

from __future__ import annotations

import csv
import time

import command_line  # the experiments' shared command line
import jax
import jax.numpy as jnp
import numpy as np
import optax
import tune_smoothed  # the smoothed proxy's parts
from tune_settings import FIXED_SPIKE, KEY, OUT, ROOT, SIGMA, SPIKES, STARTS, STEPS

import htb_jax as htb
from htb_jax import theory

HORIZON = 10**5
NUM_SEEDS = 16
TAU = 0.1  # commit temperature, in reward units (gap 1)
LEARNING_RATE = 0.05
EPS_VALUES = (1.0, 0.5)


def lam_grid(eps: float) -> np.ndarray:
    return np.unique(np.round([0.0, 0.25, 0.5, theory.balanced_alpha(eps), 0.75, 0.9, 1.0], 6))


def objective_terms(alpha, eps, family_table, reference_table, scale, tau=TAU):
    """Proxy worst case (smooth and hard) and reference regret for a grid of alpha (q = 0)."""
    policy = htb.AdaRETC(eps=eps, alpha=jnp.asarray(alpha), q=0.0)
    fam = jnp.mean(htb.proxy_regrets(policy, family_table, HORIZON, tau), axis=-1) / scale  # [G, F]
    ref = jnp.mean(htb.proxy_regrets(policy, reference_table, HORIZON, tau), axis=-1)  # [G]
    smooth = htb.smooth_max_log(jnp.log(fam), SIGMA)
    return np.asarray(smooth), np.asarray(jnp.log(jnp.max(fam, axis=-1))), np.asarray(jnp.log(ref))


def exploration(alpha, eps):
    return np.asarray(htb.AdaRETC(eps=eps, alpha=jnp.asarray(alpha), q=0.0).exploration_length(2, HORIZON), float)


def run_eps(eps: float, family, reference):
    key = jax.random.key(KEY)
    lams = lam_grid(eps)
    started = time.perf_counter()
    lo = theory.balanced_alpha(eps)
    runs = [
        htb.tune_schedule(
            key, eps, family, reference, HORIZON, NUM_SEEDS, lam=jnp.asarray(lams), tau=TAU, sigma=SIGMA,
            num_steps=STEPS, optimizer=optax.adam(LEARNING_RATE), init_alpha=lo + (1 - lo) * start,
            init_q=0.0, tune_q=False, proxy="monte_carlo",
        )
        for start in STARTS
    ]
    finals = np.stack([np.asarray(r.objective[:, -1]) for r in runs])  # [starts, lams]
    pick = np.argmin(finals, axis=0)
    res = jax.tree.map(lambda *xs: np.stack(xs)[pick, np.arange(len(lams))], *runs)
    alpha = np.asarray(res.alpha)
    seconds = time.perf_counter() - started
    analytic = htb.tune_schedule(
        key, eps, family, reference, HORIZON, NUM_SEEDS, lam=jnp.asarray(lams), num_steps=STEPS,
        optimizer=optax.adam(LEARNING_RATE), init_q=0.0, tune_q=False, proxy="analytic",
    )
    # The same objective on an alpha grid: where the optimiser should land.
    family_table = htb.proxy_table(key, family, HORIZON, NUM_SEEDS, eps=eps)
    reference_table = htb.proxy_table(key, reference, HORIZON, NUM_SEEDS, eps=eps)
    scale = htb.intrinsic_scale(family, eps)
    grid = lo + (1.0 - lo) * np.linspace(1e-6, 1.0 - 1e-3, 81)
    log_w, log_w_hard, log_r = objective_terms(grid, eps, family_table, reference_table, scale)
    grid_best = grid[np.argmin(lams[:, None] * log_w[None] + (1 - lams[:, None]) * log_r[None], axis=1)]
    # Finite-T slopes in log L over the admissible range (least squares), vs -eps/(1+eps) and 1.
    log_l = np.log(exploration(grid, eps))
    slope_w = float(np.polyfit(log_l, log_w, 1)[0])
    slope_r = float(np.polyfit(log_l, log_r, 1)[0])
    blocks = int(htb.num_blocks(2, HORIZON))
    rows = []
    for i, lam in enumerate(lams):
        a = float(alpha[i])
        length = float(exploration(a, eps))
        rows.append(dict(
            eps=eps, lam=float(lam), alpha=a, start=STARTS[int(pick[i])], grid_alpha=float(grid_best[i]),
            analytic_alpha=float(analytic.alpha[i]), d=a, c=float(theory.beta_alpha(a, eps)),
            exploration=length, block_share=2 * blocks / length,
            worst_case=float(res.worst_case[i]), reference=float(res.reference[i]),
            objective_start=float(res.objective[i, 0]), objective_end=float(res.objective[i, -1]),
        ))
    summary = dict(eps=eps, alpha_star=lo, lam_bal=lo, slope_w=slope_w, slope_r=slope_r,
                   lam_t=slope_r / (slope_r - slope_w), seconds=seconds, blocks=blocks,
                   share_at_star=2 * blocks / float(exploration(lo + 1e-9, eps)))
    return rows, summary


def tau_convergence(eps: float, alpha: float, family, reference) -> list[dict]:
    """Rounded proxy vs simulate(per_pull) regret, per seed, as tau -> 0 at the tuned schedule."""
    key = jax.random.key(KEY)
    policy = htb.AdaRETC(eps=eps, alpha=alpha, q=0.0)
    rows = []
    for name, inst in (("family", family), ("reference", reference)):
        exact = np.asarray(htb.simulate(key, policy, inst, HORIZON, NUM_SEEDS, sampler="per_pull").regret)
        table = htb.proxy_table(key, inst, HORIZON, NUM_SEEDS, eps=eps)
        for tau in (1.0, 0.3, 0.1, 0.03, 0.01, 1e-3, 0.0):
            for rounding in (False, True):
                got = np.asarray(htb.proxy_regrets(policy, table, HORIZON, tau, rounding=rounding))
                err = np.abs(got - exact)
                rows.append(dict(eps=eps, alpha=alpha, instances=name, tau=tau, rounding=rounding,
                                 mean_abs_error=float(err.mean()), max_abs_error=float(err.max()),
                                 mean_exact_regret=float(exact.mean())))
    return rows


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid_rows = list(csv.DictReader(open(ROOT / "t_frontier" / "frontier.csv")))
    fig, axes = plt.subplots(1, len(EPS_VALUES), figsize=(5.0 * len(EPS_VALUES), 4.4), squeeze=False)
    for ax, eps in zip(axes[0], EPS_VALUES, strict=True):
        htb.frontier.frontier_panel(ax, eps, f"eps = {eps:g}")
        pts = [r for r in grid_rows if float(r["eps"]) == eps]
        ax.plot([float(r["d"]) for r in pts], [float(r["c"]) for r in pts], "s", color="0.5", ms=6,
                label="grid sweep, measured (t_frontier)")
        mine = [r for r in rows if r["eps"] == eps]
        sc = ax.scatter([r["d"] for r in mine], [r["c"] for r in mine], c=[r["lam"] for r in mine],
                        cmap="viridis", vmin=0, vmax=1, marker="o", s=40, zorder=3,
                        label="tuned at T=1e5 (theory exponents at tuned alpha)")
        star = theory.balanced_alpha(eps)
        ax.plot(star, star, "r*", ms=12, label="alpha*(eps)")
        fig.colorbar(sc, ax=ax, label="lam")
    fig.suptitle(f"AdaR-ETC schedules tuned with Adam on the regret proxy (T = {HORIZON:.0e}, K = 2, "
                 f"{NUM_SEEDS} seeds)", fontsize=10)
    # One legend below the panels: inside either, it covered the frontier's line or its points.
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)


def table_md(rows, summaries, tau_rows) -> str:
    out = [
        f"T = {HORIZON:.0e}, K = 2, {NUM_SEEDS} seeds (common to all iterations), tau = {TAU}, "
        f"smooth max sigma = {SIGMA}, Adam({LEARNING_RATE}) x {STEPS} steps from two starts (alpha at {STARTS} of the admissible "
        "range; the start whose last step's objective J is lower kept), q = 0. 'grid argmin': the same proxy objective minimised on 81 alphas. "
        "(d, c) = (alpha, beta_alpha), the theoretical exponents at the tuned alpha; "
        "K B_T / L_T at the tuned schedule.",
        "",
        "| eps | lam | tuned alpha | start | grid argmin | analytic-proxy alpha | d | c | K B_T / L_T "
        "| worst R/U | R_ref | J start | J last step |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['eps']:g} | {r['lam']:.3f} | {r['alpha']:.4f} | {r['start']:g} | {r['grid_alpha']:.4f} "
            f"| {r['analytic_alpha']:.4f} | {r['d']:.3f} | {r['c']:.3f} | {r['block_share']:.2f} "
            f"| {r['worst_case']:.4g} | {r['reference']:.4g} | {r['objective_start']:.4f} "
            f"| {r['objective_end']:.4f} |"
        )
    out += [
        "",
        "Balanced objective and finite-T slopes (least squares over the admissible alpha grid, in log L):",
        "",
        "| eps | alpha*(eps) = lam_bal | tuned alpha at lam_bal | tuned alpha at lam = 1 "
        "| slope of log W (theory -eps/(1+eps)) | slope of log R_ref (theory 1) "
        "| finite-T indifference lam_T | K B_T / L_T at alpha* | seconds |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summaries:
        at_bal = [r for r in rows if r["eps"] == s["eps"] and abs(r["lam"] - s["lam_bal"]) < 1e-6][0]
        at_one = [r for r in rows if r["eps"] == s["eps"] and r["lam"] == 1.0][0]
        out.append(
            f"| {s['eps']:g} | {s['alpha_star']:.4f} | {at_bal['alpha']:.4f} | {at_one['alpha']:.4f} "
            f"| {s['slope_w']:.3f} ({-s['eps'] / (1 + s['eps']):.3f}) | {s['slope_r']:.3f} "
            f"| {s['lam_t']:.3f} | {s['share_at_star']:.2f} | {s['seconds']:.0f} |"
        )
    out += [
        "",
        "The proxy against simulate(sampler='per_pull') at the schedule tuned for lam = 1, per seed "
        "(mean |proxy - exact| over seeds and instances of the family; 'rounded': Algorithm 1's "
        "integer schedule restored):",
        "",
        "| eps | alpha | instances | tau | relaxed | rounded | mean exact regret |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    keyed = {}
    for r in tau_rows:
        keyed.setdefault((r["eps"], r["instances"], r["tau"]), {})[r["rounding"]] = r
    for (eps, name, tau), pair in keyed.items():
        out.append(
            f"| {eps:g} | {pair[True]['alpha']:.4f} | {name} | {tau:g} | {pair[False]['mean_abs_error']:.4g} "
            f"| {pair[True]['mean_abs_error']:.4g} | {pair[True]['mean_exact_regret']:.4g} |"
        )
    return "\n".join(out)


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    part = args_parser.add_mutually_exclusive_group()
    part.add_argument("--smoothed", action="store_true", help="the smoothed proxy's part alone")
    part.add_argument("--trend", action="store_true", help="the smoothed proxy's trend in T")
    part.add_argument("--balanced", action="store_true", help="the smoothed proxy at the balanced point")
    part.add_argument("--replot", action="store_true",
                      help="draw tune_frontier.png again from tune_frontier.csv in --out (no simulation)")
    args_parser.add_argument("--tuning-only", action="store_true",
                             help="with --smoothed: re-run the tuning, reading the gradient table from "
                             "gradients.csv in --out")
    args = args_parser.parse_args()
    out = args.out
    if args.tuning_only and not args.smoothed:
        args_parser.error("--tuning-only re-runs the tuning of --smoothed alone; give it with --smoothed")
    if args.tuning_only:
        command_line.require_recorded(args_parser, args, "--tuning-only", "gradients.csv")
    if args.replot:
        command_line.require_recorded(args_parser, args, "--replot", "tune_frontier.csv")
        with open(out / "tune_frontier.csv") as f:
            plot([{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)], out / "tune_frontier.png")
        return
    if args.smoothed:
        tune_smoothed.smoothed_main(out, tuning_only=args.tuning_only)
        return
    if args.trend:
        tune_smoothed.trend_main(out)
        return
    if args.balanced:
        tune_smoothed.balanced_main(out)
        return
    tune_smoothed.smoothed_main(out)
    family = htb.lower_bound_pair(2, 1.0, jnp.asarray(SPIKES))[1]
    reference = htb.lower_bound_pair(2, 1.0, FIXED_SPIKE)[1]
    rows, summaries, tau_rows = [], [], []
    for eps in EPS_VALUES:
        r, s = run_eps(eps, family, reference)
        rows += r
        summaries.append(s)
        worst_only = [x for x in r if x["lam"] == 1.0][0]
        tau_rows += tau_convergence(eps, worst_only["alpha"], family, reference)
        print(f"eps={eps:g}: {s['seconds']:.0f} s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    htb.frontier.write_csv(rows, out / "tune_frontier.csv")
    htb.frontier.write_csv(tau_rows, out / "tau_convergence.csv")
    plot(rows, out / "tune_frontier.png")
    table = table_md(rows, summaries, tau_rows)
    (out / "table.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
