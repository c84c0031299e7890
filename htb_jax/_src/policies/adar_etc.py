"""AdaR-ETC (Algorithm 1): the policy pytree and its exploration schedule.

``beta = (1 - alpha)(1 + eps)/eps``, ``B_T = ceil(8 log(K T^3))``,
``L~_T = K B_T + ceil(K^q T^beta)`` and ``L_T = min(T, L~_T)``.  Rounds
``1..L_T`` pull the arms round-robin; if ``L_T < T`` the policy commits to the
arm with the largest Median-of-Means estimate (``B_T`` blocks), ties to the
lowest index.

The order-free form (Theorem 4) uses ``K^(1/3) T^(2/3)``; the calibrated form
(Theorem 6) uses ``q_bar = eps_bar/(1+2 eps_bar)`` and
``beta_bar = (1+eps_bar)/(1+2 eps_bar)``, which is the known-eps schedule at
``eps = eps_bar``, ``alpha = alpha*(eps_bar)``, ``q = q*(eps_bar)``: both are
plain :class:`AdaRETC` values built by the named constructors.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import mom, pytree, theory
from htb_jax._src.policy_protocol import PolicyKernel, PolicySummary, first_argmax
from htb_jax._src.rounding import snapped_ceil
from htb_jax._src.validation import (
    check_broadcast,
    check_integer,
    check_interval,
    concrete,
    lists_as_arrays,
    real_array,
)

MIN_EPS_BAR = 1e-9  # calibrated(): the smallest eps_bar; float64 keeps its beta_bar to 2e-7 relative


def check_arms_and_horizon(num_arms: Any, horizon: Any) -> None:
    """``K >= 2`` and ``T >= 1`` integers (``T <= 10^18``), or ``ValueError``."""
    check_integer("num_arms (K)", num_arms, 2, one=True)
    check_integer("horizon (T)", horizon, 1, maximum=10**18)


def exploration_pulls(exploration: jax.Array, num_arms: int) -> jax.Array:
    """Round-robin pull counts after ``L`` rounds: ``floor(L/K) + [i < L mod K]``, i64[..., K].

    Args:
      exploration: ``L >= 0``, the number of round-robin rounds, an int or an int array of
        any shape ``[...]`` (e.g. a policy's exploration length ``L_T``).
      num_arms: ``K >= 1``, a Python int.

    Returns:
      i64[..., K]: the pulls of arm ``i`` after ``L`` rounds, for each entry of ``exploration``.
    """
    check_integer("exploration", exploration, 0)  # 10.5 was truncated, and -3 gave negative pulls
    check_integer("num_arms (K)", num_arms, 1, one=True)
    exploration = jnp.asarray(exploration, jnp.int64)[..., None]
    arm = jnp.arange(num_arms, dtype=jnp.int64)
    return exploration // num_arms + (arm < exploration % num_arms)


def num_blocks(num_arms: Any, horizon: Any) -> jax.Array:
    """``B_T = ceil(8 log(K T^3))`` (Algorithm 1, line 1), computed as ``8 (log K + 3 log T)``.

    Args:
      num_arms: ``K >= 2``.
      horizon: ``T >= 1``, int or int array.

    Returns:
      i64[horizon.shape].
    """
    check_arms_and_horizon(num_arms, horizon)
    return _num_blocks(num_arms, horizon)


@jax.jit
def _num_blocks(k, t) -> jax.Array:
    # Converted inside the program: converting first would compile a small program per argument.
    k, t = jnp.asarray(k, jnp.float64), jnp.asarray(t, jnp.float64)
    return snapped_ceil(8.0 * (jnp.log(k) + 3.0 * jnp.log(t))).astype(jnp.int64)


@dataclasses.dataclass(frozen=True)
class ExploreThenCommit:
    """Algorithm 1's exploration schedule, shared by the explore-then-commit policies.

    Fields may be arrays; the batch shape is their broadcast shape.  Concrete
    out-of-range values raise ``ValueError`` at construction.

    Precision: block sums and means in float64 (rewards are the table's float32
    values); the commit compares the estimates rounded to float32, so two
    estimates that round to the same float32 (up to a float32 ulp apart,
    ``1.2e-7`` relative) tie and go to the lowest index.

    Attributes:
      eps: f[...] tail exponent the schedule is designed for, in ``(0, 1]``.
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``: the distribution-free exponent
        of ``T`` (Theorem 2).
      q: f[...] in ``[0, eps/(1+2eps)]``: the exploration exponent of ``K``.
    """

    anytime = False  # the protocol's declaration: reads T (htb.frontier.measure runs it once per horizon)

    eps: Any
    alpha: Any
    q: Any

    def __post_init__(self):
        lists_as_arrays(self)
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name, value in fields.items():
            real_array(name, value)
        check_broadcast(type(self).__name__, **fields)
        check_interval("eps", self.eps, 0.0, 1.0, low_closed=False, high_closed=True)
        e = concrete(self.eps)
        if e is None:
            return
        e = e.astype(float)
        theory.check_alpha_room(e)
        at = {"eps": e}
        check_interval(
            "alpha", self.alpha, (1 + e) / (1 + 2 * e), 1.0, low_closed=True, high_closed=False, where=at
        )
        check_interval("q", self.q, 0.0, e / (1 + 2 * e), low_closed=True, high_closed=True, where=at)

    @classmethod
    def calibrated(cls, eps_bar: Any, **fields: Any):
        """The ``eps_bar``-calibrated form (Theorem 6), parameter-free in ``eps`` and ``u``.

        ``L~_T = K B_T + ceil(K^q_bar T^beta_bar)``, ``q_bar = eps_bar/(1+2 eps_bar)``,
        ``beta_bar = (1+eps_bar)/(1+2 eps_bar)``.  Differentiable in ``eps_bar``.

        Args:
          eps_bar: calibration order in ``[1e-9, 1]``; arrays give a batch.  Below ``1e-9``,
            ``alpha = (1 + eps_bar)/(1 + 2 eps_bar)`` lies within ``1e-9`` of 1, and float64
            leaves ``beta_bar = (1 - alpha)(1 + eps_bar)/eps_bar`` few correct digits (at
            ``1e-15`` it was 0.888, not 1: a tenth of the exploration).
          **fields: the class's other fields (:class:`AnytimeAdaRETC`'s ``growth``).
        """
        check_interval("eps_bar", eps_bar, MIN_EPS_BAR, 1.0, low_closed=True, high_closed=True,
                       where="(below, float64 leaves beta_bar few correct digits)")
        e = jnp.asarray(eps_bar, jnp.float64)
        return cls(eps=e, alpha=(1.0 + e) / (1.0 + 2.0 * e), q=e / (1.0 + 2.0 * e), **fields)

    @classmethod
    def order_free(cls, **fields: Any):
        """The order-free form (Theorem 4): ``L~_T = K B_T + ceil(K^(1/3) T^(2/3))``; ``fields`` as for
        :meth:`calibrated`."""
        return cls.calibrated(1.0, **fields)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The batch shape of the parameters (their broadcast shape), ``()`` for one policy."""
        fields = (getattr(self, f.name) for f in dataclasses.fields(self))
        return tuple(jnp.broadcast_shapes(*(np.shape(f) for f in fields)))

    def estimator_blocks(self, blocks: jax.Array) -> jax.Array:
        """Blocks of the commit estimator: ``B_T`` (Median-of-Means)."""
        return blocks

    def commit_horizons(self, horizons: jax.Array) -> jax.Array:
        """The horizons whose schedules a run of horizon up to ``max(horizons)`` commits with:
        the horizons themselves, i64[H] (one commit per run, at ``L_T``)."""
        return jnp.asarray(horizons)

    @property
    def beta(self) -> jax.Array:
        """``beta_alpha = (1 - alpha)(1 + eps)/eps``, f64[broadcast of eps's and alpha's shapes] (``q``
        does not enter: a batch over ``q`` alone gives one ``beta``)."""
        eps = jnp.asarray(self.eps, jnp.float64)
        return (1.0 - jnp.asarray(self.alpha, jnp.float64)) * (1.0 + eps) / eps

    def num_blocks(self, num_arms: Any, horizon: Any) -> jax.Array:
        """``B_T = ceil(8 log(K T^3))``, i64 broadcast of the batch and ``horizon``."""
        blocks = num_blocks(num_arms, horizon)
        return jnp.broadcast_to(blocks, self._broadcast_shape(horizon))

    def _broadcast_shape(self, horizon: Any) -> tuple[int, ...]:
        """The broadcast of the batch shape and ``horizon``'s, or a ``ValueError`` naming both."""
        try:
            return tuple(jnp.broadcast_shapes(self.batch_shape, np.shape(horizon)))
        except ValueError:
            raise ValueError(
                f"horizon (T) of shape {np.shape(horizon)} does not broadcast against the "
                f"policy's batch shape {self.batch_shape}; give one horizon, or an array "
                f"whose shape broadcasts (e.g. horizon[:, None] for a grid over both)"
            ) from None

    def exploration_length(self, num_arms: Any, horizon: Any) -> jax.Array:
        """``L_T = min(T, K B_T + ceil(K^q T^beta))`` (Algorithm 1, line 1).

        ``K^q T^beta`` is evaluated in float64 and snapped to an integer when
        within a relative ``2^-44`` of one, before the ceiling, so that a power
        that is an integer (``10^(9 * 2/3) = 10^6``) stays one despite the
        rounding of ``beta``.  So ``L_T`` can fall one round short of the exact
        ceiling where ``K^q T^beta`` lies within that distance above an
        integer, and, past ``K^q T^beta`` of about ``10^13`` (where float64's
        error reaches whole rounds), a few rounds off: within ``2e-14``
        relative at ``T`` up to ``10^18`` against 60-digit arithmetic (9 rounds
        short of ``7e14`` at ``eps = 1/4``, ``alpha = 5/6``).

        Args:
          num_arms: ``K >= 2``.
          horizon: ``T``, int or int array broadcast against the batch.

        Returns:
          i64[broadcast(batch_shape, horizon.shape)].
        """
        check_arms_and_horizon(num_arms, horizon)
        self._broadcast_shape(horizon)
        t_int = jnp.asarray(horizon, jnp.int64)
        k = jnp.asarray(num_arms, jnp.float64)
        t = t_int.astype(jnp.float64)
        poly = snapped_ceil(jnp.power(k, jnp.asarray(self.q, jnp.float64)) * jnp.power(t, self.beta))
        poly = jnp.minimum(poly, t).astype(jnp.int64)
        blocks = num_blocks(num_arms, horizon)
        return jnp.minimum(t_int, jnp.asarray(num_arms, jnp.int64) * blocks + poly)


@pytree.dataclass
class AdaRETC(ExploreThenCommit):
    """AdaR-ETC (Algorithm 1) with exploration exponents ``(alpha, q)`` designed for ``eps``.

    Rounds ``1..L_T`` pull the arms round-robin; if ``L_T < T`` the policy
    commits to the largest Median-of-Means estimate (``B_T`` blocks, compared
    in float32, ties to the lowest index).  Every field may be an array, so a grid of ``(alpha,
    q)`` (or of ``eps_bar``) is one batched policy that ``simulate`` runs as one
    program.  Concrete out-of-range values raise ``ValueError`` at
    construction.

    Its other constructors and the schedule's quantities are
    :class:`ExploreThenCommit`'s, documented there: ``AdaRETC.order_free()``
    (Theorem 4), ``AdaRETC.calibrated(eps_bar)`` (Theorem 6), and the methods
    ``exploration_length``, ``beta`` and ``num_blocks``.

    Attributes:
      eps: f[...] tail exponent the schedule is designed for, in ``(0, 1]``.
      alpha: f[...] in ``[(1+eps)/(1+2eps), 1)``: the distribution-free exponent
        of ``T`` (Theorem 2).
      q: f[...] in ``[0, eps/(1+2eps)]``: the exploration exponent of ``K``.

    Examples:
      >>> import jax.numpy as jnp
      >>> policy = AdaRETC(eps=1.0, alpha=jnp.array([2 / 3, 0.75, 0.9]), q=0.0)
      >>> policy.batch_shape
      (3,)
      >>> policy.exploration_length(num_arms=10, horizon=10**6)
      Array([13500,  4500,  3516], dtype=int64)
    """

    def kernel(self, spec):
        """The round-by-round form for the engine (a :class:`~htb_jax.PolicyKernel`)."""

        return etc_kernel(self, spec)


def commit_estimates(policy: ExploreThenCommit, table, first_pulls, exploration, horizon, spec):
    """The estimates an ETC policy commits on, from the reward table.

    Args:
      policy: the schedule (unbatched).
      table: the seed's reward table reader.
      first_pulls: i64[K] (or scalar) index of each arm's first exploration pull.
      exploration: i64[] ``L`` of this run.
      horizon: i64[] the horizon the schedule was computed for.
      spec: static engine sizes (``pull_chunk``, ``max_blocks``, ``max_block_size``, ``min_block_size``).

    Returns:
      f32[K]: Median-of-Means (or mean) of each arm's ``n_i`` exploration
      samples, computed exactly as the fast path does (same chunks, same sums).
    """
    k = spec.num_arms
    pulls = exploration_pulls(exploration, k)  # [K]
    blocks = policy.estimator_blocks(num_blocks(k, horizon))
    block_size = (pulls // blocks)[:, None]  # [K, 1]
    steps = mom.num_chunks(jnp.max(pulls), spec.pull_chunk)

    def draw_chunk(j):
        return table.chunk(first_pulls + j * spec.pull_chunk, spec.pull_chunk)

    means = mom.stream_block_means(
        draw_chunk, steps, block_size, jnp.reshape(blocks, (1,)), spec.pull_chunk, spec.max_blocks,
        spec.max_block_size, spec.min_block_size,
    )
    return mom.median_of_blocks(means, blocks, jnp.float32)[:, 0]


def etc_kernel(policy: ExploreThenCommit, spec):
    """Algorithm 1 round by round: round-robin for ``L_T`` rounds, then the committed arm.

    The commit (at round ``L_T`` when ``L_T < T``) computes the estimates from
    the reward table with the fast path's own routine, so engine and fast
    path agree bit for bit.  A round costs O(K); the commit round
    O(K n_max + K B_T log) once.
    """
    k = spec.num_arms

    def schedule(ctx):
        return policy.exploration_length(k, ctx.horizon)

    def init(ctx):
        return jnp.int32(-1), jnp.full(k, jnp.nan, jnp.float32)

    def act(state, ctx):
        committed, _ = state
        explore = ctx.t <= schedule(ctx)
        return jnp.where(explore, ((ctx.t - 1) % k).astype(jnp.int32), committed)

    def update(state, ctx, arm, reward):
        del arm, reward  # the commit reads the same rewards from the table
        length = schedule(ctx)

        def commit(_):
            estimates = commit_estimates(policy, ctx.table, 0, length, ctx.horizon, spec)
            return first_argmax(estimates), estimates

        return jax.lax.cond((ctx.t == length) & (length < ctx.horizon), commit, lambda s: s, state)

    def summary(state, ctx):
        committed, estimates = state
        return PolicySummary(committed, schedule(ctx), estimates)

    return PolicyKernel(init, act, update, summary, commit_scratch_bytes(spec))


def commit_scratch_bytes(spec) -> int:
    """Transient memory of one commit (a chunk of pulls and its block sums) per seed."""
    return 48 * spec.num_arms * (spec.pull_chunk + spec.max_blocks)
