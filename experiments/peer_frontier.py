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
``peer_frontier.png`` and ``runs/``.

    python experiments/peer_frontier.py [--horizon 1e7] [--forced-horizon 1e6] [--etc-horizon 1e7] [--slow-horizon 5000]
        [--seeds 8] [--slow-seeds 32] [--adar-seeds 1024] [--only NAME]
"""

from __future__ import annotations

import dataclasses
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


def entry_horizons(entry: Entry, args) -> tuple[list[int], int]:
    """``(horizons, seeds)`` of a policy, by the cost of its round."""
    top, seeds = {
        "fast path": (args.etc_horizon, args.adar_seeds),
        "O(K)": (args.horizon, args.seeds),
        "O(K) + forced MoM": (args.forced_horizon, args.seeds),
        "O(t)": (args.slow_horizon, args.slow_seeds),
    }[entry.cost]
    decades = 1 if entry.cost == "O(t)" else 2
    horizons = htb.frontier.checkpoint_horizons(top, max(1, top // 10**decades))
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


def table(rows: list[dict]) -> str:
    head = (
        "Fits over the last two decades of T for the policies whose round costs O(K) (UCB1, R-UCB, R-UCB-G and "
        "AdaR-ETC on its fast path to 1e7, ForceMoM to 1e6) and over the last decade for those whose round costs "
        "O(t) (to 5000); anytime policies are read at every checkpoint, ten per decade, the others run once per "
        "horizon (the O(t) ones at every other checkpoint); 95% seed-bootstrap intervals; d: worst case of "
        f"R_T / U_eps over beta in 1e-5..0.5, c: regret at beta = {FIXED_SPIKE}; 'claim': the source's exponents "
        "(- where it claims none); 'finite T': the slopes AdaR-ETC's schedule implies over the same horizons; "
        "'off frontier' is c + d (1+eps)/eps - (1+eps)/eps (0 on Theorem 1's line, negative beyond it: a "
        "finite-T slope, Theorem 1 bounds exponents as T -> inf).\n\n"
        "| policy | knows | round | T | seeds | family | eps | d claim | d finite T | d measured | c claim "
        "| c finite T | c measured | off frontier | R_T/U_eps worst (beta) | R_T at beta = 0.1 |\n"
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


def main() -> None:
    parser = command_line.parser(__doc__, OUT)
    parser.add_argument("--horizon", type=lambda x: int(float(x)), default=10**7)
    parser.add_argument("--forced-horizon", type=lambda x: int(float(x)), default=10**6)
    parser.add_argument("--etc-horizon", type=lambda x: int(float(x)), default=10**7)
    parser.add_argument("--slow-horizon", type=lambda x: int(float(x)), default=5000)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--slow-seeds", type=int, default=32)
    parser.add_argument("--adar-seeds", type=int, default=1024)
    parser.add_argument("--only", default=None, help="run only the policies whose name contains this")
    args = parser.parse_args()
    out = args.out
    rows, measurements, claims = [], [], {}
    started = time.perf_counter()
    for entry in entries():
        if args.only and args.only not in entry.name:
            continue
        for variant in VARIANTS:
            for m in measure_entry(entry, variant, args):
                d_claim, c_claim = entry.claim(m.eps)
                claims[(m.name, m.eps)] = (d_claim, c_claim)
                measurements.append(m)
                rows.append(m.row() | {"knows": entry.knows, "cost": entry.cost, "d_claim": d_claim,
                                       "c_claim": c_claim})
    text = table(rows)
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.only is None else "_only"
    (out / f"table{suffix}.md").write_text(text + "\n")
    htb.frontier.write_csv(rows, out / f"peer_frontier{suffix}.csv")
    htb.frontier.plot_measurements(
        measurements, out / f"peer_frontier{suffix}.png", claims=claims,
        title=(f"Peers on Theorem 1's frontier: finite-T slopes, O(K) rounds to T = {args.horizon:.0e} "
               f"(ForceMoM {args.forced_horizon:.0e}, AdaR-ETC {args.etc_horizon:.0e}), O(t) rounds to "
               f"T = {args.slow_horizon}"),
    )
    print(f"{time.perf_counter() - started:.0f} s; wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
