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
horizons they reach.  The **distribution-dependent exponent** ``c`` is the
slope of the regret on one fixed instance of that family.

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
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import time
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import theory
from htb_jax._src.distributions import Pareto
from htb_jax._src.exponents import ExponentFit, fit_exponent, fit_worst_case_exponent
from htb_jax._src.grids import powers_of_ten
from htb_jax._src.instances import intrinsic_scale, lower_bound_pair
from htb_jax._src.policies.adar_etc import AdaRETC, num_blocks
from htb_jax._src.resumable import (
    MAX_SEEDS,
    ChunkStore,
    check_layout,
    check_root_key,
    root_key_data,
    run_chunks,
    seed_chunks,
)
from htb_jax._src.simulate.program import memory_plan, simulate
from htb_jax._src.sweep import progress_bar, write_csv
from htb_jax._src.validation import (
    check_flag,
    check_instance_type,
    check_integer,
    check_interval,
    check_nonempty,
    check_path,
    check_policy_instance,
    given,
)

AGREEMENT = 0.05  # |measured - theory| tolerance besides the confidence interval


def _check_family(name: str, family) -> None:
    check_instance_type(name, family, (SpikeFamily, ParetoFamily), "a SpikeFamily or ParetoFamily")


def _check_runs(name: str, runs) -> None:
    check_instance_type(name, runs, FamilyRuns, "a FamilyRuns (from run_family or load_runs)")


def _check_schedule(runs: FamilyRuns, g) -> None:
    check_integer("g", g, 0, maximum=runs.regret.shape[0] - 1)


@dataclasses.dataclass(frozen=True)
class SpikeFamily:
    """Theorem 1's two-point family on ``K`` arms: spike probabilities on a log grid.

    Attributes:
      num_arms: ``K``.
      gap: ``Delta``.
      spike_probs: the grid of ``beta`` (arm 1's spike probability).
      fixed_spike: ``beta`` of the fixed instance for distribution-dependent fits
        (0.9: a single pull already tells the arms apart with probability 0.9,
        so its regret is the exploration cost, ``Delta n_0``, at every ``T``).
    """

    num_arms: int = 2
    gap: float = 1.0
    spike_probs: tuple[float, ...] = powers_of_ten(-10.0, 0.0, 0.5) + (0.5,)
    fixed_spike: float = 0.9

    def validate(self) -> None:
        check_integer("num_arms", self.num_arms, 2)
        check_interval("gap", self.gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_nonempty("spike_probs", self.spike_probs)
        check_interval("spike_probs", list(self.spike_probs), 0.0, 1.0, low_closed=False, high_closed=True)
        check_interval("fixed_spike", self.fixed_spike, 0.0, 1.0, low_closed=False, high_closed=True)

    @property
    def num_members(self) -> int:
        """``F``, the members of the worst-case search."""
        return len(self.spike_probs)

    def instances(self):
        """TwoPoint of batch shape ``(F + 1, K)``: the family, then the fixed instance."""
        return _spike_instances(self.num_arms, self.gap, (*self.spike_probs, self.fixed_spike))


@functools.cache
def _spike_instances(num_arms: int, gap: float, betas: tuple[float, ...]):
    return lower_bound_pair(num_arms, gap, jnp.asarray(betas, jnp.float64))[1]


@dataclasses.dataclass(frozen=True)
class ParetoFamily:
    """Heavy-tailed members of the worst-case search: equal-gap Pareto arms, gaps x tail indices.

    Arm 0 has mean ``Delta``, the others mean 0, all shifted Pareto with tail
    index ``a`` (``E|X|^(1+eps)`` finite iff ``1 + eps < a``; members without
    the moment have ``U_eps = inf`` and drop out of the worst case for that
    ``eps``).  No closed-form block sums: simulated pull by pull, so the
    horizons are limited by ``L_T / K <= 2^32`` and by the cost ``O(L_T)``.

    Attributes:
      num_arms: ``K``.
      gaps: the grid of ``Delta``.
      shapes: the grid of tail indices ``a > 1``.
      fixed_gap, fixed_shape: the fixed instance (distribution-dependent fits).
    """

    num_arms: int = 2
    gaps: tuple[float, ...] = powers_of_ten(-4.5, 1.01, 0.5)
    shapes: tuple[float, ...] = (1.75, 2.5, 4.0)
    fixed_gap: float = 0.5
    fixed_shape: float = 3.0

    def validate(self) -> None:
        check_integer("num_arms", self.num_arms, 2)
        for name in ("gaps", "shapes"):
            check_nonempty(name, getattr(self, name))
        check_interval("gaps", list(self.gaps), 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("shapes", list(self.shapes), 1.0, np.inf, low_closed=False, high_closed=False)
        check_interval("fixed_gap", self.fixed_gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("fixed_shape", self.fixed_shape, 1.0, np.inf, low_closed=False, high_closed=False)

    @property
    def num_members(self) -> int:
        """``F = len(shapes) * len(gaps)``."""
        return len(self.shapes) * len(self.gaps)

    def instances(self):
        """Pareto of batch shape ``(F + 1, K)``: shape-major members, then the fixed instance."""
        shape, gap = (np.asarray(a, np.float64).ravel() for a in np.meshgrid(self.shapes, self.gaps, indexing="ij"))
        shape = jnp.asarray(np.append(shape, self.fixed_shape))
        gap = jnp.asarray(np.append(gap, self.fixed_gap))
        arm0 = jnp.arange(self.num_arms) == 0
        return Pareto(loc=jnp.where(arm0, gap[:, None], 0.0), shape=jnp.broadcast_to(shape[:, None], (shape.size, self.num_arms)))


@dataclasses.dataclass(frozen=True)
class FamilyRuns:
    """Per-seed regrets of a batch of policies on a :class:`SpikeFamily` or :class:`ParetoFamily`.

    Attributes:
      regret: f64[G, F + 1, H, S] (member ``F`` is the fixed instance).
      exploration: i64[G, H] ``L_T``.
      horizons: i64[H].
      family: the family (to normalize by ``U_eps`` for any ``eps``).
      seconds: wall time, compilation included.
      resumed_chunks: seed chunks read back from a store instead of computed.
    """

    regret: np.ndarray
    exploration: np.ndarray
    horizons: np.ndarray
    family: SpikeFamily | ParetoFamily
    seconds: float
    resumed_chunks: int = 0

    def scale(self, eps: float) -> np.ndarray:
        """``U_eps`` of each family member, f64[F + 1]."""
        return np.asarray(intrinsic_scale(self.family.instances(), eps))


def run_family(
    policy: AdaRETC,
    family: SpikeFamily | ParetoFamily,
    horizons: Sequence[int],
    num_seeds: int,
    *,
    key: int = 0,
    seed_chunk: int = 8,
    progress: bool = True,
    store: ChunkStore | None = None,
) -> FamilyRuns:
    """Simulates a flat batch of schedules (grid shape ``(G,)``) on the family, chunk of seeds by chunk.

    Seed ``s`` draws from ``fold_in(key, s)`` alone, so the chunking changes nothing.

    Args:
      store: if given (its layout ``seed_chunks(num_seeds, seed_chunk)``), every finished chunk is
        written there atomically and intact chunks already there are read back
        instead of recomputed: a killed run started again resumes.
    """
    check_policy_instance("policy", policy, "run_family")
    _check_family("family", family)
    family.validate()
    check_nonempty("horizons", horizons)
    check_integer("horizons", list(horizons), 1, maximum=10**18)
    check_integer("num_seeds", num_seeds, 2)
    check_root_key(key)
    check_integer("seed_chunk", seed_chunk, 1)
    check_flag("progress", progress)
    if store is not None:
        check_instance_type("store", store, ChunkStore, "None or a ChunkStore")
    instances = family.instances()
    root = jax.random.key(key)

    def compute(first: int, count: int) -> dict[str, np.ndarray]:
        out = simulate(root, policy, instances, list(horizons), count, first_seed=first)
        return {"regret": np.asarray(out.regret), "exploration": np.asarray(out.exploration[:, 0, :, 0])}

    started = time.perf_counter()
    parts, resumed = run_chunks(
        seed_chunks(num_seeds, seed_chunk), compute, store, progress_bar if progress else None, sys.stderr
    )
    regret = np.concatenate([part["regret"] for part in parts], axis=-1)
    exploration = parts[-1]["exploration"]
    seconds = time.perf_counter() - started
    return FamilyRuns(regret, exploration, np.asarray(horizons, np.int64), family, seconds, resumed)


def _fit_mask(horizons: np.ndarray, fit_from: int) -> np.ndarray:
    mask = horizons >= fit_from
    if mask.sum() < 2:
        raise ValueError(f"fit_from={fit_from} leaves fewer than two horizons in {horizons.tolist()}.")
    return mask


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def free_exponent(
    runs: FamilyRuns, g: int, eps: float, fit_from: int, *, key: int = 0, also: Sequence[FamilyRuns] = ()
) -> tuple[ExponentFit, float, float]:
    """Worst-case normalized-regret slope of schedule ``g`` for true ``eps``, and its finite-T prediction.

    Args:
      runs: the family runs.
      g: the schedule.
      eps: the true tail exponent (normalization by ``U_eps``).
      fit_from: smallest horizon in the fit.
      key: bootstrap key.
      also: runs of the same schedules at the same horizons on other families
        (for example a :class:`ParetoFamily`); their members join the worst case
        after ``runs``' own (``fit.argmax`` indexes the concatenation).

    Returns:
      ``(fit, finite_t, hardest)``: the bootstrap fit over horizons ``>=
      fit_from``, the slope of ``T (K B_T / L_T)^(eps/(1+eps))`` over the same
      horizons, and ``K B_T / L_T`` at the largest one (about the spike
      probability of the hardest instance).
    """
    _check_runs("runs", runs)
    _check_schedule(runs, g)
    check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    check_integer("fit_from", fit_from, 1, maximum=10**18)
    check_integer("key", key, 0)
    if not isinstance(also, (list, tuple)):
        raise TypeError(f"also must be a list or tuple of FamilyRuns; got {given('also', also)}.")
    for i, other in enumerate(also):
        _check_runs(f"also[{i}]", other)
    mask = _fit_mask(runs.horizons, fit_from)
    t = runs.horizons[mask].astype(float)
    regrets, scales = [], []
    for r in (runs, *also):
        if not np.array_equal(r.horizons, runs.horizons) or r.regret.shape[-1] != runs.regret.shape[-1]:
            raise ValueError("runs joined into one worst case need the same horizons and seeds.")
        members = r.family.num_members
        regrets.append(np.moveaxis(r.regret[g, :members][:, mask], 0, 1))  # [H, F, S]
        scales.append(r.scale(eps)[:members])
    fit = fit_worst_case_exponent(t, np.concatenate(regrets, axis=1), np.concatenate(scales), key=key)
    k = runs.family.num_arms
    blocks = np.asarray(num_blocks(k, runs.horizons[mask]), float)
    share = k * blocks / runs.exploration[g, mask]
    return fit, _slope(t, t * share ** (eps / (1.0 + eps))), float(share[-1])


def dependent_exponent(runs: FamilyRuns, g: int, fit_from: int, *, key: int = 0) -> tuple[ExponentFit, float]:
    """Regret slope of schedule ``g`` on the fixed instance, and the slope of ``L_T`` (finite-T prediction)."""
    _check_runs("runs", runs)
    _check_schedule(runs, g)
    check_integer("fit_from", fit_from, 1, maximum=10**18)
    check_integer("key", key, 0)
    mask = _fit_mask(runs.horizons, fit_from)
    t = runs.horizons[mask].astype(float)
    fit = fit_exponent(t, runs.regret[g, -1][mask], key=key)
    return fit, _slope(t, runs.exploration[g, mask].astype(float))


def verdict(fit: ExponentFit, theory_value: float, finite_t: float, hardest: float | None = None,
            family: SpikeFamily | None = None, exploration_t: float | None = None) -> str:
    """``agrees`` (theory inside the interval or within 0.05), else what explains the gap.

    ``hardest`` is the spike probability of the hardest instance at the
    largest fitted horizon, about ``K B_T / L_T`` (one over the block size);
    below the family's grid, the worst case of the grid misses it and the
    fitted ``d`` is too small.  ``exploration_t`` is the slope of ``L_T``
    over the fitted horizons: the worst normalized regret is about ``A T (K
    B_T / L_T)^(eps/(1+eps)) + B L_T`` (estimation plus exploration), and the
    local slope of a sum of two power laws lies between their exponents, so
    a slope between ``finite_t`` and ``exploration_t`` is a crossover between
    the two regimes inside the fitted range.
    """
    check_instance_type("fit", fit, ExponentFit, "an ExponentFit")
    for name, value in (("theory_value", theory_value), ("finite_t", finite_t)):
        check_interval(name, value, -np.inf, np.inf, low_closed=False, high_closed=False)
    for name, value in (("hardest", hardest), ("exploration_t", exploration_t)):
        if value is not None:
            check_interval(name, value, -np.inf, np.inf, low_closed=False, high_closed=False)
    if family is not None:
        _check_family("family", family)
    if fit.contains(theory_value, tol=AGREEMENT) or abs(fit.slope - theory_value) <= AGREEMENT:
        return "agrees"
    if fit.contains(finite_t, tol=AGREEMENT) or abs(fit.slope - finite_t) <= AGREEMENT:
        return f"finite T: schedule predicts {finite_t:.3f}"
    if exploration_t is not None and min(finite_t, exploration_t) <= fit.slope <= max(finite_t, exploration_t):
        return (
            f"regime crossover: between the estimation term's {finite_t:.3f} "
            f"and the exploration term's {exploration_t:.3f}"
        )
    if hardest is not None and isinstance(family, SpikeFamily) and hardest < min(family.spike_probs):
        return (
            f"grid too narrow: hardest spike probability K B_T / L_T = {hardest:.1g} "
            f"< {min(family.spike_probs):g} at the largest T"
        )
    return "disagrees"


# -- the T-frontier (Figure 1) ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TFrontierConfig:
    """The T-frontier experiment: measured ``(d, c)`` for a grid of ``alpha`` at several ``eps``.

    Attributes:
      eps_values: tail exponents the schedules are designed for (and true ``eps``).
      alphas_per_eps: ``alpha`` grid size, evenly spaced in ``[alpha*(eps), max_alpha]``.
      max_alpha: the largest ``alpha``.
      horizons: horizons ``T``.
      fit_from: smallest horizon in the fits.
      num_seeds, seed_chunk, key: seeds, seeds per compiled call, root key.
      family: the instance family.
    """

    eps_values: tuple[float, ...] = (1.0, 0.5, 0.25)
    alphas_per_eps: int = 3
    max_alpha: float = 0.9
    horizons: tuple[int, ...] = tuple(int(10**e) for e in range(3, 16))
    fit_from: int = 10**9
    num_seeds: int = 256
    seed_chunk: int = 16
    key: int = 0
    family: SpikeFamily = SpikeFamily()

    def validate(self) -> None:
        for name in ("eps_values", "horizons"):
            check_nonempty(name, getattr(self, name))
        check_interval("eps_values", list(self.eps_values), 0.0, 1.0, low_closed=False, high_closed=True)
        check_integer("alphas_per_eps", self.alphas_per_eps, 1)
        check_interval("max_alpha", self.max_alpha, 0.5, 1.0, low_closed=False, high_closed=False)
        for e in self.eps_values:
            check_interval(
                "max_alpha", self.max_alpha, theory.balanced_alpha(e), 1.0,
                low_closed=True, high_closed=False, where=f"for eps={e:g}",
            )
        check_integer("horizons", list(self.horizons), 1, maximum=10**18)
        check_integer("fit_from", self.fit_from, 1, maximum=10**18)
        check_integer("num_seeds", self.num_seeds, 2, maximum=MAX_SEEDS)
        check_layout(self.num_seeds, self.seed_chunk)
        check_root_key(self.key)
        _fit_mask(np.asarray(self.horizons), self.fit_from)
        _check_family("family", self.family)
        self.family.validate()
        # What simulate would refuse, refused now (nothing is compiled).
        memory_plan(
            jax.random.key(int(self.key)), t_frontier_policy(self), self.family.instances(), list(self.horizons),
            min(self.seed_chunk, self.num_seeds),
        )

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """``(eps, alpha)`` of every schedule, f64[G] each."""
        eps, alpha = [], []
        for e in self.eps_values:
            lo = theory.balanced_alpha(e)
            for a in np.linspace(lo, self.max_alpha, self.alphas_per_eps) if self.alphas_per_eps > 1 else [lo]:
                eps.append(e)
                alpha.append(float(a))
        return np.asarray(eps), np.asarray(alpha)


@dataclasses.dataclass(frozen=True)
class TFrontierResult:
    config: TFrontierConfig
    runs: FamilyRuns
    rows: list


def t_frontier_policy(config: TFrontierConfig) -> AdaRETC:
    """The flat batch of schedules of the experiment, grid shape ``(G,)``."""
    eps, alpha = config.grid()
    return AdaRETC(eps=jnp.asarray(eps), alpha=jnp.asarray(alpha), q=0.0)


def run_t_frontier(config: TFrontierConfig, *, progress: bool = True, out_dir: str | None = None) -> TFrontierResult:
    """Runs the T-frontier experiment and fits ``(d, c)`` for every ``(eps, alpha)``.

    Args:
      config: the experiment.
      progress: show a progress bar on stderr.
      out_dir: if given, the seed chunks are stored there with a manifest (see
        :mod:`htb_jax._src.resumable`): a killed run started again resumes, and
        a directory holding another configuration is refused (``ValueError``).
    """
    check_instance_type("config", config, TFrontierConfig, "a TFrontierConfig")
    check_flag("progress", progress)
    if out_dir is not None:
        check_path("out_dir", out_dir)
    config.validate()
    store = None
    if out_dir is not None:
        store = ChunkStore(out_dir, frontier_identity(config), root_key_data(config.key),
                           seed_chunks(config.num_seeds, config.seed_chunk))
    runs = run_family(
        t_frontier_policy(config), config.family, config.horizons, config.num_seeds,
        key=config.key, seed_chunk=config.seed_chunk, progress=progress, store=store,
    )
    return fit_t_frontier(config, runs)


def frontier_identity(config: TFrontierConfig) -> dict:
    """What must match for a stored T-frontier run to resume: the configuration but the chunking."""
    identity = dataclasses.asdict(config)
    identity.pop("seed_chunk")  # in the chunk layout, checked separately
    return {"experiment": "t_frontier", **identity}


def fit_t_frontier(config: TFrontierConfig, runs: FamilyRuns) -> TFrontierResult:
    """The fits of :func:`run_t_frontier` from its runs (deterministic: fixed bootstrap keys)."""
    check_instance_type("config", config, TFrontierConfig, "a TFrontierConfig")
    _check_runs("runs", runs)
    eps, alpha = config.grid()
    rows = []
    top = int(np.max(config.horizons))
    k = config.family.num_arms
    for g, (e, a) in enumerate(zip(eps, alpha, strict=True)):
        d_fit, d_finite, hardest = free_exponent(runs, g, e, config.fit_from)
        c_fit, c_finite = dependent_exponent(runs, g, config.fit_from)
        d_theory, c_theory = float(a), float(theory.beta_alpha(a, e))
        share = k * float(num_blocks(k, top)) / float(runs.exploration[g, -1])
        rows.append(
            dict(
                eps=float(e), alpha=float(a),
                d_theory=d_theory, d_finite_t=d_finite, d=d_fit.slope, d_low=d_fit.low, d_high=d_fit.high,
                c_theory=c_theory, c_finite_t=c_finite, c=c_fit.slope, c_low=c_fit.low, c_high=c_fit.high,
                block_share=share,
                d_verdict=verdict(d_fit, d_theory, d_finite, hardest, runs.family), c_verdict=verdict(c_fit, c_theory, c_finite),
            )
        )
    return TFrontierResult(config, runs, rows)


def t_frontier_table(result: TFrontierResult) -> str:
    """Markdown: measured vs theory for every schedule."""
    check_instance_type("result", result, TFrontierResult, "a TFrontierResult (from run_t_frontier)")
    c = result.config
    head = (
        f"Fits over T in [{c.fit_from:.0e}, {max(c.horizons):.0e}], {c.num_seeds} seeds, 95% bootstrap "
        "intervals; 'finite T' is the slope the schedule itself implies over the same horizons; "
        "K B_T / L_T at the largest T.\n\n"
        "| eps | alpha | d theory | d finite T | d measured | c theory | c finite T | c measured "
        "| K B_T / L_T | d | c |\n"
        "|---:|---:|---:|---:|---|---:|---:|---|---:|---|---|\n"
    )
    lines = [
        f"| {r['eps']:g} | {r['alpha']:.3f} | {r['d_theory']:.3f} | {r['d_finite_t']:.3f} "
        f"| {r['d']:.3f} [{r['d_low']:.3f}, {r['d_high']:.3f}] | {r['c_theory']:.3f} | {r['c_finite_t']:.3f} "
        f"| {r['c']:.3f} [{r['c_low']:.3f}, {r['c_high']:.3f}] | {r['block_share']:.2f} "
        f"| {r['d_verdict']} | {r['c_verdict']} |"
        for r in result.rows
    ]
    return head + "\n".join(lines)


def save_runs(runs: FamilyRuns, path) -> None:
    """Per-seed regrets and exploration lengths as NPZ (``regret`` f64[G, F+1, H, S])."""
    _check_runs("runs", runs)
    check_path("path", path, file_object=True)
    np.savez_compressed(path, regret=runs.regret, exploration=runs.exploration, horizons=runs.horizons)


def load_runs(path, family: SpikeFamily) -> FamilyRuns:
    """The runs :func:`save_runs` wrote (``seconds`` is NaN)."""
    check_path("path", path, file_object=True)
    _check_family("family", family)
    with np.load(path) as data:
        return FamilyRuns(data["regret"], data["exploration"], data["horizons"], family, math.nan)


def frontier_panel(ax, eps: float, title: str, *, high: float = 1.02) -> None:
    """Theorem 1's line ``c + d (1+eps)/eps = (1+eps)/eps`` on ``ax``, with the (d, c) axes."""
    d = np.linspace(0.0, 1.0, 401)
    ax.plot(d, theory.t_frontier(d, eps), "k-", lw=1.2, label="Theorem 1 frontier")
    ax.set_xlim(0.45, high)
    ax.set_ylim(0.0, high)
    ax.set_xlabel("d (distribution-free exponent of T)")
    ax.set_ylabel("c (distribution-dependent exponent of T)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, alpha=0.3)


def plot_point(ax, row: dict, color, *, x: str = "d", y: str = "c", marker: str = "s", label=None) -> None:
    """One schedule's theory (o), finite-T prediction (x) and measurement with its intervals.

    ``row`` holds ``{x, y}``, ``{x, y}_low``/``_high``, ``{x, y}_theory`` and
    ``{x, y}_finite_t`` (or ``_finite_k``).
    """
    finite = "finite_t" if f"{x}_finite_t" in row else "finite_k"
    ax.plot(row[f"{x}_theory"], row[f"{y}_theory"], "o", mfc="none", mec=color, ms=9)
    ax.plot(row[f"{x}_{finite}"], row[f"{y}_{finite}"], "x", color=color, ms=7)
    ax.errorbar(
        row[x], row[y],
        xerr=[[max(row[x] - row[f"{x}_low"], 0.0)], [max(row[f"{x}_high"] - row[x], 0.0)]],
        yerr=[[max(row[y] - row[f"{y}_low"], 0.0)], [max(row[f"{y}_high"] - row[y], 0.0)]],
        fmt=marker, color=color, ms=5, capsize=2, label=label,
    )


def plot_t_frontier(result: TFrontierResult, path) -> None:
    """Figure 1 with the measured points: one panel per ``eps``."""
    check_instance_type("result", result, TFrontierResult, "a TFrontierResult (from run_t_frontier)")
    check_path("path", path, file_object=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps_values = result.config.eps_values
    fig, axes = plt.subplots(1, len(eps_values), figsize=(4.2 * len(eps_values), 4.0), squeeze=False)
    for ax, e in zip(axes[0], eps_values, strict=True):
        frontier_panel(ax, e, f"eps = {e:g}  (o theory, x schedule at finite T, ■ measured)")
        rows = [r for r in result.rows if r["eps"] == e]
        colors = plt.cm.viridis(np.linspace(0.0, 0.85, max(len(rows), 1)))
        for r, color in zip(rows, colors, strict=False):
            plot_point(ax, r, color, label=f"alpha={r['alpha']:.3f}")
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        f"AdaR-ETC T-frontier: T in [{result.config.fit_from:.0e}, {max(result.config.horizons):.0e}], "
        f"{result.config.num_seeds} seeds",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


# -- exponents across true eps (Figure 2, Theorem 6) -----------------------------------------


def eps_profile_rows(runs: FamilyRuns, entries: Sequence[tuple[str, int, float, float]], fit_from: int) -> list:
    """Distribution-free exponents of several schedules at several true ``eps``, from one run.

    Args:
      runs: the family runs (regret does not depend on ``eps``; only ``U_eps`` does).
      entries: ``(label, g, true_eps, theory)`` per measurement: schedule ``g``
        normalized by ``U_true_eps``, against the theory exponent.
      fit_from: smallest horizon in the fits.

    Returns:
      One dict per entry: label, eps, theory, finite_t, measured slope and interval, verdict.
    """
    rows = []
    mask = _fit_mask(runs.horizons, fit_from)
    for label, g, eps, theory_value in entries:
        fit, finite, hardest = free_exponent(runs, g, eps, fit_from)
        exploration = _slope(runs.horizons[mask].astype(float), runs.exploration[g, mask].astype(float))
        rows.append(
            dict(
                schedule=label, eps=float(eps), theory=float(theory_value), finite_t=finite,
                measured=fit.slope, low=fit.low, high=fit.high,
                verdict=verdict(fit, float(theory_value), finite, hardest, runs.family, exploration),
            )
        )
    return rows


def eps_profile_table(rows: Sequence[dict], note: str) -> str:
    """Markdown of :func:`eps_profile_rows`."""
    head = (
        f"{note}\n\n| schedule | true eps | d theory | d finite T | d measured | verdict |\n"
        "|---|---:|---:|---:|---|---|\n"
    )
    lines = [
        f"| {r['schedule']} | {r['eps']:g} | {r['theory']:.3f} | {r['finite_t']:.3f} "
        f"| {r['measured']:.3f} [{r['low']:.3f}, {r['high']:.3f}] | {r['verdict']} |"
        for r in rows
    ]
    return head + "\n".join(lines)


def write_eps_profile(rows: Sequence[dict], runs: FamilyRuns, out, name: str, note: str, curves: dict,
                      title: str) -> None:
    """Prints the table and writes ``out/{table.md, name.csv, runs.npz, name.png}``."""
    table = eps_profile_table(rows, note)
    print(table)
    out.mkdir(exist_ok=True)
    (out / "table.md").write_text(table + "\n")
    write_csv(rows, out / f"{name}.csv")
    save_runs(runs, out / "runs.npz")
    plot_eps_profile(rows, curves, out / f"{name}.png", title)
    took = "re-fitted the recorded runs" if math.isnan(runs.seconds) else f"{runs.seconds:.0f} s"
    print(f"{took}; wrote {out}")


def plot_eps_profile(rows: Sequence[dict], curves: dict, path, title: str) -> None:
    """Theory curves ``label -> (eps -> exponent)`` with the measured points and intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    grid = np.linspace(0.02, 1.0, 200)
    colors = dict(zip(curves, plt.cm.tab10(np.arange(len(curves))), strict=True))
    for label, curve in curves.items():
        ax.plot(grid, curve(grid), "-", color=colors[label], lw=1.2, label=f"{label}: theory")
    for r in rows:
        color = colors[r["schedule"]]
        ax.errorbar(
            r["eps"], r["measured"],
            yerr=[[max(r["measured"] - r["low"], 0.0)], [max(r["high"] - r["measured"], 0.0)]],
            fmt="s", color=color, ms=5, capsize=2,
        )
        ax.plot(r["eps"], r["finite_t"], "x", color=color, ms=7)
    ax.set_xlabel("true tail exponent eps")
    ax.set_ylabel("distribution-free exponent of T")
    ax.set_title(title + "\n(lines theory, ■ measured with 95% interval, x schedule at finite T)", fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
