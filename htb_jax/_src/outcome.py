"""Simulation outcomes and their per-grid-point summaries."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import pytree
from htb_jax._src.validation import check_instance_type


@pytree.dataclass
class Outcome:
    """What one run (or a batch of runs) of a policy produced.

    Leading axes ``...`` are the policy grid shape, then the instance batch
    shape (without the arm axis), then the horizon shape, then ``(num_seeds,)``
    when the run came from ``simulate``.

    Attributes:
      regret: f64[...] pseudo-regret at the horizon,
        ``sum_i Delta_i n_i + (T - L) Delta_committed``, from the means and
        the integer pull counts (the exact sum
        rounded once: the same float64 on every machine).
      pulls: i64[..., K] pulls of each arm over the whole horizon.
      committed: i32[...] the arm committed to after exploration, or -1 when
        exploration used the whole horizon (``L_T = T``); -1 for a policy that
        never commits (the index policies: UCB1, Robust UCB, APE2, MR-UCB, ...).
      exploration: i64[...] what the policy reports as its exploration
        (:class:`PolicySummary`): the exploration length ``L_T`` of the ETC
        policies; ForceMoM's forced pulls; AdaR-UCB's rounds played at an
        infinite index; 0 for the other index policies.
      estimates: f32[..., K] the policy's mean estimates: for ETC policies
        those it committed on (NaN when there was no commit), for index
        policies those after the last round's reward.
      checkpoints: i64[..., C] the rounds of ``regret_curve``: ``C``
        log-spaced rounds from 1 to ``T``.
      regret_curve: f64[..., C] cumulative pseudo-regret after each
        checkpoint round; its last entry is ``regret``.
      arms: i32[..., T] the arm played in each round, when asked for
        (``simulate(..., record_arms=True)``, engine only; -1 past ``T``),
        else None.
    """

    regret: jax.Array
    pulls: jax.Array
    committed: jax.Array
    exploration: jax.Array
    estimates: jax.Array
    checkpoints: jax.Array
    regret_curve: jax.Array
    arms: jax.Array | None = None


# A gap is cut into pieces of at most _PIECE_BITS significant bits and a count into two
# halves below 2^_COUNT_BITS, so that every piece times every half is exact in float64.
_PIECE_BITS = 22
_COUNT_BITS = 31


def _leading_bits(x: jax.Array) -> jax.Array:
    """``x`` truncated toward zero to its leading ``_PIECE_BITS`` significant bits (a bit mask)."""
    raw = jax.lax.bitcast_convert_type(x, jnp.int64)
    mask = ~jnp.int64((1 << (53 - _PIECE_BITS)) - 1)
    return jax.lax.bitcast_convert_type(raw & mask, jnp.float64)


def _two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth; additions only)."""
    s = a + b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (b - b_virtual)


_UNROLLED_TERMS = 192  # 6 terms an arm: K <= 32 arms unrolled


def pseudo_regret(gaps: jax.Array, pulls: jax.Array) -> jax.Array:
    """``sum_i Delta_i n_i``, the same float64 on every machine.

    Every simulator reports regret through this function.  It involves no
    rounded product, so neither a fused multiply-add (which XLA forms on
    CPUs with FMA and on GPUs, but not on older CPUs) nor the vector width
    can change it: each gap is cut by bit masks into three pieces of at most
    22 significant bits, each count ``n < 2^62`` into ``n_1 2^31 + n_0``, and
    the six exact products per arm are added arm by arm, in a fixed order,
    with error-free additions (TwoSum) whose errors are carried along.  The
    result is the exact sum rounded once (to nearest) unless the exact sum
    lies within about ``36 K^2 2^-106`` (relative) of a rounding boundary;
    it is always within one unit in the last place.

    Args:
      gaps: f64[..., K] finite, non-negative.
      pulls: int[..., K] counts below ``2^62`` (broadcast against ``gaps``).

    Returns:
      f64[...].

    Examples:
      >>> import jax.numpy as jnp
      >>> float(pseudo_regret(jnp.array([0.0, 1.0 - 2.0**-52]), jnp.array([5, 778])))
      777.9999999999998
    """
    gaps = jnp.asarray(gaps, jnp.float64)
    pulls = jnp.asarray(pulls, jnp.int64)
    gaps, pulls = jnp.broadcast_arrays(gaps, pulls)
    high = _leading_bits(gaps)
    rest = gaps - high  # exact: the bits the mask cleared
    middle = _leading_bits(rest)
    pieces = (rest - middle, middle, high)  # smallest first, each exact
    low_count = (pulls & ((1 << _COUNT_BITS) - 1)).astype(jnp.float64)
    high_count = (pulls >> _COUNT_BITS).astype(jnp.float64) * float(2**_COUNT_BITS)
    terms = jnp.stack([d * n for d in pieces for n in (low_count, high_count)], axis=-1)  # [..., K, 6]
    terms = jnp.moveaxis(terms.reshape(*terms.shape[:-2], -1), -1, 0)  # [6K, ...], arm-major

    def add(carry, term):
        total, error = carry
        total, e = _two_sum(total, term)
        return (total, error + e), None

    zero = jnp.zeros(terms.shape[1:], jnp.float64)
    # Unrolled, one fused kernel; past _UNROLLED_TERMS, one arm's 6 terms a step: the program of a fully
    # unrolled sum grows with K (K = 350 arms: 76 s and 6.6 GB to compile, 3.3 s and 375 MB rolled).  The
    # additions are exact two-sums in the same order either way: the same bits.
    unroll = True if terms.shape[0] <= _UNROLLED_TERMS else 6
    (total, error), _ = jax.lax.scan(add, (zero, zero), terms, unroll=unroll)
    return total + error


@pytree.dataclass
class Summary:
    """Mean regret and its standard error over seeds, per grid point.

    Attributes:
      mean: f64[...] mean regret over seeds.
      stderr: f64[...] standard error of the mean, ``std(ddof=1) / sqrt(S)``.
      num_seeds: static number of seeds ``S``.
    """

    mean: jax.Array
    stderr: jax.Array
    num_seeds: int = pytree.static_field()


def summarize(outcome: Outcome) -> Summary:
    """Mean and standard error of the regret over the seed axis (the last axis).

    Args:
      outcome: an ``Outcome`` from ``simulate`` (regret f64[..., S]).  An Outcome of
        :func:`run_on_rewards` runs one seed and has no seed axis: its last axis, where it has
        one, is the horizons' or the grid's, which this would average over.

    Returns:
      ``Summary`` with f64[...] fields; ``stderr`` is NaN for one seed.

    Raises:
      ValueError: for an Outcome whose regret has no axis.
    """
    check_instance_type("outcome", outcome, Outcome, "an Outcome of htb.simulate")
    if np.ndim(outcome.regret) == 0:
        raise ValueError("summarize averages over the seed axis, the last of simulate's Outcome; got an Outcome "
                         "whose regret has no axis (one of run_on_rewards, which runs one seed: its regret is the "
                         "run's).")
    regret = jnp.asarray(outcome.regret)
    num_seeds = regret.shape[-1]
    mean = jnp.mean(regret, axis=-1)
    if num_seeds < 2:
        stderr = jnp.full(mean.shape, jnp.nan)
    else:
        # about the first seed's regret: equal regrets give 0 exactly (about their mean, rounded, 5e-15)
        stderr = jnp.std(regret - regret[..., :1], axis=-1, ddof=1) / jnp.sqrt(num_seeds)
    return Summary(mean=mean, stderr=stderr, num_seeds=num_seeds)
