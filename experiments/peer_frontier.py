"""Where the literature's heavy-tailed bandit algorithms sit on Theorem 1's adaptation frontier.

Each policy is measured by ``htb.frontier.measure``: the two exponents of the
paper's Section 5, on the same reward tables (common random numbers):

* ``d``, the slope in ``T`` of the worst case over Theorem 1's two-point
  family of the normalized regret ``R_T / U_eps`` (spike probabilities on a
  half-decade grid, ``htb.frontier.SpikeFamily``);
* ``c``, the slope of the regret on one fixed member, the spike probability
  ``FIXED_SPIKE`` = 0.1: the optimal arm pays 20 with probability 0.1, so a
  policy that has seen few of its pulls takes it for the worse arm (commits and
  indices can go wrong, unlike at 0.9 where one pull tells the arms apart).

The family runs twice: as defined (arm 0 pays ``Delta = 1``, arm 1 is the
spike arm with mean ``2 Delta``) and shifted by ``-2 Delta`` so that the best
mean is 0, the necessary condition of AdaR-UCB's truncated non-positivity
(``E[X 1{|X| > M}] <= 0`` for every ``M``; the shifted spike arm still has
``E[X 1{|X| > M}] = 2 Delta (1 - beta) > 0`` for ``2 Delta <= M`` below its
spike, so no member with a spike meets the full assumption).  ``U_eps`` is
each variant's own ``max_i (E|X_i|^(1+eps))^(1/(1+eps))``.

**Horizons by cost.**  A policy whose round costs O(K) (UCB1, R-UCB and
R-UCB-G with the running mean) runs to ``--horizon`` (10^7) and is fitted
over its last two decades; ForceMoM, O(K) a round but recomputing the forced
arm's Median-of-Means on every forced round (about 20 times UCB1's cost per
run here), runs to ``--forced-horizon`` (10^6); AdaR-ETC takes the fast path
(its Median-of-Means estimates as order statistics, O(K) per run) to
``--etc-horizon`` (10^7) with more seeds.  A policy whose round costs O(t) by
definition (AdaR-UCB's sorted insertion, APE2, MR-UCB and MR-APE recomputing
the pulled arm's estimate from all its rewards, Robust UCB's truncated mean
whose levels move every round) stays at ``--slow-horizon`` (5000), fitted over
its last decade: its whole run costs O(T^2).  Anytime policies run once to
``T`` and are read at the log-spaced checkpoints (ten per decade); policies
that use ``T`` (AdaR-ETC, MR-UCB, MR-APE) run at each horizon (every other
checkpoint for the O(t) ones).  Policies that assume ``eps`` (or
``(eps, u)``) run once per panel with the panel's ``eps``; the others run once
and are fitted under both normalizations.  Every finished chunk of seeds is
stored in ``runs/`` and read back when the script runs again with the same
settings.

Writes ``experiments/peer_frontier/``: ``table.md``, ``peer_frontier.csv``,
``peer_frontier.png`` and ``runs/``.  The table and the figure are drawn from
the CSV's rows: ``--replot`` draws them again from ``peer_frontier.csv`` in
``--out`` without simulating.

    python experiments/peer_frontier.py [--horizon 1e7] [--forced-horizon 1e6] [--etc-horizon 1e7] [--slow-horizon 5000]
        [--seeds 8] [--slow-seeds 32] [--adar-seeds 1024] [--only TEXT]
    python experiments/peer_frontier.py --replot   # table.md and the figure again from peer_frontier.csv
"""

from __future__ import annotations

import csv
import dataclasses
import math
import pathlib
import sys
import time
from collections.abc import Callable

import command_line  # the experiments' shared command line
import jax.numpy as jnp
import numpy as np

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "peer_frontier"
EPS = (1.0, 0.5)
GAP = 1.0
FIXED_SPIKE = 0.1
SPIKE_PROBS = htb.powers_of_ten(-5.0, 0.0, 0.5) + (0.5,)
FAMILY = htb.frontier.SpikeFamily(gap=GAP, spike_probs=SPIKE_PROBS, fixed_spike=FIXED_SPIKE)
VARIANTS = ("as defined", "best mean 0")


@dataclasses.dataclass(frozen=True)
class Entry:
    """A policy of the experiment.

    Attributes:
      name: the label in the table and figure.
      make: ``eps -> policy`` (``eps`` is ``None`` for a policy that assumes no ``eps``), or for a
        per-member policy ``eps -> (member -> policy)``.
      needs_eps: whether the policy is told the panel's ``eps``.
      knows: what the policy is told (``eps``, ``u``, ``T``), for the table.
      claim: ``eps -> (d, c)`` the source's claimed exponents (``nan`` where none is claimed).
      cost: ``"fast path"``, ``"O(K)"``, ``"O(K) + forced MoM"`` or ``"O(t)"``: the cost of a round,
        which sets the horizons.
      anytime: passed to ``measure`` (``None``: the built-ins that never read ``T`` are read at
        checkpoints); ``True`` for the per-member policies, which never read ``T`` either.
    """

    name: str
    make: Callable
    needs_eps: bool
    knows: str
    claim: Callable
    cost: str
    anytime: bool | None = None


def _minimax(eps):
    return 1.0 / (1.0 + eps), 0.0


def _no_claim(eps):
    return np.nan, np.nan


def _true_u(instances, eps):
    """Each member's ``u = max_i E|X_i|^(1+eps)`` (the truncated Robust UCB's bound), f64[F]."""
    return np.max(np.asarray(instances.abs_moment(jnp.asarray(eps, jnp.float64))), axis=-1)


def entries() -> list[Entry]:
    out = []
    for alpha in ("balanced", 0.8, 0.9):
        def make(eps, alpha=alpha):
            a = float(htb.theory.balanced_alpha(eps)) if alpha == "balanced" else alpha
            return htb.AdaRETC(eps=eps, alpha=a, q=0.0)

        def claim(eps, alpha=alpha):
            a = float(htb.theory.balanced_alpha(eps)) if alpha == "balanced" else alpha
            return a, float(htb.theory.beta_alpha(a, eps))

        name = "AdaR-ETC alpha*(eps)" if alpha == "balanced" else f"AdaR-ETC alpha={alpha}"
        out.append(Entry(name, make, True, "eps, T", claim, "fast path"))
    for rho in (0.5, 2 / 3):
        def claim(eps, rho=rho):
            e = htb.theory.force_mom_exponents(rho, eps)
            return float(e.worst_case), float(e.fixed_instance)

        out.append(Entry(f"ForceMoM rho={rho:.3f}", lambda eps, rho=rho: htb.ForceMoM(rho=rho), False, "nothing",
                         claim, "O(K) + forced MoM"))
    out += [
        Entry("UCB1", lambda eps: htb.UCB1(), False, "nothing", _no_claim, "O(K)"),
        Entry("R-UCB f=2.1", lambda eps: htb.RobustUCBf(kind="R-UCB", m=2.1, a=0.0), False, "nothing",
              lambda eps: (np.nan, 0.0), "O(K)"),
        Entry("R-UCB-G f=(log t)^2", lambda eps: htb.RobustUCBf(kind="R-UCB-G", m=1.0, a=2.0), False, "nothing",
              lambda eps: (np.nan, 0.0), "O(K)"),
        Entry("AdaR-UCB", lambda eps: htb.AdaRUCB(), False, "nothing", _minimax, "O(t)"),
        # p = 2 is the true order for every member (two-point arms have all moments): one run each,
        # fitted under both normalizations; the claims are the minimax T^(1/p) = T^(1/2)
        Entry("APE2 p=2", lambda eps: htb.APE2(p=2.0), False, "p", lambda eps: (0.5, 0.0), "O(t)"),
        Entry("MR-UCB p=2", lambda eps: htb.MRUCB(p=2.0), False, "p, T", lambda eps: (0.5, np.nan), "O(t)"),
        Entry("MR-APE p=2", lambda eps: htb.MRAPE(p=2.0), False, "p, T", lambda eps: (0.5, np.nan), "O(t)"),
        Entry("Robust UCB, true u", lambda eps: _told_u(eps, 1.0), True, "eps, u", _minimax, "O(t)", True),
        Entry("Robust UCB, u/100", lambda eps: _told_u(eps, 0.01), True, "eps, u (100x too small)", _no_claim,
              "O(t)", True),
    ]
    return out


def _told_u(eps, factor):
    """``member -> RobustUCB(eps, u)`` with the member's own ``u`` times ``factor`` (the members' policies
    run as one grid paired with the members: one program)."""

    def told(member):
        return htb.RobustUCB(eps, u=jnp.float64(_true_u(member, eps)[0] * factor))

    told.__qualname__ = f"RobustUCB told u x {factor:g}"
    return told


def family_instances(variant: str):
    """TwoPoint of batch shape ``(F + 1, 2)``: the spike family, then the fixed member."""
    instances = FAMILY.instances()
    if variant == "as defined":
        return instances
    shift = 2.0 * GAP
    return dataclasses.replace(instances, low=instances.low - shift, high=instances.high - shift)


def top_horizons(args) -> dict[str, int]:
    """The largest horizon of each cost of a round (``Entry.cost``), from the command line."""
    return {"fast path": args.etc_horizon, "O(K)": args.horizon, "O(K) + forced MoM": args.forced_horizon,
            "O(t)": args.slow_horizon}


def entry_horizons(entry: Entry, args) -> tuple[list[int], int]:
    """``(horizons, seeds)`` of a policy, by the cost of its round."""
    top = top_horizons(args)[entry.cost]
    seeds = {"fast path": args.adar_seeds, "O(K)": args.seeds, "O(K) + forced MoM": args.seeds,
             "O(t)": args.slow_seeds}[entry.cost]
    decades = 1 if entry.cost == "O(t)" else 2
    horizons = htb.frontier.checkpoint_horizons(top, max(2, top // 10**decades))  # a bandit needs T >= 2
    if entry.cost == "O(t)" and entry.knows.endswith("T"):  # one run per horizon: every other checkpoint
        horizons = horizons[::-1][::2][::-1]
    return [int(h) for h in horizons], seeds


def measure_entry(entry: Entry, variant: str, args) -> list:
    """The measurements of one policy on one family variant (one per eps)."""
    horizons, seeds = entry_horizons(entry, args)
    safe = "".join(ch if ch.isalnum() else "_" for ch in f"{entry.name}_{variant}")
    out = []
    for assumed in (EPS if entry.needs_eps else (None,)):
        print(f"{entry.name}, {variant}, eps={assumed}: T {horizons[0]}..{horizons[-1]}, {seeds} seeds",
              file=sys.stderr)
        out += htb.frontier.measure(
            entry.make(assumed), EPS if assumed is None else (assumed,), horizons, seeds,
            family=family_instances(variant), family_name=variant, name=entry.name, anytime=entry.anytime,
            seed_chunk=min(seeds, 64 if entry.cost == "fast path" else 8),
            store=str(args.out / "runs" / f"{safe}_{assumed}_T{horizons[-1]}_S{seeds}"), progress=True,
        )
    return out


def _number(x: float) -> str:
    """A horizon or a probability as the table's note writes it: 5000, 0.5, 1e7, 1e-5."""
    text = f"{x:.6g}" if 1e-4 <= x < 1e5 else f"{x:.6e}"
    mantissa, _, exponent = text.partition("e")
    return mantissa.rstrip("0").rstrip(".") + f"e{int(exponent)}" if exponent else mantissa


def table(rows: list[dict], tops: dict[str, int]) -> str:
    """The markdown table of the CSV's rows; ``tops``: the largest horizon of each cost of a round."""
    fast, running, forced = (_number(tops[cost]) for cost in ("fast path", "O(K)", "O(K) + forced MoM"))
    o_k = (f"UCB1, R-UCB, R-UCB-G and AdaR-ETC on its fast path to {running}" if fast == running
           else f"UCB1, R-UCB and R-UCB-G to {running}, AdaR-ETC on its fast path to {fast}")
    head = (
        f"Fits over the last two decades of T for the policies whose round costs O(K) ({o_k}, ForceMoM to "
        f"{forced}) and over the last decade for those whose round costs O(t) (to {_number(tops['O(t)'])}); "
        "anytime policies are read at every checkpoint, ten per decade, the others run once per "
        "horizon (the O(t) ones at every other checkpoint); 95% seed-bootstrap intervals; d: worst case of "
        f"R_T / U_eps over beta in {_number(min(SPIKE_PROBS))}..{_number(max(SPIKE_PROBS))}, c: regret at "
        f"beta = {FIXED_SPIKE}; 'claim': the source's exponents "
        "(- where it claims none); 'finite T': the slopes AdaR-ETC's schedule implies over the same horizons; "
        "'off frontier' is c + d (1+eps)/eps - (1+eps)/eps (0 on Theorem 1's line, negative beyond it: a "
        "finite-T slope, Theorem 1 bounds exponents as T -> inf).\n\n"
        "| policy | knows | round | T | seeds | family | eps | d claim | d finite T | d measured | c claim "
        f"| c finite T | c measured | off frontier | R_T/U_eps worst (beta) | R_T at beta = {FIXED_SPIKE} |\n"
        "|---|---|---|---|---:|---|---:|---:|---:|---|---:|---:|---|---:|---|---:|\n"
    )
    fmt = lambda v: "-" if np.isnan(v) else f"{v:.3f}"  # noqa: E731
    span = lambda r: f"{r['t_min']:.0e}..{r['t_max']:.0e}" if r["t_max"] >= 10**5 else f"{r['t_min']}..{r['t_max']}"  # noqa: E731
    return head + "\n".join(
        f"| {r['policy']} | {r['knows']} | {r['cost']} | {span(r)} | {r['seeds']} | {r['family']} | {r['eps']:g} "
        f"| {fmt(r['d_claim'])} | {fmt(r['d_finite_t'])} | {r['d']:.3f} [{r['d_low']:.3f}, {r['d_high']:.3f}] "
        f"| {fmt(r['c_claim'])} | {fmt(r['c_finite_t'])} | {r['c']:.3f} [{r['c_low']:.3f}, {r['c_high']:.3f}] "
        f"| {r['off_frontier']:+.3f} | {r['worst_normalized']:.3g} ({SPIKE_PROBS[r['worst_member']]:.0e}) "
        f"| {r['fixed_regret']:.4g} |"
        for r in rows
    )


def measurement(row: dict) -> htb.frontier.Measurement:
    """A row of the CSV as the ``Measurement`` that ``plot_measurements`` draws: its fits, finite-T slopes
    and ``note()`` (the row's note).  The CSV keeps the ends of the horizons and no per-seed regrets:
    ``horizons`` holds the two ends, and the regret, scale and exploration arrays are empty."""
    def fit(x):
        return htb.ExponentFit(slope=row[x], intercept=math.nan, low=row[f"{x}_low"], high=row[f"{x}_high"],
                               level=0.95, num_bootstrap=1000)

    return htb.frontier.Measurement(
        name=row["policy"], family_name=row["family"], eps=row["eps"],
        horizons=np.array([row["t_min"], row["t_max"]], np.int64), regret=np.empty((0, 0, row["seeds"])),
        scale=np.empty(0), exploration=np.empty(0, np.int64), d=fit("d"), c=fit("c"),
        d_finite_t=row["d_finite_t"], c_finite_t=row["c_finite_t"], block_share=row["block_share"],
        anytime=row["anytime"], seconds=row["seconds"], resumed_chunks=0,
    )


def plot(rows: list[dict], path, tops: dict[str, int]) -> None:
    """The figure of the CSV's rows.  Each point's note under its panel is ``Measurement.note()``, the CSV's
    note of the row (``notes`` of ``plot_measurements`` would give one policy the same note in both family
    variants: they are keyed by policy and eps)."""
    htb.frontier.plot_measurements(
        [measurement(r) for r in rows], path,
        claims={(r["policy"], r["eps"]): (r["d_claim"], r["c_claim"]) for r in rows},
        title=(f"Peers on Theorem 1's frontier: finite-T slopes, O(K) rounds to T = {tops['O(K)']:.0e} "
               f"(ForceMoM {tops['O(K) + forced MoM']:.0e}, AdaR-ETC {tops['fast path']:.0e}), O(t) rounds to "
               f"T = {tops['O(t)']}"),
    )


def read_rows(path: pathlib.Path) -> list[dict]:
    """The rows of ``peer_frontier.csv``, with the types ``Measurement.row()`` gave them."""
    kinds = dict(policy=str, family=str, note=str, knows=str, cost=str, horizons=int, t_min=int, t_max=int,
                 seeds=int, worst_member=int, anytime=lambda v: v == "True")
    with open(path, newline="") as f:
        return [{k: kinds.get(k, float)(v) for k, v in r.items()} for r in csv.DictReader(f)]


def add_arguments(parser) -> None:
    """The experiment's options, on the shared parser."""
    parser.add_argument("--horizon", type=command_line.integer(3), default=10**7,
                        help="largest T of the policies whose round costs O(K): UCB1, R-UCB, R-UCB-G (default 1e7)")
    parser.add_argument("--forced-horizon", type=command_line.integer(3), default=10**6, help="largest T of ForceMoM (default 1e6)")
    parser.add_argument("--etc-horizon", type=command_line.integer(3), default=10**7,
                        help="largest T of AdaR-ETC on its fast path (default 1e7)")
    parser.add_argument("--slow-horizon", type=command_line.integer(4), default=5000,
                        help="largest T of the policies whose round costs O(t) (default 5000)")
    parser.add_argument("--seeds", type=command_line.integer(2), default=8, help="seeds of the O(K) policies and ForceMoM (default 8)")
    parser.add_argument("--slow-seeds", type=command_line.integer(2), default=32, help="seeds of the O(t) policies (default 32)")
    parser.add_argument("--adar-seeds", type=command_line.integer(2), default=1024, help="seeds of AdaR-ETC (default 1024)")
    parser.add_argument("--only", default=None, metavar="TEXT",
                        help="run only the policies whose name contains TEXT (a case-sensitive substring, "
                        "e.g. ForceMoM); the results go to table_only.md, peer_frontier_only.csv and "
                        "peer_frontier_only.png")
    parser.add_argument("--replot", action="store_true",
                        help="draw table.md and the figure again from peer_frontier.csv in --out (no simulation; "
                        "takes no other option but --out)")


def main() -> None:
    parser = command_line.parser(__doc__, OUT)
    add_arguments(parser)
    args = parser.parse_args()
    out = args.out
    if args.replot:
        given = [f"--{k.replace('_', '-')}" for k, v in vars(args).items()
                 if k not in ("out", "replot") and v != parser.get_default(k)]
        if given:
            parser.error(f"--replot runs nothing and takes no option but --out; got {', '.join(given)}")
        command_line.require_recorded(parser, args, "--replot", "peer_frontier.csv")
        rows = read_rows(out / "peer_frontier.csv")
        tops = {r["cost"]: r["t_max"] for r in rows}
        (out / "table.md").write_text(table(rows, tops) + "\n")
        plot(rows, out / "peer_frontier.png", tops)
        return
    if args.only == "":  # every name contains it: the whole experiment, under the --only files' names
        parser.error("--only must be part of a policy's name, not empty; leave --only out to run every policy")
    chosen = [entry for entry in entries() if args.only is None or args.only in entry.name]
    if not chosen:
        names = "; ".join(entry.name for entry in entries())
        parser.error(f"--only must be part of a policy's name (case-sensitive), one of: {names}; got {args.only!r}")
    rows = []
    started = time.perf_counter()
    for entry in chosen:
        for variant in VARIANTS:
            for m in measure_entry(entry, variant, args):
                d_claim, c_claim = entry.claim(m.eps)
                rows.append(m.row() | {"knows": entry.knows, "cost": entry.cost, "d_claim": d_claim,
                                       "c_claim": c_claim})
    tops = top_horizons(args)
    text = table(rows, tops)
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.only is None else "_only"
    (out / f"table{suffix}.md").write_text(text + "\n")
    htb.frontier.write_csv(rows, out / f"peer_frontier{suffix}.csv")
    plot(rows, out / f"peer_frontier{suffix}.png", tops)
    print(f"{time.perf_counter() - started:.0f} s; wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as stopped:  # Ctrl-C: one line and status 130; the finished chunks are kept
        said = str(stopped) if getattr(stopped, "directory", None) else "interrupted"  # htb.Interrupted's count
        print(f"peer_frontier.py: {said}; the same command resumes from what --out's runs/ holds", file=sys.stderr)
        sys.exit(130)
