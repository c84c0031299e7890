"""Any policy on Theorem 1's frontier: its measured ``(d, c)`` from one call.

:func:`measure` runs one policy (a built-in or a user's: any object with
``kernel(spec)`` and ``batch_shape``) on a family of instances, and fits the
two exponents of Theorem 1 with seed-bootstrap intervals: ``d`` the slope in
``T`` of the worst case over the family of ``R_T / U_eps``, ``c`` the slope of
the regret on the family's fixed instance.

**Anytime or per horizon.**  A policy declares in its class attribute
``anytime`` whether it never reads ``T`` (part of the policy protocol; UCB1,
AdaR-UCB, Robust UCB, APE2, ForceMoM and the anytime AdaR-ETC declare
``True``).  Such a policy runs once to the largest horizon and is read at the
log-spaced checkpoints of that run: the regret at ``t`` of a run to ``T`` is
the regret of a run to ``t``.  A policy that uses ``T`` (AdaR-ETC,
Explore-Then-Commit, MR-UCB, MR-APE), or one that declares nothing, runs once
per horizon.

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
import sys
import time
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.chunk_store import ChunkStore, Remedy, check_store_dir, run_chunks
from htb_jax._src.distributions import Distribution
from htb_jax._src.exponents import fit_exponent, fit_worst_case_exponent
from htb_jax._src.fingerprint import Program, identity_repr
from htb_jax._src.frontier.families import ParetoFamily, SpikeFamily
from htb_jax._src.frontier.fits import _slope, schedule_free_slope
from htb_jax._src.frontier.measurement import Measurement
from htb_jax._src.frontier.runs import STORE_REMEDY
from htb_jax._src.instances import check_instance, intrinsic_scale
from htb_jax._src.memory import check_host_results
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.policy_protocol import EngineSpec, reads_horizon
from htb_jax._src.protocol_checks import (
    USER_CODE_NOTE,
    check_one_policy,
    check_policy_factory,
    is_policy_factory,
)
from htb_jax._src.resumable import (
    check_layout,
    check_root_key,
    default_seed_chunk,
    root_key_data,
    seed_chunks,
)
from htb_jax._src.reward_table import MAX_SEEDS
from htb_jax._src.rounding import log_spaced_rounds
from htb_jax._src.simulate.checks import MAX_CHECKPOINTS
from htb_jax._src.simulate.program import simulate
from htb_jax._src.simulate.schedule import _flatten, default_pull_chunk, max_blocks
from htb_jax._src.sweep import progress_bar
from htb_jax._src.validation import (
    check_distinct,
    check_flag,
    check_increasing,
    check_integer,
    check_interval,
    check_nonempty,
    check_path,
    check_static,
    check_untraced,
    given,
    has_tracer,
    real_array,
    shown,
)


def declared_anytime(policy: Any) -> bool:
    """A policy's declaration ``anytime`` (the policy protocol): ``True`` if it never reads ``T``,
    ``False`` where it reads ``T`` or declares nothing.

    Raises:
      TypeError: a declaration that is not ``True`` or ``False``.
    """
    value = getattr(policy, "anytime", False)
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{type(policy).__name__}.anytime must be True (the policy never reads T) or False (it does); "
            f"got {value!r}."
        )
    return bool(value)


def policy_reads_horizon(policy: Any, arms: Distribution, horizon: int) -> bool:
    """Whether ``policy`` (its first grid point) reads ``T`` as it plays on ``arms`` (one instance,
    parameters [K]) in a run to ``horizon`` (:func:`~htb_jax._src.policy_protocol.reads_horizon`)."""
    one = jax.tree.map(lambda leaf: leaf[0], _flatten(policy))  # the first grid point, as the engine checks it
    k = arms.batch_shape[-1]
    spec = EngineSpec(k, horizon, default_pull_chunk(k, horizon), max_blocks(k, np.asarray([horizon])))
    return reads_horizon(one, arms, spec)


def _check_anytime(runs, horizon: int, why: str) -> None:
    """``ValueError`` where a policy read at checkpoints of one run reads ``T`` (the horizon) as it plays."""
    seen = set()
    for policy, instances, _ in runs:
        if type(policy) in seen:
            continue
        seen.add(type(policy))
        if policy_reads_horizon(policy, instances[0], horizon):
            name = type(policy).__name__
            raise ValueError(
                f"measure reads one run to T={horizon} at checkpoints ({why}), but {name}'s init, act or update "
                f"reads ctx.horizon (T), so its regret at a checkpoint t < T is not that of a run to t: run it per "
                f"horizon (anytime=False, --anytime no) or declare anytime = False in {name}."
            )


def checkpoint_count(horizon: int, per_decade: int = 10) -> int:
    """Checkpoints of an anytime run to ``horizon``: ``per_decade`` per decade, rounds 1 and ``T`` included."""
    check_static("htb.frontier.checkpoint_count", horizon=horizon, per_decade=per_decade)
    check_integer("horizon", horizon, 2, maximum=10**18, one=True)
    check_integer("per_decade", per_decade, 1, one=True)
    count = max(2, math.ceil(int(per_decade) * math.log10(int(horizon)) - 1e-9) + 1)
    if count > MAX_CHECKPOINTS:  # simulate's limit, which would name num_checkpoints, never given
        raise ValueError(f"per_decade must give at most {MAX_CHECKPOINTS} checkpoints ({count} to T={int(horizon)}); "
                         f"got per_decade={per_decade}.")
    return count


def checkpoint_horizons(horizon: int, fit_from: int, per_decade: int = 10) -> np.ndarray:
    """The horizons an anytime run to ``horizon`` records, from ``fit_from`` on: i64[H] increasing.

    These are the rounds ``ceil(T^(j / (C - 1)))`` of ``simulate(...,
    num_checkpoints=C)`` with ``C = checkpoint_count(horizon, per_decade)``; a
    policy that runs per horizon can use the same ones.  The power is
    evaluated in float64, ``exp((j / (C - 1)) log T)``, and snapped to an
    integer within ``2^-44`` (relative) before the ceiling.  From ``2^43``
    (about ``8.8e12``) on, every value is that near an integer: a round is
    the float64 power rounded to the nearest integer, off the exact ceiling
    by at most 1 plus about ``1e-14`` of it, so that at ``T >= 10^16`` some
    powers of ten are missed, a round off by a few dozen.

    Args:
      horizon: the run's horizon ``T >= 2``, a Python int up to ``10^18``.
      fit_from: the smallest horizon kept, an int in ``[1, T]``.
      per_decade: checkpoints per decade of rounds, ``>= 1`` (default 10).

    Returns:
      i64[H]: the recorded rounds ``>= fit_from``, increasing and distinct (``T`` last).

    Examples:
      >>> import htb_jax as htb
      >>> htb.frontier.checkpoint_horizons(10_000, 1_000, per_decade=4).tolist()
      [1000, 1779, 3163, 5624, 10000]
    """
    check_static("htb.frontier.checkpoint_horizons", horizon=horizon, fit_from=fit_from, per_decade=per_decade)
    count = checkpoint_count(horizon, per_decade)
    check_integer("fit_from", fit_from, 1, maximum=int(horizon), one=True)
    rounds = np.unique(np.asarray(log_spaced_rounds(np.int64(horizon), count)))
    return rounds[rounds >= int(fit_from)].astype(np.int64)


def _family_instances(family) -> tuple[Distribution, str]:
    if isinstance(family, (SpikeFamily, ParetoFamily)):
        family.validate()
        return family.instances(), "two-point" if isinstance(family, SpikeFamily) else "Pareto"
    if isinstance(family, Distribution):
        check_instance(family, "family", "htb.frontier.measure", ("from_bits", "mean", "abs_moment"))
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


def _scales(instances: Distribution, eps_values: tuple, every_member: bool) -> tuple[np.ndarray, ...]:
    """``U_eps`` of every member (then the fixed instance), f64[F + 1] per ``eps``: the worst case's
    normalization, computed before the runs.

    ``ValueError`` where the fit of ``d`` would fail after the runs: a member's ``U_eps`` infinite
    (its arms lack the moment of order ``1 + eps``) for a family of one's own (``every_member``); for
    the built-in families, whose members without the moment normalize to 0 and drop out of the worst
    case (the Pareto family's shapes below ``1 + eps``), every member's.
    """
    scales = []
    for e in eps_values:
        scale = np.asarray(intrinsic_scale(instances, e), np.float64)
        bad = np.flatnonzero(~np.isfinite(scale[:-1] if not every_member else scale))
        if bad.size and (every_member or bad.size == scale.size - 1):
            sup = getattr(instances, "eps_sup", None)
            told = f" (its eps_sup() is {float(np.min(sup())):g})" if callable(sup) else ""
            which = "every member of the family" if every_member else "a member of the family"
            raise ValueError(
                f"eps must leave {which} a finite U_eps, the normalization of d (its arms need "
                f"a finite (1+eps)-moment){told}; got eps={e:g}, where member {int(bad[0])}'s U_eps is "
                f"{float(scale[bad[0]]):g}" + ("." if every_member else ", as every member's.")
            )
        scales.append(scale)
    return tuple(scales)


def _member(instances: Distribution, f: int) -> Distribution:
    """Member ``f`` of a law of batch shape ``(F + 1, K)``, batch shape ``(1, K)``: each parameter that spans
    the members sliced, each that broadcasts over them (a scalar, a row of ``K``, a leading axis of 1) kept."""
    rank = len(instances.batch_shape)
    return jax.tree.map(lambda p: p if np.ndim(p) < rank or np.shape(p)[0] == 1 else p[f : f + 1], instances)


def per_member_runs(factory, instances: Distribution) -> list[tuple[Any, Distribution, bool]]:
    """The runs of a policy told each member's parameter: ``(policy, instances, paired)`` each.

    The policies ``factory(member)`` that differ only in their parameters' values, and whose
    ``batch_shape`` follows their parameters, stack into one grid [F] that runs paired with the
    members (``simulate(..., paired=True)``): one program for the family.  Others (a ``batch_shape``
    fixed at ``()``, policies of different classes) run one member at a time, with the same numbers.
    """
    members = instances.batch_shape[0]
    policies = []
    for f in range(members):
        try:
            policies.append(factory(_member(instances, f)))
        except Exception as error:
            error.add_note(f"{USER_CODE_NOTE}the function member -> policy given as policy, called on member {f})")
            raise
    for i, p in enumerate(policies):
        check_one_policy(f"policy(member {i})", p, "measure", "return one policy per member")
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
    restart: bool = False,
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
        (``False``); ``None``: the policy's own declaration, its class
        attribute ``anytime`` (``True`` for the built-ins that never read
        ``T``; a policy that declares nothing runs per horizon).  A policy run
        at checkpoints must not read ``ctx.horizon``: one that does is refused.
      per_decade: checkpoints per decade of an anytime run.
      seed_chunk: seeds per call of ``simulate``, the resume unit and a pass of
        rounds (default: 8 on a CPU; off a CPU every seed, at most 4096 a
        chunk, since an accelerator's round costs about the same whatever its
        seeds).  A ``store`` records the layout: a run resumed on another
        kind of device needs the ``seed_chunk`` it started with.
      store: a directory: every finished chunk of seeds is written there with
        a manifest, and a run started again reads back the intact chunks.  A
        directory holding another measurement, or chunks that another program
        computed (the code of the policy, of the family's law or of htb_jax
        changed, or the version of htb_jax, jax or jaxlib), is refused
        (``ValueError``), as is one where nothing can be written, before anything runs.
      restart: delete what ``store`` holds and start again instead of refusing it.
      name, family_name: labels for tables and figures (default: the policy's
        class name, the family's kind).
      progress: a progress bar on stderr.

    Returns:
      One :class:`Measurement` per ``eps``, in order.

    Raises:
      Interrupted: a ``KeyboardInterrupt`` on Ctrl-C, after every finished chunk is stored.

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
    the horizons' among them; ``instances`` the members, then the fixed instance, and ``scales`` their
    ``U_eps`` per ``eps``, f64[F + 1] each; ``runs`` a chunk's
    ``simulate`` calls, ``(policy, instances, paired)`` each; ``row`` the instance whose schedule is
    reported; ``identity`` what a store's manifest records; ``restart`` whether to delete the store's
    contents first."""

    name: str
    family_name: str
    eps_values: tuple
    horizons: np.ndarray
    num_seeds: int
    seed_chunk: int
    key: int
    store: str | None
    restart: bool
    progress: bool
    anytime: bool
    count: int
    columns: np.ndarray | None
    instances: Distribution
    scales: tuple
    runs: list
    row: int
    identity: dict


# How a measure call gives an anytime run's horizons that are checkpoints, or runs per horizon
_CHECKPOINTS_REMEDY = "use htb.frontier.checkpoint_horizons({horizon}, fit_from, {per_decade}) or anytime=False"


def plan_measure(*args, checkpoints_remedy: str = _CHECKPOINTS_REMEDY, **kwargs) -> MeasurePlan:
    """Checks a :func:`measure` call (the same arguments) and resolves its defaults, compiling
    nothing: ``htb-jax frontier --policy`` refuses a bad call before it prints anything (its
    ``checkpoints_remedy`` says how its user gives horizons that are checkpoints, with the fields
    ``{horizon}`` and ``{per_decade}``)."""
    bound = inspect.signature(measure).bind(*args, **kwargs)
    bound.apply_defaults()
    return _plan(**bound.arguments, checkpoints_remedy=checkpoints_remedy)


def _plan(
    policy, eps, horizons, num_seeds, family, key, anytime, per_decade, seed_chunk, store, restart, name, family_name,
    progress, checkpoints_remedy,
) -> MeasurePlan:
    check_untraced("measure runs its own programs, chunk of seeds by chunk, and fits them on the host", ".",
                   policy=policy, eps=eps, horizons=horizons, num_seeds=num_seeds, family=family)
    factory = None
    if is_policy_factory(policy):
        check_policy_factory("policy", policy, "measure", "member")
        factory = policy
    else:
        check_one_policy("policy", policy, "measure", "measure each grid point on its own")
    if real_array("eps", eps).ndim > 1:
        raise ValueError(f"eps must be one number or a flat list of numbers; got {given('eps', eps)} of shape "
                         f"{np.shape(eps)}.")
    eps_values = (eps,) if np.ndim(eps) == 0 and not isinstance(eps, (list, tuple)) else tuple(eps)
    check_nonempty("eps", eps_values)
    check_interval("eps", list(eps_values), 0.0, 1.0, low_closed=False, high_closed=True)
    check_distinct("eps", list(eps_values))
    if isinstance(horizons, (np.ndarray, jax.Array)) and not has_tracer(horizons) and np.ndim(horizons) == 1:
        horizons = np.asarray(horizons).tolist()  # a NumPy or jax array of horizons, as simulate takes
    check_nonempty("horizons", horizons)
    try:
        flat = np.ndim(horizons) == 1
    except ValueError:  # ragged, [[100], 200]: NumPy's "inhomogeneous shape" named nothing
        flat = False
    if not flat:  # [[100, 200]] reached int() of a list
        raise ValueError(f"horizons must be a flat list of integers; got horizons={shown(horizons)}.")
    check_integer("horizons", list(horizons), 1, maximum=10**18)
    t = np.asarray([int(h) for h in horizons], np.int64)
    check_increasing("horizons", t, least=2)
    check_integer("num_seeds", num_seeds, 2, maximum=MAX_SEEDS, one=True)
    check_root_key(key)
    if anytime is not None:
        check_flag("anytime", anytime)
    check_integer("per_decade", per_decade, 1, one=True)
    count = checkpoint_count(int(t[-1]), per_decade)  # refused here, before the laws' moments are computed
    if seed_chunk is None:
        seed_chunk = default_seed_chunk(num_seeds)
    check_layout(num_seeds, seed_chunk)
    if store is not None:
        check_path("store", store)
    check_flag("restart", restart)
    for label, value in (("name", name), ("family_name", family_name)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{label} must be a string or None; got {given(label, value)}.")
    check_flag("progress", progress)
    if store is not None:
        check_store_dir(store, STORE_REMEDY)
    family = SpikeFamily() if family is None else family
    instances, kind = _family_instances(family)
    # The regrets f64[F + 1, H, S], held twice at the end (the chunks' and their concatenation).
    check_host_results(int(num_seeds), 2 * 8 * instances.batch_shape[0] * t.size,
                       "run fewer seeds, or several measurements with other keys")
    scales = _scales(instances, eps_values, every_member=kind == "custom")
    runs = [(policy, instances, False)] if factory is None else per_member_runs(factory, instances)
    told = anytime is not None
    if anytime is None:
        anytime = all(declared_anytime(p) for p, _, _ in runs)
    if anytime:
        _check_anytime(runs, int(t[-1]), "anytime=True" if told else "its declaration anytime = True")
    count = count if anytime else 0
    columns = None
    if anytime:
        rounds = np.asarray(log_spaced_rounds(np.int64(t[-1]), count))
        missing = np.setdiff1d(t, rounds)
        if missing.size:
            first = int(missing[0])
            nearest = rounds[max(np.searchsorted(rounds, first) - 1, 0):][:2].tolist()
            raise ValueError(
                f"an anytime run to T={int(t[-1])} records {count} checkpoints; horizons {missing.tolist()[:4]} "
                f"are not among them (the nearest to {first}: {' and '.join(map(str, nearest))}): "
                f"{checkpoints_remedy.format(horizon=int(t[-1]), per_decade=per_decade)}."
            )
        columns = np.searchsorted(rounds, t)
    name = name or (getattr(factory, "__name__", "policy") if factory is not None else type(policy).__name__)
    identity = {
        "experiment": "measure", "family": identity_repr(family), "horizons": t.tolist(),
        "policy": identity_repr(policy) if factory is None else f"{name}: {getattr(factory, '__qualname__', '')}",
        "num_seeds": int(num_seeds), "anytime": bool(anytime), "per_decade": int(per_decade),
    }
    return MeasurePlan(
        name=name, family_name=family_name or kind, eps_values=eps_values, horizons=t, num_seeds=int(num_seeds),
        seed_chunk=int(seed_chunk), key=int(key), store=store, restart=bool(restart), progress=progress,
        anytime=bool(anytime), count=count, columns=columns, instances=instances, scales=scales, runs=runs,
        row=0 if factory is None else -1,  # whose schedule is reported: the fixed instance's for a per-member policy
        identity=identity,
    )


def measure_calls(plan: MeasurePlan) -> list[dict]:
    """The ``simulate`` calls of every chunk of a measurement, but its seeds: what a chunk runs and
    what its store's fingerprint traces (:func:`~htb_jax._src.fingerprint.fingerprint`)."""
    root, t = jax.random.key(plan.key), plan.horizons
    if plan.anytime:
        return [dict(key=root, policy=p, instance=inst, horizon=int(t[-1]), num_checkpoints=plan.count, paired=paired)
                for p, inst, paired in plan.runs]
    return [dict(key=root, policy=p, instance=inst, horizon=t.tolist(), paired=paired) for p, inst, paired in plan.runs]


def open_measure_store(plan: MeasurePlan, remedy: Remedy = STORE_REMEDY) -> ChunkStore:
    """The store of a planned measurement (``plan.store``), checked against its identity and its
    program (traced, nothing compiled: a malformed kernel is refused here) before anything runs."""
    return ChunkStore(plan.store, plan.identity, root_key_data(plan.key), seed_chunks(plan.num_seeds, plan.seed_chunk),
                      Program(measure_calls(plan)), restart=plan.restart, remedy=remedy)


def run_measure(plan: MeasurePlan, chunk_store: ChunkStore | None = None) -> tuple[Measurement, ...]:
    """Runs a checked :func:`measure` call, chunk of seeds by chunk, and fits it (its store opened here
    unless given, from :func:`open_measure_store`)."""
    t = plan.horizons
    calls = measure_calls(plan)

    def compute(first: int, num: int) -> dict[str, np.ndarray]:
        regrets, exploration = [], np.full(t.size, -1, np.int64)
        for call in calls:
            out = simulate(**call, num_seeds=num, first_seed=first)
            if plan.anytime:
                regrets.append(np.moveaxis(np.asarray(out.regret_curve)[..., plan.columns], -1, -2))  # [F', H, S]
            else:
                regrets.append(np.asarray(out.regret))  # [F', H, S]
                exploration = np.asarray(out.exploration)[plan.row, :, 0].astype(np.int64)
        return {"regret": np.concatenate(regrets, axis=0), "exploration": exploration}

    layout = seed_chunks(plan.num_seeds, plan.seed_chunk)
    if chunk_store is None and plan.store is not None:
        chunk_store = open_measure_store(plan)
    started = time.perf_counter()
    parts, resumed = run_chunks(layout, compute, chunk_store, progress_bar if plan.progress else None, sys.stderr)
    seconds = math.nan if resumed == len(parts) else time.perf_counter() - started
    regret = np.concatenate([part["regret"] for part in parts], axis=-1)
    exploration = np.asarray(parts[-1]["exploration"], np.int64)
    # AdaR-ETC's schedule, L_T with Median-of-Means blocks B_T, has finite-T predictions; another policy's
    # exploration (a forced one, a user's ETC) has none known
    schedule = all(isinstance(policy, AdaRETC) for policy, _, _ in plan.runs)
    return tuple(
        _fit(plan.name, plan.family_name, float(e), t, regret, plan.instances, scale, exploration, plan.anytime,
             seconds, resumed, plan.key, schedule)
        for e, scale in zip(plan.eps_values, plan.scales, strict=True)
    )


def _fit(name, family_name, eps, t, regret, instances, scale, exploration, anytime, seconds, resumed,
         key, schedule) -> Measurement:
    x = t.astype(float)
    d = fit_worst_case_exponent(x, np.moveaxis(regret[:-1], 0, 1), scale[:-1], key=key)
    c = fit_exponent(x, regret[-1], key=key)
    d_finite = c_finite = share = math.nan
    if schedule and np.all(exploration > 0):
        k = instances.batch_shape[-1]
        d_finite, share = schedule_free_slope(k, t, exploration, eps)
        c_finite = _slope(x, exploration.astype(float))
    return Measurement(
        name, family_name, eps, t, regret, scale, exploration, d, c, d_finite, c_finite, share, anytime,
        seconds, resumed,
    )
