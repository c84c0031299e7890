"""The Median-of-Means estimate drawn as one order statistic (Section 4).

AdaR-ETC's estimate of an arm is the ``k = ceil(B/2)``-th smallest of ``B``
i.i.d. block means.  For any law ``F`` of a block mean, that order statistic
has exactly the law of ``F^-(U_(k))``, with ``U_(k) ~ Beta(k, B - k + 1)``
(the ``k``-th smallest of ``B`` uniforms) and ``F^-`` the generalized inverse,
so it holds for the discrete block means of two-point arms too.  Where the
block mean has a computable quantile (``Distribution.block_mean_quantile``:
:class:`TwoPoint` through the binomial law, :class:`Gaussian`), a commit costs
one Beta draw and one quantile per arm, whatever ``B`` and the block size.

**Levels.**  By Renyi's representation, with ``E_1 .. E_(B+1)`` i.i.d.
exponentials, ``U_(k) = (E_1 + .. + E_k) / (E_1 + .. + E_(B+1))`` and
``1 - U_(k) = (E_(k+1) + .. + E_(B+1)) / (E_1 + .. + E_(B+1))``: exact in law,
no rejection loop, and both tails of the level keep full relative precision
(a spike probability of 1e-15 is a level of 1e-15), because each exponential
comes from a two-sided 64-bit uniform.  A level costs ``B + 1`` words; it is
drawn once per seed, arm and horizon and shared by the configurations.

**Words.**  Arm ``i`` with ``B`` blocks under a seed with key ``key_0`` reads
``E_j`` from ``threefry2x32(key_(i, B), (0, j))``, ``key_(i, B) =
threefry2x32(fold_in(key_0, ORDER_STATISTIC_STREAM), (i, B))``.  The level is
therefore shared by every configuration, instance and horizon with the same
``B``: a grid of ``(alpha, q)`` at one ``(K, T)`` keeps common random numbers
through the monotone coupling ``F_s^-(U)`` across block sizes ``s`` (and spike
probabilities, gaps, ...).  Configurations with different ``B`` (horizons, or
``B = 1`` against ``B_T``) draw independent levels.  The levels are a stream
of their own: independent of the per-pull reward table and of the block-sum
words.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special

from htb_jax._src import bits as bits_lib
from htb_jax._src.loop_hoisting import unhoisted

ORDER_STATISTIC_STREAM = 0x05D57  # fold_in tag of the order-statistic words
_F64 = jnp.float64


def _exponential(word: jax.Array) -> jax.Array:
    """``-log U`` for the uniform ``U`` of a 64-bit word, with full relative precision at both ends.

    From :func:`~htb_jax._src.bits.two_sided_uniform`: ``s = (w' + 1/2) 2^-64`` in ``(0, 1/2)``;
    ``U = 1 - s`` (``E = -log1p(-s)``, small) or ``U = s`` (``E = -log s``).
    """
    upper, small = bits_lib.two_sided_uniform(word)
    return jnp.where(upper, -jnp.log1p(-small), -jnp.log(small))


def normal_quantile(u: jax.Array, v: jax.Array) -> jax.Array:
    """``Phi^-1(u)`` from the level pair ``(u, v = 1 - u)``, evaluated on the smaller of the two.

    Args:
      u, v: f64[...] the level and its complement, each with full relative precision.

    Returns:
      f64[...]: ``Phi^-1(u)`` for ``u < 1/2``, ``-Phi^-1(v)`` otherwise.
    """
    z = special.ndtri(jnp.minimum(u, v))
    return jnp.where(u < 0.5, z, -z)


def levels(seed_key: jax.Array, num_arms: int, blocks: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The levels ``(U_(k), 1 - U_(k))``, ``k = ceil(B/2)``, of every arm and block count.

    The exponentials are added one at a time in the order ``j = 1, 2, ..``
    (a loop, not a reduction whose order the compiler picks), so a level is
    the same float64 number on every machine.

    Args:
      seed_key: the seed's key.
      num_arms: static ``K``.
      blocks: i64[H] the estimator's ``B`` per column, ``>= 1``.

    Returns:
      ``(u, v)``: f64[K, H] each, ``u + v = 1``; ``u ~ Beta(k, B - k + 1)``.
    """
    data = jax.random.key_data(jax.random.fold_in(seed_key, ORDER_STATISTIC_STREAM))
    blocks = jnp.asarray(blocks, jnp.int64)
    arms = jnp.broadcast_to(jnp.arange(num_arms, dtype=jnp.uint32)[:, None], (num_arms, blocks.shape[0]))
    key0, key1 = bits_lib.threefry2x32(data[0], data[1], arms, jnp.broadcast_to(blocks.astype(jnp.uint32), arms.shape))
    k = (blocks + 1) // 2

    def add(j, sums):  # E_(j+1)
        first, second = sums
        e = _exponential(bits_lib.join_words(*bits_lib.threefry2x32(key0, key1, jnp.uint32(0), j.astype(jnp.uint32))))
        first = first + jnp.where(j < k, e, 0.0)
        second = second + jnp.where((j >= k) & (j <= blocks), e, 0.0)
        return first, second

    zeros = jnp.zeros(arms.shape, _F64)
    first, second = jax.lax.fori_loop(jnp.int64(0), jnp.max(blocks) + 1, unhoisted(add), (zeros, zeros))
    total = first + second
    return first / total, second / total


def median_levels(seed_key: jax.Array, num_arms: int, blocks: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The levels ``(U_(k), 1 - U_(k))``, ``k = ceil(B/2)``, from three words whatever ``B``.

    The same law as :func:`levels` at a cost that does not grow with ``B``.
    ``B = 2k - 1`` (odd): ``U_(k) ~ Beta(k, k)``, drawn by Ulrich's
    construction (Ulrich 1984; Devroye 1986, IX.4): the first coordinate of
    a uniform point on the sphere ``S^(2k)`` has density proportional to
    ``(1 - y^2)^(k - 1)``, and it is ``Y = R sin(Theta)`` with ``Theta``
    uniform and ``1 - R^2 = U^(2 / (2k - 1))`` for a uniform ``U`` (the
    projection of that point on a plane), so ``X = (1 + Y) / 2 ~ Beta(k,
    k)``.  ``B = 2k`` (even): ``U_(k) ~ Beta(k, k + 1)``, drawn as ``X W^(1 /
    (2k))`` with ``X ~ Beta(k, k)`` and ``W`` uniform (the product of
    independent ``Beta(a, b)`` and ``Beta(a + b, c)`` is ``Beta(a, b + c)``).

    Both sides keep full relative precision: with ``|sin Theta| =
    cos(pi w / 2)``, ``w`` uniform, the smaller of ``X`` and ``1 - X`` is
    ``(2 sin^2(pi w / 4) + cos(pi w / 2) (1 - R^2) / (1 + R)) / 2``, a sum of
    positive terms, and ``1 - X W^(1/(2k)) = (1 - X) - X expm1(log W / (2k))``.

    **Words.**  Those of :func:`levels`' key ``key_(i, B)`` at counters ``(1,
    j)``, ``j = 0, 1, 2`` (:func:`levels` reads ``(0, j)``): a level is shared
    by every configuration, instance and horizon with the same ``B``, and
    independent of :func:`levels`' and of the reward words.

    Args:
      seed_key: the seed's key.
      num_arms: static ``K``.
      blocks: i64[H] the estimator's ``B`` per column, ``>= 1``.

    Returns:
      ``(u, v)``: f64[K, H] each, ``u + v = 1`` to rounding; ``u ~ Beta(k, B - k + 1)``.
    """
    data = jax.random.key_data(jax.random.fold_in(seed_key, ORDER_STATISTIC_STREAM))
    blocks = jnp.asarray(blocks, jnp.int64)
    arms = jnp.broadcast_to(jnp.arange(num_arms, dtype=jnp.uint32)[:, None], (num_arms, blocks.shape[0]))
    key0, key1 = bits_lib.threefry2x32(data[0], data[1], arms, jnp.broadcast_to(blocks.astype(jnp.uint32), arms.shape))

    def word(j):
        return bits_lib.join_words(*bits_lib.threefry2x32(key0, key1, jnp.uint32(1), jnp.uint32(j)))

    k = ((blocks + 1) // 2).astype(_F64)
    log_q = -_exponential(word(0)) * (2.0 / (2.0 * k - 1.0))  # 1 - R^2 = U^(2/(2k-1))
    r = jnp.sqrt(-jnp.expm1(log_q))
    upper, half_w = bits_lib.two_sided_uniform(word(1))  # side of Theta, w/2 uniform on (0, 1/2)
    cos = jnp.cos(jnp.pi * half_w)  # |sin Theta| = cos(pi w / 2)
    small = 0.5 * (2.0 * jnp.square(jnp.sin(0.5 * jnp.pi * half_w)) + cos * jnp.exp(log_q) / (1.0 + r))
    large = 0.5 * (1.0 + cos * r)
    x, x_c = jnp.where(upper, large, small), jnp.where(upper, small, large)  # X ~ Beta(k, k), 1 - X
    log_y = -_exponential(word(2)) * (0.5 / k)  # Y = W^(1/(2k)) ~ Beta(2k, 1)
    even = blocks % 2 == 0
    u = jnp.where(even, x * jnp.exp(log_y), x)
    v = jnp.where(even, x_c - x * jnp.expm1(log_y), x_c)
    return u, v
