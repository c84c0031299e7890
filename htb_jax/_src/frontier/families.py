"""The instance families of the worst-case search: Theorem 1's two-point family, Pareto and alpha-stable arms."""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import theory
from htb_jax._src.distributions import Pareto, Stable
from htb_jax._src.distributions.stable import check_alpha_below_two
from htb_jax._src.frontier.scale import family_scale
from htb_jax._src.grids import powers_of_ten
from htb_jax._src.instances import lower_bound_pair
from htb_jax._src.policies.adar_etc import num_blocks
from htb_jax._src.validation import (
    FLOAT32_MAX,
    check_distinct,
    check_float32,
    check_float32_above_one,
    check_float32_scale,
    check_instance_type,
    check_integer,
    check_interval,
    check_nonempty,
)


def check_family(name: str, family) -> None:
    """Raises ``TypeError`` unless ``family`` (the argument ``name``) is one of the three families."""
    check_instance_type(name, family, (SpikeFamily, ParetoFamily, StableFamily),
                        "a SpikeFamily, ParetoFamily or StableFamily")


@dataclasses.dataclass(frozen=True)
class SpikeFamily:
    """Theorem 1's two-point family on ``K`` arms: spike probabilities on a log grid.

    Attributes:
      num_arms: ``K``.
      gap: ``Delta``.
      spike_probs: the grid of ``beta`` (arm 1's spike probability).
      fixed_spike: ``beta`` of the fixed instance for distribution-dependent fits
        (0.9: a single pull already tells the arms apart with probability 0.9,
        so its regret is the exploration cost, ``Delta n_0`` with two arms, at
        every ``T``; with more, the other arms' gaps are ``2 Delta``).
    """

    num_arms: int = 2
    gap: float = 1.0
    spike_probs: tuple[float, ...] = powers_of_ten(-10.0, 0.0, 0.5) + (0.5,)
    fixed_spike: float = 0.9

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Checks the fields, at construction and before anything runs.

        Admissible: ``K >= 2``, ``gap > 0``, a non-empty ``spike_probs`` of distinct values and
        ``fixed_spike`` in ``(0, 1]``.

        Raises:
          ValueError: naming the first field out of its range.
        """
        check_integer("num_arms", self.num_arms, 2, one=True)
        check_interval("gap", self.gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_nonempty("spike_probs", self.spike_probs)
        check_interval("spike_probs", list(self.spike_probs), 0.0, 1.0, low_closed=False, high_closed=True)
        check_distinct("spike_probs", list(self.spike_probs))  # a member listed twice runs twice
        check_interval("fixed_spike", self.fixed_spike, 0.0, 1.0, low_closed=False, high_closed=True)
        # The members' laws would refuse these under lower_bound_pair's names: a spike 2 gap / p is a float32.
        if 2.0 * float(self.gap) > FLOAT32_MAX:
            raise ValueError(f"gap must be at most {FLOAT32_MAX / 2:.8g} (the spike 2 gap / p, at least 2 gap, is a "
                             f"float32 reward); got gap={float(self.gap):.6g}.")
        least = 2.0 * float(self.gap) / FLOAT32_MAX
        for name, probs in (("spike_probs", self.spike_probs), ("fixed_spike", [self.fixed_spike])):
            rarest = min(float(p) for p in probs)
            if rarest < least:
                raise ValueError(
                    f"{name} must be at least 2 gap / {FLOAT32_MAX:.8g} = {least:.6g} for gap={float(self.gap):.6g} "
                    f"(the spike 2 gap / p is a float32 reward); got {name}={rarest:.6g}."
                )

    @property
    def num_members(self) -> int:
        """``F``, the members of the worst-case search."""
        return len(self.spike_probs)

    def instances(self):
        """TwoPoint of batch shape ``(F + 1, K)``: the family, then the fixed instance."""
        return _spike_instances(self.num_arms, self.gap, (*self.spike_probs, self.fixed_spike))


@functools.cache
def _spike_instances(num_arms: int, gap: float, betas: tuple[float, ...]):
    # One compiled program (its operations are exact: products, a quotient and selections) rather
    # than one small program for each operation run eagerly; the arguments, constants of the trace,
    # are checked as lower_bound_pair checks them.
    return jax.jit(lambda: lower_bound_pair(num_arms, gap, np.asarray(betas, np.float64))[1])()


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

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Checks the fields, at construction and before anything runs.

        Admissible: ``K >= 2``, non-empty ``gaps > 0`` and ``shapes > 1`` without repeats, ``fixed_gap > 0`` and
        ``fixed_shape > 1``.

        Raises:
          ValueError: naming the first field out of its range.
        """
        check_integer("num_arms", self.num_arms, 2, one=True)
        for name in ("gaps", "shapes"):
            check_nonempty(name, getattr(self, name))
        check_interval("gaps", list(self.gaps), 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("shapes", list(self.shapes), 1.0, np.inf, low_closed=False, high_closed=False)
        for name in ("gaps", "shapes"):
            check_distinct(name, list(getattr(self, name)))
        check_interval("fixed_gap", self.fixed_gap, 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("fixed_shape", self.fixed_shape, 1.0, np.inf, low_closed=False, high_closed=False)
        # The members' laws would refuse these under Pareto's names.
        for name in ("gaps", "shapes", "fixed_gap", "fixed_shape"):
            value = getattr(self, name)
            value = list(value) if name in ("gaps", "shapes") else value
            check_float32(name, value, positive="shape" in name)
            if "shape" in name:
                check_float32_above_one(name, value)

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


def _slope(x, y) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


@dataclasses.dataclass(frozen=True)
class StableFamily:
    r"""Symmetric alpha-stable arms of one index ``a``, gaps on a log grid, and a fixed instance that errs.

    Arm 0 is ``Stable(Delta, a, 0, scale)``, the others ``Stable(0, a, 0,
    scale)`` (S1: ``loc`` is the mean), ``Delta`` on the grid ``gaps``.  Every
    arm has ``E|X|^(1+eps) < inf`` iff ``1 + eps < a`` (or ``a = 2``).
    ``U_eps`` hardly depends on ``Delta`` below the scale and grows like
    ``Delta`` above it: at ``Delta = 0.3`` and 1 it is 1.003 and 1.03 times
    its value at 0 for ``a = 1.55``, ``eps = 0.5``, 1.02 and 1.22 for the
    Gaussian ``a = 2`` at ``eps = 1``.  Block means are drawn by the exact block law
    (``sampler="block_sums"``): ``B_T`` standard variates per arm, whatever
    the block size, so horizons to ``10^18`` cost about what ``10^3`` does.

    **What the schedule implies on this family** (the upper bound's argument,
    Theorem 2, with the stable block law in place of the moment bound).
    AdaR-ETC explores ``L_T`` rounds, ``n = floor(L_T / K)`` per arm, in
    ``B = B_T`` blocks of size ``s = floor(n / B)``.  A block mean is ``loc +
    scale s^(1/a - 1) Z`` with ``Z`` standard S1, so an arm's
    Median-of-Means is ``loc + scale s^(1/a-1) med_B(Z)``, and the median of
    ``B`` standard variates is about normal with standard deviation ``1 / (2
    f_a(0) sqrt(B))``, ``f_a(0) = Gamma(1 + 1/a) / pi`` the density at 0.  With
    two arms the commit fails with probability about ``Phi(-x)``, ``x = Delta
    s^(1 - 1/a) sqrt(2B) f_a(0) / scale``, and the regret ``Delta (T - L_T)
    Phi(-x)`` is largest at ``x`` of order 1: the worst gap is ``Delta* ~
    scale s^(-(a-1)/a) B^(-1/2)``, with normalized regret ``~ T (K B_T /
    L_T)^((a-1)/a) B_T^(-1/2)``.  The exploration term ``Delta (L_T - n)``
    is ``~ L_T`` after normalization once ``Delta`` is of the order of the
    scale (``U_eps`` then grows like ``Delta``), whatever ``a``.  With ``L_T ~
    T^beta``, ``beta = (1 - alpha)(1 + eps)/eps``, the exponent is

        d(a, eps, alpha) = max(beta, 1 - beta (a - 1) / a)     (:meth:`free_theory`)

    (``B_T`` is logarithmic in ``T``).  The second term is ``alpha`` at ``a =
    1 + eps``, where ``(a - 1)/a = eps/(1 + eps)`` is the two-point family's
    exponent, and below ``alpha`` for ``a > 1 + eps``, a lighter tail than the
    schedule assumes; the first, ``beta <= alpha``, takes over where ``beta >
    a / (2a - 1)``: at the balanced ``alpha = alpha*(eps)`` (``beta =
    alpha``) the worst case is the exploration of the largest gap, ``d =
    alpha`` for every ``a``.  The finite-T prediction (:meth:`free_slope`) is
    the slope, over the fitted horizons, of the largest predicted ``R_T /
    U_eps`` over the grid (:meth:`predicted_regret`, both terms); where
    estimation dominates it is the slope of ``T (K B_T / L_T)^((a-1)/a)
    B_T^(-1/2)``, whose ``B_T^(-1/2)`` (the median's concentration; the
    two-point family's ``T (K B_T / L_T)^(eps/(1+eps))`` has none, its spike is
    or is not in most blocks) lowers it by about 0.017 over ``[10^9,
    10^18]``.  The grid must reach ``Delta*``: at ``T = 10^18`` the estimation
    term peaks at gaps of at least ``9e-8`` for ``eps >= 0.25``, ``alpha`` in
    ``[alpha*(eps), 0.9]`` and ``a`` in ``(1 + eps, 2]`` (largest
    :meth:`predicted_regret` on a fine grid), inside the default ``1e-8..1``.

    **The fixed instance** (distribution-dependent fits) has index
    ``fixed_index`` and gap ``fixed_gap``.  With the defaults (``a = 1.05``,
    ``Delta = 0.03``) ``s^(1 - 1/a)`` grows by a factor of at most 2.2 over
    ``[10^9, 10^18]``, so the commit fails with probability 0.065 to 0.383
    there for every AdaR-ETC schedule with ``eps`` in ``{0.25, 0.5, 1}`` and
    ``alpha`` in ``[alpha*(eps), 0.9]`` (:meth:`wrong_commit_probability`;
    ``simulate`` agrees within four standard errors, see the tests):
    its regret ``Delta (n (K - 1) + (T - L_T) P(wrong))`` is dominated by
    wrong commits, so its slope ``c`` is close to 1 at these horizons (the
    theory's ``beta`` only once ``P(wrong)`` vanishes, far beyond ``10^18``),
    and it varies from seed to seed: the bootstrap interval of ``c`` has width.
    :meth:`dependent_slope` is the slope of that expected regret.

    Attributes:
      num_arms: ``K``.
      index: the stability index ``a`` in ``(1, 2]`` of the members.
      gaps: the grid of ``Delta``.
      scale: the arms' scale.
      fixed_index, fixed_gap: the fixed instance.
    """

    num_arms: int = 2
    index: float = 1.75
    gaps: tuple[float, ...] = powers_of_ten(-8.0, 0.01, 0.25)
    scale: float = 1.0
    fixed_index: float = 1.05
    fixed_gap: float = 0.03

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Checks the fields, at construction and before anything runs.

        Admissible: ``K >= 2``, ``index`` and ``fixed_index`` in ``(1, 2]``, non-empty distinct ``gaps > 0``,
        ``scale > 0`` and ``fixed_gap > 0``.

        Raises:
          ValueError: naming the first field out of its range.
        """
        check_integer("num_arms", self.num_arms, 2, one=True)
        check_interval("index", self.index, 1.0, 2.0, low_closed=False, high_closed=True)
        check_nonempty("gaps", self.gaps)
        check_interval("gaps", list(self.gaps), 0.0, np.inf, low_closed=False, high_closed=False)
        check_distinct("gaps", list(self.gaps))
        check_interval("scale", self.scale, 0.0, np.inf, low_closed=False, high_closed=False)
        check_interval("fixed_index", self.fixed_index, 1.0, 2.0, low_closed=False, high_closed=True)
        check_interval("fixed_gap", self.fixed_gap, 0.0, np.inf, low_closed=False, high_closed=False)
        # The members' laws would refuse these under Stable's names.
        for name in ("index", "fixed_index"):
            check_float32_above_one(name, getattr(self, name))
            check_alpha_below_two(getattr(self, name), name)
        check_float32_scale("scale", self.scale)
        check_float32("scale", self.scale, positive=True)
        check_float32("gaps", list(self.gaps))
        check_float32("fixed_gap", self.fixed_gap)

    @property
    def num_members(self) -> int:
        """``F = len(gaps)``."""
        return len(self.gaps)

    def instances(self):
        """Stable of batch shape ``(F + 1, K)``: the members, then the fixed instance."""
        gap = np.append(np.asarray(self.gaps, np.float64), self.fixed_gap)
        index = np.append(np.full(len(self.gaps), float(self.index)), self.fixed_index)
        arm0 = np.arange(self.num_arms) == 0
        return Stable(loc=jnp.asarray(np.where(arm0, gap[:, None], 0.0)),
                      alpha=jnp.asarray(np.broadcast_to(index[:, None], (index.size, self.num_arms))),
                      beta=0.0, scale=float(self.scale))

    def free_theory(self, eps: float, alpha: float) -> float:
        """``d = max(beta, 1 - beta (a - 1)/a)``, ``beta = (1 - alpha)(1 + eps)/eps``: the exponent
        AdaR-ETC's schedule ``(eps, alpha)`` attains on this family (see the class docstring)."""
        a = float(self.index)
        beta = float(theory.beta_alpha(alpha, eps))  # refuses an alpha outside AdaR-ETC's [alpha*(eps), 1)
        return max(beta, 1.0 - beta * (a - 1.0) / a)

    def free_slope(self, horizons, exploration, eps: float) -> float:
        """The finite-T prediction of ``d``: the slope of the worst predicted ``R_T / U_eps`` over the grid.

        Each member's regret is :meth:`predicted_regret` (its commit error by the median's normal
        approximation), divided by its ``U_eps``; the worst member's curve behaves like ``T (K B_T /
        L_T)^((a-1)/a) B_T^(-1/2)`` where estimation dominates and like ``L_T`` where exploration does.

        Args:
          horizons: i64[H] the fitted horizons.
          exploration: i64[H] ``L_T`` at each.
          eps: the true tail exponent (normalization by ``U_eps``).
        """
        check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
        gaps = np.asarray(self.gaps, float)
        regret = self.predicted_regret(horizons, exploration, gaps[:, None], self.index)  # [F, H]
        scale = family_scale(self, eps)[: self.num_members, None]
        return _slope(horizons, np.max(regret / scale, axis=0))

    def predicted_regret(self, horizons, exploration, gap, index) -> np.ndarray:
        """Expected regret ``Delta (L_T - n + (T - L_T) P(wrong))``, f64[broadcast(gap, index, H)].

        ``n = floor(L_T / K)`` (arm 0's exploration pulls, up to ``L_T mod K``); ``P(wrong) = 1 -
        E Phi(x + Z)^(K-1)``, ``x = Delta s^(1-1/a) 2 f_a(0) sqrt(B_T) / scale``, ``Z`` standard
        normal (Gauss-Hermite, 64 nodes), and 0 where ``L_T = T`` (no commit).

        Args:
          horizons, exploration: i64[H] ``T`` and ``L_T``.
          gap: ``Delta``, f64 broadcasting against ``[H]``.
          index: ``a``, likewise.
        """
        from scipy.special import ndtr  # SciPy comes with jax; imported here, off `import htb_jax`'s path

        t, blocks, pulls, size = self._schedule(horizons, exploration)
        gap, a = np.asarray(gap, float), np.asarray(index, float)
        density0 = np.exp(np.vectorize(math.lgamma)(1.0 + 1.0 / a)) / math.pi
        x = gap / self.scale * size ** (1.0 - 1.0 / a) * 2.0 * density0 * np.sqrt(blocks)
        nodes, weights = np.polynomial.hermite_e.hermegauss(64)
        correct = (weights * ndtr(x[..., None] + nodes) ** (self.num_arms - 1)).sum(-1) / math.sqrt(2.0 * math.pi)
        length = np.asarray(exploration, float)
        wrong = np.where(length < t, 1.0 - correct, 0.0)
        return gap * (length - pulls + (t - length) * wrong)

    def wrong_commit_probability(self, horizons, exploration) -> np.ndarray:
        """``P(wrong commit)`` on the fixed instance, f64[H] (see :meth:`predicted_regret`)."""
        t, _, pulls, _ = self._schedule(horizons, exploration)
        length = np.asarray(exploration, float)
        regret = self.predicted_regret(horizons, exploration, self.fixed_gap, self.fixed_index)
        return np.where(length < t, (regret / self.fixed_gap - (length - pulls)) / np.maximum(t - length, 1.0), 0.0)

    def dependent_regret(self, horizons, exploration) -> np.ndarray:
        """Expected regret on the fixed instance, f64[H] (:meth:`predicted_regret`)."""
        return self.predicted_regret(horizons, exploration, self.fixed_gap, self.fixed_index)

    def dependent_slope(self, horizons, exploration) -> float:
        """The finite-T prediction of ``c``: the slope of :meth:`dependent_regret` over ``horizons``."""
        return _slope(horizons, self.dependent_regret(horizons, exploration))

    def _schedule(self, horizons, exploration):
        check_integer("horizons", [int(h) for h in np.ravel(horizons)], 1, maximum=10**18)
        check_integer("exploration", [int(v) for v in np.ravel(exploration)], 1)
        t = np.asarray(horizons, float)
        blocks = np.asarray(num_blocks(self.num_arms, np.asarray(horizons, np.int64)), float)
        pulls = np.floor(np.asarray(exploration, float) / self.num_arms)  # arm 0's exploration pulls
        size = np.maximum(np.floor(pulls / blocks), 1.0)
        return t, blocks, pulls, size
