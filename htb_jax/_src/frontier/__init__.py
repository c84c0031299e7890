"""Measured regret exponents next to the paper's: the T-frontier of Theorems 1-3 and its relatives.

The **distribution-free exponent** ``d`` is the slope in ``T`` of the worst
case, over an instance family, of the normalized regret ``R_T / U_eps(nu)``
(Section 5).  The family is the one of Theorem 1's proof: two arms, arm 0 a
point mass at ``Delta``, arm 1 the spike law ``(1 - beta) delta_0 + beta
delta_{2 Delta / beta}`` with ``beta`` on a log grid (so spike heights
``2 Delta / beta`` range over a log grid too; ``R_T / U_eps`` does not depend
on ``Delta``).  Its Median-of-Means estimates are drawn as one order statistic
each (``sampler="order_statistic"``), so horizons to 10^18 cost O(K) per run
after an O(K B_T) level per seed and horizon.  Heavy-tailed members (:class:`ParetoFamily`,
equal-gap Pareto arms over gaps x tail indices) are simulated pull by pull
and join the same worst case (``free_exponent(..., also=...)``) at the
horizons they reach.  On alpha-stable arms (:class:`StableFamily`, gaps on a
log grid, exact block law to 10^18) the schedule attains ``max(beta, 1 -
beta (a-1)/a)`` rather than ``alpha``; its docstring derives it.  The
**distribution-dependent exponent** ``c`` is the slope of the regret on one
fixed instance of that family.

The whole search (seeds x policies x family x horizons) is one ``simulate``
program per chunk of seeds.  Normalizing by ``U_eps`` happens afterwards, so
one run serves every true ``eps`` (Figure 2, Theorem 6).

**Finite horizons bend the fits.**  AdaR-ETC explores ``L_T = K B_T + ceil(K^q
T^beta)``; while ``K B_T`` (``B_T = ceil(8 log(K T^3))``) is a large share of
``L_T``, the exploration grows more slowly than ``T^beta``.  The worst spike
probability is about ``1/s`` with ``s = n / B_T`` the block size, so the worst
normalized regret behaves like ``T (K B_T / L_T)^(eps/(1+eps))``.  The table
reports the slope this *schedule-implied* curve has over the fitted horizons
(``d`` at finite T) and the slope of ``L_T`` itself (``c`` at finite T), which
both tend to the theory as ``T -> inf``, and the share of ``K B_T`` in ``L_T``.

Modules: ``families`` (the instance families), ``scale`` (``U_eps`` of a family's
members, cached), ``runs`` (a batch of policies on
a family, resumable), ``fits`` (exponents, finite-T predictions, verdicts),
``t_frontier`` (the experiment of ``htb-jax frontier``), ``measure`` (any
policy's ``(d, c)`` from one call), ``measurement`` (what it returns, and its table), ``plots`` (Theorem 1's
line and measured points, the figure of measured policies), ``eps_profile`` (exponents across true ``eps``).
"""

from htb_jax._src.frontier.eps_profile import (
    eps_profile_rows,
    eps_profile_table,
    plot_eps_profile,
    write_eps_profile,
)
from htb_jax._src.frontier.families import ParetoFamily, SpikeFamily, StableFamily
from htb_jax._src.frontier.fits import (
    AGREEMENT,
    dependent_exponent,
    free_exponent,
    schedule_free_slope,
    verdict,
)
from htb_jax._src.frontier.measure import checkpoint_count, checkpoint_horizons, measure
from htb_jax._src.frontier.measurement import Measurement, measurement_table
from htb_jax._src.frontier.plots import frontier_panel, plot_measurements, plot_point, plot_t_frontier
from htb_jax._src.frontier.runs import FamilyRuns, load_runs, run_family, save_runs, write_csv
from htb_jax._src.frontier.t_frontier import (
    TFrontierConfig,
    TFrontierResult,
    fit_t_frontier,
    frontier_identity,
    run_t_frontier,
    t_frontier_policy,
    t_frontier_table,
)

__all__ = [
    "schedule_free_slope",
    "plot_measurements",
    "measurement_table",
    "measure",
    "checkpoint_horizons",
    "checkpoint_count",
    "Measurement",
    "AGREEMENT",
    "FamilyRuns",
    "ParetoFamily",
    "SpikeFamily",
    "StableFamily",
    "TFrontierConfig",
    "TFrontierResult",
    "dependent_exponent",
    "eps_profile_rows",
    "eps_profile_table",
    "fit_t_frontier",
    "free_exponent",
    "frontier_identity",
    "frontier_panel",
    "load_runs",
    "plot_eps_profile",
    "plot_point",
    "plot_t_frontier",
    "run_family",
    "run_t_frontier",
    "save_runs",
    "t_frontier_policy",
    "t_frontier_table",
    "verdict",
    "write_csv",
    "write_eps_profile",
]
