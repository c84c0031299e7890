"""The suite ``ht-v1``: experiments that each probe one difficulty of heavy-tailed bandits.

Each :class:`Experiment` sweeps one axis from easy to hard (its
:class:`Setting` s, in order) with a fixed interaction regime: the instances,
the horizon and seeds of each size, and the root key.  A policy's score on an
experiment lies in ``[0, 1]`` (:func:`setting_score`), so that its profile
over the experiments reads at a glance.  Changing any experiment makes a new
suite version; every result names its version (:data:`VERSION`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from htb_jax._src.bench import real_data
from htb_jax._src.distributions import Distribution, Empirical, Frechet, LogNormal, Pareto, Stable, StudentT
from htb_jax._src.instances import equal_gap
from htb_jax._src.tail_index import tail_index
from htb_jax._src.validation import check_choice, check_interval

VERSION = "ht-v1"
KEY = 0
# The tail exponents a policy told ``eps`` may be given: the largest below the setting's tail index
# minus one (the moment ``E|X|^(1+eps)`` must be finite).
EPS_GRID = (1.0, 0.75, 0.5, 0.25, 0.1)
GAP = 0.5
# The experiments of :func:`experiments`, in report order (named without building their instances).
NAMES = ("tail", "asymmetry", "gaps", "arms", "horizon", "misspecification", "real-data")
NUM_ARMS = 4


@dataclasses.dataclass(frozen=True)
class Size:
    """How much a run of the suite computes.

    Attributes:
      name: ``"cpu"`` or ``"gpu"``.
      horizon: ``T`` of every setting but the horizon experiment's.
      seeds: seeds per setting (the same seeds, so the same reward tables, for every policy).
      horizons: the horizon experiment's ``T`` axis.
      reach: the largest ``T`` a policy whose round costs ``O(t)`` runs to.
    """

    name: str
    horizon: int
    seeds: int
    horizons: tuple[int, ...]
    reach: int


SIZES = {
    "cpu": Size("cpu", horizon=2000, seeds=32, horizons=(1000, 2000, 10**4, 10**5), reach=2000),
    "gpu": Size("gpu", horizon=10**4, seeds=1024, horizons=(1000, 10**4, 10**5, 10**6), reach=10**4),
}


def moment_bound(law, eps: float) -> float:
    """``u = max_i E|X_i|^(1+eps)`` of a law's arms: the moment bound a policy told ``u`` is given."""
    return float(np.max(np.asarray(law.abs_moment(jnp.float64(eps)))))


@dataclasses.dataclass(frozen=True)
class Setting:
    """One point of an experiment's axis.

    Attributes:
      label: its name in tables and figures, e.g. ``"Pareto a = 2"``.
      axis_value: its coordinate on the axis.
      instance: the bandit instance, batch shape ``(K,)``; arm 0 is the best in the equal-gap
        settings (the real-data settings' arms are the data's: any may be best, and the regret is
        measured against the best).
      eps: the setting's tail exponent: the largest of ``1, 0.75, 0.5, 0.25, 0.1`` with ``E|X|^(1+eps)`` finite on
        every arm; a policy told ``eps`` is given ``told()``'s, ``eps`` times ``told_factor``.
      horizon: ``T``.
      told_factor: what a policy told ``eps`` or ``u`` is told, as a multiple of the true value
        (``eps`` capped at 1); 1 everywhere but in the misspecification experiment.
    """

    label: str
    axis_value: float
    instance: Distribution
    eps: float
    horizon: int
    told_factor: float = 1.0

    @property
    def num_arms(self) -> int:
        """``K``, the number of arms of ``instance`` (its last batch axis)."""
        return int(self.instance.batch_shape[-1])

    def uniform_regret(self) -> float:
        """The regret of playing an arm drawn uniformly at every round: ``T (mu* - mean_i mu_i)``."""
        mu = np.asarray(self.instance.mean(), np.float64)
        return float(self.horizon * (mu.max() - mu.mean()))

    @functools.cached_property
    def true_u(self) -> float:
        """The moment bound ``u = max_i E|X_i|^(1+eps)`` at the true ``eps`` (a quadrature for most laws,
        computed once per setting; the settings of a size are built once)."""
        return moment_bound(self.instance, self.eps)

    def told(self) -> tuple[float, float]:
        """``(eps, u)`` a policy told them is given: the true ``eps`` and :attr:`true_u`, both times
        ``told_factor`` (``eps`` at most 1)."""
        return min(1.0, self.eps * self.told_factor), self.true_u * self.told_factor


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One axis of difficulty.

    Attributes:
      name: a short identifier (``"tail"``).
      axis: what varies, in words.
      description: what the experiment probes, for the report.
      settings: the axis's points, from easy to hard.
      score: how the score is defined, in one sentence.
    """

    name: str
    axis: str
    description: str
    settings: tuple[Setting, ...]
    score: str = (
        "the mean over settings of max(0, 1 - R_T / R_unif), R_T the mean regret at the setting's horizon "
        "and R_unif that of uniform random play (1: no regret; 0: no better than random)"
    )


def setting_score(mean_regret: float, uniform_regret: float) -> float:
    """A setting's score: ``max(0, 1 - R_T / R_unif)``, 1 for no regret, 0 for uniform random play or worse.

    Args:
      mean_regret: ``R_T``, a policy's mean regret at the setting's horizon (a real number ``>= 0``).
      uniform_regret: ``R_unif``, that of playing a uniformly drawn arm every round (``> 0``;
        :meth:`Setting.uniform_regret`).

    Returns:
      The score, a Python float in ``[0, 1]``.

    Examples:
      >>> setting_score(250.0, 1000.0)
      0.75
      >>> setting_score(1500.0, 1000.0)  # worse than random play
      0.0
    """
    check_interval("mean_regret", mean_regret, 0.0, math.inf, low_closed=True, high_closed=False)
    check_interval("uniform_regret", uniform_regret, 0.0, math.inf, low_closed=False, high_closed=False)
    return max(0.0, 1.0 - float(mean_regret) / float(uniform_regret))


def told_eps(tail_index: float) -> float:
    """The largest of :data:`EPS_GRID` strictly below ``tail_index - 1``."""
    return max(e for e in EPS_GRID if 1.0 + e < tail_index) if tail_index > 1.0 + EPS_GRID[-1] else EPS_GRID[-1] / 2


def _equal_gap(base: Distribution, num_arms: int = NUM_ARMS, gap: float = GAP) -> Distribution:
    return equal_gap(base, num_arms=num_arms, gap=gap)


def _series(name: str, law: Callable[[float], Distribution], values, tail: Callable[[float], float], horizon: int,
            label: str) -> list[Setting]:
    return [Setting(f"{name} {label} = {v:g}", v, _equal_gap(law(v)), told_eps(tail(v)), horizon) for v in values]


def experiments(size: str = "cpu") -> tuple[Experiment, ...]:
    """The experiments of the suite ``ht-v1`` at ``size`` (``"cpu"`` or ``"gpu"``), in report order; the
    worst case, which :func:`htb_jax.bench.run` measures with :func:`htb_jax.frontier.measure` on two families, is
    not among them.

    Args:
      size: ``"cpu"`` (``T = 2000``, 32 seeds a setting) or ``"gpu"`` (``T = 10^4``, 1024 seeds);
        the horizon experiment's horizons differ too (:class:`Size`).

    Returns:
      A tuple of seven experiments (:class:`Experiment`), ``tail``, ``asymmetry``, ``gaps``,
      ``arms``, ``horizon``, ``misspecification`` and ``real-data``, each with its settings
      (:class:`Setting`) from easy to hard (built once per size).

    Examples:
      >>> [(e.name, len(e.settings)) for e in experiments("cpu")][:3]
      [('tail', 12), ('asymmetry', 9), ('gaps', 5)]
    """
    check_choice("size", size, tuple(SIZES))
    return _experiments(SIZES[size])


@functools.cache
def _experiments(s: Size) -> tuple[Experiment, ...]:
    """The experiments at size ``s``, built once (their instances are immutable)."""
    t = s.horizon
    student = StudentT(0.0, 2.5)
    tail = (
        _series("Pareto", lambda a: Pareto(0.0, a), (3.0, 2.0, 1.6, 1.3), lambda a: a, t, "a")
        + _series("Student-t", lambda d: StudentT(0.0, d), (3.0, 2.0, 1.6, 1.3), lambda d: d, t, "df")
        + _series("Stable", lambda a: Stable(0.0, a), (2.0, 1.8, 1.5, 1.2), lambda a: a if a < 2 else math.inf, t,
                  "alpha")
    )
    asymmetry = (
        _series("Stable(1.5)", lambda b: Stable(0.0, 1.5, b), (0.0, 1.0, -1.0), lambda b: 1.5, t, "beta")
        + _series("LogNormal", lambda g: LogNormal(0.0, g), (0.5, 1.0, 1.5), lambda g: math.inf, t, "sigma")
        + _series("Frechet", lambda a: Frechet(0.0, a), (4.0, 2.5, 1.8), lambda a: a, t, "shape")
    )
    eps_t = told_eps(2.5)
    gaps = [Setting(f"gap = {g:g}", g, _equal_gap(student, gap=g), eps_t, t) for g in (1.0, 0.3, 0.1, 0.03, 0.01)]
    arms = [Setting(f"K = {k}", k, _equal_gap(student, num_arms=k), eps_t, t) for k in (2, 5, 10, 30, 100)]
    horizon = [Setting(f"T = {h:g}", h, _equal_gap(student), eps_t, h) for h in s.horizons]
    pareto = Pareto(0.0, 2.0)
    factors = (0.1, 0.3, 1.0, 3.0, 10.0)
    misspecified = [
        Setting(f"told x {f:g}", f, _equal_gap(pareto), told_eps(2.0), t, told_factor=f) for f in factors
    ]
    returns, _ = real_data.wti_returns()
    wti = Empirical.from_samples(returns)
    eps_wti = told_eps(float(tail_index(returns).alpha))
    real = [Setting(f"WTI, gap {g:g}", g, _equal_gap(wti, gap=g), eps_wti, t) for g in (1.0, 0.3)]
    real.append(Setting("WTI by weekday", 0.0, Empirical.from_samples(real_data.by_weekday()), eps_wti, t))
    return (
        Experiment("tail", "tail index (1 + eps of the heaviest finite moment)",
                   "Equal-gap arms (K = 4, gap 0.5) whose tails grow heavier: Pareto and Student-t from tail index 3 "
                   "(finite variance) to 1.3, alpha-stable from 2 (Gaussian) to 1.2.", tuple(tail)),
        Experiment("asymmetry", "skewness of the arms' law",
                   "Equal-gap arms (K = 4, gap 0.5) with skewed laws: stable(1.5) symmetric, skewed right and left; "
                   "LogNormal and Frechet centred at their means, heavier to the right down the list.",
                   tuple(asymmetry)),
        Experiment("gaps", "gap Delta",
                   f"Student-t(2.5) arms (K = 4) whose gap shrinks from 1 to 0.01, where T Delta^2 at T = {t} falls "
                   "to order one.", tuple(gaps)),
        Experiment("arms", "number of arms K",
                   "Student-t(2.5) arms, gap 0.5, from K = 2 to 100.", tuple(arms)),
        Experiment("horizon", "horizon T",
                   "Student-t(2.5) arms (K = 4, gap 0.5) at growing horizons; a policy whose round costs O(t) runs "
                   f"to T = {s.reach} at this size.", tuple(horizon)),
        Experiment("misspecification", "factor on what the policy is told",
                   "Pareto(2) arms (K = 4, gap 0.5, true eps 0.75): policies told eps or u are told them times "
                   "0.1 to 10 (eps capped at 1); policies told nothing play the same instance throughout.",
                   tuple(misspecified)),
        Experiment("real-data", "gap between arms of real returns",
                   "Daily log returns of WTI crude oil in percent, 1986-2019 (8320 days; tail index about 4): four "
                   "arms that resample them, one shifted up by 1 and then by 0.3 (a standard deviation is 2.5), then "
                   "five arms, one a weekday, each resampling that weekday's returns, with the data's own means "
                   "(Thursday's the best).", tuple(real)),
    )
