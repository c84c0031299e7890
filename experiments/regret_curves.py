"""Cumulative-regret curves of every policy on a Pareto and a Student-t instance.

Runs AdaR-ETC at eps = 1 with ``(alpha, q) = (2/3, 1/3)`` (the order-free
schedule of Theorem 4) and with ``(0.8, 0)``, Empirical ETC at ``(2/3, 1/3)``,
anytime AdaR-ETC (doubling, order-free), ForceMoM (``rho = 2/3``), Robust UCB
with the truncated mean, the median of means and Catoni's estimator (each given
the true moment bounds), UCB1, and the literature's peers (AdaR-UCB, R-UCB,
R-UCB-G, APE2, MR-UCB and MR-APE at ``p = 2``; each as its class defines it) on
two equal-gap instances with finite variance (so that eps = 1 and every
known-moment policy is correctly specified), the best arm placed last so that
index ties (broken towards the lowest index) do not favour it.  Writes the mean
cumulative regret with a standard-error band at ``--checkpoints`` log-spaced
rounds (log-log axes), a CSV of the curves and a markdown table of the final
regrets; every policy runs from the same root key ``--key`` (common random
numbers).

    python experiments/regret_curves.py [--horizon 3000] [--seeds 20] [--checkpoints 20] [--key 0] [--out DIR]
"""

from __future__ import annotations

import math
import os
import pathlib
import sys
import time

import command_line  # the experiments' shared command line
import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "regret_curves"
K, GAP = 5, 0.2


def _best_arm_last(instance):
    """Reverses the arms: index ties (several +inf indices at the start) go to arm 0,
    which must not be the best arm or index policies would look better than they are."""
    return jax.tree.map(lambda p: p[..., ::-1], instance.broadcast())


def instances():
    return {
        "Pareto(2.5)": _best_arm_last(htb.equal_gap(htb.Pareto(loc=0.0, shape=2.5), num_arms=K, gap=GAP)),
        "Student-t(3)": _best_arm_last(htb.equal_gap(htb.StudentT(loc=0.0, df=3.0), num_arms=K, gap=GAP)),
    }


def policies(instance):
    """Every policy, the known-moment ones with the instance's true bounds at eps = 1."""
    u = float(jnp.max(instance.abs_moment(1.0)))  # E|X|^2
    v = float(jnp.max(instance.shifted(-instance.mean()).abs_moment(1.0)))  # variance
    return {
        "AdaR-ETC (alpha=2/3, q=1/3)": htb.AdaRETC(eps=1.0, alpha=2 / 3, q=1 / 3),
        "AdaR-ETC (alpha=0.8, q=0)": htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0),
        "Empirical ETC (2/3, 1/3)": htb.EmpiricalETC(eps=1.0, alpha=2 / 3, q=1 / 3),
        "Anytime AdaR-ETC (doubling)": htb.AnytimeAdaRETC.order_free(),
        "ForceMoM (rho=2/3)": htb.ForceMoM(rho=2 / 3),
        "Robust UCB, truncated mean": htb.RobustUCB(1.0, u=u, estimator="truncated"),
        "Robust UCB, median of means": htb.RobustUCB(1.0, v=v, estimator="mom"),
        "Robust UCB, Catoni": htb.RobustUCB(1.0, v=v, estimator="catoni"),
        "UCB1": htb.UCB1(),
        "AdaR-UCB": htb.AdaRUCB(),
        "R-UCB (f = 2.1)": htb.RobustUCBf(kind="R-UCB", m=2.1, a=0.0),
        "R-UCB-G truncated (f = (log t)^2)": htb.RobustUCBf(kind="R-UCB-G", estimator="truncated", m=1.0, a=2.0),
        "APE2 (p = 2)": htb.APE2(p=2.0),
        "MR-UCB (p = 2)": htb.MRUCB(p=2.0),
        "MR-APE (p = 2)": htb.MRAPE(p=2.0),
    }


def main(argv=None):
    parser = command_line.parser(__doc__, OUT)
    parser.add_argument("--horizon", type=command_line.integer(10), default=3000,
                        help="the number of rounds T, at least 10 (default 3000)")
    parser.add_argument("--seeds", type=command_line.integer(2), default=20,
                        help="independent runs per policy and instance, at least 2 (default 20)")
    parser.add_argument("--checkpoints", type=command_line.integer(2, 2**20), default=20,
                        help="log-spaced rounds at which the curves are recorded (default 20)")
    parser.add_argument("--key", type=command_line.integer(0, 2**32 - 1), default=0, help="the simulations' root key (default 0)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    key = jax.random.key(args.key)
    results = {}
    for inst_name, instance in instances().items():
        for name, policy in policies(instance).items():
            start = time.perf_counter()
            out = htb.simulate(key, policy, instance, args.horizon, args.seeds, num_checkpoints=args.checkpoints)
            curve = np.asarray(out.regret_curve)
            results[inst_name, name] = (np.asarray(out.checkpoints[0]), curve)
            print(f"  {inst_name:13s} {name:30s} {time.perf_counter() - start:6.1f} s", file=sys.stderr)

    csv_path = os.path.join(args.out, "regret_curves.csv")
    rows = []
    for (inst_name, name), (rounds, curve) in results.items():
        mean, se = curve.mean(0), curve.std(0, ddof=1) / math.sqrt(curve.shape[0])
        rows += [dict(instance=inst_name, policy=name, round=t, mean_regret=m, stderr=e)
                 for t, m, e in zip(rounds, mean, se, strict=True)]
    htb.frontier.write_csv(rows, csv_path)

    table = [f"| policy | {' | '.join(instances())} |", "|---|" + "---:|" * len(instances())]
    for name in policies(next(iter(instances().values()))):
        cells = []
        for inst_name in instances():
            curve = results[inst_name, name][1][:, -1]
            cells.append(f"{curve.mean():.0f} ± {curve.std(ddof=1) / math.sqrt(curve.size):.0f}")
        table.append(f"| {name} | {' | '.join(cells)} |")
    table_text = "\n".join(table)
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(f"Regret at T = {args.horizon} (mean ± s.e., {args.seeds} seeds), K = {K}, gap {GAP}\n\n")
        f.write(table_text + "\n")
    print(table_text)

    png_path = os.path.join(args.out, "regret_curves.png")
    draw(rows, png_path, args.seeds)
    print(f"wrote {csv_path}, {png_path}", file=sys.stderr)


# One colour per kind of policy, a line style per variant: AdaR-ETC and its relatives in blue, Robust UCB's
# estimators in orange, UCB1 in black, the literature's peers each in a colour of its own (the
# elimination policies APE2 and MR-APE share purple).
STYLES = {
    "AdaR-ETC (alpha=2/3, q=1/3)": ("C0", "-"),
    "AdaR-ETC (alpha=0.8, q=0)": ("C0", "--"),
    "Empirical ETC (2/3, 1/3)": ("C0", ":"),
    "Anytime AdaR-ETC (doubling)": ("C0", "-."),
    "ForceMoM (rho=2/3)": ("C9", "-"),
    "Robust UCB, truncated mean": ("C1", "-"),
    "Robust UCB, median of means": ("C1", "--"),
    "Robust UCB, Catoni": ("C1", ":"),
    "UCB1": ("k", "-"),
    "AdaR-UCB": ("C2", "-"),
    "R-UCB (f = 2.1)": ("C3", "-"),
    "R-UCB-G truncated (f = (log t)^2)": ("C3", "--"),
    "APE2 (p = 2)": ("C4", "-"),
    "MR-UCB (p = 2)": ("C5", "-"),
    "MR-APE (p = 2)": ("C4", "--"),
}


def draw(rows, path, seeds):
    """The figure from the CSV's rows: one panel per instance, mean cumulative regret with a
    standard-error band on log-log axes, the legend ordered by the first instance's final regret
    (each entry with both instances' final means)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = {}
    for r in rows:
        curves.setdefault((r["instance"], r["policy"]), []).append(
            (float(r["round"]), float(r["mean_regret"]), float(r["stderr"])))
    names = list(dict.fromkeys(name for _, name in curves))
    insts = list(dict.fromkeys(inst for inst, _ in curves))
    final = {key: points[-1][1] for key, points in curves.items()}
    order = sorted(names, key=lambda name: final[insts[0], name])
    fig, axes = plt.subplots(1, len(insts), figsize=(13, 5.2), sharey=True)
    for ax, inst in zip(axes, insts, strict=True):
        for name in order:
            color, style = STYLES[name]
            rounds, mean, se = (np.array(v) for v in zip(*curves[inst, name], strict=True))
            shown = (rounds >= K) & (mean > 0)  # log axes: from the first round-robin cycle on
            rounds, mean, se = rounds[shown], mean[shown], se[shown]
            finals = " / ".join(f"{final[i, name]:.0f}" for i in insts)
            ax.plot(rounds, mean, color=color, linestyle=style, linewidth=1.6, label=f"{name}: {finals}")
            ax.fill_between(rounds, np.maximum(mean - se, 0.5 * mean), mean + se, color=color, alpha=0.1,
                            linewidth=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.set_title(f"{inst} arms, K={K}, gap {GAP}, {seeds} seeds")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("cumulative regret (mean ± 1 s.e.)")
    handles, labels = axes[0].get_legend_handles_labels()
    horizon = int(max(points[-1][0] for points in curves.values()))
    fig.legend(handles, labels, fontsize=8.5, loc="center right", bbox_to_anchor=(0.995, 0.5),
               title=f"regret at T = {horizon}: {' / '.join(insts)}", title_fontsize=8.5)
    fig.tight_layout(rect=(0, 0, 0.72, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)


if __name__ == "__main__":
    main()
