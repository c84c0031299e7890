"""Where the literature's heavy-tailed bandit algorithms sit on Theorem 1's adaptation frontier.

Each policy is measured by the two exponents of the paper's Section 5, over
the same horizons and on the same reward tables (common random numbers):

* ``d``, the slope in ``T`` of the worst case over Theorem 1's two-point
  family of the normalized regret ``R_T / U_eps`` (spike probabilities on a
  half-decade grid, ``frontier.SpikeFamily``);
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

Anytime policies run once to ``T`` and are read at the log-spaced checkpoints
(the regret at ``t`` of a run to ``T`` is the regret of a run to ``t``);
policies that use ``T`` (AdaR-ETC, MR-UCB, MR-APE) run at each horizon.
Every peer is round by round on the engine; AdaR-ETC takes the fast path (its
Median-of-Means estimates as order statistics) with more seeds.  Policies
that assume ``eps`` (or ``p = 1 + eps``, or ``(eps, u)``) run once per panel
with the panel's ``eps``; the others run once and are fitted under both
normalizations.  Every finished run is stored in ``runs/`` and read back when
the script runs again with the same settings: an interrupted run loses at
most the policy it was computing.

Writes ``experiments/peer_frontier/``: ``table.md``, ``peer_frontier.csv``,
``peer_frontier.png`` and ``runs/*.npz``.

    python experiments/peer_frontier.py [--horizon 5000] [--fit-from 500] [--seeds 32] [--adar-seeds 1024] [--only NAME]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb
from htb_jax._src import frontier, sweep
from htb_jax._src.rounding import log_spaced_rounds

OUT = pathlib.Path(__file__).resolve().parent / "peer_frontier"
EPS = (1.0, 0.5)
GAP = 1.0
FIXED_SPIKE = 0.1
CHECKPOINTS = 41  # log-spaced rounds 1..T, eleven per decade at T = 5000
SPIKE_PROBS = htb.powers_of_ten(-5.0, 0.0, 0.5) + (0.5,)
VARIANTS = ("as defined", "best mean 0")


@dataclasses.dataclass(frozen=True)
class Entry:
    """A policy of the experiment.

    Attributes:
      name: the label in the table and figure.
      make: ``eps -> policy`` (``eps`` is ``None`` for a policy that assumes no ``eps``).
      needs_eps: whether the policy is told the panel's ``eps``.
      anytime: whether one run to ``T`` gives the regret at every ``t <= T``.
      knows: what the policy is told (``eps``, ``u``, ``T``), for the table.
      claim: ``eps -> (d, c)`` the source's claimed exponents (``nan`` where none is claimed).
      per_member: ``(instances, eps) -> policy`` for the known-``u`` reference, which is told each
        member's own ``u`` (one run per member).
      max_seeds: a cap on the seeds, for the policies whose round costs ``O(t)`` (APE2, MR-UCB and
        MR-APE recompute the pulled arm's estimate from all its rewards).
    """

    name: str
    make: Callable
    needs_eps: bool
    anytime: bool
    knows: str
    claim: Callable
    per_member: Callable | None = None
    max_seeds: int | None = None


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
        out.append(Entry(name, make, True, False, "eps, T", claim))
    for rho in (0.5, 2 / 3):
        def claim(eps, rho=rho):
            e = htb.theory.force_mom_exponents(rho, eps)
            return float(e.worst_case), float(e.fixed_instance)

        out.append(Entry(f"ForceMoM rho={rho:.3f}", lambda eps, rho=rho: htb.ForceMoM(rho=rho), False, True,
                         "nothing", claim))
    out += [
        Entry("AdaR-UCB", lambda eps: htb.AdaRUCB(), False, True, "nothing", _minimax),
        Entry("R-UCB f=2.1", lambda eps: htb.RobustUCBf(kind="R-UCB", m=2.1, a=0.0), False, True,
              "nothing", lambda eps: (np.nan, 0.0)),
        Entry("R-UCB-G f=(log t)^2", lambda eps: htb.RobustUCBf(kind="R-UCB-G", m=1.0, a=2.0), False, True,
              "nothing", lambda eps: (np.nan, 0.0)),
        # p = 2 is the true order for every member (two-point arms have all moments): one run each,
        # fitted under both normalizations; the claims are the minimax T^(1/p) = T^(1/2)
        Entry("APE2 p=2", lambda eps: htb.APE2(p=2.0), False, True, "p", lambda eps: (0.5, 0.0),
              max_seeds=16),
        Entry("MR-UCB p=2", lambda eps: htb.MRUCB(p=2.0), False, False, "p, T", lambda eps: (0.5, np.nan),
              max_seeds=16),
        Entry("MR-APE p=2", lambda eps: htb.MRAPE(p=2.0), False, False, "p, T", lambda eps: (0.5, np.nan),
              max_seeds=16),
        Entry("Robust UCB, true u", None, True, True, "eps, u", _minimax,
              per_member=lambda inst, eps: htb.RobustUCB(eps, u=jnp.float64(_true_u(inst, eps)[0]))),
        Entry("Robust UCB, u/100", None, True, True, "eps, u (100x too small)", _no_claim,
              per_member=lambda inst, eps: htb.RobustUCB(eps, u=jnp.float64(_true_u(inst, eps)[0] / 100))),
    ]
    return out


def family_instances(variant: str):
    """TwoPoint of batch shape ``(F + 1, 2)``: the spike family, then the fixed member."""
    instances = frontier.SpikeFamily(gap=GAP, spike_probs=SPIKE_PROBS, fixed_spike=FIXED_SPIKE).instances()
    if variant == "as defined":
        return instances
    shift = 2.0 * GAP
    return dataclasses.replace(instances, low=instances.low - shift, high=instances.high - shift)


def checkpoint_rounds(horizon: int) -> np.ndarray:
    """i64[CHECKPOINTS]: the rounds at which ``simulate`` records an anytime run to ``horizon``."""
    return np.asarray(log_spaced_rounds(jnp.int64(horizon), CHECKPOINTS))


def _run_anytime(policy, instances, horizon, seeds, chunk):
    """Regret f64[F + 1, C, S] at the checkpoints of one run to ``horizon``."""
    parts = []
    started = time.perf_counter()
    for first in range(0, seeds, chunk):
        out = htb.simulate(jax.random.key(0), policy, instances, horizon, min(chunk, seeds - first),
                           first_seed=first, num_checkpoints=CHECKPOINTS)
        parts.append(np.asarray(out.regret_curve))  # [F, S, C]
        sweep.progress_bar(min(first + chunk, seeds), seeds, started, sys.stderr)
    return np.moveaxis(np.concatenate(parts, axis=-2), -1, -2)


def _run_horizons(policy, instances, horizons, seeds, chunk):
    """Regret f64[F + 1, H, S] of one run per horizon."""
    parts = []
    started = time.perf_counter()
    for first in range(0, seeds, chunk):
        out = htb.simulate(jax.random.key(0), policy, instances, [int(h) for h in horizons],
                           min(chunk, seeds - first), first_seed=first)
        parts.append(np.asarray(out.regret))  # [F, H, S]
        sweep.progress_bar(min(first + chunk, seeds), seeds, started, sys.stderr)
    return np.concatenate(parts, axis=-1)


def entry_horizons(entry: Entry, horizons: np.ndarray) -> np.ndarray:
    """The fitted horizons of a policy: all of them for an anytime policy (one run gives every
    checkpoint), every other one, the largest included, for a policy that runs once per horizon."""
    return horizons if entry.anytime else horizons[::-1][::2][::-1]


def run_entry(entry: Entry, eps, variant: str, horizons: np.ndarray, seeds: int) -> np.ndarray:
    """Regret f64[F + 1, H', S] of one policy (at one assumed ``eps``) on one family variant, at
    ``entry_horizons(entry, horizons)``."""
    instances = family_instances(variant)
    chunk = min(seeds, 64 if entry.name.startswith("AdaR-ETC") else 8)
    if entry.per_member is not None:
        # one member at a time, each with its own u: the same program for every member
        members = []
        for f in range(instances.batch_shape[0]):
            member = jax.tree.map(lambda p, f=f: p[f:f + 1], instances)
            members.append(_run_anytime(entry.per_member(member, eps), member, int(horizons[-1]), seeds, chunk))
        regret = np.concatenate(members, axis=0)
    elif entry.anytime:
        regret = _run_anytime(entry.make(eps), instances, int(horizons[-1]), seeds, chunk)
    else:
        return _run_horizons(entry.make(eps), instances, entry_horizons(entry, horizons), seeds, chunk)
    return regret[:, np.searchsorted(checkpoint_rounds(int(horizons[-1])), horizons)]


def _stored(name: str, eps, variant: str, horizons: np.ndarray, seeds: int, compute) -> tuple[np.ndarray, float]:
    """``(regret, seconds)``: the stored run of these settings, else ``compute()`` timed and stored."""
    tag = f"{name}|{eps}|{variant}|{horizons.tolist()}|{seeds}|{SPIKE_PROBS}|{FIXED_SPIKE}"
    safe = "".join(ch if ch.isalnum() else "_" for ch in f"{name}_{eps}_{variant}")
    path = OUT / "runs" / f"{safe}.npz"
    if path.exists():
        with np.load(path) as data:
            if str(data["tag"]) == tag:
                return data["regret"], float(data["seconds"])
    started = time.perf_counter()
    regret = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    seconds = time.perf_counter() - started
    np.savez(tmp, regret=regret, tag=tag, seconds=seconds)
    tmp.replace(path)
    return regret, seconds


def fit_row(entry: Entry, eps: float, variant: str, regret: np.ndarray, horizons: np.ndarray,
            seconds: float) -> dict:
    t = horizons.astype(float)
    instances = family_instances(variant)
    scale = np.asarray(htb.intrinsic_scale(instances, eps))
    members = len(SPIKE_PROBS)
    d = htb.fit_worst_case_exponent(t, np.moveaxis(regret[:members], 0, 1), scale[:members])
    c = htb.fit_exponent(t, regret[-1])
    d_claim, c_claim = entry.claim(eps)
    normalized = regret[:members, -1].mean(-1) / scale[:members]  # R_T / U_eps at the largest T
    return dict(
        policy=entry.name, knows=entry.knows, eps=eps, variant=variant,
        d=d.slope, d_low=d.low, d_high=d.high, d_claim=d_claim,
        c=c.slope, c_low=c.low, c_high=c.high, c_claim=c_claim,
        worst_member=SPIKE_PROBS[int(np.argmax(normalized))], worst_normalized=float(np.max(normalized)), fixed_regret=float(regret[-1, -1].mean()),
        off_frontier=c.slope + d.slope * (1 + eps) / eps - (1 + eps) / eps, seconds=seconds,
    )


def table(rows: list[dict], horizon: int, fit_from: int, seeds: int, adar_seeds: int) -> str:
    head = (
        f"Fits over T in [{fit_from}, {horizon}] (anytime policies: every checkpoint, ten per decade; the others: "
        f"every other one, one run each), 95% seed-bootstrap intervals; d: worst case of R_T / U_eps over beta in 1e-5..0.5, c: regret at beta = {FIXED_SPIKE}; "
        "'claim': the source's exponents (- where it claims none); 'off frontier' is c + d (1+eps)/eps - "
        "(1+eps)/eps (0 on Theorem 1's line, negative beyond it).\n\n"
        "| policy | knows | seeds | family | eps | d claim | d measured | c claim | c measured | off frontier | "
        "R_T/U_eps worst (beta) | R_T at beta = 0.1 |\n"
        "|---|---|---:|---|---:|---:|---|---:|---|---:|---|---:|\n"
    )
    fmt = lambda v: "-" if np.isnan(v) else f"{v:.3f}"  # noqa: E731
    return head + "\n".join(
        f"| {r['policy']} | {r['knows']} | {r['seeds']} | {r['variant']} | {r['eps']:g} | {fmt(r['d_claim'])} | "
        f"{r['d']:.3f} [{r['d_low']:.3f}, {r['d_high']:.3f}] | {fmt(r['c_claim'])} | "
        f"{r['c']:.3f} [{r['c_low']:.3f}, {r['c_high']:.3f}] | {r['off_frontier']:+.3f} | "
        f"{r['worst_normalized']:.3g} ({r['worst_member']:.0e}) | {r['fixed_regret']:.4g} |"
        for r in rows
    )


def plot(rows: list[dict], path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["policy"] for r in rows))
    colors = dict(zip(names, plt.cm.tab20(np.linspace(0.0, 1.0, len(names))), strict=True))
    markers = dict(zip(names, "^^^ssDvv<>ph*X", strict=False))
    fig, axes = plt.subplots(len(VARIANTS), len(EPS), figsize=(5.2 * len(EPS), 4.6 * len(VARIANTS)), squeeze=False)
    high = max(1.08, max(max(r["d"], r["c"]) for r in rows) + 0.05)
    low = min(-0.05, min(r["c"] for r in rows) - 0.05)
    handles = {}
    for i, variant in enumerate(VARIANTS):
        for j, eps in enumerate(EPS):
            ax = axes[i, j]
            frontier.frontier_panel(ax, eps, f"{variant}, eps = {eps:g}  (o claim, filled: measured)", high=high)
            ax.set_xlim(0.0, high)
            ax.set_ylim(low, high)
            for r in rows:
                if r["variant"] != variant or r["eps"] != eps:
                    continue
                color = colors[r["policy"]]
                if not (np.isnan(r["d_claim"]) or np.isnan(r["c_claim"])):
                    ax.plot(r["d_claim"], r["c_claim"], "o", mfc="none", mec=color, ms=9)
                handles[r["policy"]] = ax.errorbar(
                    r["d"], r["c"], xerr=[[max(r["d"] - r["d_low"], 0)], [max(r["d_high"] - r["d"], 0)]],
                    yerr=[[max(r["c"] - r["c_low"], 0)], [max(r["c_high"] - r["c"], 0)]],
                    fmt=markers[r["policy"]], color=color, ms=6, capsize=2)
    line = axes[0, 0].get_lines()[0]
    fig.legend([line, *handles.values()], ["Theorem 1 frontier", *handles], loc="lower center", ncol=5, fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.97))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=5000)
    parser.add_argument("--seeds", type=int, default=32)
    parser.add_argument("--adar-seeds", type=int, default=1024)
    parser.add_argument("--fit-from", type=int, default=500)
    parser.add_argument("--only", default=None, help="run only the policies whose name contains this")
    args = parser.parse_args()
    checkpoints = checkpoint_rounds(args.horizon)
    horizons = np.unique(checkpoints[checkpoints >= args.fit_from])
    rows = []
    started = time.perf_counter()
    for entry in entries():
        if args.only and args.only not in entry.name:
            continue
        seeds = args.adar_seeds if entry.name.startswith("AdaR-ETC") else min(args.seeds, entry.max_seeds or args.seeds)
        for variant in VARIANTS:
            assumed = EPS if entry.needs_eps else (None,)
            for eps_assumed in assumed:
                print(f"{entry.name}, {variant}, eps={eps_assumed}", file=sys.stderr)
                regret, seconds = _stored(
                    entry.name, eps_assumed, variant, horizons, seeds,
                    lambda e=entry, a=eps_assumed, v=variant, s=seeds: run_entry(e, a, v, horizons, s))
                for eps in (EPS if eps_assumed is None else (eps_assumed,)):
                    rows.append(fit_row(entry, eps, variant, regret, entry_horizons(entry, horizons), seconds)
                                | {"seeds": regret.shape[-1], "horizons": len(entry_horizons(entry, horizons))})
    text = table(rows, args.horizon, args.fit_from, args.seeds, args.adar_seeds)
    print(text)
    OUT.mkdir(exist_ok=True)
    suffix = "" if args.only is None else "_only"
    (OUT / f"table{suffix}.md").write_text(text + "\n")
    sweep.write_csv(rows, OUT / f"peer_frontier{suffix}.csv")
    plot(rows, OUT / f"peer_frontier{suffix}.png",
         f"Peers on Theorem 1's frontier, T in [{args.fit_from}, {args.horizon}], {args.seeds} seeds "
         f"({args.adar_seeds} AdaR-ETC)")
    print(f"{time.perf_counter() - started:.0f} s; wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
