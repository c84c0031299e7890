"""The smoothed proxy's parts of ``experiments/tune_frontier.py`` (``--smoothed``, ``--balanced``,
``--trend``; that script's docstring says what each writes): gradients of ``htb.smoothed_regret``
against common-random-number differences of ``simulate``, and ``tune_schedule(proxy="smoothed")``
against the argmin of the same objective computed by ``simulate`` on an alpha grid.

It reads the experiment's settings (family, reference spike, key, smoothing, steps, output folder)
from ``tune_settings.py``, as ``tune_frontier.py`` does, which runs it:

    python experiments/tune_frontier.py --smoothed
"""

from __future__ import annotations

import csv
import math
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from tune_settings import FIXED_SPIKE, KEY, SIGMA, SPIKES, STARTS, STEPS

import htb_jax as htb
from htb_jax import theory

GRAD_SEEDS = 256
GRAD_CASES = (  # name, instance, eps, T, q, alphas; sampler per_pull except the two-point pair
    ("Student-t(2.4), K=7", lambda: htb.StudentT(loc=jnp.array([0.25] + [0.0] * 6), df=2.4, scale=1.0),
     1.0, 200_000, 0.2, (0.7, 0.8, 0.9)),
    ("Pareto(1.5), K=3", lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.25),
     0.5, 100_000, 0.1, (0.76, 0.85, 0.95)),
    ("two-point spike 0.05, K=2", lambda: htb.lower_bound_pair(2, 1.0, 0.05)[1],
     1.0, 1_000_000, 0.0, (0.7, 0.8, 0.9)),
)


def _envelope_slope(key, eps, alpha, q, inst, horizon, sampler):
    """Block-scale envelope: d/d alpha of the exact regret interpolated linearly between tooth starts."""
    k = inst.batch_shape[-1]
    blocks = int(htb.num_blocks(k, horizon))
    length = float(htb.AdaRETC(eps=eps, alpha=alpha, q=q).exploration_length(k, horizon))
    s0 = int(length // (k * blocks))
    nodes = [k * blocks * s0, k * blocks * (s0 + 1)]  # tooth starts: every arm's blocks reach s0, s0 + 1 samples
    values = np.asarray(htb.regret_at_lengths(key, inst, horizon, GRAD_SEEDS, nodes, sampler=sampler))
    beta = (1 - alpha) * (1 + eps) / eps
    dl = -(k**q) * horizon**beta * np.log(horizon) * (1 + eps) / eps
    return float((values[1] - values[0]) / (k * blocks) * dl)


def gradient_agreement() -> list[dict]:
    key = jax.random.key(KEY)
    rows = []
    for name, make, eps, horizon, q, alphas in GRAD_CASES:
        inst = make()
        sampler = "order_statistic" if type(inst).has_block_quantile else "per_pull"
        pts = [(a, hh) for a in alphas for hh in (1e-3, 1e-2)]
        grid = np.array([x for a, hh in pts for x in (a + hh, a - hh)])
        sim = np.asarray(htb.simulate(key, htb.AdaRETC(eps=eps, alpha=grid, q=q), inst, horizon, GRAD_SEEDS,
                                      sampler=sampler).regret)
        table = htb.proxy_table(key, inst, horizon, GRAD_SEEDS, eps=eps) if sampler == "per_pull" else None
        def smoothed(a, hh, eps=eps, q=q, inst=inst, horizon=horizon, sampler=sampler):
            return htb.smoothed_regret(key, htb.AdaRETC(eps=eps, alpha=a, q=q), inst, horizon, GRAD_SEEDS, hh,
                                   sampler=sampler)

        smooth = jax.jit(jax.grad(smoothed))
        pathwise = None
        if table is not None:
            def relaxed(a, eps=eps, q=q, table=table, horizon=horizon):
                return jnp.mean(htb.proxy_regrets(htb.AdaRETC(eps=eps, alpha=a, q=q), table, horizon, 0.05))

            pathwise = jax.jit(jax.grad(relaxed))
        for i, (a, hh) in enumerate(pts):
            diff = (sim[2 * i] - sim[2 * i + 1]) / (2 * hh)
            started = time.perf_counter()
            g = float(smooth(a, hh))
            seconds = time.perf_counter() - started
            rows.append(dict(
                instance=name, T=horizon, alpha=a, q=q, h=hh, central_difference=float(diff.mean()),
                stderr=float(diff.std(ddof=1) / np.sqrt(GRAD_SEEDS)), smoothed=g,
                pathwise=float(pathwise(a)) if pathwise is not None else float("nan"),
                envelope=_envelope_slope(key, eps, a, q, inst, horizon, sampler), grad_seconds=seconds,
            ))
        print(name, flush=True)
    return rows


TUNE_HORIZONS = (10**4, 10**5, 10**6, 10**7)
TUNE_SEEDS = 256
TUNE_LAMS = (1.0, 0.9)
GRID_ALPHAS = 200
POLISH = 129  # after the descent: 129 alphas over the whole range, 129 over the best +- 0.05 (step 7.8e-4), then the
# lengths of the 25 teeth (K = 2: 5 lengths each) around the best where a tooth's minimum sits
# The trend part: Theorem 1's family down to spike probability 1e-16 (the hardest member at T = 10^18
# and alpha*(1) has a spike probability near 1e-9), horizons to 10^18, weights just above lam_bal.
TREND_SPIKES = htb.powers_of_ten(-16.0, -0.3, 0.25) + (0.5,)
TREND_HORIZONS = (10**4, 10**5, 10**6, 10**8, 10**10, 10**12, 10**15, 10**18)
TREND_LAMS = (0.68, 0.70, 0.72)
TREND_SEEDS = 64


def tuned_against_grid(lams=TUNE_LAMS, spikes=SPIKES, horizons=TUNE_HORIZONS, seeds=TUNE_SEEDS) -> list[dict]:
    """Tuned alpha (smoothed proxy, q = 0, order-statistic sampler) against simulate's grid argmin.

    Each row also has the finite-T indifference weight ``lam_T = s_R / (s_R - s_W)`` from the
    least-squares slopes of ``simulate``'s two objective terms in ``log L`` over the grid."""
    key = jax.random.key(KEY)
    eps = 1.0
    family = htb.lower_bound_pair(2, 1.0, jnp.asarray(spikes))[1]
    reference = htb.lower_bound_pair(2, 1.0, FIXED_SPIKE)[1]
    scale = np.asarray(htb.intrinsic_scale(family, eps))
    lo = theory.balanced_alpha(eps)
    grid = lo + (1 - lo) * np.linspace(0.0, 0.995, GRID_ALPHAS)
    run = jax.jit(htb.tune_schedule, static_argnames=("eps", "horizon", "num_seeds", "num_steps", "optimizer",
                                                         "tune_q", "proxy", "sampler", "polish"))
    rows = []
    for horizon in horizons:
        started = time.perf_counter()
        res = [run(key, eps=eps, family=family, reference=reference, horizon=horizon, num_seeds=seeds,
                   lam=jnp.asarray(lams), sigma=SIGMA, num_steps=STEPS, optimizer=optax.adam(0.1),
                   init_alpha=lo + (1 - lo) * start, init_q=0.0, tune_q=False, proxy="smoothed", polish=POLISH)
               for start in STARTS]
        seconds = time.perf_counter() - started
        policy = htb.AdaRETC(eps=eps, alpha=grid, q=0.0)
        fam = np.asarray(htb.simulate(key, policy, family, horizon, seeds).regret)  # [G, F, S]
        ref = np.asarray(htb.simulate(key, policy, reference, horizon, seeds).regret)  # [G, S]
        log_w = np.asarray(htb.smooth_max_log(jnp.log(fam.mean(-1) / scale), SIGMA))
        log_r = np.log(ref.mean(-1))
        log_l = np.log(np.asarray(policy.exploration_length(2, horizon), np.float64))
        slope_w, slope_r = np.polyfit(log_l, log_w, 1)[0], np.polyfit(log_l, log_r, 1)[0]
        for i, lam in enumerate(lams):
            objective = lam * log_w + (1 - lam) * log_r
            finals = [float(r.final_objective[i]) for r in res]
            pick = int(np.argmin(finals))
            best = int(np.argmin(objective))
            # standard error of the grid objective at its argmin (delta method on the worst member)
            f_star = int(np.argmax(fam[best].mean(-1) / scale))
            se = lam * fam[best, f_star].std(ddof=1) / np.sqrt(seeds) / fam[best, f_star].mean()
            tuned = float(res[pick].alpha[i])
            rows.append(dict(
                T=horizon, lam=lam, tuned_alpha=tuned, tuned_objective=finals[pick], grid_alpha=float(grid[best]),
                grid_objective=float(objective[best]), grid_step=float(grid[1] - grid[0]), objective_stderr=float(se),
                grid_steps_off=float((tuned - grid[best]) / (grid[1] - grid[0])),
                slope_log_w=float(slope_w), slope_log_r=float(slope_r),
                lam_t=float(slope_r / (slope_r - slope_w)), alpha_star=lo, seconds=seconds,
            ))
        print(f"T={horizon:.0e}: {seconds:.0f} s", flush=True)
    return rows


def plot_alpha_vs_t(rows, path, lams=TUNE_LAMS):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    for lam, marker in zip(lams, "os", strict=False):
        mine = [r for r in rows if r["lam"] == lam]
        ax.plot([r["T"] for r in mine], [r["tuned_alpha"] for r in mine], marker + "-", label=f"tuned, lam = {lam:.3g}")
        ax.plot([r["T"] for r in mine], [r["grid_alpha"] for r in mine], marker, mfc="none", ms=11, color="0.4",
                label=f"simulate grid argmin, lam = {lam:.3g}")
    ax.axhline(theory.balanced_alpha(1.0), color="r", ls="--", lw=1, label="alpha*(1) = 2/3")
    ax.set_xscale("log")
    ax.set_xlabel("T")
    ax.set_ylabel("alpha")
    ax.set_title(f"smoothed proxy, eps = 1, K = 2, {TUNE_SEEDS} seeds, q = 0", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def smoothed_md(grad_rows, tune_rows, seconds) -> str:
    out = [
        f"Gradients in alpha against common-random-number central differences of simulate's mean regret "
        f"({GRAD_SEEDS} seeds, same key; +- one standard error of the difference). 'smoothed': "
        "smoothed_regret at width h; 'pathwise': regret_proxy's relaxation (tau = 0.05); 'envelope': the exact "
        "regret interpolated between tooth starts L = K B_T s.",
        "",
        "| instance | T | alpha | h | central difference | smoothed | pathwise | envelope |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in grad_rows:
        out.append(
            f"| {r['instance']} | {r['T']:.0e} | {r['alpha']:g} | {r['h']:g} | {r['central_difference']:.4g} "
            f"+- {r['stderr']:.2g} | {r['smoothed']:.4g} | {r['pathwise']:.3g} | {r['envelope']:.3g} |"
        )
    out += [
        "",
        f"tune_schedule(proxy='smoothed') against the argmin of the same objective computed by simulate on 200 "
        f"alphas (Theorem 1's family, spikes as above, reference spike {FIXED_SPIKE}, eps = 1, q = 0, "
        f"{TUNE_SEEDS} seeds, Adam(0.1) x {STEPS} steps from two starts, widths 0.05 -> 0.002, then the exact "
        f"objective at {POLISH} alphas over the whole range, {POLISH} over the best +- 0.05 and the 5 lengths of each of "
        f"the {POLISH // 5} teeth around the best where a tooth's minimum sits (polish); 'off': "
        "(tuned - grid argmin) / grid step):",
        "",
        "| T | lam | tuned alpha | grid argmin | off | J tuned (exact) | J grid min | J std. err. "
        "| alpha*(1) | seconds |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in tune_rows:
        out.append(
            f"| {r['T']:.0e} | {r['lam']:g} | {r['tuned_alpha']:.4f} | {r['grid_alpha']:.4f} "
            f"| {r['grid_steps_off']:+.1f} | {r['tuned_objective']:.4f} | {r['grid_objective']:.4f} "
            f"| {r['objective_stderr']:.4f} | {r['alpha_star']:.4f} | {r['seconds']:.0f} |"
        )
    out += ["", f"Wall time of this part: {seconds:.0f} s."]
    return "\n".join(out)


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return [{k: (v if k == "instance" else float(v)) for k, v in row.items()} for row in csv.DictReader(f)]


def smoothed_main(out: pathlib.Path, tuning_only: bool = False) -> None:
    """``tuning_only``: the gradient table is read back from ``out``'s ``gradients.csv`` (its run is unchanged)."""
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    if tuning_only:
        grad_rows = read_csv(out / "gradients.csv")
    else:
        grad_rows = gradient_agreement()
        htb.frontier.write_csv(grad_rows, out / "gradients.csv")
    tune_rows = tuned_against_grid()
    htb.frontier.write_csv(tune_rows, out / "tuned_vs_grid.csv")
    plot_alpha_vs_t(tune_rows, out / "alpha_vs_T.png")
    table = smoothed_md(grad_rows, tune_rows, time.perf_counter() - started)
    (out / "smoothed.md").write_text(table + "\n")
    print(table)


def balanced_main(out: pathlib.Path) -> None:
    """The tuned alpha against T at the balanced weight lam = alpha*(1) = 2/3, where the asymptotic
    optimum of the objective is alpha*(1) (Section 5): how far the finite-T optimum sits from it."""
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    lams = (float(theory.balanced_alpha(1.0)),)
    rows = tuned_against_grid(lams)
    htb.frontier.write_csv(rows, out / "tuned_vs_grid_balanced.csv")
    plot_alpha_vs_t(rows, out / "alpha_vs_T_balanced.png", lams)
    text = smoothed_md([], rows, time.perf_counter() - started).split("\n\n", 2)[-1]
    (out / "balanced.md").write_text(text + "\n")
    print(text)


def plot_trend(rows, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    colors = [f"C{i}" for i in range(len(TREND_LAMS))]
    first = [r for r in rows if r["lam"] == TREND_LAMS[0]]
    horizons = [r["T"] for r in first]
    left.plot(horizons, [r["lam_t"] for r in first], "ko-", label="lam_T: finite-T indifference weight (simulate)")
    left.axhline(theory.balanced_alpha(1.0), color="r", ls="--", lw=1, label="lam_bal = alpha*(1) = 2/3")
    for lam, color in zip(TREND_LAMS, colors, strict=True):
        left.axhline(lam, color=color, ls=":", lw=1, label=f"lam = {lam:g}")
    left.set_xscale("log")
    left.set_xlabel("T")
    left.set_ylabel("weight")
    left.set_ylim(0.6, 1.0)
    left.legend(fontsize=7)
    for lam, color in zip(TREND_LAMS, colors, strict=True):
        mine = [r for r in rows if r["lam"] == lam]
        right.plot([r["T"] for r in mine], [r["tuned_alpha"] for r in mine], "o-", color=color,
                   label=f"tuned, lam = {lam:g}")
        right.plot([r["T"] for r in mine], [r["grid_alpha"] for r in mine], "s", mfc="none", ms=10, color=color,
                   label=f"simulate grid argmin, lam = {lam:g}")
    right.axhline(theory.balanced_alpha(1.0), color="r", ls="--", lw=1, label="alpha*(1) = 2/3")
    right.set_xscale("log")
    right.set_xlabel("T")
    right.set_ylabel("alpha")
    right.legend(fontsize=7)
    fig.suptitle(f"eps = 1, K = 2, Theorem 1's family (spikes 1e-16..0.5), {TREND_SEEDS} seeds, q = 0", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def trend_md(rows, seconds) -> str:
    out = [
        f"The tuned alpha against T = 1e4..1e18 (smoothed proxy, Theorem 1's family with {len(TREND_SPIKES)} spike "
        f"probabilities 1e-16..0.5, reference spike {FIXED_SPIKE}, eps = 1, q = 0, {TREND_SEEDS} seeds, "
        f"order-statistic sampler, Adam(0.1) x {STEPS} steps from two starts, widths 0.05 -> 0.002, then the "
        f"exact objective at {POLISH} alphas over the whole range, {POLISH} over the best +- 0.05 and the 5 lengths of "
        f"each of the {POLISH // 5} teeth around the best where a tooth's minimum sits) against "
        f"simulate's argmin on {GRID_ALPHAS} alphas; s_W, s_R: "
        "least-squares slopes of simulate's log W and log R_ref in log L over the grid; lam_T = s_R / (s_R - s_W), "
        "the weight at which the objective is flat in log L (alpha*(1) = lam_bal = 2/3):",
        "",
        "| T | s_W (theory -1/2) | s_R | lam_T | lam | tuned alpha | grid argmin | off | J tuned (exact) "
        "| J grid min | seconds |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['T']:.0e} | {r['slope_log_w']:.3f} | {r['slope_log_r']:.3f} | {r['lam_t']:.3f} | {r['lam']:g} "
            f"| {r['tuned_alpha']:.4f} | {r['grid_alpha']:.4f} | {r['grid_steps_off']:+.1f} "
            f"| {r['tuned_objective']:.4f} | {r['grid_objective']:.4f} | {r['seconds']:.0f} |"
        )
    first = [r for r in rows if r["lam"] == rows[0]["lam"]]
    exponents = [f"1e{round(math.log10(r['T']))}" for r in first]
    out += [
        "",
        "The finite-T slopes against T:",
        "",
        "| T | " + " | ".join(exponents) + " |",
        "|---|" + "---:|" * len(first),
        "| slope of log W (theory -1/2) | " + " | ".join(f"{r['slope_log_w']:.3f}" for r in first) + " |",
        "| lam_T | " + " | ".join(f"{r['lam_t']:.3f}" for r in first) + " |",
        "",
        f"Wall time: {seconds:.0f} s.",
    ]
    return "\n".join(out)


def trend_main(out: pathlib.Path) -> None:
    """The tuned alpha against T = 1e4..1e18 at weights just above lam_bal = alpha*(1): the optimum leaves
    the minimal-exploration corner for alpha*(1) once the finite-T indifference weight lam_T falls
    below lam, and lam_T -> lam_bal as T grows (Section 5)."""
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    rows = tuned_against_grid(TREND_LAMS, TREND_SPIKES, TREND_HORIZONS, TREND_SEEDS)
    htb.frontier.write_csv(rows, out / "tuned_vs_grid_trend.csv")
    plot_trend(rows, out / "alpha_vs_T_trend.png")
    text = trend_md(rows, time.perf_counter() - started)
    (out / "trend.md").write_text(text + "\n")
    print(text)
