"""The worst-case search with heavy-tailed members: two-point spikes and Pareto arms together.

Section 5's distribution-free exponent is a supremum over all instances with a
finite ``(1+eps)``-moment.  The T-frontier experiments search Theorem 1's
two-point family (order statistics, horizons to 10^18); this one adds
equal-gap Pareto instances (gaps 10^-4.5..10 times tail indices 1.75, 2.5, 4;
members without the moment drop out for that ``eps``) and reports, for
AdaR-ETC at ``alpha*(eps)``, the fitted worst-case slope over each family
and over their union, and which member is the worst at every horizon.  Pareto
arms are simulated pull by pull, which caps the horizons at 10^9 here.
Writes ``experiments/worst_case_family/``.

    python experiments/worst_case_family.py
"""

import pathlib
import sys

import command_line  # the experiments' shared command line
import jax.numpy as jnp

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "worst_case_family"
EPS = (1.0, 0.5)
HORIZONS = tuple(10**e for e in range(3, 10))
FIT_FROM = 10**6
SEEDS = 32
SPIKES = htb.frontier.SpikeFamily()
PARETO = htb.frontier.ParetoFamily()


def _member(f: int) -> str:
    if f < SPIKES.num_members:
        return f"spike beta={SPIKES.spike_probs[f]:.0e}"
    f -= SPIKES.num_members
    shape, gap = PARETO.shapes[f // len(PARETO.gaps)], PARETO.gaps[f % len(PARETO.gaps)]
    return f"Pareto a={shape:g}, gap={gap:.1e}"


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args = args_parser.parse_args()
    out = args.out
    alphas = [float(htb.theory.balanced_alpha(e)) for e in EPS]
    policy = htb.AdaRETC(eps=jnp.asarray(EPS), alpha=jnp.asarray(alphas), q=0.0)
    print(f"AdaR-ETC at alpha*(eps), eps in {list(EPS)}: {SPIKES.num_members} two-point members", file=sys.stderr)
    spikes = htb.frontier.run_family(policy, SPIKES, HORIZONS, SEEDS, seed_chunk=SEEDS)
    print(f"... and {PARETO.num_members} Pareto members (pull by pull)", file=sys.stderr)
    pareto = htb.frontier.run_family(policy, PARETO, HORIZONS, SEEDS, seed_chunk=8)
    rows, worst = [], {}
    for g, (eps, alpha) in enumerate(zip(EPS, alphas, strict=True)):
        spike_fit, finite, _ = htb.frontier.free_exponent(spikes, g, eps, FIT_FROM)
        pareto_fit, _, _ = htb.frontier.free_exponent(pareto, g, eps, FIT_FROM)
        union_fit, _, _ = htb.frontier.free_exponent(spikes, g, eps, FIT_FROM, also=(pareto,))
        worst[eps] = [_member(f) for f in union_fit.argmax]
        for name, fit in (("two-point", spike_fit), ("Pareto", pareto_fit), ("union", union_fit)):
            rows.append(
                dict(
                    eps=eps, alpha=alpha, family=name, d_theory=alpha, d_finite_t=finite,
                    d=fit.slope, d_low=fit.low, d_high=fit.high, worst_at_top=_member(_offset(name, fit.argmax[-1])),
                    verdict=htb.frontier.verdict(fit, alpha, finite),
                )
            )
    fitted = [h for h in HORIZONS if h >= FIT_FROM]
    table = (
        f"AdaR-ETC at alpha*(eps), q = 0; fits over T in [{FIT_FROM:.0e}, {max(HORIZONS):.0e}], {SEEDS} seeds, "
        "95% bootstrap intervals; 'finite T' is the slope the schedule implies over the same horizons; "
        "'worst at top T' is the member attaining the worst normalized regret at the largest T.\n\n"
        "| eps | alpha | family | d theory | d finite T | d measured | worst at top T | verdict |\n"
        "|---:|---:|---|---:|---:|---|---|---|\n"
        + "\n".join(
            f"| {r['eps']:g} | {r['alpha']:.3f} | {r['family']} | {r['d_theory']:.3f} | {r['d_finite_t']:.3f} "
            f"| {r['d']:.3f} [{r['d_low']:.3f}, {r['d_high']:.3f}] | {r['worst_at_top']} | {r['verdict']} |"
            for r in rows
        )
        + "\n\nWorst member of the union at each fitted horizon:\n\n| eps | "
        + " | ".join(f"T = {h:.0e}" for h in fitted) + " |\n|---:|" + "---|" * len(fitted) + "\n"
        + "\n".join(f"| {e:g} | " + " | ".join(worst[e]) + " |" for e in EPS)
    )
    print(table)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(table + "\n")
    htb.frontier.write_csv(rows, out / "worst_case_family.csv")
    htb.frontier.save_runs(spikes, out / "runs_two_point.npz")
    htb.frontier.save_runs(pareto, out / "runs_pareto.npz")
    _plot(spikes, pareto, out / "worst_case_family.png")
    print(f"{spikes.seconds + pareto.seconds:.0f} s; wrote {out}", file=sys.stderr)


def _offset(name: str, f: int) -> int:
    return f + SPIKES.num_members if name == "Pareto" else f


def _plot(spikes: htb.frontier.FamilyRuns, pareto: htb.frontier.FamilyRuns, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(EPS), figsize=(5.0 * len(EPS), 4.0), squeeze=False)
    t = spikes.horizons.astype(float)
    for g, (ax, eps) in enumerate(zip(axes[0], EPS, strict=True)):
        top = 0.0
        for runs, color, name in ((spikes, "tab:blue", "two-point"), (pareto, "tab:red", "Pareto")):
            members = runs.family.num_members
            normalized = runs.regret[g, :members].mean(axis=-1) / runs.scale(eps)[:members, None]  # [F, H]
            ax.loglog(t, normalized.T, "-", color=color, lw=0.5, alpha=0.35)
            ax.loglog(t, normalized.max(axis=0), "o-", color=color, lw=1.8, ms=4, label=f"{name}: worst member")
            top = max(top, float(normalized[:, -1].max()))
        alpha = float(htb.theory.balanced_alpha(eps))
        ax.loglog(t, top * (t / t[-1]) ** alpha, "k--", lw=1, label=f"slope alpha* = {alpha:.3f}")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("mean regret / U_eps")
        ax.set_title(f"eps = {eps:g}: every member (thin) and the worst (thick)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"AdaR-ETC at alpha*(eps): the worst case over two-point and Pareto instances, {SEEDS} seeds", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main()
