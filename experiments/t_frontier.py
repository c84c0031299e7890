"""Figure 1 with measured points: AdaR-ETC's (d, c) for a grid of alpha at eps in {1, 0.5, 0.25}.

Writes ``experiments/t_frontier/{frontier.png, frontier.csv, table.md, runs.npz}``.
The same experiment as ``htb-jax frontier``, at full size: 1280 seeds, four
alphas per eps, horizons 10^3..10^18 (each Median-of-Means estimate drawn as
one order statistic, ``simulate``'s default for two-point arms), fits over
T >= 10^10, and spike probabilities down to 1e-16 (the hardest instance of
the balanced schedules at small eps has spike probability ``K B_T / L_T``,
about 2e-12 at T = 10^18).

    python experiments/t_frontier.py
"""

import pathlib

import command_line  # the experiments' shared command line

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "t_frontier"


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args = args_parser.parse_args()
    out = args.out
    config = htb.frontier.TFrontierConfig(
        alphas_per_eps=4,
        horizons=tuple(10**e for e in range(3, 19)),
        fit_from=10**10,
        num_seeds=1280,
        seed_chunk=128,
        family=htb.frontier.SpikeFamily(spike_probs=htb.powers_of_ten(-16.0, 0.0, 0.5) + (0.5,)),
    )
    result = htb.frontier.run_t_frontier(config)
    out.mkdir(parents=True, exist_ok=True)
    table = htb.frontier.t_frontier_table(result)
    print(table)
    (out / "table.md").write_text(table + "\n")
    htb.frontier.write_csv(result.rows, out / "frontier.csv")
    htb.frontier.save_runs(result.runs, out / "runs.npz")
    htb.frontier.plot_t_frontier(result, out / "frontier.png")
    print(f"{result.runs.seconds:.0f} s; wrote {out}")


if __name__ == "__main__":
    main()
