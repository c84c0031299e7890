"""ForceMoM's rho frontier next to AdaR-ETC's, measured round by round on the engine.

ForceMoM (``htb.ForceMoM``) explores at the anytime rate ``D_t = max(K m0,
ceil(K^(1-rho) t^rho))`` and claims fixed-instance regret ``T^rho`` and worst
case ``T^(1 - rho eps/(1+eps))``: every ``rho`` on Theorem 1's frontier for
every ``eps`` at once.  It is anytime, so one engine run to ``T`` gives the
regret at every checkpoint ``t <= T``.  Worst case over Theorem 1's two-point
family normalized by ``U_eps`` (one run serves both true ``eps``), fixed
instance as in the T-frontier experiment.  AdaR-ETC at ``alpha*(eps)`` is
measured over the same horizons (fast path) for comparison, with more seeds:
its Median-of-Means estimates are order statistics (O(K) per run), and with
32 seeds the bootstrap interval of its eps = 0.5 worst case is narrower than
the spread between runs.

'finite T' columns: the slopes the exploration schedules imply over the
fitted horizons: ``D_t`` (c) and ``t (K q(n) / D_t)^(eps/(1+eps))`` with
``n = D_t / K`` forced samples per arm in ``q(n)`` blocks (d) for ForceMoM
(``ForceMoM.exploration_target``, ``ForceMoM.num_blocks``); ``htb.frontier``'s for
AdaR-ETC.  Writes
``experiments/force_mom_frontier/``.

    python experiments/force_mom_frontier.py
"""

import pathlib
import sys
import time

import command_line  # the experiments' shared command line
import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "force_mom_frontier"
RHOS = (0.5, 0.6, 2 / 3)
EPS = (1.0, 0.5)
T = 10**5
FIT_FROM = 3000
SEEDS = 32  # ForceMoM, round by round on the engine
ADAR_SEEDS = 1024  # AdaR-ETC on the fast path
SEED_CHUNK = 8
CHECKPOINTS = 51  # log-spaced rounds 1..T, ten per decade
# The hardest spike probability over these horizons is about one over a block size (> 1e-4).
FAMILY = htb.frontier.SpikeFamily(spike_probs=htb.powers_of_ten(-6.0, 0.0, 0.5) + (0.5,))


def run_force_mom() -> tuple[htb.frontier.FamilyRuns, np.ndarray]:
    """ForceMoM on the family, chunk of seeds by chunk: runs with horizons = checkpoints."""
    policy = htb.ForceMoM(rho=jnp.asarray(RHOS))
    instances = FAMILY.instances()
    root = jax.random.key(0)
    started = time.perf_counter()
    curves = []
    for first in range(0, SEEDS, SEED_CHUNK):
        out = htb.simulate(root, policy, instances, T, SEED_CHUNK, first_seed=first, num_checkpoints=CHECKPOINTS)
        curves.append(np.asarray(out.regret_curve))  # [G, F+1, S, C]
        checkpoints = np.asarray(out.checkpoints[0, 0, 0])
        htb.progress_bar(first + SEED_CHUNK, SEEDS, started, sys.stderr)
    sys.stderr.write("\n")
    regret = np.moveaxis(np.concatenate(curves, axis=2), 2, 3)  # [G, F+1, C, S]
    forced = np.stack([np.asarray(htb.ForceMoM(rho=r).exploration_target(FAMILY.num_arms, checkpoints)) for r in RHOS])
    seconds = time.perf_counter() - started
    return htb.frontier.FamilyRuns(regret, forced, checkpoints.astype(np.int64), FAMILY, seconds), checkpoints


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of ``log y`` in ``log x``: the exponent a curve implies over the fitted horizons."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def force_mom_rows(runs: htb.frontier.FamilyRuns) -> list:
    mask = runs.horizons >= FIT_FROM
    t = runs.horizons[mask].astype(float)
    k = FAMILY.num_arms
    members = len(FAMILY.spike_probs)
    rows = []
    for g, rho in enumerate(RHOS):
        forced = runs.exploration[g, mask].astype(float)
        blocks = np.asarray(htb.ForceMoM(rho=rho).num_blocks(k, np.floor(forced / k).astype(np.int64)), float)
        c_fit = htb.fit_exponent(t, runs.regret[g, -1][mask])
        c_finite = _slope(t, forced)
        for eps in EPS:
            regret = np.moveaxis(runs.regret[g, :members][:, mask], 0, 1)  # [H, F, S]
            d_fit = htb.fit_worst_case_exponent(t, regret, runs.scale(eps)[:members])
            d_finite = _slope(t, t * (k * blocks / forced) ** (eps / (1.0 + eps)))
            claim = htb.theory.force_mom_exponents(rho, eps)
            rows.append(_row(f"ForceMoM rho={rho:.3f}", eps, d_fit, float(claim.worst_case), d_finite,
                             c_fit, float(claim.fixed_instance), c_finite))
    return rows


def adar_etc_rows(horizons: np.ndarray) -> list:
    alphas = [float(htb.theory.balanced_alpha(e)) for e in EPS]
    policy = htb.AdaRETC(eps=jnp.asarray(EPS), alpha=jnp.asarray(alphas), q=0.0)
    runs = htb.frontier.run_family(policy, FAMILY, tuple(int(h) for h in horizons), ADAR_SEEDS, seed_chunk=256)
    rows = []
    for g, (eps, alpha) in enumerate(zip(EPS, alphas, strict=True)):
        d_fit, d_finite, _ = htb.frontier.free_exponent(runs, g, eps, FIT_FROM)
        c_fit, c_finite = htb.frontier.dependent_exponent(runs, g, FIT_FROM)
        rows.append(_row(f"AdaR-ETC alpha*={alpha:.3f}", eps, d_fit, alpha, d_finite,
                         c_fit, float(htb.theory.beta_alpha(alpha, eps)), c_finite))
    return rows


def _row(policy, eps, d_fit, d_theory, d_finite, c_fit, c_theory, c_finite) -> dict:
    return dict(
        policy=policy, eps=eps,
        d_theory=d_theory, d_finite_t=d_finite, d=d_fit.slope, d_low=d_fit.low, d_high=d_fit.high,
        c_theory=c_theory, c_finite_t=c_finite, c=c_fit.slope, c_low=c_fit.low, c_high=c_fit.high,
        on_frontier=c_fit.slope + d_fit.slope * (1 + eps) / eps - (1 + eps) / eps,
        d_verdict=htb.frontier.verdict(d_fit, d_theory, d_finite),
        c_verdict=htb.frontier.verdict(c_fit, c_theory, c_finite),
    )


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args = args_parser.parse_args()
    out = args.out
    print(f"ForceMoM rho in {[round(r, 3) for r in RHOS]} on the engine, T = {T:.0e}, {SEEDS} seeds", file=sys.stderr)
    runs, checkpoints = run_force_mom()
    rows = force_mom_rows(runs)
    rows += adar_etc_rows(checkpoints[checkpoints >= FIT_FROM // 10])
    table = (
        f"Fits over t in [{FIT_FROM}, {T:.0e}] ({int(np.sum(checkpoints >= FIT_FROM))} checkpoints), "
        f"{SEEDS} seeds (ForceMoM) and {ADAR_SEEDS} (AdaR-ETC), "
        "95% bootstrap intervals; theory for ForceMoM is its claim (rho, 1 - rho eps/(1+eps)); 'finite T' is the "
        "slope the exploration schedule implies over the same horizons; 'off frontier' is "
        "c + d (1+eps)/eps - (1+eps)/eps (0 on Theorem 1's line, negative beyond it).\n\n"
        "| policy | eps | d theory | d finite T | d measured | c theory | c finite T | c measured | off frontier | d | c |\n"
        "|---|---:|---:|---:|---|---:|---:|---|---:|---|---|\n"
        + "\n".join(
            f"| {r['policy']} | {r['eps']:g} | {r['d_theory']:.3f} | {r['d_finite_t']:.3f} | {r['d']:.3f} "
            f"[{r['d_low']:.3f}, {r['d_high']:.3f}] | {r['c_theory']:.3f} | {r['c_finite_t']:.3f} | {r['c']:.3f} "
            f"[{r['c_low']:.3f}, {r['c_high']:.3f}] | {r['on_frontier']:+.3f} | {r['d_verdict']} | {r['c_verdict']} |"
            for r in rows
        )
    )
    print(table)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(table + "\n")
    htb.frontier.write_csv(rows, out / "force_mom_frontier.csv")
    htb.frontier.save_runs(runs, out / "runs.npz")
    _plot(rows, out / "force_mom_frontier.png")
    print(f"{runs.seconds:.0f} s (ForceMoM engine runs); wrote {out}", file=sys.stderr)


def _plot(rows, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(EPS), figsize=(4.4 * len(EPS), 4.2), squeeze=False)
    for ax, eps in zip(axes[0], EPS, strict=True):
        htb.frontier.frontier_panel(
            ax, eps, f"eps = {eps:g}  (o claim/theory, x schedule at finite T, ■▲ measured)", high=1.05
        )
        mine = [r for r in rows if r["eps"] == eps]
        colors = plt.cm.plasma(np.linspace(0.0, 0.8, len(mine)))
        for r, color in zip(mine, colors, strict=True):
            marker = "^" if r["policy"].startswith("AdaR") else "s"
            htb.frontier.plot_point(ax, r, color, marker=marker, label=r["policy"])
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"ForceMoM vs AdaR-ETC, t in [{FIT_FROM}, {T:.0e}], {SEEDS} seeds (ForceMoM, engine), "
                 f"{ADAR_SEEDS} (AdaR-ETC)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main()
