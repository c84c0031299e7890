"""Table 1: AdaR-ETC's exponents in K at eps = 1 for q in {0, 1/3} (alpha = 2/3, T = 10^12).

The distribution-free K-exponent ``b`` is the slope in K of the worst case,
over Theorem 1's two-point family on K arms, of the regret normalized by
``U_1``; the distribution-dependent K-exponent ``a`` is the slope of the
regret on the fixed instance normalized by its gap sum.  Theory (Theorems
2-3, Table 1): ``(b, a) = (1/2, -1)`` for ``q = 0`` and ``(1/3, -2/3)`` for
``q = 1/3``; both lie on the K-frontier ``a + 2b = 0``.  Writes
``experiments/k_frontier/``.

    python experiments/k_frontier.py
"""

import pathlib

import command_line  # the experiments' shared command line
import jax.numpy as jnp
import numpy as np

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "k_frontier"
ARMS = (2, 4, 8, 16, 32, 64)
QS = (0.0, 1 / 3)
ALPHA, EPS, T, SEEDS = 2 / 3, 1.0, 10**12, 64


def _slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args = args_parser.parse_args()
    out = args.out
    policy = htb.AdaRETC(eps=EPS, alpha=ALPHA, q=jnp.asarray(QS))
    worst, fixed, scales, lengths, blocks, gap_sums = [], [], [], [], [], []
    for k in ARMS:
        family = htb.frontier.SpikeFamily(num_arms=k)
        print(f"K = {k}")
        runs = htb.frontier.run_family(policy, family, (T,), SEEDS, seed_chunk=32)
        members = len(family.spike_probs)
        worst.append(runs.regret[:, :members, 0])  # [G, F, S]
        fixed.append(runs.regret[:, -1, 0])  # [G, S]
        scales.append(runs.scale(EPS)[:members])
        lengths.append(runs.exploration[:, 0])
        blocks.append(float(htb.num_blocks(k, T)))
        gap_sums.append(float(np.sum(htb.gaps(family.instances()[-1]))))
    arms = np.asarray(ARMS, float)
    lengths = np.asarray(lengths, float)  # [P, G]
    rows = []
    for g, q in enumerate(QS):
        b_fit = htb.fit_worst_case_exponent(arms, np.stack([w[g] for w in worst]), np.stack(scales))
        a_fit = htb.fit_exponent(arms, np.stack([f[g] for f in fixed]) / np.asarray(gap_sums)[:, None])
        b_finite = _slope(arms, T * (arms * np.asarray(blocks) / lengths[:, g]) ** (EPS / (1 + EPS)))
        a_finite = _slope(arms, lengths[:, g] / arms)
        b_theory = float(htb.theory.free_exponents(ALPHA, q, EPS).k)
        a_theory = float(htb.theory.dependent_exponents(ALPHA, q, EPS).k)
        rows.append(
            dict(
                q=q, b_theory=b_theory, b_finite_k=b_finite, b=b_fit.slope, b_low=b_fit.low, b_high=b_fit.high,
                a_theory=a_theory, a_finite_k=a_finite, a=a_fit.slope, a_low=a_fit.low, a_high=a_fit.high,
                b_verdict=htb.frontier.verdict(b_fit, b_theory, b_finite),
                a_verdict=htb.frontier.verdict(a_fit, a_theory, a_finite),
            )
        )
    table = (
        f"eps = 1, alpha = 2/3, T = 10^12, K in {list(ARMS)}, {SEEDS} seeds, 95% bootstrap intervals; "
        "'finite K' is the slope the schedule implies over the same K.\n\n"
        "| q | b theory | b finite K | b measured | a theory | a finite K | a measured | a + 2b measured | b | a |\n"
        "|---:|---:|---:|---|---:|---:|---|---:|---|---|\n"
        + "\n".join(
            f"| {r['q']:.3f} | {r['b_theory']:.3f} | {r['b_finite_k']:.3f} | {r['b']:.3f} [{r['b_low']:.3f}, "
            f"{r['b_high']:.3f}] | {r['a_theory']:.3f} | {r['a_finite_k']:.3f} | {r['a']:.3f} [{r['a_low']:.3f}, "
            f"{r['a_high']:.3f}] | {r['a'] + 2 * r['b']:.3f} | {r['b_verdict']} | {r['a_verdict']} |"
            for r in rows
        )
    )
    print(table)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(table + "\n")
    htb.frontier.write_csv(rows, out / "k_frontier.csv")
    _plot(rows, out / "k_frontier.png")


def _plot(rows, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    b = np.linspace(0.0, 0.8, 100)
    ax.plot(b, htb.theory.k_frontier(b, EPS), "k-", lw=1.2, label="K-frontier a + 2b = 0")
    for r, color in zip(rows, ("tab:blue", "tab:orange"), strict=True):
        htb.frontier.plot_point(ax, r, color, x="b", y="a", label=f"q = {r['q']:.3g}")
    ax.set_xlabel("b (distribution-free exponent of K)")
    ax.set_ylabel("a (distribution-dependent exponent of K)")
    ax.set_title("AdaR-ETC K-frontier, eps = 1, T = 10^12 (Table 1)\no theory, x schedule at finite K, ■ measured", fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main()
