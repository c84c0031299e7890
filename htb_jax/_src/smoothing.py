"""AdaR-ETC's exact Monte-Carlo regret with gradients that are slopes at a chosen scale.

**Why the sample-path gradient fails.**  :func:`regret_proxy` differentiates
a relaxation (interpolated block boundaries, soft commit) along one sample
path.  Under heavy tails that derivative is dominated by the largest reward
sitting on a block boundary, and it is the derivative of another function
than ``simulate``'s regret: on seven Student-t(2.4) arms (means 0.25, 0, ..,
0), ``T = 2 10^5``, 256 seeds, ``AdaRETC(eps=1, alpha, q=0.2)``, ``tau =
0.05`` it gives -2.0e7, -2.9e6, -4.1e5 at ``alpha = 0.7, 0.8, 0.9`` where the
common-random-number central differences of ``simulate`` at ``h = 10^-3``
are -1.15e4, -943, -119 (``experiments/tune_frontier.py``).

**What the regret is as a function of the schedule.**  ``(eps, alpha, q)``
act on the run only through the integer exploration length ``L =
min(T, K B_T + ceil(K^q T^beta))``: arm ``i`` gets ``n_i`` round-robin
pulls and its Median-of-Means estimate reads the first ``B_T s_i`` of them,
``s_i = floor(n_i / B_T)``.  So the regret of a seed is ``r(L) = sum_i
Delta_i n_i + (T - L) Delta_commit(s)``: a step function of the schedule,
and its mean over seeds is a sawtooth in ``L`` -- linear between the
multiples of ``K B_T`` (the commit is fixed while ``s`` is), with a jump
where ``s`` grows.  The slope of the mean regret therefore depends on the
scale ``h`` it is measured at: within a tooth it is
``dL/dtheta (sum_i Delta_i / K - C(s))`` (``C(s)`` the mean commit gap);
across teeth it is dominated by the jumps.  No single gradient agrees with
central differences at every ``h`` (at ``alpha = 0.9`` above, ``h = 10^-3``
and ``10^-2`` give -118.7 +- 1.7 and -69.9 +- 1.4: ``L`` moves by 1 and by
8 pulls, and which arm loses a pull depends on ``L mod K``).

**The smoothed regret** (:func:`smoothed_regret`).  Its value is the exact
mean regret of ``simulate`` on the same seeds (``sampler="per_pull"``: the
reward table; ``"order_statistic"``: the Beta levels of
:mod:`htb_jax._src.order_statistic`, for two-point, Dirac and Gaussian arms
at any ``T``; ``"block_sums"``: for stable arms at any ``T``, the median of
the ``B_T`` standard variates of each seed and arm, which every exploration
length maps to its estimate ``loc + scale s^(1/a - 1) median``,
:mod:`htb_jax._src.distributions.stable`), seed by seed, with no bias.  Its derivative (a
``jax.custom_jvp``) is, coordinate by coordinate, the common-random-number
central difference of that exact regret at half-width ``h = width``:

    d/dtheta_j = (R(theta + h e_j) - R(theta - h e_j)) / (2 h),

which is the exact derivative along ``e_j`` of the box-smoothed regret
``E_U R(theta + U e_j)``, ``U ~ Uniform[-h, h]`` (randomized smoothing with an
antithetic pair and common random numbers; the seeds are the same on both
sides, so the difference carries no between-seed noise beyond the seeds whose
commit changes).  ``width`` is the scale at which the slope is measured: the
scale of an optimizer's steps.  The coordinates are the policy's ``eps``,
``alpha``, ``q`` (absolute half-width ``width``) and every float parameter of
the instance (half-width ``instance_width |theta|``, or ``instance_width``
where ``theta = 0``), so the worst instance can be searched by gradient too.
A tangent that is symbolically zero costs nothing; non-finite differences
(a perturbed parameter outside its family's range) are reported as 0.

Compared in ``experiments/tune_frontier.py`` (table ``gradients.md``) with
the pathwise proxy and with the block-scale envelope (the regret at the
tooth starts ``L = K B_T s``, linearly interpolated in ``L``: randomized
rounding of the block size, the expectation over a random block offset of
one block): the envelope's slope is the slope across teeth, which has the
wrong sign against ``h = 10^-3`` and ``10^-2`` differences wherever a tooth
is wider than ``h`` in ``alpha`` (at ``T = 2 10^5``, ``K = 7``, one tooth
spans ``alpha`` in ``[0.70, 1)``); the smoothed regret agrees with them at
its own ``width`` by construction and exactly (same seeds, same arithmetic as
``simulate``), and is what :func:`htb_jax.tune_schedule` descends (with a
width that shrinks over the steps).

**Cost.**  A value costs one exact evaluation per seed (from prefix sums,
``K B_T`` block means and the exact selection ``simulate`` uses, 32 counting
passes over them for all seeds and lengths at once; ``O(K)`` from the
levels; after drawing them);
a gradient 1 + 2 evaluations per schedule coordinate that moves (``eps``,
``alpha``, ``q``: one whose tangent is symbolically zero, a constant or a
value under ``stop_gradient``, costs none) plus 2 per instance parameter,
each of which redraws the seed's common random numbers (a
table of ``S K N`` rewards per-pull, ``S K (B_T + 1)`` exponentials for
the levels).  Everything is float64 from the float32 rewards, as
``simulate`` computes it; estimates are rounded to float32 before the
commit, as ``simulate`` rounds them.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import mom, order_statistic
from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_instance
from htb_jax._src.instances import gaps as instance_gaps
from htb_jax._src.instances import num_arms as instance_num_arms
from htb_jax._src.outcome import pseudo_regret
from htb_jax._src.policies.adar_etc import AdaRETC, check_arms_and_horizon, exploration_pulls
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.protocol_checks import check_policy
from htb_jax._src.proxy import MAX_TABLE_BYTES, _check_horizon, static_blocks
from htb_jax._src.pytree import class_keyed_jit
from htb_jax._src.reward_table import MAX_PULLS, prefix_sums, seed_keys, standard_words
from htb_jax._src.rounding import snapped_ceil
from htb_jax._src.simulate.fast_path import SAMPLERS, auto_sampler
from htb_jax._src.validation import check_choice, check_integer, check_interval, check_static, concrete


def exploration_of(params: jax.Array, num_arms: int, horizon: int) -> jax.Array:
    """``L = min(T, K B_T + min(T, ceil(K^q T^beta)))`` for ``params = (eps, alpha, q)``, i64[].

    The formula of :meth:`AdaRETC.exploration_length`, without its range
    checks, so that it can be evaluated just outside the admissible set.
    """
    eps, alpha, q = params[0], params[1], params[2]
    t = float(horizon)
    beta = (1.0 - alpha) * (1.0 + eps) / eps
    poly = snapped_ceil(jnp.power(float(num_arms), q) * jnp.power(t, beta))
    poly = jnp.minimum(poly, t).astype(jnp.int64)
    return jnp.minimum(jnp.int64(horizon), num_arms * static_blocks(num_arms, horizon) + poly)


def _undefined_to_nan(params: jax.Array, value: jax.Array) -> jax.Array:
    """``value``, or NaN where a traced schedule ``params = (eps, alpha, q)`` holds a NaN: its length
    would be a NaN cast to an integer, a finite regret with a zero gradient (an optimiser stalled)."""
    return jnp.where(jnp.any(jnp.isnan(params)), jnp.nan, value)


def _seed_regret(length, estimates, gaps, num_arms: int, horizon: int):
    """One seed's regret at exploration length ``length`` with estimates f32[K], as ``simulate`` computes it, f64[]."""
    pulls = exploration_pulls(length, num_arms)  # i64[K]
    best = jnp.argmax(estimates)  # first maximum
    commit_rounds = jnp.where(length >= horizon, 0, horizon - length)
    total = pulls + commit_rounds * jax.nn.one_hot(best, num_arms, dtype=jnp.int64)
    return pseudo_regret(gaps, total)


def _prefix_block_means(prefix: jax.Array, size: jax.Array, blocks: int) -> jax.Array:
    """Block means f64[B, M, K] of one seed's prefix sums f64[K, N + 1] at block sizes i64[M, K]
    (blocks past the ``N`` pulls of the table are clipped to it)."""
    n = prefix.shape[-1] - 1
    edges = jnp.minimum(jnp.arange(blocks + 1, dtype=jnp.int64)[:, None, None] * size, n)  # [B + 1, M, K]
    sums = prefix[jnp.arange(prefix.shape[0]), edges]
    return (sums[1:] - sums[:-1]) / jnp.maximum(size, 1).astype(jnp.float64)


def _common_numbers(key_data, instance, num_arms, horizon, num_seeds, sampler, num_pulls):
    """Per-seed common random numbers: prefix sums f64[S, K, N + 1], levels (u, v) f64[S, K] each,
    or medians of standard variates f32[S, K] (``block_sums``, as ``simulate`` draws them)."""
    keys = seed_keys(jax.random.wrap_key_data(key_data, impl="threefry2x32"), num_seeds)
    if sampler == "per_pull":
        return prefix_sums(keys, instance, num_pulls)
    if sampler == "block_sums":
        count = static_blocks(num_arms, horizon)

        def median(key):
            z = instance.standard_from_bits(standard_words(key, num_arms, count, instance.num_words))  # [B, K]
            return mom.median_of_blocks(z, jnp.int64(count), jnp.float32)

        return jax.vmap(median)(keys)
    blocks = jnp.asarray([static_blocks(num_arms, horizon)], jnp.int64)
    u, v = jax.vmap(lambda s: order_statistic.levels(s, num_arms, blocks))(keys)  # [S, K, 1]
    return u[..., 0], v[..., 0]


def _block_sizes(lengths, num_arms: int, horizon: int) -> jax.Array:
    """Median-of-Means block sizes i64[M, K] at exploration lengths i64[M]."""
    return jax.vmap(lambda n: exploration_pulls(n, num_arms))(lengths) // static_blocks(num_arms, horizon)


def _per_pull_block_means(prefix, lengths, num_arms: int, horizon: int) -> jax.Array:
    """Block means f64[B, S, M, K] of every seed's prefix sums f64[S, K, N + 1] at lengths i64[M]."""
    size, blocks = _block_sizes(lengths, num_arms, horizon), static_blocks(num_arms, horizon)
    return jax.vmap(lambda p: _prefix_block_means(p, size, blocks), out_axes=1)(prefix)


def _mean_regret(crn, lengths, instance, num_arms, horizon, sampler):
    """Mean over seeds of the exact regret at each exploration length: f64[M] for lengths i64[M].

    With the per-pull sampler, the Median-of-Means of every seed, length and arm is one exact
    selection (:func:`mom.median_of_blocks`, as ``simulate`` computes it) over ``[B, S M K]``
    block means.
    """
    gaps = instance_gaps(instance)
    covered = True
    if sampler == "per_pull":
        # NaN where the exploration reads past the table (a num_pulls given under jax.grad or jit, where it
        # cannot be checked): the clipped prefix sums would make another regret, one that looks right.
        covered = -(-lengths // num_arms) <= crn.shape[-1] - 1  # bool[M]
        means = _per_pull_block_means(crn, lengths, num_arms, horizon)  # [B, S, M, K]
        estimates = mom.median_of_blocks(means, jnp.int64(means.shape[0]))  # f32[S, M, K]
    elif sampler == "block_sums":
        size = _block_sizes(lengths, num_arms, horizon)  # [M, K]
        estimates = instance.block_mean_from_standard(crn[:, None], size).astype(jnp.float32)  # [S, M, K]
    else:
        size = _block_sizes(lengths, num_arms, horizon)  # [M, K]
        u, v = crn  # f64[S, K] each
        estimates = instance.block_mean_quantile(u[:, None], v[:, None], size).astype(jnp.float32)
    per_length = jax.vmap(lambda n, e: _seed_regret(n, e, gaps, num_arms, horizon))
    return jnp.where(covered, jnp.mean(jax.vmap(lambda e: per_length(lengths, e))(estimates), axis=0), jnp.nan)


def regret_at_lengths(
    key: jax.Array,
    instance: Distribution,
    horizon: int,
    num_seeds: int,
    lengths: Any,
    *,
    sampler: str = "auto",
    num_pulls: int | None = None,
) -> jax.Array:
    """``simulate``'s mean regret of AdaR-ETC as a function of its exploration length ``L``.

    A schedule ``(eps, alpha, q)`` acts on a run only through ``L``: ``L`` round-robin pulls, ``B_T``
    Median-of-Means blocks of ``floor(n_i / B_T)`` samples each, a commit to
    the largest estimate for the remaining ``T - L`` rounds.  This is the mean
    over seeds ``0 .. S - 1`` of that regret at any ``L``, schedule or not: the
    sawtooth :func:`smoothed_regret` evaluates at ``L_T`` of a schedule (same
    seeds, samplers and arithmetic, so equal to it there, and to
    ``simulate``).  Its lengths ``K B_T s``, where every arm's blocks reach
    ``s`` samples, are below any schedule's ``L_T`` for ``s = 1``.

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      instance: one instance, batch shape ``(K,)``.
      horizon: ``T``, a concrete int.
      num_seeds: ``S``.
      lengths: i64[...] exploration lengths in ``[min(T, K B_T), T]``.
      sampler: as :func:`smoothed_regret`'s (``"auto"``: ``simulate``'s default).
      num_pulls: per-pull table length per arm (default: ``ceil(max(L) / K)``;
        unused by the other samplers).  Refused below that for concrete
        ``lengths``; traced ones past it give NaN.

    Returns:
      f64[lengths.shape].

    Raises:
      ValueError: for a bad ``horizon``, ``num_seeds``, ``lengths`` or
        ``sampler``, or a per-pull table above 1 GiB (``2^30`` bytes).

    Examples:
      >>> import jax, jax.numpy as jnp, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=2, gap=0.5)
      >>> policy = htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0)
      >>> length = int(policy.exploration_length(2, 1000))
      >>> at = jax.jit(lambda lengths: htb.regret_at_lengths(  # traced lengths: the table's length given
      ...     jax.random.key(0), nu, 1000, 4, lengths, sampler="per_pull", num_pulls=500))  # T / K: any L
      >>> r = at(jnp.array([length, length + 1]))
      >>> sim = htb.simulate(jax.random.key(0), policy, nu, 1000, 4, sampler="per_pull")
      >>> r.shape, bool(r[0] == sim.regret.mean())
      ((2,), True)
    """
    as_threefry_key(key)
    check_static("htb.regret_at_lengths", horizon=horizon, num_seeds=num_seeds, num_pulls=num_pulls)
    horizon = _check_horizon(horizon, "htb.regret_at_lengths")
    check_instance(instance, function="htb.regret_at_lengths", needs=("from_bits", "mean"))
    k = instance_num_arms(instance)
    check_arms_and_horizon(k, horizon)
    if tuple(instance.batch_shape) != (k,):
        raise ValueError(f"instance must be one instance, batch shape (K,); got batch shape {instance.batch_shape}.")
    check_integer("num_seeds", num_seeds, 1, one=True)
    if 0 in np.shape(lengths):  # NumPy's "zero-size array to reduction operation maximum" named nothing
        raise ValueError(f"lengths must hold at least one exploration length; got lengths of shape {np.shape(lengths)}.")
    shortest = min(horizon, k * static_blocks(k, horizon))
    check_integer("lengths", lengths, shortest, maximum=horizon)
    sampler = _check_sampler(sampler, instance)
    if sampler == "per_pull":
        most = concrete(lengths)
        needed = -(-(horizon if most is None else int(np.max(most))) // k)
        if num_pulls is None:
            num_pulls = needed
        num_pulls = _check_table_size("regret_at_lengths holds the per-pull prefix sums", num_seeds, k, num_pulls,
                                      "num_seeds or the lengths" if num_pulls == needed else "num_seeds or num_pulls")
        if most is not None and num_pulls < needed:  # reads past the table would be clipped: another regret
            raise ValueError(f"num_pulls must cover the longest exploration, ceil(max(lengths) / K) = {needed} pulls "
                             f"per arm; got num_pulls={num_pulls}.")
    elif num_pulls is not None:
        check_integer("num_pulls", num_pulls, 1, maximum=MAX_PULLS, one=True)
        num_pulls = int(num_pulls)
    key_data = jax.random.key_data(as_threefry_key(key))
    return _regret_at_lengths(key_data, instance, jnp.asarray(lengths, jnp.int64), k, horizon, num_seeds, sampler,
                              num_pulls)


def _lengths_regret(key_data, instance, lengths, num_arms, horizon, num_seeds, sampler, num_pulls):
    crn = _common_numbers(key_data, instance, num_arms, horizon, num_seeds, sampler, num_pulls)
    return _mean_regret(crn, lengths.reshape(-1), instance, num_arms, horizon, sampler).reshape(lengths.shape)


# One program: called eagerly, the draws, the selection and the regret ran operation by operation (5.6 s
# against 1.3 s compiled, at T = 2000 and 8 seeds).
_regret_at_lengths = class_keyed_jit(_lengths_regret, static_argnums=(3, 4, 5, 6, 7))


def _member_regret_fn(num_arms, horizon, num_seeds, sampler, num_pulls, treedef):
    """The custom-JVP mean regret of one policy (``eps``, ``alpha``, ``q``, f64[] each) on one instance
    (its leaves), from that instance's common random numbers ``crn`` (:func:`_common_numbers`, drawn by
    the caller, so that a program evaluating many schedules draws them once); with ``crn_of``, which
    draws them from the leaves and the key's data."""

    def crn_of(leaves, key_data):
        inst = jax.tree_util.tree_unflatten(treedef, leaves)
        return _common_numbers(key_data, inst, num_arms, horizon, num_seeds, sampler, num_pulls)

    @jax.custom_jvp
    def mean_regret(eps, alpha, q, leaves, crn, key_data, width, instance_width):
        inst = jax.tree_util.tree_unflatten(treedef, leaves)
        params = jnp.stack([eps, alpha, q])
        value = _mean_regret(crn, exploration_of(params, num_arms, horizon)[None], inst, num_arms, horizon,
                             sampler)[0]
        return _undefined_to_nan(params, value)

    def jvp(primals, tangents):
        eps, alpha, q, leaves, crn, key_data, width, instance_width = primals
        d_schedule, d_leaves = tangents[:3], tangents[3]  # crn's tangent is not read: moved leaves redraw it
        inst = jax.tree_util.tree_unflatten(treedef, leaves)
        params = jnp.stack([eps, alpha, q])
        # Differences only along the coordinates that move: a symbolically zero tangent (a constant
        # eps, or q held fixed) costs no evaluation.
        axes = [j for j, d in enumerate(d_schedule) if not isinstance(d, jax.custom_derivatives.SymbolicZero)]
        steps = width * jnp.eye(3, dtype=jnp.float64)[np.asarray(axes, dtype=np.int64)]  # [m, 3]
        points = jnp.concatenate([params[None], params + steps, params - steps])  # [1 + 2 m, 3]
        lengths = jax.vmap(lambda p: exploration_of(p, num_arms, horizon))(points)
        values = _mean_regret(crn, lengths, inst, num_arms, horizon, sampler)
        tangent = jnp.zeros((), jnp.float64)
        if axes:
            m = len(axes)
            slope = (values[1 : 1 + m] - values[1 + m :]) / (2.0 * width)
            # eps - width <= 0 has no schedule (beta infinite): no difference there, NaN as an unread table's.
            if 0 in axes:
                slope = slope.at[axes.index(0)].set(jnp.where(eps - width > 0, slope[axes.index(0)], jnp.nan))
            d = jnp.stack([d_schedule[j] for j in axes])
            tangent = tangent + jnp.sum(slope * d)  # a NaN slope: a NaN gradient in its coordinate
        moving = [i for i, d in enumerate(d_leaves) if not isinstance(d, jax.custom_derivatives.SymbolicZero)]
        if moving:
            # Every perturbed parameter of every moving leaf, both signs, in one batch: [2 P] instances.
            flat = jnp.concatenate([leaves[i].reshape(-1) for i in moving])
            delta = instance_width * jnp.where(flat != 0, jnp.abs(flat), 1.0)
            shifts = jnp.concatenate([jnp.diag(delta), -jnp.diag(delta)])  # [2 P, P]
            sizes = np.cumsum([0] + [leaves[i].size for i in moving])

            def at(shift):
                moved = list(leaves)
                for j, i in enumerate(moving):
                    moved[i] = leaves[i] + shift[sizes[j]:sizes[j + 1]].reshape(leaves[i].shape)
                inst_m = jax.tree_util.tree_unflatten(treedef, moved)
                crn_m = crn if sampler == "order_statistic" else crn_of(tuple(moved), key_data)
                return _mean_regret(crn_m, lengths[:1], inst_m, num_arms, horizon, sampler)[0]

            moved_values = jax.lax.map(at, shifts)  # one copy of the evaluation, tables one at a time
            half = flat.shape[0]
            slope = (moved_values[:half] - moved_values[half:]) / (2.0 * delta)
            slope = jnp.where(jnp.isfinite(slope), slope, 0.0)
            d_flat = jnp.concatenate([d_leaves[i].reshape(-1) for i in moving])
            tangent = tangent + jnp.sum(slope * d_flat)
        value = _undefined_to_nan(params, values[0])
        # A product, not a where: reverse mode transposes a where's constant NaN branch to a zero gradient.
        return value, tangent * jnp.where(jnp.isnan(value), jnp.nan, 1.0)

    mean_regret.defjvp(jvp, symbolic_zeros=True)
    return mean_regret, crn_of


def smoothed_regret_fn(key: jax.Array, instance: Distribution, horizon: int, num_seeds: int, sampler: str,
                       num_pulls: int):
    """:func:`smoothed_regret` of many policies on one instance, its common random numbers drawn once.

    Returns ``regret(policy, width, instance_width)``, f64[*G, *I] as :func:`smoothed_regret` (which is
    ``smoothed_regret_fn(...)(policy, width, instance_width)``): a program that evaluates many
    schedules (:func:`htb_jax.tune_schedule`'s steps, its polish and its final evaluation) draws the
    seeds' rewards once, where it is called, instead of once per evaluation.  The arguments are those
    :func:`smoothed_regret` has checked: ``sampler`` resolved (not ``"auto"``), ``num_pulls`` the table
    length (0 for the samplers that read none).
    """
    k = instance_num_arms(instance)
    key_data = jax.random.key_data(as_threefry_key(key))
    flat_instance = jax.tree.map(lambda p: p.reshape(-1, k), instance.broadcast())  # leaves [F, K]
    leaves, treedef = jax.tree_util.tree_flatten(flat_instance)
    leaves = tuple(jnp.asarray(leaf, jnp.float64) for leaf in leaves)
    fn, crn_of = _member_regret_fn(k, horizon, num_seeds, sampler, num_pulls, treedef)
    # The derivative in the instance's parameters is the rule's own differences, which redraw the
    # numbers of each moved instance: their own derivative is never read.
    crn = jax.lax.stop_gradient(jax.vmap(crn_of, (0, None))(leaves, key_data))  # per member

    def regret(policy: AdaRETC, width: Any, instance_width: Any) -> jax.Array:
        grid = policy.batch_shape
        # eps, alpha and q apart (not stacked), so that one held fixed keeps a symbolically zero tangent.
        schedule = [jnp.broadcast_to(jnp.asarray(getattr(policy, f), jnp.float64), grid).reshape(-1)
                    for f in ("eps", "alpha", "q")]  # f64[G] each
        w = jnp.asarray(width, jnp.float64)
        iw = jnp.asarray(instance_width, jnp.float64)
        per_member = jax.vmap(lambda e, a, q, lv, c: fn(e, a, q, lv, c, key_data, w, iw), (None, None, None, 0, 0))
        out = jax.vmap(per_member, (0, 0, 0, None, None))(*schedule, leaves, crn)  # [G, F]
        return out.reshape(*grid, *instance.batch_shape[:-1])

    return regret


def _check_table_size(holds: str, num_seeds: int, k: int, num_pulls: Any, lower: str, members: int = 1) -> int:
    """Refuses a bad ``num_pulls`` or per-pull prefix sums (``members x S x K x (num_pulls + 1)`` float64,
    every instance's at once) above :data:`MAX_TABLE_BYTES`; the message starts with ``holds`` and ends
    with what to lower.  Returns ``num_pulls`` as an ``int`` (``300.0`` is 300)."""
    check_integer("num_pulls", num_pulls, 1, maximum=MAX_PULLS, one=True)
    num_pulls = int(num_pulls)
    size = 8 * int(members) * int(num_seeds) * k * (num_pulls + 1)
    if size > MAX_TABLE_BYTES:
        raise ValueError(
            f"{holds}: num_seeds={num_seeds} x {members} instance(s) x K={k} x {num_pulls + 1} pulls x 8 bytes = "
            f"{size / 2**20:.0f} MiB, more than the limit of {MAX_TABLE_BYTES / 2**20:.0f} MiB; lower {lower}."
        )
    return num_pulls


def _check_sampler(sampler: Any, instance: Distribution) -> str:
    check_choice("sampler", sampler, SAMPLERS)
    family = type(instance)
    if sampler == "auto":
        sampler = auto_sampler(family)  # simulate's default, so the two see the same numbers
    if sampler == "order_statistic" and not family.has_block_quantile:
        tabulated = " (its quantile table is simulate's alone: use sampler='block_sums')" if family.tabulated_quantile else ""
        raise ValueError(
            f"sampler='order_statistic' needs a family with closed-form block means (TwoPoint, Dirac, "
            f"Gaussian); got {family.__name__}{tabulated}."
        )
    if sampler == "block_sums" and not family.affine_block_means:
        raise ValueError(
            f"sampler='block_sums' of smoothed_regret needs block means affine in one standard variate "
            f"(Stable); got {family.__name__}."
        )
    return sampler


def default_pulls(policy: AdaRETC, num_arms: int, horizon: int, width: Any, *, eps_moves: bool = True) -> int:
    """Pulls per arm covering the exploration at ``alpha - width``, ``q + width`` and, with
    ``eps_moves``, ``eps - width`` where that is positive (below, the ``eps`` difference is NaN and
    reads nothing).

    ``ceil(T / K)`` where the policy or ``width`` is traced, or the exploration reaches ``T``.
    """
    full = -(-horizon // num_arms)
    values = [concrete(v) for v in (policy.eps, policy.alpha, policy.q, width)]
    if any(v is None for v in values):
        return full
    eps, alpha, q, w = (float(np.max(v)) if i == 2 else float(np.min(v)) for i, v in enumerate(values))
    if eps_moves and eps - w > 0.0:
        eps = eps - w
    beta = (1.0 - (alpha - w)) * (1.0 + eps) / eps
    log_explore = (q + w) * math.log(num_arms) + beta * math.log(horizon)
    if log_explore > math.log(horizon) + 1.0:  # beyond T (and past a float's range for tiny eps)
        return full
    most = num_arms * static_blocks(num_arms, horizon) + math.ceil(
        num_arms ** (q + w) * float(horizon) ** beta * (1.0 + 1e-12))
    return int(min(full, -(-most // num_arms) + 1))


def smoothed_regret(
    key: jax.Array,
    policy: AdaRETC,
    instance: Distribution,
    horizon: int,
    num_seeds: int,
    width: Any = 0.01,
    *,
    instance_width: Any = None,
    sampler: str = "auto",
    num_pulls: int | None = None,
) -> jax.Array:
    """``simulate``'s mean regret of AdaR-ETC, with central-difference gradients at scale ``width``.

    The value is the mean over seeds ``0 .. S - 1`` of the regret
    ``simulate(key, policy, instance, horizon, S, sampler=...)`` reports (the
    same seeds, the same integer schedule and float32 estimates).  ``jax.grad``
    gives, per coordinate, the common-random-number central difference of
    that mean at half-width ``width``: the
    slope of the expected regret at the scale of ``width``.  Works under
    ``jit``, ``vmap`` and ``grad`` (``horizon``, ``num_seeds``, ``sampler``,
    ``num_pulls`` are static; ``width`` and ``instance_width`` may be traced).

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      policy: :class:`AdaRETC`, batch shape ``G``.
      instance: batch shape ``I + (K,)``.
      horizon: ``T``, a concrete int.
      num_seeds: ``S``.
      width: half-width of the differences in ``eps``, ``alpha`` and ``q``,
        in ``(0, 1]``, a scalar.
      instance_width: relative half-width for the instance's parameters
        (default ``width``).
      sampler: ``"per_pull"`` (the reward table, any family), ``"order_statistic"``
        (TwoPoint, Dirac, Gaussian; any ``T``), ``"block_sums"`` (Stable; any
        ``T``) or ``"auto"`` (the order statistic, else the block sums, where
        the family has them, as ``simulate``'s default).
      num_pulls: per-pull table length per arm (default: the exploration at
        ``alpha - width``, ``q + width``, refused below it where the policy is
        concrete; where ``alpha``, ``q`` or ``width`` is traced, as under
        ``jax.grad``, the default is every pull, ``T / K``: give ``num_pulls``
        there for a large ``T``; a traced schedule whose exploration, or whose
        differences', reads past it gets a NaN value or gradient, never a
        clipped table's number).

    Returns:
      f64[*G, *I].  Its derivative in ``eps`` is NaN where ``eps - width <= 0``
      (no schedule there).

    Raises:
      ValueError: for a bad ``width``, ``instance_width``, ``sampler``,
        ``horizon`` or ``num_seeds``, a ``num_pulls`` short of the exploration,
        or a per-pull table above 1 GiB.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=2, gap=0.5)
      >>> policy = htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0)
      >>> run = jax.jit(htb.smoothed_regret, static_argnums=(3, 4), static_argnames="sampler")  # callers jit once
      >>> r = run(jax.random.key(0), policy, nu, 1000, 4, 0.01, sampler="per_pull")
      >>> sim = htb.simulate(jax.random.key(0), policy, nu, 1000, 4, sampler="per_pull")
      >>> bool(r == sim.regret.mean())
      True
    """
    check_policy("policy", policy, AdaRETC, "smoothed_regret")
    as_threefry_key(key)
    check_static("htb.smoothed_regret", horizon=horizon, num_seeds=num_seeds, num_pulls=num_pulls)
    horizon = _check_horizon(horizon, "htb.smoothed_regret")
    check_instance(instance, function="htb.smoothed_regret", needs=("from_bits", "mean"))
    k = instance_num_arms(instance)
    check_arms_and_horizon(k, horizon)
    check_integer("num_seeds", num_seeds, 1, one=True)
    for name, value in (("width", width), ("instance_width", instance_width)):
        if np.ndim(value) != 0:  # a list was taken for the value, then failed under jax.grad
            raise ValueError(f"{name} must be a scalar, one relative half-width; got {name} of shape {np.shape(value)}.")
    check_interval("width", width, 0.0, 1.0, low_closed=False, high_closed=True)
    instance_width = width if instance_width is None else instance_width
    check_interval("instance_width", instance_width, 0.0, 1.0, low_closed=False, high_closed=True)
    sampler = _check_sampler(sampler, instance)
    if sampler == "per_pull":
        needed = default_pulls(policy, k, horizon, width)  # T / K where one of these is traced
        traced = any(concrete(v) is None for v in (policy.eps, policy.alpha, policy.q, width))
        given_pulls = num_pulls is not None
        if not given_pulls:
            num_pulls = needed
        if given_pulls:
            lower = "num_seeds, num_pulls or the instances"
        elif traced:
            lower = (f"num_seeds or horizon (T={horizon}), or give num_pulls: with a traced alpha, q or width (under "
                     f"jax.grad) the default covers every pull, T/K; ceil(L/K) + 1 at alpha - width, q + width "
                     f"suffices")
        else:
            lower = f"num_seeds, the instances or horizon (T={horizon})"
        num_pulls = _check_table_size("smoothed_regret holds the per-pull prefix sums of every instance at once",
                                      num_seeds, k, num_pulls, lower,
                                      int(np.prod(instance.batch_shape[:-1], dtype=np.int64)))
        if given_pulls and not traced and num_pulls < needed:  # reads past the table would be clipped: another value
            raise ValueError(f"num_pulls must cover the exploration the smoothing reaches (at alpha - width, q + "
                             f"width): {needed} pulls per arm; got num_pulls={num_pulls}.")
    else:
        num_pulls = 0
    return smoothed_regret_fn(key, instance, horizon, num_seeds, sampler, num_pulls)(policy, width, instance_width)
