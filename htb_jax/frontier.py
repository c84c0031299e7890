"""Measured regret exponents next to the paper's (see :mod:`htb_jax._src.frontier`).

``htb_jax.frontier`` runs the worst-case searches behind the distribution-free
exponent (two-point and Pareto families), fits the exponents with their
finite-T predictions and verdicts, and runs, tabulates and plots the
T-frontier experiment of ``htb-jax frontier``.
"""

from htb_jax._src.frontier import (
    FamilyRuns,
    ParetoFamily,
    SpikeFamily,
    TFrontierConfig,
    TFrontierResult,
    dependent_exponent,
    fit_t_frontier,
    free_exponent,
    load_runs,
    plot_t_frontier,
    run_family,
    run_t_frontier,
    save_runs,
    t_frontier_table,
    verdict,
)

__all__ = [
    "FamilyRuns",
    "ParetoFamily",
    "SpikeFamily",
    "TFrontierConfig",
    "TFrontierResult",
    "dependent_exponent",
    "fit_t_frontier",
    "free_exponent",
    "load_runs",
    "plot_t_frontier",
    "run_family",
    "run_t_frontier",
    "save_runs",
    "t_frontier_table",
    "verdict",
]
