"""Theorem 6: AdaR-ETC calibrated at eps_bar in {0.25, 0.5, 1}, measured across the true eps.

The distribution-free T-exponent, worst case over Theorem 1's two-point
family normalized by ``U_eps``, against the calibrated profile of Theorem 6
(``(1+2eps_bar+eps eps_bar)/((1+eps)(1+2eps_bar))`` for ``eps <= eps_bar``,
``(1+eps_bar)/(1+2eps_bar)`` above).  Writes ``experiments/calibration/``.

    python experiments/calibration.py            # simulate and fit
    python experiments/calibration.py --refit    # fit the runs recorded in --out again
"""

import functools
import pathlib

import command_line  # the experiments' shared command line
import jax.numpy as jnp

import htb_jax as htb

OUT = pathlib.Path(__file__).resolve().parent / "calibration"
EPS_BAR = (0.25, 0.5, 1.0)
EPS = (0.25, 0.5, 0.75, 1.0)
HORIZONS = tuple(10**e for e in range(3, 19))
FIT_FROM = 10**10
SEEDS = 1280
# Spike probabilities down to 1e-16: the hardest instance at T = 10^18 for small eps.
FAMILY = htb.frontier.SpikeFamily(spike_probs=htb.powers_of_ten(-16.0, 0.0, 0.5) + (0.5,))


def profile(eps, eps_bar):
    return htb.theory.calibrated_profile(eps, eps_bar).free.t


def main() -> None:
    args_parser = command_line.parser(__doc__, OUT)
    args_parser.add_argument("--refit", action="store_true",
                             help="read runs.npz from --out and fit its runs again (no simulation)")
    args = args_parser.parse_args()
    out = args.out
    policy = htb.AdaRETC.calibrated(jnp.asarray(EPS_BAR))
    if args.refit:  # fit the runs recorded in --out again (no simulation)
        command_line.require_recorded(args_parser, args, "--refit", "runs.npz")
        runs = htb.frontier.load_runs(out / "runs.npz", FAMILY)
    else:
        runs = htb.frontier.run_family(policy, FAMILY, HORIZONS, SEEDS, seed_chunk=128)
    labels = [f"eps_bar={b:g}" for b in EPS_BAR]
    entries = [(labels[g], g, e, profile(e, b)) for g, b in enumerate(EPS_BAR) for e in EPS]
    rows = htb.frontier.eps_profile_rows(runs, entries, FIT_FROM)
    note = (
        f"Fits over T in [{FIT_FROM:.0e}, {max(HORIZONS):.0e}], {SEEDS} seeds, 95% bootstrap intervals; "
        "'finite T' is the slope of the schedule's estimation term T (K B_T / L_T)^(eps/(1+eps)) over the same "
        "horizons; for eps > eps_bar the theory is the exploration term's beta_bar."
    )
    curves = {label: functools.partial(profile, eps_bar=b) for label, b in zip(labels, EPS_BAR, strict=True)}
    htb.frontier.write_eps_profile(rows, runs, out, "calibration", note, curves, "AdaR-ETC calibrated at eps_bar (Theorem 6)")


if __name__ == "__main__":
    main()
