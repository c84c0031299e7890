"""The ``htb-jax`` command line."""

from __future__ import annotations

import argparse
import os
import sys

import htb_jax  # noqa: F401  (enables x64 before anything is traced)
from htb_jax._src import frontier as frontier_lib
from htb_jax._src import sweep as sweep_lib


def _floats(text: str) -> tuple[float, ...]:
    def one(t: str) -> float:
        if "/" in t:
            num, den = t.split("/")
            return float(num) / float(den)
        return float(t)

    return tuple(one(t) for t in text.split(",") if t)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(float(t)) for t in text.split(",") if t)


def _sweep_parser(sub) -> None:
    d = sweep_lib.SweepConfig()
    p = sub.add_parser(
        "sweep",
        help="AdaR-ETC regret over an (alpha, q) grid and horizons",
        description=(
            "Simulate AdaR-ETC (Algorithm 1) on an equal-gap Pareto instance over a grid of "
            "(alpha, q) and horizons T, print mean regret with standard errors, and write "
            "sweep.csv and sweep.png. With no flags it runs an embedded default."
        ),
    )
    p.add_argument("--arms", type=int, default=d.num_arms, help="number of arms K (default %(default)s)")
    p.add_argument("--gap", type=float, default=d.gap, help="gap Delta (default %(default)s)")
    p.add_argument("--pareto-shape", type=float, default=d.pareto_shape, help="Pareto tail index (default %(default)s)")
    p.add_argument("--eps", type=float, default=d.eps, help="tail exponent of the schedules, in (0, 1] (default %(default)s)")
    p.add_argument("--alphas", type=_floats, default=d.alphas, help="comma-separated alphas, fractions allowed (default 2/3,0.75,0.85,0.95)")
    p.add_argument("--qs", type=_floats, default=d.qs, help="comma-separated qs (default 0,1/3)")
    p.add_argument("--horizons", type=_ints, default=d.horizons, help="comma-separated horizons (default 1e3,1e4,1e5,1e6)")
    p.add_argument("--seeds", type=int, default=d.num_seeds, help="seeds per grid point (default %(default)s)")
    p.add_argument("--seed-chunk", type=int, default=d.seed_chunk, help="seeds per compiled call (default %(default)s)")
    p.add_argument("--key", type=int, default=d.key, help="root random key (default %(default)s)")
    p.add_argument("--out", default="htb-jax-sweep", help="output directory (default %(default)s)")


def _frontier_parser(sub) -> None:
    d = frontier_lib.TFrontierConfig()
    p = sub.add_parser(
        "frontier",
        help="measured T-frontier of AdaR-ETC next to Theorem 1 (the main job)",
        description=(
            "Measure AdaR-ETC's distribution-free exponent d (worst case over Theorem 1's two-point "
            "family of the regret normalized by U_eps) and distribution-dependent exponent c (one fixed "
            "instance) for a grid of alpha at several eps, with bootstrap intervals; print the "
            "measured-vs-theory table and write frontier.png, frontier.csv, table.md and runs.npz. "
            "With no flags it runs an embedded default (about two minutes on a 2-core CPU); raise "
            "--seeds, --horizons and --alphas-per-eps on a GPU."
        ),
    )
    p.add_argument("--eps", type=_floats, default=d.eps_values, help="comma-separated eps values (default 1,0.5,0.25)")
    p.add_argument("--alphas-per-eps", type=int, default=d.alphas_per_eps, help="alpha grid size per eps, from alpha*(eps) to --max-alpha (default %(default)s)")
    p.add_argument("--max-alpha", type=float, default=d.max_alpha, help="largest alpha (default %(default)s)")
    p.add_argument("--horizons", type=_ints, default=d.horizons, help="comma-separated horizons (default 1e3,1e4,...,1e15)")
    p.add_argument("--fit-from", type=lambda t: int(float(t)), default=d.fit_from, help="smallest horizon in the fits (default 1e9)")
    p.add_argument("--seeds", type=int, default=d.num_seeds, help="seeds (default %(default)s)")
    p.add_argument("--seed-chunk", type=int, default=d.seed_chunk, help="seeds per compiled call (default %(default)s)")
    p.add_argument("--key", type=int, default=d.key, help="root random key (default %(default)s)")
    p.add_argument("--out", default="htb-jax-frontier", help="output directory (default %(default)s)")


def _output_dir(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the output directory {path!r}: {e.strerror}") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"the output directory {path!r} is not writable.")


def _run_frontier(args) -> int:
    config = frontier_lib.TFrontierConfig(
        eps_values=args.eps,
        alphas_per_eps=args.alphas_per_eps,
        max_alpha=args.max_alpha,
        horizons=args.horizons,
        fit_from=args.fit_from,
        num_seeds=args.seeds,
        seed_chunk=args.seed_chunk,
        key=args.key,
    )
    config.validate()
    _output_dir(args.out)
    fam = config.family
    print(
        f"AdaR-ETC T-frontier: eps in {list(config.eps_values)}, {config.alphas_per_eps} alphas each; "
        f"worst case over {len(fam.spike_probs)} two-point instances (K={fam.num_arms}, spike probability "
        f"{min(fam.spike_probs):g}..{max(fam.spike_probs):g}); T = {min(config.horizons):.0e}..{max(config.horizons):.0e}; "
        f"{config.num_seeds} seeds",
        file=sys.stderr,
    )
    result = frontier_lib.run_t_frontier(config)
    table = frontier_lib.t_frontier_table(result)
    print(table)
    paths = {name: os.path.join(args.out, name) for name in ("frontier.png", "frontier.csv", "table.md", "runs.npz")}
    frontier_lib.plot_t_frontier(result, paths["frontier.png"])
    frontier_lib.write_csv(result.rows, paths["frontier.csv"])
    frontier_lib.save_runs(result.runs, paths["runs.npz"])
    with open(paths["table.md"], "w") as f:
        f.write(table + "\n")
    print(f"\n{result.runs.seconds:.1f} s (compilation included); wrote {', '.join(paths.values())}", file=sys.stderr)
    return 0


def _run_sweep(args) -> int:
    config = sweep_lib.SweepConfig(
        num_arms=args.arms,
        gap=args.gap,
        pareto_shape=args.pareto_shape,
        eps=args.eps,
        alphas=args.alphas,
        qs=args.qs,
        horizons=args.horizons,
        num_seeds=args.seeds,
        seed_chunk=args.seed_chunk,
        key=args.key,
    )
    config.validate()
    _output_dir(args.out)
    print(
        f"AdaR-ETC sweep: K={config.num_arms} equal-gap Pareto({config.pareto_shape:g}) arms, gap "
        f"{config.gap:g}; eps={config.eps:g}; {len(config.alphas)}x{len(config.qs)} (alpha, q) grid; "
        f"T in {list(config.horizons)}; {config.num_seeds} seeds",
        file=sys.stderr,
    )
    result = sweep_lib.run_sweep(config)
    rows = sweep_lib.table_rows(result)
    print(sweep_lib.format_table(rows))
    csv_path = os.path.join(args.out, "sweep.csv")
    png_path = os.path.join(args.out, "sweep.png")
    sweep_lib.write_csv(rows, csv_path)
    sweep_lib.plot(result, png_path)
    print(f"\n{result.seconds:.1f} s (compilation included); wrote {csv_path} and {png_path}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="htb-jax",
        description="htb_jax: simulate heavy-tailed bandits and the AdaR-ETC regret frontier.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _frontier_parser(sub)
    _sweep_parser(sub)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _run_frontier(args) if args.command == "frontier" else _run_sweep(args)
    except ValueError as e:
        print(f"htb-jax: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
