"""Any policy on Theorem 1's frontier: its measured ``(d, c)`` from one call.

:func:`measure` runs one policy (a built-in or a user's: any object with
``kernel(spec)`` and ``batch_shape``) on a family of instances, and fits the
two exponents of Section 5 with seed-bootstrap intervals: ``d`` the slope in
``T`` of the worst case over the family of ``R_T / U_eps``, ``c`` the slope of
the regret on the family's fixed instance.

**Anytime or per horizon.**  A policy that never reads ``T`` (UCB1,
AdaR-UCB, Robust UCB, APE2, ForceMoM, the anytime AdaR-ETC) runs once to the
largest horizon and is read at the log-spaced checkpoints of that run: the
regret at ``t`` of a run to ``T`` is the regret of a run to ``t``.  A policy
that uses ``T`` (AdaR-ETC, Explore-Then-Commit, MR-UCB, MR-APE, or any policy
not known to be anytime) runs once per horizon.

**Finite-T prediction.**  For an AdaR-ETC-type schedule (a policy reporting
its exploration length ``L_T`` with Median-of-Means blocks ``B_T``), the
slopes the schedule itself implies over the fitted horizons are reported next
to the fits (see :func:`~htb_jax._src.frontier.fits.free_exponent`): both tend
to the theory as ``T -> inf``, and at small ``T`` a measured slope beyond
Theorem 1's line is a finite-T slope, not an exponent.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.distributions import Distribution
from htb_jax._src.exponents import ExponentFit, fit_exponent, fit_worst_case_exponent
from htb_jax._src.frontier.families import ParetoFamily, SpikeFamily
from htb_jax._src.frontier.fits import _slope, schedule_free_slope
from htb_jax._src.instances import intrinsic_scale
from htb_jax._src.policies.adar_ucb import AdaRUCB
from htb_jax._src.policies.anytime_adar_etc import AnytimeAdaRETC
from htb_jax._src.policies.ape2 import APE2
from htb_jax._src.policies.force_mom import ForceMoM
from htb_jax._src.policies.robust_ucb import RobustUCB
from htb_jax._src.policies.robust_ucb_f import RobustUCBf
from htb_jax._src.policies.ucb1 import UCB1
from htb_jax._src.resumable import (
    ChunkStore,
    check_layout,
    check_root_key,
    default_seed_chunk,
    root_key_data,
    run_chunks,
    seed_chunks,
)
from htb_jax._src.rounding import log_spaced_rounds
from htb_jax._src.simulate.program import simulate
from htb_jax._src.sweep import progress_bar
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

# Built-in policies that never read T (the others, and any user's policy unless told, run per horizon).
_ABOVE_ONE = 1.005  # a worst-case slope this far above 1 is read as one that the hardest member's change makes

ANYTIME_POLICIES = (UCB1, AdaRUCB, RobustUCB, RobustUCBf, APE2, ForceMoM, AnytimeAdaRETC)


def checkpoint_count(horizon: int, per_decade: int = 10) -> int:
    """Checkpoints of an anytime run to ``horizon``: ``per_decade`` per decade, rounds 1 and ``T`` included."""
    check_integer("horizon", horizon, 2, maximum=10**18)
    check_integer("per_decade", per_decade, 1)
    return max(2, math.ceil(per_decade * math.log10(int(horizon)) - 1e-9) + 1)


def checkpoint_horizons(horizon: int, fit_from: int, per_decade: int = 10) -> np.ndarray:
    """The horizons an anytime run to ``horizon`` records, from ``fit_from`` on: i64[H] increasing.

    These are the rounds ``ceil(T^(j / (C - 1)))`` of ``simulate(...,
    num_checkpoints=C)`` with ``C = checkpoint_count(horizon, per_decade)``; a
    policy that runs per horizon can use the same ones.

    Examples:
      >>> import htb_jax as htb
      >>> htb.frontier.checkpoint_horizons(10_000, 1_000, per_decade=4).tolist()
      [1000, 1779, 3163, 5624, 10000]
    """
    count = checkpoint_count(horizon, per_decade)
    check_integer("fit_from", fit_from, 1, maximum=int(horizon))
    rounds = np.unique(np.asarray(log_spaced_rounds(np.int64(horizon), count)))
    return rounds[rounds >= int(fit_from)].astype(np.int64)


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One policy's measured ``(d, c)`` at one true ``eps``.

    Attributes:
      name: the policy's label.
      family_name: the family's label (a panel of :func:`~htb_jax._src.frontier.plots.plot_measurements`).
      eps: the true tail exponent (normalization by ``U_eps``).
      horizons: i64[H] the fitted horizons.
      regret: f64[F + 1, H, S] per-seed regrets (member ``F`` is the fixed instance).
      scale: f64[F + 1] ``U_eps`` of each member.
      exploration: i64[H] ``L_T`` on member 0 (0 where the policy reports none; -1 for anytime
        runs, read at checkpoints).
      d: the worst-case fit (``d.argmax``: the hardest member at the largest horizon).
      c: the fixed-instance fit.
      d_finite_t: the slope the schedule implies for ``d`` over the same horizons (NaN: no known schedule).
      c_finite_t: the slope of ``L_T`` (NaN: no known schedule).
      block_share: ``K B_T / L_T`` at the largest horizon (NaN: no known schedule).
      anytime: whether one run was read at checkpoints.
      seconds: wall time of the runs, compilation included (NaN where every chunk was read back).
      resumed_chunks: seed chunks read back from the store.
    """

    name: str
    family_name: str
    eps: float
    horizons: np.ndarray
    regret: np.ndarray
    scale: np.ndarray
    exploration: np.ndarray
    d: ExponentFit
    c: ExponentFit
    d_finite_t: float
    c_finite_t: float
    block_share: float
    anytime: bool
    seconds: float
    resumed_chunks: int

    @property
    def off_frontier(self) -> float:
        """``c + d (1+eps)/eps - (1+eps)/eps``: 0 on Theorem 1's line, negative beyond it."""
        r = (1.0 + self.eps) / self.eps
        return self.c.slope + self.d.slope * r - r

    @property
    def beyond_bound(self) -> bool:
        """Whether even the intervals' far corner lies beyond Theorem 1's line (a finite-T slope)."""
        r = (1.0 + self.eps) / self.eps
        return self.c.high + self.d.high * r - r < 0.0

    def note(self) -> str:
        """Why a slope may differ from an exponent: the finite range of ``T``, and the schedule's share."""
        parts = [f"finite-T slope, T in [{_t(self.horizons[0])}, {_t(self.horizons[-1])}]"]
        if self.beyond_bound:
            parts.append("beyond Theorem 1's line, which bounds exponents (T -> inf)")
        if not np.isnan(self.block_share) and self.block_share > 0.2:
            parts.append(f"K B_T is {self.block_share:.0%} of L_T")
        if self.c.high < 0.0:
            parts.append("c < 0: the fixed instance's regret falls over the range")
        if self.d.low > _ABOVE_ONE:
            parts.append("d > 1: the hardest member changes with T")
        return "; ".join(parts)

    def row(self) -> dict:
        """The flat row of a table or CSV."""
        return dict(
            policy=self.name, family=self.family_name, eps=self.eps,
            horizons=len(self.horizons), t_min=int(self.horizons[0]), t_max=int(self.horizons[-1]),
            seeds=int(self.regret.shape[-1]), anytime=self.anytime,
            d=self.d.slope, d_low=self.d.low, d_high=self.d.high, d_finite_t=self.d_finite_t,
            c=self.c.slope, c_low=self.c.low, c_high=self.c.high, c_finite_t=self.c_finite_t,
            block_share=self.block_share, off_frontier=self.off_frontier,
            worst_normalized=float(np.max(self.regret[:-1, -1].mean(-1) / self.scale[:-1])),
            worst_member=int(np.argmax(self.regret[:-1, -1].mean(-1) / self.scale[:-1])),
            fixed_regret=float(self.regret[-1, -1].mean()), seconds=self.seconds, note=self.note(),
        )


def _t(horizon) -> str:
    """A horizon as printed: exact below 10^5, else ``1e+07``-style."""
    return str(int(horizon)) if horizon < 10**5 else f"{float(horizon):.3g}"


def _family_instances(family) -> tuple[Distribution, str]:
    if isinstance(family, (SpikeFamily, ParetoFamily)):
        family.validate()
        return family.instances(), "two-point" if isinstance(family, SpikeFamily) else "Pareto"
    if isinstance(family, Distribution):
        shape = family.batch_shape
        if len(shape) != 2 or shape[0] < 3 or shape[1] < 2:
            raise ValueError(
                "family as a distribution needs batch shape (F + 1, K) with F >= 2 members, then the fixed "
                f"instance, and K >= 2 arms; got batch shape {shape}."
            )
        return family, "custom"
    raise TypeError(
        f"measure takes a SpikeFamily, a ParetoFamily or a distribution of batch shape (F + 1, K) for family; "
        f"got {given('family', family)}."
    )


def _member(instances: Distribution, f: int) -> Distribution:
    return jax.tree.map(lambda p: p[f : f + 1], instances)


def is_per_member(policy: Any) -> bool:
    """Whether ``policy`` is a function ``member -> policy`` (a plain callable, not a policy or a class)."""
    return callable(policy) and not hasattr(policy, "kernel") and not isinstance(policy, type)


def per_member_runs(factory, instances: Distribution) -> list[tuple[Any, Distribution, bool]]:
    """The runs of a policy told each member's parameter: ``(policy, instances, paired)`` each.

    The policies ``factory(member)`` that differ only in their parameters' values, and whose
    ``batch_shape`` follows their parameters, stack into one grid [F] that runs paired with the
    members (``simulate(..., paired=True)``): one program for the family.  Others (a ``batch_shape``
    fixed at ``()``, policies of different classes) run one member at a time, with the same numbers.
    """
    members = instances.batch_shape[0]
    policies = [factory(_member(instances, f)) for f in range(members)]
    for i, p in enumerate(policies):
        check_policy_instance(f"policy(member {i})", p, "measure")
        if p.batch_shape != ():
            raise ValueError(
                f"policy(member {i}) must be one policy (batch shape ()); got batch shape {p.batch_shape}."
            )
    if len({jax.tree.structure(p) for p in policies}) == 1:
        stacked = jax.tree.map(lambda *leaves: jnp.stack([jnp.asarray(x) for x in leaves]), *policies)
        if stacked.batch_shape == (members,):
            return [(stacked, instances, True)]
    return [(p, _member(instances, f), False) for f, p in enumerate(policies)]


def measure(
    policy: Any,
    eps: float | Sequence[float],
    horizons: Sequence[int],
    num_seeds: int,
    *,
    family: SpikeFamily | ParetoFamily | Distribution | None = None,
    key: int = 0,
    anytime: bool | None = None,
    per_decade: int = 10,
    seed_chunk: int | None = None,
    store: str | None = None,
    name: str | None = None,
    family_name: str | None = None,
    progress: bool = False,
) -> tuple[Measurement, ...]:
    """Runs one policy on a family and fits its ``(d, c)`` at each true ``eps``.

    The policy runs once; only the normalization ``U_eps`` depends on ``eps``.
    Seed ``s`` draws from ``fold_in(jax.random.key(key), s)`` alone, so the
    chunking changes nothing and two policies measured with the same key see
    the same reward tables.

    Args:
      policy: a policy instance of batch shape ``()`` (built-in or any object
        with ``kernel(spec)`` and ``batch_shape``), or a function ``member ->
        policy`` called once per member (a distribution of batch shape ``(1,
        K)``): a policy told each member's own parameter, such as Robust UCB's
        ``u``.  Policies that differ only in their parameters' values, with a
        ``batch_shape`` that follows their parameters (as the built-ins'),
        run as one grid paired with the members (``simulate(...,
        paired=True)``: one program for the family); others one member at a
        time, with the same numbers.
      eps: the true tail exponent(s) in ``(0, 1]``, one :class:`Measurement` each.
      horizons: the fitted horizons (at least two, increasing); for an anytime
        run, rounds it records (see :func:`checkpoint_horizons`).
      num_seeds: ``S >= 2``.
      family: :class:`SpikeFamily` (default: Theorem 1's two-point family),
        :class:`ParetoFamily`, or a distribution of batch shape ``(F + 1, K)``
        (the members, then the fixed instance).
      key: the root key's seed.
      anytime: read one run at checkpoints (``True``) or run per horizon
        (``False``); ``None``: anytime for the built-ins that never read ``T``
        (``ANYTIME_POLICIES``), per horizon otherwise.
      per_decade: checkpoints per decade of an anytime run.
      seed_chunk: seeds per call of ``simulate``, the resume unit and a pass of
        rounds (default: 8 on a CPU; off a CPU every seed, at most 4096 a
        chunk, since an accelerator's round costs about the same whatever its
        seeds).  A ``store`` records the layout: a run resumed on another
        kind of device needs the ``seed_chunk`` it started with.
      store: a directory: every finished chunk of seeds is written there with
        a manifest, and a run started again reads back the intact chunks (a
        directory holding another measurement is refused).
      name, family_name: labels for tables and figures (default: the policy's
        class name, the family's kind).
      progress: a progress bar on stderr.

    Returns:
      One :class:`Measurement` per ``eps``, in order.

    Examples:
      >>> import htb_jax as htb
      >>> horizons = htb.frontier.checkpoint_horizons(300, fit_from=100)  # UCB1 never reads T
      >>> (m,) = htb.frontier.measure(htb.UCB1(), 1.0, horizons, 8)
      >>> m.horizons.tolist(), m.regret.shape  # members (21 and the fixed instance) x horizons x seeds
      ([121, 152, 191, 239, 300], (22, 5, 8))
    """
    return run_measure(plan_measure(**locals()))


@dataclasses.dataclass(frozen=True)
class MeasurePlan:
    """A checked :func:`measure` call, its defaults resolved (``seed_chunk`` included), before anything
    runs.  ``horizons`` is i64[H]; ``count`` the anytime run's checkpoints (0 per horizon) and ``columns``
    the horizons' among them; ``instances`` the members, then the fixed instance; ``runs`` a chunk's
    ``simulate`` calls, ``(policy, instances, paired)`` each; ``row`` the instance whose schedule is
    reported; ``identity`` what a store's manifest records."""

    name: str
    family_name: str
    eps_values: tuple
    horizons: np.ndarray
    num_seeds: int
    seed_chunk: int
    key: int
    store: str | None
    progress: bool
    anytime: bool
    count: int
    columns: np.ndarray | None
    instances: Distribution
    runs: list
    row: int
    identity: dict


def plan_measure(*args, **kwargs) -> MeasurePlan:
    """Checks a :func:`measure` call (the same arguments) and resolves its defaults, compiling
    nothing: ``htb-jax frontier --policy`` refuses a bad call before it prints anything."""
    bound = inspect.signature(measure).bind(*args, **kwargs)
    bound.apply_defaults()
    return _plan(**bound.arguments)


def _plan(
    policy, eps, horizons, num_seeds, family, key, anytime, per_decade, seed_chunk, store, name, family_name, progress
) -> MeasurePlan:
    factory = None
    if is_per_member(policy):
        factory = policy
    else:
        check_policy_instance("policy", policy, "measure")
        if policy.batch_shape != ():
            raise ValueError(
                f"measure takes one policy (batch shape ()); got batch shape {policy.batch_shape}: "
                "measure each grid point on its own."
            )
    eps_values = (eps,) if np.ndim(eps) == 0 and not isinstance(eps, (list, tuple)) else tuple(eps)
    check_nonempty("eps", eps_values)
    check_interval("eps", list(eps_values), 0.0, 1.0, low_closed=False, high_closed=True)
    if isinstance(horizons, np.ndarray) and horizons.ndim == 1:
        horizons = horizons.tolist()
    check_nonempty("horizons", horizons)
    check_integer("horizons", list(horizons), 1, maximum=10**18)
    t = np.asarray([int(h) for h in horizons], np.int64)
    if t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError(f"horizons must be at least two, increasing; got {t.tolist()}.")
    check_integer("num_seeds", num_seeds, 2)
    check_root_key(key)
    if anytime is not None:
        check_flag("anytime", anytime)
    check_integer("per_decade", per_decade, 1)
    if seed_chunk is None:
        seed_chunk = default_seed_chunk(num_seeds)
    check_layout(num_seeds, seed_chunk)
    if store is not None:
        check_path("store", store)
    for label, value in (("name", name), ("family_name", family_name)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{label} must be a string or None; got {given(label, value)}.")
    check_flag("progress", progress)
    family = SpikeFamily() if family is None else family
    instances, kind = _family_instances(family)
    if anytime is None:
        anytime = factory is None and isinstance(policy, ANYTIME_POLICIES)
    count = checkpoint_count(int(t[-1]), per_decade) if anytime else 0
    columns = None
    if anytime:
        rounds = np.asarray(log_spaced_rounds(np.int64(t[-1]), count))
        missing = np.setdiff1d(t, rounds)
        if missing.size:
            raise ValueError(
                f"an anytime run to T={int(t[-1])} records {count} checkpoints; horizons {missing.tolist()[:4]} "
                f"are not among them: use htb.frontier.checkpoint_horizons({int(t[-1])}, fit_from, {per_decade}) "
                "or anytime=False."
            )
        columns = np.searchsorted(rounds, t)
    name = name or (getattr(factory, "__name__", "policy") if factory is not None else type(policy).__name__)
    identity = {
        "experiment": "measure", "policy": repr(policy) if factory is None else f"{name}: {getattr(factory, '__qualname__', '')}", "family": repr(family), "horizons": t.tolist(),
        "num_seeds": int(num_seeds), "anytime": bool(anytime), "per_decade": int(per_decade),
    }
    return MeasurePlan(
        name=name, family_name=family_name or kind, eps_values=eps_values, horizons=t, num_seeds=int(num_seeds),
        seed_chunk=int(seed_chunk), key=int(key), store=store, progress=progress, anytime=bool(anytime), count=count,
        columns=columns, instances=instances,
        runs=[(policy, instances, False)] if factory is None else per_member_runs(factory, instances),
        row=0 if factory is None else -1,  # whose schedule is reported: the fixed instance's for a per-member policy
        identity=identity,
    )


def run_measure(plan: MeasurePlan) -> tuple[Measurement, ...]:
    """Runs a checked :func:`measure` call, chunk of seeds by chunk, and fits it."""
    t, root = plan.horizons, jax.random.key(plan.key)

    def compute(first: int, num: int) -> dict[str, np.ndarray]:
        regrets, exploration = [], np.full(t.size, -1, np.int64)
        for p, inst, paired in plan.runs:
            if plan.anytime:
                out = simulate(
                    root, p, inst, int(t[-1]), num, first_seed=first, num_checkpoints=plan.count, paired=paired
                )
                regrets.append(np.moveaxis(np.asarray(out.regret_curve)[..., plan.columns], -1, -2))  # [F', H, S]
            else:
                out = simulate(root, p, inst, t.tolist(), num, first_seed=first, paired=paired)
                regrets.append(np.asarray(out.regret))  # [F', H, S]
                exploration = np.asarray(out.exploration)[plan.row, :, 0].astype(np.int64)
        return {"regret": np.concatenate(regrets, axis=0), "exploration": exploration}

    layout = seed_chunks(plan.num_seeds, plan.seed_chunk)
    chunk_store = None
    if plan.store is not None:
        os.makedirs(plan.store, exist_ok=True)
        chunk_store = ChunkStore(plan.store, plan.identity, root_key_data(plan.key), layout)
    started = time.perf_counter()
    parts, resumed = run_chunks(layout, compute, chunk_store, progress_bar if plan.progress else None, sys.stderr)
    seconds = math.nan if resumed == len(parts) else time.perf_counter() - started
    regret = np.concatenate([part["regret"] for part in parts], axis=-1)
    exploration = np.asarray(parts[-1]["exploration"], np.int64)
    return tuple(
        _fit(plan.name, plan.family_name, float(e), t, regret, plan.instances, exploration, plan.anytime, seconds,
             resumed, plan.key)
        for e in plan.eps_values
    )


def _fit(name, family_name, eps, t, regret, instances, exploration, anytime, seconds, resumed, key) -> Measurement:
    scale = np.asarray(intrinsic_scale(instances, eps), np.float64)
    x = t.astype(float)
    d = fit_worst_case_exponent(x, np.moveaxis(regret[:-1], 0, 1), scale[:-1], key=key)
    c = fit_exponent(x, regret[-1], key=key)
    d_finite = c_finite = share = math.nan
    if np.all(exploration > 0):  # a schedule with L_T and Median-of-Means blocks B_T
        k = instances.batch_shape[-1]
        d_finite, share = schedule_free_slope(k, t, exploration, eps)
        c_finite = _slope(x, exploration.astype(float))
    return Measurement(
        name, family_name, eps, t, regret, scale, exploration, d, c, d_finite, c_finite, share, anytime,
        seconds, resumed,
    )


def _check_measurements(measurements) -> None:
    if not isinstance(measurements, (list, tuple)) or not measurements:
        raise TypeError(
            f"measurements must be a non-empty list or tuple of Measurement (from measure); "
            f"got {given('measurements', measurements)}."
        )
    for i, m in enumerate(measurements):
        check_instance_type(f"measurements[{i}]", m, Measurement, "a Measurement (from measure)")


def _check_keyed(name: str, value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be None or a dict keyed by (policy name, eps); got {given(name, value)}.")
    return value


def measurement_table(measurements: Sequence[Measurement], claims: dict | None = None) -> str:
    """Markdown: one row per measurement, with the claimed exponents where ``claims[(name, eps)] = (d, c)``."""
    _check_measurements(measurements)
    claims = _check_keyed("claims", claims)
    fmt = lambda v: "-" if v is None or np.isnan(v) else f"{v:.3f}"  # noqa: E731
    head = (
        "| policy | family | eps | T | seeds | d claim | d finite T | d measured | c claim | c finite T "
        "| c measured | off frontier | note |\n|---|---|---:|---|---:|---:|---:|---|---:|---:|---|---:|---|\n"
    )
    lines = []
    for m in measurements:
        dc, cc = claims.get((m.name, m.eps), (math.nan, math.nan))
        r = m.row()
        lines.append(
            f"| {m.name} | {m.family_name} | {m.eps:g} | {_t(r['t_min'])}..{_t(r['t_max'])} | {r['seeds']} "
            f"| {fmt(dc)} | {fmt(m.d_finite_t)} | {m.d.slope:.3f} [{m.d.low:.3f}, {m.d.high:.3f}] | {fmt(cc)} "
            f"| {fmt(m.c_finite_t)} | {m.c.slope:.3f} [{m.c.low:.3f}, {m.c.high:.3f}] | {m.off_frontier:+.3f} "
            f"| {r['note']} |"
        )
    return head + "\n".join(lines)
