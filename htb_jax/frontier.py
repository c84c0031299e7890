"""Measured regret exponents next to the paper's.

``htb_jax.frontier`` runs the worst-case searches behind the distribution-free
exponent (two-point, Pareto and alpha-stable families), fits the exponents with their
finite-T predictions and verdicts, and runs, tabulates and plots the
T-frontier experiment of ``htb-jax frontier``.  :func:`measure` puts any policy
(built-in or a user's) on Theorem 1's frontier: its ``d`` and ``c`` with
intervals, drawn against the line by :func:`plot_measurements`; :func:`frontier_panel`
and :func:`plot_point` draw the line and any measured point on a figure of one's own.
"""

from htb_jax._src.frontier import (
    FamilyRuns,
    Measurement,
    ParetoFamily,
    SpikeFamily,
    StableFamily,
    TFrontierConfig,
    TFrontierResult,
    checkpoint_horizons,
    dependent_exponent,
    eps_profile_rows,
    fit_t_frontier,
    free_exponent,
    frontier_panel,
    load_runs,
    measure,
    measurement_table,
    plot_measurements,
    plot_point,
    plot_t_frontier,
    run_family,
    run_t_frontier,
    save_runs,
    t_frontier_table,
    verdict,
    write_csv,
    write_eps_profile,
)

__all__ = [
    "FamilyRuns",
    "Measurement",
    "ParetoFamily",
    "SpikeFamily",
    "StableFamily",
    "TFrontierConfig",
    "TFrontierResult",
    "checkpoint_horizons",
    "dependent_exponent",
    "eps_profile_rows",
    "fit_t_frontier",
    "free_exponent",
    "frontier_panel",
    "load_runs",
    "measure",
    "measurement_table",
    "plot_measurements",
    "plot_point",
    "plot_t_frontier",
    "run_family",
    "run_t_frontier",
    "save_runs",
    "t_frontier_table",
    "verdict",
    "write_csv",
    "write_eps_profile",
]
