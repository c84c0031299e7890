"""The ``htb-jax`` command line."""

from __future__ import annotations

import argparse
import os
import sys

import htb_jax  # noqa: F401  (enables x64 before anything is traced)
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
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the output directory {args.out!r}: {e.strerror}") from None
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
    _sweep_parser(sub)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _run_sweep(args)
    except ValueError as e:
        print(f"htb-jax: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
