"""Schedule tuning with optax: minimise a scalarised regret proxy over admissible ``(alpha, q)``.

The objective (for a weight ``lam`` in ``[0, 1]``) is

    J(alpha, q) = lam * log W(alpha, q) + (1 - lam) * log R_ref(alpha, q),

``W = smax_f R_f / U_eps(nu_f)`` the worst case over an instance family of
the normalized regret proxy (Section 5's ``Phi_free``), taken smoothly as
``smax_f x_f = exp(sigma logsumexp(log x_f / sigma))`` (``sigma`` in log
units; it exceeds the max by at most a factor ``F^sigma``), and ``R_ref`` the
regret proxy on one reference instance (``Phi_dep``).  Regrets are the
Monte-Carlo relaxation of :mod:`htb_jax._src.proxy` on fixed tables (common
random numbers: the same seeds at every iteration), its analytic bound, or
(``proxy="smoothed"``) ``simulate``'s exact mean regret on those seeds with
central-difference gradients (:mod:`htb_jax._src.smoothing`).

**Smoothed proxy.**  The exact regret is a sawtooth in the exploration
length (linear within a block size, a jump where it grows), so the slope
depends on the scale it is taken at.  The central differences start at the
half-width ``width[0]`` (across many teeth: the global trend) and shrink
geometrically to ``width[1]`` over the steps (the local slope); since the
recorded objective is then the exact simulated objective on the seeds, the
returned schedule is the iterate with the lowest recorded objective (the
last iterate for the other proxies).

**Polish.**  With ``polish = P > 0`` (smoothed proxy) three passes of the
exact objective follow the descent, each keeping the best point seen
(:func:`~htb_jax._src.schedule_search.polish`: across the whole range of the
exploration length, around the best, at the lengths where a tooth's minimum
sits); the returned schedule is the best of all (``3 max(P, 3K - 1)`` exact
evaluations: each pass is padded to the longest, and one tooth has ``3K - 1`` lengths).

**Which proxy.**  The default, ``proxy="smoothed"`` with ``polish=48``,
descends ``simulate``'s own objective on the seeds and reaches the
sawtooth's minimum, which no gradient sees.  On three ``Stable(1.6)`` arms
(gap 0.2, ``T = 10^5``, ``eps = 0.5``, 256 seeds) it tunes to ``(alpha, q) =
(0.772, 0.229)``: regret 820 +- 34 on 4096 fresh seeds, against 830 +- 32
for the best of 64 schedules across the range of ``L`` chosen on those
seeds; the pathwise proxy (``"monte_carlo"``) stops at ``(0.913, 0.087)``
and the descent without polish at ``(0.961, 0.035)``, both near 2910
(``tests/test_tuning.py``).  ``"monte_carlo"`` is right for the relaxation
itself (its derivative, its ``tau`` and ``rounding`` limits, one table read
at every step), or where an exact evaluation costs too much (per-pull
families at horizons where the smoothed proxy's tables, which also cover
the differences' exploration at ``alpha - width``, ``q + width``, are too
large); ``"analytic"``, the bound of Theorems 2-3, for the bound's own
trade-off (no seeds; at moderate ``T`` it tunes to ``alpha*(eps)`` whatever
the weight).

**Jit.**  :func:`tune_schedule` is not jitted inside; callers jit it once
with ``eps``, ``horizon``, ``num_seeds``, ``num_steps``, ``optimizer``,
``tune_q``, ``proxy``, ``sampler`` and ``polish`` static (``lam``, ``tau``, ``sigma``,
``width``, the initial schedule and the instances may be traced; traced instances are not
checked, and where the checks would refuse them, an unnormalisable family or an instance without
a suboptimal arm, every value of the result is NaN).

**Reparametrisation.**  Unconstrained logits map into the admissible set of
Theorems 2-3 (:func:`~htb_jax._src.schedule_search.admissible_schedule`), so
every iterate lies strictly inside it.

Sweeping ``lam`` traces an empirical frontier; a vector of ``lam`` is one
program (``vmap`` over ``lam``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import theory
from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_instance, intrinsic_scale
from htb_jax._src.instances import gaps as instance_gaps
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.proxy import (
    _check_horizon,
    _check_tau,
    analytic_regret_bound,
    proxy_regrets,
    proxy_table,
)
from htb_jax._src.schedule_search import admissible_schedule, schedule_logits
from htb_jax._src.schedule_search import polish as polish_schedule
from htb_jax._src.simulate.fast_path import SAMPLERS
from htb_jax._src.smoothing import _check_sampler, _check_table_size, default_pulls, smoothed_regret_fn
from htb_jax._src.validation import (
    check_choice,
    check_flag,
    check_integer,
    check_interval,
    check_static,
    concrete,
    given,
    real_array,
)

if TYPE_CHECKING:  # optax is imported where a schedule is tuned: `import htb_jax` does not wait for it
    import optax

PROXIES = ("monte_carlo", "analytic", "smoothed")
DEFAULT_POLISH = 48  # polish=None with the smoothed proxy: 3 x 48 exact evaluations after the descent


class TuningResult(NamedTuple):
    """What :func:`tune_schedule` returns; leading axes ``L`` are those of ``lam``.

    Attributes:
      alpha: f64[*L] the tuned ``alpha``.
      q: f64[*L] the tuned ``q``.
      objective: f64[*L, steps] the objective ``J`` at each iterate, before its update.
      alpha_trace: f64[*L, steps + 1] every iterate's ``alpha``, the initial one first.
      q_trace: f64[*L, steps + 1] every iterate's ``q``.
      worst_case: f64[*L] ``max_f R_f / U_eps(nu_f)`` over the family at the tuned schedule: the
        normalised worst case, not a regret.
      reference: f64[*L] the proxy's regret on the reference at the tuned schedule.
      final_objective: f64[*L] ``J`` at the tuned schedule (exact for the smoothed proxy).
      lam: f64[*L] the weights.
    """

    alpha: jax.Array
    q: jax.Array
    objective: jax.Array
    alpha_trace: jax.Array
    q_trace: jax.Array
    worst_case: jax.Array
    reference: jax.Array
    final_objective: jax.Array
    lam: jax.Array


def smooth_max_log(log_values: jax.Array, sigma: Any) -> jax.Array:
    """``sigma logsumexp(log_values / sigma)`` over the last axis: a smooth max, in ``[max, max + sigma log F]``.

    The worst-case term of :func:`tune_schedule`'s objective is this smooth max of
    ``log(R_f / U_eps(nu_f))`` over the family's ``F`` members (its ``log smax_f``,
    the ``log W`` of :func:`tune_schedule`); applied to ``simulate``'s mean regrets it gives the same
    objective on a grid of schedules.

    Args:
      log_values: f64[..., F] the logs to take the smooth max of.
      sigma: temperature ``> 0`` in log units (traced is fine).

    Returns:
      f64[...].

    Examples:
      >>> import jax.numpy as jnp, htb_jax as htb
      >>> round(float(htb.smooth_max_log(jnp.log(jnp.array([1.0, 2.0, 4.0])), 0.05)), 6)  # log 4 = 1.386294
      1.386294
    """
    concrete = real_array("log_values", log_values)
    if np.ndim(log_values) == 0:
        raise ValueError(f"log_values must have a last axis to take the max over, f[..., F]; got log_values="
                         f"{log_values!r}, a scalar.")
    if np.shape(log_values)[-1] == 0:
        raise ValueError(f"log_values must have at least one entry on its last axis to take the max over; "
                         f"got log_values of shape {np.shape(log_values)}.")
    if concrete is not None and np.isnan(concrete).any():
        raise ValueError(f"log_values must not hold NaN (-inf, the log of a zero regret, is fine); got NaN at "
                         f"index {tuple(int(i) for i in np.argwhere(np.isnan(concrete))[0])}.")
    if np.ndim(sigma) != 0:  # an array mixed temperatures entry by entry, each its own "max"
        raise ValueError(f"sigma must be a scalar temperature; got sigma of shape {np.shape(sigma)}.")
    check_interval("sigma", sigma, 0.0, np.inf, low_closed=False, high_closed=False)
    return sigma * jax.scipy.special.logsumexp(jnp.asarray(log_values) / sigma, axis=-1)


def tuning_objective(
    policy: AdaRETC,
    lam: Any,
    regret_family: Any,
    regret_reference: Any,
    scale: jax.Array,
    sigma: Any,
) -> jax.Array:
    """``lam log smax_f(R_f / U_f) + (1 - lam) log R_ref``, f64[].

    Args:
      policy: unbatched AdaR-ETC.
      lam: weight in ``[0, 1]``.
      regret_family: ``policy -> f64[F]`` mean regrets on the family.
      regret_reference: ``policy -> f64[]`` mean regret on the reference.
      scale: f64[F] ``U_eps`` of the family members.
      sigma: smooth-max temperature (log units).
    """
    log_worst = smooth_max_log(jnp.log(regret_family(policy) / scale), sigma)
    return lam * log_worst + (1.0 - lam) * jnp.log(regret_reference(policy))


def tune_schedule(
    key: jax.Array,
    eps: float,
    family: Distribution,
    reference: Distribution,
    horizon: int,
    num_seeds: int,
    *,
    lam: Any = 0.5,
    tau: float = 0.05,
    sigma: float = 0.05,
    num_steps: int = 200,
    optimizer: optax.GradientTransformation | None = None,
    init_alpha: float | None = None,
    init_q: float | None = None,
    tune_q: bool = True,
    proxy: str = "smoothed",
    width: Any = (0.05, 0.002),
    sampler: str = "auto",
    polish: int | None = None,
) -> TuningResult:
    """Tunes AdaR-ETC's ``(alpha, q)`` at a finite horizon with an optax optimiser.

    Minimises ``lam log W + (1 - lam) log R_ref`` (``W`` the smooth max of
    :func:`smooth_max_log` over the family's normalised regrets, ``R_ref`` the regret on the
    reference instance) over the admissible set, through the sigmoid reparametrisation of
    :func:`admissible_schedule`.  Every proxy reads seeds ``0 .. S - 1`` of
    ``key`` (family and reference draw from the same ``key``, like
    ``simulate``), so every iteration sees the same rewards.  The default
    (``proxy="smoothed"``, ``polish=48``) reaches ``simulate``'s minimum
    under heavy tails, where the pathwise gradient of ``"monte_carlo"`` does
    not (docs/guides/proxies-tuning.md, "The default tuner" and "The other proxies").  The whole optimisation (all
    ``lam`` at once, vmapped) traces as one program: jit it once, with its static arguments named (the
    example below); it is not jitted inside.

    Args:
      key: a threefry ``jax.random.key``.
      eps: tail exponent in ``(0, 1]``: the design ``eps`` of the schedules
        and the true ``eps`` of the normalization ``U_eps``.
      family: instances of batch shape ``(F, K)`` (the worst case runs over ``F``).
      reference: one instance, batch shape ``(K,)``.
      horizon: ``T``.
      num_seeds: ``S`` (the smoothed and Monte-Carlo proxies).
      lam: weight(s) in ``[0, 1]``, scalar or f[*L].
      tau: commit temperature of the Monte-Carlo proxy (reward units; keep it
        well below the smallest gap: see :func:`regret_proxy`); the other
        proxies do not read it.
      sigma: smooth-max temperature over the family, ``> 0`` (log units).
      num_steps: optimiser steps.
      optimizer: an optax transformation (default ``optax.adam(0.05)``); one that
        takes extra arguments (``optax.contrib.reduce_on_plateau``,
        ``optax.lbfgs``) is given each weight's objective as ``value``, with ``grad`` and
        ``value_fn``; where it calls ``value_fn`` (``lbfgs``'s line search), the weights of ``lam``
        run one after another (``lax.map``), not batched.
      init_alpha, init_q: the starting schedule (default: the middle of each
        range, ``z = 0``); must be admissible.
      tune_q: if False, ``q`` stays at its initial value, as :func:`htb_jax.admissible_schedule` holds it:
        strictly inside its range by ``10^-6`` of the range's width (``init_q=0.0`` is ``3.3e-7`` at
        ``eps = 1``).
      proxy: ``"smoothed"`` (``simulate``'s mean regret with
        central-difference gradients, :func:`smoothed_regret`),
        ``"monte_carlo"`` (:func:`regret_proxy`'s relaxation) or
        ``"analytic"`` (:func:`analytic_regret_bound`); when each is right:
        docs/guides/proxies-tuning.md, "The other proxies".
      width: smoothed proxy: the half-width of the differences in ``alpha``
        and ``q``, a number or a pair ``(first, last)`` shrunk geometrically
        over the steps; each in ``(0, 1]``.  It sets the scale of the
        descent's slopes and the polish's second pass (``+- width[0]``), not
        its reach: the first pass spans the whole range.  With a per-pull
        sampler and a concrete ``width`` (a default or a static argument)
        the table covers the exploration at ``alpha*(eps) - max(width)``,
        ``q_max + max(width)`` (all ``T`` otherwise).
      sampler: smoothed proxy: ``simulate``'s sampler it reproduces
        (``"auto"``, ``"per_pull"``, ``"order_statistic"``, ``"block_sums"``: Stable
        arms at any ``T``).
      polish: smoothed proxy: after the descent, three passes of the exact
        objective with this many points each, or ``3K - 1`` where that is
        more (one tooth's lengths; across the whole
        range of the exploration length, then ``alpha`` over ``+-
        width[0]``, then the lengths of the teeth around the best where the
        minimum of a tooth sits; docs/guides/proxies-tuning.md, "The default tuner"); the best of
        those and of the iterates is returned.  0 skips it; ``None`` (the
        default) is 48 with the smoothed proxy (16 reached the same minima
        on the instances measured; 3 x 48 evaluations against the descent's
        200 x 5 with ``q`` tuned), 0 with the others, which refuse a
        positive value.  Static.

    Returns:
      :class:`TuningResult`; ``worst_case`` and ``reference`` are the proxy
      (hard max over the family) at the tuned schedule.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Stable(loc=0.0, alpha=1.6), num_arms=3, gap=0.2)  # E|X|^1.6 = inf
      >>> family = jax.tree.map(lambda p: p[None], nu.broadcast())  # the instance alone: every lam minimises R
      >>> tune = jax.jit(htb.tune_schedule, static_argnames=(
      ...     "eps", "horizon", "num_seeds", "num_steps", "optimizer", "tune_q", "proxy", "sampler", "polish"))
      >>> res = tune(jax.random.key(0), 0.5, family, nu, 10**5, 256)  # proxy="smoothed", polish=48
      >>> round(float(res.alpha), 2), round(float(res.q), 2)
      (0.77, 0.23)
      >>> int(htb.AdaRETC(eps=0.5, alpha=res.alpha, q=res.q).exploration_length(3, 10**5))
      4289
    """
    as_threefry_key(key)
    check_static("htb.tune_schedule", eps=eps, horizon=horizon, num_seeds=num_seeds, num_steps=num_steps,
                 tune_q=tune_q, proxy=proxy, sampler=sampler, polish=polish)
    if isinstance(eps, (list, tuple)) or np.ndim(eps) != 0:
        raise TypeError(f"eps must be one number in (0, 1]: the tuning is for one eps (call it once per "
                        f"eps for several); got {given('eps', eps)}.")
    check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    eps = float(eps)
    check_instance(family, "family", "htb.tune_schedule", ("from_bits", "mean", "abs_moment"))
    check_instance(reference, "reference", "htb.tune_schedule", ("from_bits", "mean"))
    horizon = _check_horizon(horizon, "htb.tune_schedule")
    check_integer("num_seeds", num_seeds, 1, one=True)
    check_integer("num_steps", num_steps, 1, one=True)
    num_steps = int(num_steps)  # 3.0 is 3: a float would reach jnp.arange inside the trace
    check_interval("lam", lam, 0.0, 1.0, low_closed=True, high_closed=True)
    _check_tau(tau)  # one temperature, whichever proxy reads it (a list passed silently where none did)
    check_interval("sigma", sigma, 0.0, np.inf, low_closed=False, high_closed=False)
    check_choice("proxy", proxy, PROXIES)
    check_choice("sampler", sampler, SAMPLERS)
    check_flag("tune_q", tune_q)
    # One starting point, one sigma and one width for every run: a vector failed inside (stacking, broadcasting).
    for name, value in (("sigma", sigma), ("init_alpha", init_alpha), ("init_q", init_q)):
        if value is not None and np.ndim(value) != 0:
            raise ValueError(f"{name} must be a scalar, the same for every run (lam's grid shares it); got {name} of "
                             f"shape {np.shape(value)}: call tune_schedule once per value, or jax.vmap over it.")
    if proxy != "smoothed" and sampler != "auto":  # it was ignored
        raise ValueError(f"sampler draws the exploration rewards of proxy='smoothed'; got sampler={sampler!r} with "
                         f"proxy={proxy!r} (leave it out).")
    if optimizer is not None and (isinstance(optimizer, type) or not (
            callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None)))):
        raise TypeError(
            "optimizer must be None (optax.adam(0.05)) or an optax.GradientTransformation such as "
            f"optax.adam(0.01); got {given('optimizer', optimizer)}."
        )
    if polish is None:
        polish = DEFAULT_POLISH if proxy == "smoothed" else 0
    check_integer("polish", polish, 0)
    polish = int(polish)
    if polish and proxy != "smoothed":
        raise ValueError(f"polish searches the exact objective of proxy='smoothed'; got polish={polish} "
                         f"with proxy={proxy!r} (pass polish=0, or leave it out).")
    widths = tuple(width) if isinstance(width, (tuple, list)) or np.ndim(width) == 1 else (width, width)
    if len(widths) != 2:
        raise ValueError(f"width must be a number or a pair (first, last); got width={width!r}.")
    for w in widths:
        if np.ndim(w) != 0:
            raise ValueError(f"width must be a number or a pair of numbers (first, last); got width={width!r}.")
        check_interval("width", w, 0.0, 1.0, low_closed=False, high_closed=True)
    k = instance_num_arms(family)
    if len(family.batch_shape) != 2:
        raise ValueError(f"family must have batch shape (F, K); got {family.batch_shape}.")
    if reference.batch_shape != (k,):
        raise ValueError(f"reference must have batch shape (K,) = ({k},); got {reference.batch_shape}.")
    suboptimal = []  # per instance of each, whether it has an arm of positive gap (traced with the instances)
    for name, instance, members in (("family", family, "member {} of the family"), ("reference", reference, "it")):
        suboptimal.append(jnp.any(instance_gaps(instance).reshape(-1, k) > 0, axis=-1))
        flags = concrete(suboptimal[-1])
        if flags is not None:
            none = np.flatnonzero(~flags)
            if none.size:  # regret 0 at every schedule: log(R / U) = -inf, and its gradient NaN
                raise ValueError(
                    f"{name} must have a suboptimal arm in every instance (its regret is the objective's, on a log "
                    f"scale); got {members.format(int(none[0]))} with every gap 0 (all arms' means equal): leave "
                    f"it out."
                )
    lo_a, hi_a = theory.alpha_range(eps)
    lo_q, hi_q = theory.q_range(eps)
    num_pulls = None
    if proxy == "smoothed":
        # simulate's sampler of each (its default for "auto"), checked before tracing.
        samplers = [_check_sampler(sampler, instance) for instance in (family, reference)]
        num_pulls = _smoothed_pulls(samplers, eps, k, horizon, num_seeds, widths, family.batch_shape[0])
    where = f"for eps={eps:g}"
    if init_alpha is not None:
        check_interval("init_alpha", init_alpha, lo_a, hi_a, low_closed=True, high_closed=False, where=where)
    if init_q is not None:
        check_interval("init_q", init_q, lo_q, hi_q, low_closed=True, high_closed=True, where=where)
    import optax

    optimizer = optax.adam(0.05) if optimizer is None else optimizer
    z0_a, z0_q = schedule_logits(
        (lo_a + hi_a) / 2 if init_alpha is None else init_alpha, hi_q / 2 if init_q is None else init_q, eps
    )
    lam_arr = jnp.asarray(lam, jnp.float64)
    scale = intrinsic_scale(family, eps)
    values = concrete(scale)
    if values is not None and not np.all(np.isfinite(values) & (values > 0)):
        member = int(np.argmax(~(np.isfinite(values) & (values > 0))))
        raise ValueError(
            f"htb.tune_schedule normalises the family's regrets by U_eps (htb.intrinsic_scale), which must be "
            f"finite and positive for eps={eps:g}; got U_eps={float(values[member])} for member {member} of the "
            f"family (an arm without a finite (1+eps)-moment): tune for a smaller eps, or leave the member out."
        )
    if proxy == "monte_carlo":
        tables = (
            proxy_table(key, family, horizon, num_seeds, eps=eps),
            proxy_table(key, reference, horizon, num_seeds, eps=eps),
        )
    elif proxy == "smoothed":
        first, last = (jnp.asarray(w, jnp.float64) for w in widths)
        fraction = jnp.arange(num_steps + 1, dtype=jnp.float64) / max(num_steps - 1, 1)
        # The seeds' rewards drawn once here, for every step, the polish and the final evaluation.
        regrets = tuple(smoothed_regret_fn(key, instance, horizon, num_seeds, resolved,
                                           num_pulls if resolved == "per_pull" else 0)
                        for instance, resolved in zip((family, reference), samplers, strict=True))
        tables = (regrets, first * (last / first) ** jnp.minimum(fraction, 1.0))  # widths f64[steps + 1]
    else:
        tables = None
    z0 = jnp.stack([z0_a, z0_q])

    def optimise(lam_):
        return _optimise(lam_, z0, tables, scale, eps, family, reference, horizon, num_seeds, tau, sigma, num_steps,
                         optimizer, tune_q, proxy, polish)

    # An optimizer that evaluates the objective itself (optax.lbfgs's line search, a while loop) runs one
    # weight after another: batched over the weights, JAX's while loop fails on the binomial quantiles'
    # custom_vmap inside the smoothed proxy's derivative (its constants batched: an AssertionError).
    if _evaluates_objective(optimizer, z0):
        out = jax.lax.map(optimise, lam_arr.reshape(-1))
    else:
        out = jax.vmap(optimise)(lam_arr.reshape(-1))
    # Traced (under jax.jit), the instances and tau were not refused above: where they would be, the result is NaN,
    # not the iterate where the optimiser stopped (its start, under a NaN gradient).
    unusable = ~jnp.all(jnp.isfinite(scale) & (scale > 0)) | jnp.isnan(jnp.asarray(tau, jnp.float64))
    for flags in suboptimal:
        unusable |= ~jnp.all(flags)
    out = [jnp.where(unusable, jnp.nan, a) for a in out]
    shape = lam_arr.shape
    return TuningResult(*(jnp.reshape(a, (*shape, *a.shape[1:])) for a in out), lam=lam_arr)


def _evaluates_objective(optimizer, z0: jax.Array) -> bool:
    """Whether ``optimizer.update`` calls the ``value_fn`` it is given (``optax.lbfgs``'s line search does;
    ``optax.adam`` and ``reduce_on_plateau``, which take extra arguments too, do not), found by tracing one
    update abstractly (``jax.eval_shape``: nothing is computed)."""
    import optax

    if not isinstance(optimizer, optax.GradientTransformationExtraArgs):
        return False
    called = []

    def value_fn(z):
        called.append(True)
        return jnp.sum(z)

    def update(z, state):
        return optimizer.update(z, state, z, value=jnp.sum(z), grad=z, value_fn=value_fn)

    jax.eval_shape(update, z0, optimizer.init(z0))
    return bool(called)


def _smoothed_pulls(samplers: list[str], eps: float, num_arms: int, horizon: int, num_seeds: int,
                    widths, num_members: int) -> int | None:
    """The per-pull table length of the smoothed proxy (``None`` where neither instance's resolved sampler
    reads a table), checked before tracing: the tables of the family's ``num_members`` members and of the
    reference, where their samplers read one, are held at once.

    Every schedule the tuning evaluates is admissible, or one of its central differences at most
    ``max(width)`` outside (``alpha - w``, ``q + w``): the table covers the exploration at
    ``alpha*(eps) - max(width)``, ``q_max + max(width)`` (:func:`default_pulls`), all ``T`` where
    ``width`` is traced.  Reads stop short of it, so the values are those of the full table.
    """
    if "per_pull" not in samplers:
        return None
    values = [concrete(w) for w in widths]
    if any(v is None for v in values):
        num_pulls = -(-horizon // num_arms)  # a traced width: every pull
    else:
        lo_a, hi_q = theory.alpha_range(eps)[0], theory.q_range(eps)[1]
        widest = max(float(np.max(v)) for v in values)
        # eps is held: its tangent is symbolically zero, so no difference moves it.
        num_pulls = default_pulls(AdaRETC(eps=eps, alpha=lo_a, q=hi_q), num_arms, horizon, widest, eps_moves=False)
    held = (num_members if samplers[0] == "per_pull" else 0) + (samplers[1] == "per_pull")
    _check_table_size("tune_schedule(proxy='smoothed') holds the per-pull prefix sums of the family's members and "
                      "the reference at once", num_seeds, num_arms, num_pulls,
                      f"num_seeds, the family's members or horizon (T={horizon}), use a smaller width, or pass "
                      "proxy='monte_carlo' (its "
                      "table covers the admissible exploration alone, without the differences' margin)", held)
    return num_pulls


def _optimise(lam, z0, tables, scale, eps, family, reference, horizon, num_seeds, tau, sigma, steps,
              optimizer, tune_q, proxy, polish):
    """One ``lam``: ``steps`` optimiser updates by ``lax.scan``; returns the fields of TuningResult."""
    import optax


    def policy_of(z):
        alpha, q = admissible_schedule(z[0], z[1], eps)
        if not tune_q:
            # q held fixed: its gradient is 0, and its tangent symbolically zero, so that the
            # smoothed regret differences alpha alone (3 evaluations a step instead of 5).
            q = jax.lax.stop_gradient(q)
        return AdaRETC(eps=eps, alpha=alpha, q=q)

    if proxy == "monte_carlo":
        family_table, reference_table = tables

        def regret_family(p):
            return jnp.mean(proxy_regrets(p, family_table, horizon, tau), axis=-1)

        def regret_reference(p):
            return jnp.mean(proxy_regrets(p, reference_table, horizon, tau), axis=-1)
    elif proxy == "smoothed":
        (family_fn, reference_fn), widths = tables

        def regret_family(p, width=widths[-1]):
            return family_fn(p, width, width)

        def regret_reference(p, width=widths[-1]):
            return reference_fn(p, width, width)
    else:

        def regret_family(p):
            return analytic_regret_bound(p, family, horizon)

        def regret_reference(p):
            return analytic_regret_bound(p, reference, horizon)

    def objective(z, width):
        if proxy == "smoothed":
            return tuning_objective(policy_of(z), lam, lambda p: regret_family(p, width),
                                    lambda p: regret_reference(p, width), scale, sigma)
        return tuning_objective(policy_of(z), lam, regret_family, regret_reference, scale, sigma)

    widths = tables[1][:steps] if proxy == "smoothed" else jnp.zeros(steps, jnp.float64)

    def step(carry, width):
        z, state = carry
        value, grad = jax.value_and_grad(objective)(z, width)
        grad = jnp.where(jnp.isfinite(grad), grad, 0.0)
        if isinstance(optimizer, optax.GradientTransformationExtraArgs):  # reduce_on_plateau, lbfgs: the value too
            updates, state = optimizer.update(grad, state, z, value=jnp.sum(value), grad=grad,
                                              value_fn=lambda y: jnp.sum(objective(y, width)))
        else:
            updates, state = optimizer.update(grad, state, z)
        z = optax.apply_updates(z, updates)
        return (z, state), (value, z)

    (z, _), (values, zs) = jax.lax.scan(step, (z0, optimizer.init(z0)), widths)
    zs = jnp.concatenate([z0[None], zs], axis=0)
    alphas, qs = admissible_schedule(zs[:, 0], zs[:, 1], eps)
    if proxy == "smoothed":  # the recorded objective is the exact one: keep the best iterate
        best = jnp.argmin(values)
        z, best_value = zs[best], values[best]
        if polish:
            z, best_value = polish_schedule(z, best_value, lambda z: objective(z, widths[0]), tables[1][0], eps, polish,
                                    tune_q, instance_num_arms(reference), horizon)
    final = policy_of(z)
    family_regret, reference_regret = regret_family(final), regret_reference(final)
    if proxy != "smoothed":  # the smoothed proxy recorded it exactly on the way
        best_value = tuning_objective(final, lam, lambda _: family_regret, lambda _: reference_regret, scale, sigma)
    best_alpha, best_q = admissible_schedule(z[0], z[1], eps)
    worst = jnp.max(family_regret / scale)
    return best_alpha, best_q, values, alphas, qs, worst, reference_regret, best_value
