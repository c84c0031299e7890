"""The Median-of-Means estimate drawn as one order statistic (Section 4).

AdaR-ETC's estimate of an arm is the ``k = ceil(B/2)``-th smallest of ``B``
i.i.d. block means.  For any law ``F`` of a block mean, that order statistic
has exactly the law of ``F^-(U_(k))``, with ``U_(k) ~ Beta(k, B - k + 1)``
(the ``k``-th smallest of ``B`` uniforms) and ``F^-`` the generalized inverse,
so it holds for the discrete block means of two-point arms too.  Where the
block mean has a computable quantile (``Distribution.block_mean_quantile``:
:class:`TwoPoint` through the binomial law, :class:`Gaussian`), a commit costs
one Beta draw and one quantile per arm, whatever ``B`` and the block size.

**Levels.**  ``U_(k) = G_1 / (G_1 + G_2)`` and ``1 - U_(k) = G_2 / (G_1 + G_2)``
with ``G_1 ~ Gamma(k)``, ``G_2 ~ Gamma(B - k + 1)``: both tails of the level
keep full relative precision (a spike probability of 1e-15 is a level of
1e-15).  ``Gamma(1)`` is an exponential from a two-sided 64-bit uniform;
larger shapes use Marsaglia and Tsang's transformed rejection (2000), with
fresh words for every trial, so the draw is exact in law.  ``B = 1`` (the
empirical mean) takes the uniform itself.

**Words.**  Arm ``i`` with ``B`` blocks under a seed with key ``key_0`` uses
``key_(i, B) = threefry2x32(fold_in(key_0, ORDER_STATISTIC_STREAM), (i, B))``;
trial ``t`` of gamma ``g`` reads the words ``threefry2x32(key_(i, B), (2g, t))``
(normal) and ``(2g + 1, t)`` (uniform); ``B = 1`` reads ``(4, 0)``.  The level
is therefore shared by every configuration, instance and horizon with the
same ``B``: a grid of ``(alpha, q)`` at one ``(K, T)`` keeps common random
numbers through the monotone coupling ``F_s^-(U)`` across block sizes ``s``
(and spike probabilities, gaps, ...).  Configurations with different ``B``
(horizons, or ``B = 1`` against ``B_T``) draw independent levels.  The
levels are a stream of their own: independent of the per-pull reward table
and of the block-sum words.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import bits as bits_lib

ORDER_STATISTIC_STREAM = 0x05D57  # fold_in tag of the order-statistic words
_MAX_TRIALS = 1000  # Marsaglia-Tsang accepts with probability > 0.95 per trial
_F64 = jnp.float64


def _side(word: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(upper, s)``: the top bit of a 64-bit word and ``s = (w' + 1/2) 2^-64`` in ``(0, 1/2)``
    from its other 63 bits ``w'``, with full relative precision down to ``2^-64``.  The uniform
    is ``1 - s`` where ``upper``, else ``s``."""
    small = (word & jnp.uint64(2**63 - 1)).astype(_F64) * 2.0**-64 + 2.0**-65
    return (word >> jnp.uint64(63)) == 1, small


def _two_sided(word: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(U, 1 - U)`` from one 64-bit word, both with full relative precision down to ``2^-64``."""
    upper, small = _side(word)
    return jnp.where(upper, 1.0 - small, small), jnp.where(upper, small, 1.0 - small)


def _words(key0, key1, hi, lo) -> jax.Array:
    a, b = bits_lib.threefry2x32(key0, key1, jnp.asarray(hi, jnp.uint32), jnp.asarray(lo, jnp.uint32))
    return (a.astype(jnp.uint64) << jnp.uint64(32)) | b.astype(jnp.uint64)


def _normal(word: jax.Array) -> jax.Array:
    upper, small = _side(word)
    z = special.ndtri(small)
    return jnp.where(upper, -z, z)


def _exponential(word: jax.Array) -> jax.Array:
    upper, small = _side(word)
    return jnp.where(upper, -jnp.log1p(-small), -jnp.log(small))


def gammas(key0: jax.Array, key1: jax.Array, stream: jax.Array, shape: jax.Array) -> jax.Array:
    """``Gamma(shape)`` variates, one per lane, exact in law.

    Args:
      key0, key1: u32[...] the lanes' keys.
      stream: u32[...] gamma index ``g`` (trial words ``(2g, t)`` and ``(2g + 1, t)``).
      shape: f64[...] integer shapes ``>= 1`` (broadcast).

    Returns:
      f64[...] positive variates.
    """
    key0, key1, stream, shape = jnp.broadcast_arrays(
        key0, key1, jnp.asarray(stream, jnp.uint32), jnp.asarray(shape, _F64)
    )
    d = shape - 1.0 / 3.0
    c = 1.0 / jnp.sqrt(9.0 * d)
    first = _exponential(_words(key0, key1, 2 * stream, jnp.zeros_like(key0)))
    exponential = shape <= 1.0

    def cond(state):
        trial, _, done = state
        return jnp.any(~done) & (trial < _MAX_TRIALS)

    def body(state):
        trial, out, done = state
        counter = jnp.full(key0.shape, trial, jnp.uint32)
        z = _normal(_words(key0, key1, 2 * stream, counter))
        uniform, _ = _two_sided(_words(key0, key1, 2 * stream + 1, counter))
        x = 1.0 + c * z
        cube = x * x * x
        log_cube = 3.0 * jnp.log(jnp.maximum(x, 1e-300))
        accept = (x > 0.0) & (jnp.log(uniform) < 0.5 * z * z + d - d * cube + d * log_cube)
        take = (~done) & accept
        return trial + 1, jnp.where(take, d * cube, out), done | accept

    _, out, _ = jax.lax.while_loop(cond, body, (0, first, exponential))
    return out


def levels(seed_key: jax.Array, num_arms: int, blocks: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The levels ``(U_(k), 1 - U_(k))``, ``k = ceil(B/2)``, of every arm and configuration.

    Args:
      seed_key: the seed's key.
      num_arms: static ``K``.
      blocks: i64[C] the estimator's ``B`` per configuration.

    Returns:
      ``(u, v)``: f64[K, C] each, ``u + v = 1``; ``u ~ Beta(k, B - k + 1)``.
    """
    data = jax.random.key_data(jax.random.fold_in(seed_key, ORDER_STATISTIC_STREAM))
    blocks = jnp.asarray(blocks, jnp.int64)
    arms = jnp.broadcast_to(jnp.arange(num_arms, dtype=jnp.uint32)[:, None], (num_arms, blocks.shape[0]))
    count = jnp.broadcast_to(blocks.astype(jnp.uint32), arms.shape)
    key0, key1 = bits_lib.threefry2x32(data[0], data[1], arms, count)
    b = count.astype(_F64)
    k = jnp.ceil(0.5 * b)
    # Both gammas in one loop: streams 0 and 1 along a leading axis.
    first, second = gammas(key0, key1, jnp.arange(2, dtype=jnp.uint32)[:, None, None], jnp.stack([k, b - k + 1.0]))
    total = first + second
    uniform_u, uniform_v = _two_sided(_words(key0, key1, 4, jnp.zeros_like(key0)))
    single = b <= 1.0
    return jnp.where(single, uniform_u, first / total), jnp.where(single, uniform_v, second / total)
