"""Differentiable regret proxies of AdaR-ETC in its schedule exponents ``(alpha, q)`` (and ``eps_bar``).

**Monte-Carlo proxy** (:func:`regret_proxy`).  A smooth relaxation of the
regret ``simulate`` measures, on the same per-pull reward table
(:func:`htb_jax.reward_table`, seed ``s`` from ``fold_in(key, s)``):

* the exploration length loses its ceiling and the round-robin split its
  floor: ``L = min(T, K B_T + K^q T^beta)`` and every arm gets ``n = L / K``
  pulls (Algorithm 1, line 1, without rounding);
* the ``B_T`` Median-of-Means blocks of an arm have the real size ``s = n /
  B_T``; block ``b`` covers ``[b s, (b+1) s)`` of the arm's pulls, and its sum
  is a difference of the *interpolated* prefix sum
  ``S(x) = P[j] + (x - j) r_j`` (``j = floor(x)``, ``P[j] = r_0 + .. + r_{j-1}``),
  so block means move continuously (piecewise linearly) with the boundaries;
* the commit is a softmax over the Median-of-Means estimates with
  temperature ``tau`` (in reward units): the regret is
  ``sum_i Delta_i n_i + (T - L) sum_i softmax(mu_hat / tau)_i Delta_i``.

The derivative is the sample-path derivative through the rewards (the table
itself does not depend on the schedule).  The per-seed proxy is continuous and
piecewise smooth in ``(alpha, q)``: its kinks are where a block boundary
crosses an integer pull index, where the median block changes, and at ``L =
T``.  Everything is computed in float64 from the float32 table.

**Exactness.**  With ``rounding=True`` the integer schedule comes back (``L_T``
of :meth:`AdaRETC.exploration_length`, round-robin pulls, block size
``floor(n_i / B_T)``, estimates rounded to float32 as ``simulate`` rounds
them) and ``tau = 0`` is the hard first argmax: the proxy is then the regret
``simulate(..., sampler="per_pull")`` reports, seed by seed, the same pulls
summed as it sums them (exactly, then rounded once), unless the association
order of the float64 prefix sums moves an estimate's float32 rounding.  For ``tau > 0`` the soft commit
tends to the hard one as ``tau -> 0`` at every seed whose largest estimate is
unique.

**Memory.**  The proxy keeps every seed's prefix sums, f64[S, *I, K, N + 1],
with ``N`` pulls per arm: by default the most any admissible schedule for the
policy's (concrete) ``eps`` explores, ``ceil((L_max + K) / K) + 1`` with ``L_max =
K B_T + K^(eps/(1+2eps)) T^((1+eps)/(1+2eps))``, else ``ceil(T / K)``.  More
than :data:`MAX_TABLE_BYTES` raises ``ValueError``.  Schedules must be
admissible (``simulate``'s ranges); reads past the table are clipped to its end.
Unlike ``simulate``, the proxy does not isolate infinite rewards: a seed
whose read rewards include ``inf`` gets a NaN proxy (its prefix sums hold
``inf - inf``).

**Analytic proxy** (:func:`analytic_regret_bound`).  The upper-bound
decomposition of the proofs of Theorems 2-3: exploration ``(L/K) sum_i
Delta_i`` plus estimation ``(T - L) sum_i Delta_i P(wrong commit to i)``,
with the Median-of-Means tail of the concentration lemma (von Bahr-Esseen,
Markov, Hoeffding) at radius ``Delta_i / 2``.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import mom, pytree
from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_instance, intrinsic_scale
from htb_jax._src.instances import gaps as instance_gaps
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.outcome import pseudo_regret
from htb_jax._src.policies.adar_etc import AdaRETC, check_arms_and_horizon, exploration_pulls, num_blocks
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.protocol_checks import check_policy
from htb_jax._src.reward_table import MAX_PULLS, prefix_sums, seed_keys
from htb_jax._src.validation import (
    check_flag,
    check_instance_type,
    check_integer,
    check_interval,
    check_static,
    concrete,
)

MAX_TABLE_BYTES = 2**30  # prefix sums the proxy may hold (f64[S, *I, K, N + 1])


@pytree.dataclass
class ProxyTable:
    """The seeds' reward prefix sums and the instance's gaps: the common random numbers of the proxy.

    Attributes:
      prefix: f64[S, *I, K, N + 1] ``prefix[..., i, j] = r_{i,0} + .. + r_{i,j-1}``
        (``r`` the float32 reward table read in float64).
      gaps: f64[*I, K] suboptimality gaps.
    """

    prefix: jax.Array
    gaps: jax.Array

    @property
    def num_pulls(self) -> int:
        """``N``, pulls per arm the table holds."""
        return self.prefix.shape[-1] - 1


def max_proxy_pulls(eps: Any, num_arms: int, horizon: int) -> int:
    """Pulls per arm that cover every admissible schedule designed for ``eps`` (``None``: all ``T``).

    The largest admissible exploration is at ``alpha = alpha*(eps)`` (so
    ``beta = alpha*(eps)``) and ``q = eps/(1+2eps)``.
    """
    full = -(-horizon // num_arms)
    e = concrete(eps)
    if e is None:
        return full
    e = float(np.min(np.asarray(e, np.float64)))
    beta = (1.0 + e) / (1.0 + 2.0 * e)
    q = e / (1.0 + 2.0 * e)
    blocks = static_blocks(num_arms, horizon)
    most = num_arms * blocks + math.ceil(num_arms**q * float(horizon) ** beta * (1.0 + 1e-12)) + num_arms
    return int(min(full, -(-most // num_arms) + 1))


def static_blocks(num_arms: int, horizon: int) -> int:
    """``B_T`` as a Python int (a shape), also while tracing."""
    with jax.ensure_compile_time_eval():
        return int(num_blocks(num_arms, horizon))


def _check_tau(tau: Any) -> None:
    check_interval("tau", tau, 0.0, np.inf, low_closed=True, high_closed=False)
    if np.ndim(tau) != 0:  # an array broadcast against the seeds' regrets gave one wrong number
        raise ValueError(f"tau must be a scalar, one temperature for every run (vmap over tau for several); got "
                         f"tau of shape {np.shape(tau)}.")


def _check_horizon(horizon: Any, function: str) -> int:
    """``T`` as an int: one concrete integer (it fixes the number of blocks); a traced one is named as
    :func:`~htb_jax._src.validation.check_static` names it, for ``function``."""
    check_static(function, horizon=horizon)
    check_integer("horizon (T)", horizon, 1, maximum=10**18)  # a string or bool: TypeError
    h = concrete(horizon)
    if h is None or np.ndim(h) != 0:
        raise ValueError(f"horizon must be one integer (it fixes the number of blocks); got {horizon!r}.")
    check_integer("horizon (T)", h, 1, maximum=10**18)
    return int(h)


def proxy_table(
    key: jax.Array,
    instance: Distribution,
    horizon: int,
    num_seeds: int,
    *,
    num_pulls: int | None = None,
    eps: Any = None,
) -> ProxyTable:
    """The prefix sums of seeds ``0 .. S - 1`` of the reward table ``simulate`` reads.

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      instance: batch shape ``I + (K,)``.
      horizon: ``T`` (only bounds the pulls per arm).
      num_seeds: ``S``.
      num_pulls: pulls per arm ``N``; default: enough for every admissible schedule designed
        for ``eps``, ``ceil((L_max + K) / K) + 1`` with ``L_max`` the exploration at ``alpha =
        alpha*(eps)``, ``q = eps/(1+2eps)`` (at most ``ceil(T / K)``).
      eps: the tail exponent the schedules are designed for (``None``: ``N = ceil(T/K)``).

    Returns:
      :class:`ProxyTable` with prefix f64[S, *I, K, N + 1] and gaps f64[*I, K].

    Raises:
      ValueError: if the prefix sums would exceed 1 GiB (``2^30`` bytes); the
        per-pull proxy is for horizons whose exploration fits in memory.
    """
    as_threefry_key(key)
    check_instance(instance, function="htb.proxy_table", needs=("from_bits", "mean"))
    check_static("htb.proxy_table", horizon=horizon, num_seeds=num_seeds, num_pulls=num_pulls)
    k = instance_num_arms(instance)
    horizon = _check_horizon(horizon, "htb.proxy_table")
    check_arms_and_horizon(k, horizon)
    check_integer("num_seeds", num_seeds, 1, one=True)
    num_seeds = int(num_seeds)  # the size below in Python ints: an np.int8 overflowed, an np.int32 wrapped
    if eps is not None:
        check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    given = num_pulls is not None
    if given:
        check_integer("num_pulls", num_pulls, 1, maximum=MAX_PULLS, one=True)
    else:  # beyond MAX_PULLS, beyond MAX_TABLE_BYTES too: refused below with its remedy, not by a name not given
        num_pulls = max_proxy_pulls(eps, k, horizon)
    num_pulls = int(num_pulls)  # 300.0 is 300: a float would reach jnp.arange inside the trace
    if given:
        remedy = "lower num_seeds or num_pulls."
    elif eps is None:
        remedy = f"lower num_seeds or horizon (T={horizon}), or pass eps so that only the admissible exploration is tabulated."
    elif concrete(eps) is None:
        remedy = (f"lower num_seeds or horizon (T={horizon}), or give num_pulls: with a traced eps (under jax.grad or "
                  "jit) the table covers every pull, T/K per arm.")
    else:
        remedy = f"lower num_seeds or horizon (T={horizon})."
    members = int(np.prod(instance.batch_shape[:-1], dtype=int))
    size = 8 * num_seeds * members * k * (num_pulls + 1)
    if size > MAX_TABLE_BYTES:
        raise ValueError(
            f"the regret proxy holds every seed's per-pull prefix sums: num_seeds={num_seeds} x "
            f"{members} instance(s) x K={k} x {num_pulls + 1} pulls x 8 bytes = {size / 2**20:.0f} MiB, "
            f"more than the limit of {MAX_TABLE_BYTES / 2**20:.0f} MiB; {remedy}"
        )
    keys = seed_keys(key, num_seeds)
    return ProxyTable(prefix=prefix_sums(keys, instance, num_pulls), gaps=instance_gaps(instance))


def relaxed_schedule(policy: AdaRETC, num_arms: int, horizon: int, *, rounding: bool = False):
    """The schedule the proxy uses: ``(L, n, s)``, f64[], f64[K], f64[K].

    ``rounding=False``: ``L = min(T, K B_T + K^q T^beta)``, ``n_i = L/K``,
    ``s_i = n_i / B_T``.  ``rounding=True``: Algorithm 1's integers, ``L_T``,
    round-robin ``n_i`` and ``s_i = floor(n_i / B_T)``.  ``policy`` is unbatched.
    """
    blocks = static_blocks(num_arms, horizon)
    if rounding:
        length = policy.exploration_length(num_arms, horizon)
        pulls = exploration_pulls(length, num_arms)
        return length.astype(jnp.float64), pulls.astype(jnp.float64), (pulls // blocks).astype(jnp.float64)
    k, t = float(num_arms), float(horizon)
    q = jnp.asarray(policy.q, jnp.float64)
    explore = k * blocks + jnp.power(k, q) * jnp.power(t, policy.beta)
    length = jnp.minimum(t, explore)
    pulls = jnp.broadcast_to(length / k, (num_arms,))
    return length, pulls, pulls / blocks


def interpolated_prefix(prefix: jax.Array, x: jax.Array) -> jax.Array:
    """``S(x) = P[j] + (x - j)(P[j+1] - P[j])``, ``j = floor(x)`` clipped to the table.

    Args:
      prefix: f64[K, N + 1] prefix sums ``P``.
      x: f64[M, K] positions (pull counts) per arm.

    Returns:
      f64[M, K]; exactly ``P[x]`` at integer ``x <= N``.
    """
    n = prefix.shape[-1] - 1
    j = jnp.clip(jnp.floor(jax.lax.stop_gradient(x)), 0, n).astype(jnp.int32)
    arm = jnp.arange(prefix.shape[0])[None, :]
    low = prefix[arm, j]
    high = prefix[arm, jnp.minimum(j + 1, n)]
    return low + (x - j) * (high - low)


def block_means(policy: AdaRETC, prefix: jax.Array, horizon: int, *, rounding: bool = False):
    """The ``B_T`` block means of every arm with moving block boundaries: f64[B, K], plus the schedule.

    Args:
      policy: unbatched AdaR-ETC.
      prefix: f64[K, N + 1] one seed's prefix sums.
      horizon: ``T`` (static).
      rounding: the integer schedule of Algorithm 1 (see :func:`relaxed_schedule`).

    Returns:
      ``(means f64[B, K], L f64[], n f64[K])``.
    """
    k = prefix.shape[0]
    blocks = static_blocks(k, horizon)
    length, pulls, size = relaxed_schedule(policy, k, horizon, rounding=rounding)
    edges = jnp.arange(blocks + 1, dtype=jnp.float64)[:, None] * size[None, :]  # [B + 1, K]
    sums = interpolated_prefix(prefix, edges)
    means = (sums[1:] - sums[:-1]) / (jnp.maximum(size, 1.0) if rounding else size)  # [B, K]
    return means, length, pulls


def mom_estimates(policy: AdaRETC, prefix: jax.Array, horizon: int, *, rounding: bool = False):
    """Median-of-Means estimates of :func:`block_means` (same arguments): ``(estimates f64[K], L f64[], n f64[K])``.

    The estimate is the ``ceil(B/2)``-th smallest block mean (:func:`mom.differentiable_median`),
    rounded to float32 with ``rounding``, as ``simulate`` rounds it.
    """
    means, length, pulls = block_means(policy, prefix, horizon, rounding=rounding)
    estimates = mom.differentiable_median(means)  # the ceil(B/2)-th smallest
    if rounding:
        estimates = estimates.astype(jnp.float32).astype(jnp.float64)
    return estimates, length, pulls


def commit_weights(estimates: jax.Array, tau: jax.Array) -> jax.Array:
    """``softmax(estimates / tau)`` for ``tau > 0``; the one-hot first argmax at ``tau = 0``; NaN for a
    (traced) NaN ``tau``, which was read as 0. f64[K]."""
    tau = jnp.asarray(tau, jnp.float64)
    hard = jax.nn.one_hot(jnp.argmax(estimates), estimates.shape[-1], dtype=jnp.float64)
    soft = jax.nn.softmax(estimates / jnp.where(tau > 0, tau, 1.0))
    # NaN by a product with 1 + t^2 (t = tau where NaN, else 0), not a where, so that the slope in tau is NaN
    # too (a where's is 0, or through the argmax a finite number: the derivative of a flat objective).
    nan_if_nan = 1.0 + jnp.square(jnp.where(jnp.isnan(tau), tau, 0.0))
    return jnp.where(tau > 0, soft, hard) * nan_if_nan


def seed_regret(policy: AdaRETC, prefix: jax.Array, gaps: jax.Array, horizon: int, tau, *, rounding=False):
    """The relaxed regret of one seed on one instance, f64[].

    ``sum_i Delta_i n_i + (T - L) sum_i w_i Delta_i`` with ``w = softmax(mu_hat / tau)``.

    Args:
      policy: unbatched AdaR-ETC.
      prefix: f64[K, N + 1].
      gaps: f64[K].
      horizon: static ``T``.
      tau: commit temperature ``>= 0`` (0: hard argmax).
      rounding: the integer schedule (exact ``simulate`` regret at ``tau = 0``).
    """
    estimates, length, pulls = mom_estimates(policy, prefix, horizon, rounding=rounding)
    weights = commit_weights(estimates, tau)
    explore = jnp.sum(gaps * pulls)
    commit_rounds = jnp.maximum(float(horizon) - length, 0.0)
    regret = explore + commit_rounds * jnp.sum(weights * gaps)
    if rounding:  # at tau = 0 the integer pulls, summed as simulate sums them (a plain sum differed by an ulp)
        counts = pulls.astype(jnp.int64) + commit_rounds.astype(jnp.int64) * (weights == 1.0).astype(jnp.int64)
        regret = jnp.where(tau == 0, pseudo_regret(gaps, counts), regret)
    # NaN where the exploration reads past the table (traced schedules, which proxy_regrets cannot check):
    # the clipped prefix sums would make the last blocks' means 0, a wrong regret that looks right.  A
    # product, not a where: the gradient is NaN too (a where's is 0, a flat objective to an optimizer).
    return regret * jnp.where(jnp.max(pulls) <= prefix.shape[-1] - 1, 1.0, jnp.nan)


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return len(shape) > 0 and np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _check_table_covers(policy: AdaRETC, num_pulls: int, num_arms: int, horizon: int) -> None:
    """``ValueError`` where a concrete schedule explores more pulls per arm than the table holds.

    The bound is Algorithm 1's round-robin ``ceil(L_T / K)``, which the relaxed ``L / K`` never
    exceeds.  A traced schedule is not checked here: its regrets, and their gradients, are NaN past the
    table.
    """
    fields = [concrete(getattr(policy, name)) for name in ("eps", "alpha", "q")]
    if any(field is None for field in fields):
        return
    with jax.ensure_compile_time_eval():
        lengths = np.asarray(policy.exploration_length(num_arms, horizon))
    most = -(-int(np.max(lengths)) // num_arms)
    if most > num_pulls:
        raise ValueError(
            f"the table holds {num_pulls} pulls per arm, but the policy explores up to {most} per arm at horizon "
            f"T={horizon}: draw it with htb.proxy_table(key, instance, {horizon}, num_seeds, eps=...) for the "
            f"policy's eps, or num_pulls >= {most}."
        )


def _flat_policy(policy: AdaRETC) -> AdaRETC:
    shape = policy.batch_shape
    return jax.tree.map(lambda p: jnp.broadcast_to(jnp.asarray(p, jnp.float64), shape).reshape(-1), policy)


def proxy_regrets(policy: AdaRETC, table: ProxyTable, horizon: int, tau: Any, *, rounding: bool = False):
    """Per-seed relaxed regrets of a (batched) policy on a :class:`ProxyTable`.

    :func:`regret_proxy` is the mean over seeds of these regrets on a table it
    draws; with a table drawn once by :func:`proxy_table`, many schedules (a
    grid, or the iterates of an optimizer) share the same common random
    numbers, and the per-seed values compare with ``simulate``'s seed by seed
    (with ``rounding=True`` and ``tau = 0`` they are its per-pull regrets).
    The per-seed regret is ``sum_i Delta_i n_i + (T - L) sum_i
    softmax(mu_hat / tau)_i Delta_i`` (the relaxation of Algorithm 1 of
    :func:`regret_proxy`).  Not jitted inside; differentiable in the
    policy's float fields.

    Args:
      policy: :class:`AdaRETC` with batch shape ``G``.
      table: a :class:`ProxyTable`: prefix sums f64[S, *I, K, N + 1] and gaps
        f64[*I, K].
      horizon: ``T``, a concrete int.
      tau: commit temperature ``>= 0`` (traced is fine).
      rounding: restore Algorithm 1's integer schedule.

    Returns:
      f64[*G, *I, S], the layout of ``simulate``'s ``Outcome.regret``.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.0), num_arms=2, gap=0.5)
      >>> table = htb.proxy_table(jax.random.key(0), nu, 10**4, 8, eps=1.0)
      >>> policy = htb.AdaRETC(eps=1.0, alpha=jax.numpy.array([0.7, 0.8]), q=0.0)
      >>> regrets = jax.jit(htb.proxy_regrets, static_argnums=2)  # callers jit once
      >>> regrets(policy, table, 10**4, 0.05).shape  # [G, S]
      (2, 8)
    """
    check_policy("policy", policy, AdaRETC, "the regret proxy")
    check_instance_type("table", table, ProxyTable, "a ProxyTable (from proxy_table)")
    horizon = _check_horizon(horizon, "htb.proxy_regrets")
    _check_tau(tau)
    check_flag("rounding", rounding)
    prefix = table.prefix
    k, s = prefix.shape[-2], prefix.shape[0]
    check_arms_and_horizon(k, horizon)
    inst = prefix.shape[1:-2]
    if not _broadcasts_to(np.shape(table.gaps), (*inst, k)):
        raise ValueError(f"table.gaps must broadcast to the instances and arms of table.prefix, {(*inst, k)}; got "
                         f"table.gaps of shape {np.shape(table.gaps)}.")
    if jnp.result_type(prefix) != jnp.float64:
        raise TypeError(f"table.prefix must be float64 prefix sums (proxy_table's); got {jnp.result_type(prefix)}.")
    gaps = concrete(table.gaps)
    bad = None if gaps is None else ~(np.isfinite(gaps) & (np.asarray(gaps) >= 0))
    if bad is not None and np.any(bad):
        raise ValueError(f"table.gaps must be finite and non-negative, each arm's gap to the best mean; got a gap "
                         f"of {float(np.asarray(gaps, np.float64)[bad].flat[0])!r}.")
    _check_table_covers(policy, table.num_pulls, k, horizon)
    flat_prefix = prefix.reshape(s, -1, k, prefix.shape[-1])  # [S, F, K, N + 1]
    flat_gaps = jnp.broadcast_to(table.gaps, (*inst, k)).reshape(-1, k)  # [F, K]
    grid = policy.batch_shape
    flat = _flat_policy(policy)

    def one(p, pre, g):
        return seed_regret(p, pre, g, horizon, tau, rounding=rounding)

    per_member = jax.vmap(one, (None, 0, 0))  # over F
    per_seed = jax.vmap(per_member, (None, 0, None))  # over S
    per_policy = jax.vmap(per_seed, (0, None, None))  # over G
    out = per_policy(flat, flat_prefix, flat_gaps)  # [G, S, F]
    out = jnp.moveaxis(out, 1, -1)  # [G, F, S]
    return out.reshape(*grid, *inst, s)


def regret_proxy(
    key: jax.Array,
    policy: AdaRETC,
    instance: Distribution,
    horizon: int,
    num_seeds: int,
    tau: Any,
    *,
    rounding: bool = False,
    num_pulls: int | None = None,
) -> jax.Array:
    """Mean over seeds of the relaxed regret of AdaR-ETC: differentiable in ``alpha``, ``q``, ``eps``.

    The relaxation of Algorithm 1 (continuous ``L``, interpolated block
    boundaries, softmax commit), on the
    reward table ``simulate`` reads.  ``jax.grad`` with respect to the
    policy's float fields (or to ``eps_bar`` through
    :meth:`~htb_jax.ExploreThenCommit.calibrated`) is the sample-path derivative; the table is
    common to all parameter values.  Works under ``jit`` and ``vmap``
    (``horizon``, ``num_seeds``, ``rounding`` and ``num_pulls`` are static).

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      policy: :class:`AdaRETC`, batch shape ``G``, admissible for its ``eps``.
      instance: batch shape ``I + (K,)``.
      horizon: ``T``, a concrete int.
      num_seeds: ``S``.
      tau: commit temperature in reward units, ``>= 0``; ``0`` is the hard
        commit (first argmax).  The soft commit adds about ``(T - L) sum_i
        Delta_i softmax_i`` even where the estimates are exact, a worse arm
        weighted ``~ exp(-Delta_i / tau)``: keep ``tau`` well below the
        smallest gap (with ``tau`` equal to the gap, the proxy at a large
        ``T`` can exceed the regret by orders of magnitude).
      rounding: restore Algorithm 1's integer schedule; with ``tau = 0`` the
        result is the mean of ``simulate(..., sampler="per_pull").regret``.
      num_pulls: table length per arm (default: the longest exploration of an admissible schedule
        for the policy's ``eps``, at ``alpha = alpha*(eps)`` and ``q = eps / (1 + 2 eps)``, or every
        pull where ``eps`` is traced).

    Returns:
      f64[*G, *I]: the mean relaxed regret (a scalar for one schedule and
      one instance).

    Raises:
      ValueError: for a bad ``horizon``, ``num_seeds`` or ``tau``, or a table
        above 1 GiB (per-pull tables limit the horizon).

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.0), num_arms=2, gap=0.5)
      >>> policy = htb.AdaRETC(eps=1.0, alpha=0.75, q=0.0)
      >>> run = jax.jit(htb.regret_proxy, static_argnames=("horizon", "num_seeds"))  # callers jit once
      >>> r = run(jax.random.key(0), policy, nu, 10**4, num_seeds=8, tau=0.05)
      >>> r.shape
      ()
    """
    check_policy("policy", policy, AdaRETC, "regret_proxy")
    check_static("htb.regret_proxy", horizon=horizon, num_seeds=num_seeds, num_pulls=num_pulls)
    _check_tau(tau)
    check_flag("rounding", rounding)
    table = proxy_table(key, instance, horizon, num_seeds, num_pulls=num_pulls, eps=policy.eps)
    return jnp.mean(proxy_regrets(policy, table, horizon, tau, rounding=rounding), axis=-1)


def analytic_regret_bound(policy: AdaRETC, instance: Distribution, horizon: int, eps: Any = None) -> jax.Array:
    """The upper-bound decomposition of Theorems 2-3, smooth in ``(alpha, q)``: f64[*G, *I].

    ``R ~ (L/K) sum_i Delta_i + (T - L) sum_{i: Delta_i > 0} Delta_i min(1, 2 P_i)``
    with the continuous ``L = min(T, K B_T + K^q T^beta)``, ``n = L/K``,
    ``s = n / B_T`` and the Median-of-Means tail of the concentration lemma
    (Appendix, proof of Theorem 2) at radius ``r_i = Delta_i / 2``:

    * a block mean is off by more than ``r_i`` with probability at most
      ``p_i = min(1, 2^(p+1) u s^(1-p) / r_i^p)``, ``p = 1 + eps``
      (von Bahr-Esseen then Markov; ``u = max_j E|X_j|^(1+eps)``);
    * the median is off when half the blocks are: ``P_i = exp(-2 B_T (1/2 - p_i)_+^2)``
      (Hoeffding; the lemma's ``exp(-B/8)`` is ``p_i = 1/4``);
    * a wrong commit to arm ``i`` needs arm ``i`` or the best arm off:
      ``min(1, 2 P_i)``.

    Args:
      policy: :class:`AdaRETC`, batch shape ``G``.
      instance: batch shape ``I + (K,)``.
      horizon: ``T``.
      eps: f[] or f[...] broadcasting to ``G``: the true tail exponent for ``u``
        (default: the policy's ``eps``).

    Returns:
      f64[*G, *I].
    """
    check_policy("policy", policy, AdaRETC, "analytic_regret_bound")
    horizon = _check_horizon(horizon, "htb.analytic_regret_bound")
    check_instance(instance, function="htb.analytic_regret_bound", needs=("mean", "abs_moment"))
    k = instance_num_arms(instance)
    check_arms_and_horizon(k, horizon)
    grid, inst = tuple(policy.batch_shape), instance.batch_shape[:-1]
    if eps is not None:
        check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
        try:
            fits = np.broadcast_shapes(np.shape(eps), grid) == grid
        except ValueError:
            fits = False
        if not fits:  # jnp.broadcast_to failed inside the trace, naming nothing
            raise ValueError(f"eps must broadcast to the policy's batch shape {grid} (one true eps per schedule); "
                             f"got eps of shape {np.shape(eps)}.")
    flat = _flat_policy(policy)
    blocks = float(static_blocks(k, horizon))
    gaps = instance_gaps(instance).reshape(-1, k)  # [F, K]
    true_eps = policy.eps if eps is None else eps
    t = float(horizon)

    def one(p, e):
        e = jnp.asarray(e, jnp.float64)
        power = 1.0 + e
        scale = intrinsic_scale(instance, e).reshape(-1)  # [F]
        length, pulls, size = relaxed_schedule(p, k, horizon)
        radius = gaps / 2.0
        safe = jnp.where(gaps > 0, radius, 1.0)
        # Arms without the moment (u infinite): every block tail is 1.  The finite stand-in, taken before
        # the power, keeps inf * 0 out of the derivative (NaN otherwise).
        finite = jnp.isfinite(scale)[:, None]
        u_safe = jnp.where(finite, scale[:, None], 1.0) ** power
        block_tail = 2.0 ** (power + 1.0) * u_safe * size[0] ** (1.0 - power) / safe**power
        block_tail = jnp.where(finite, jnp.minimum(1.0, block_tail), 1.0)
        median_tail = jnp.exp(-2.0 * blocks * jnp.maximum(0.5 - block_tail, 0.0) ** 2)
        wrong = jnp.where(gaps > 0, jnp.minimum(1.0, 2.0 * median_tail), 0.0)
        explore = jnp.sum(gaps, axis=-1) * length / k
        return explore + jnp.maximum(t - length, 0.0) * jnp.sum(gaps * wrong, axis=-1)

    eps_flat = jnp.broadcast_to(jnp.asarray(true_eps, jnp.float64), grid).reshape(-1)
    return jax.vmap(one)(flat, eps_flat).reshape(*grid, *inst)
