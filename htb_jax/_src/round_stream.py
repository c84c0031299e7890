"""The policies' own random numbers: one counter-based stream per seed, indexed by round.

A randomised policy (APE2's and MR-APE's perturbations) draws in round ``t``
the words ``w_j = threefry2x32(key_t, (0, j))``, ``j = 0, 1, ..``, with
``key_t = threefry2x32(fold_in(key_0, ROUND_STREAM), (t_hi, t_lo))`` for the
seed's key ``key_0`` and the two 32-bit halves of ``t``.  The words are a
function of the seed and the round alone: never of the reward table (a
separate stream from the per-pull, block-sum and order-statistic words), of
the arms played so far or of the policy.  Every policy therefore reads the
same reward table, and a plain-Python loop reproduces a policy's draws from
:func:`uniforms` evaluated at the same ``(seed key, t)``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from htb_jax._src import bits as bits_lib
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.validation import check_given, check_integer, check_static

ROUND_STREAM = 0x40D5  # fold_in tag of the per-round policy words


def words(seed_key: jax.Array, t: jax.Array, num: int) -> jax.Array:
    """u64[num]: the words ``w_0 .. w_(num-1)`` of round ``t``.

    Args:
      seed_key: the seed's key ``key_0``.
      t: i64[] the round (1-based; any non-negative int64).
      num: static number of words.
    """
    data = jax.random.key_data(jax.random.fold_in(seed_key, ROUND_STREAM))
    t = jnp.asarray(t, jnp.int64).astype(jnp.uint64)
    key0, key1 = bits_lib.threefry2x32(
        data[0], data[1], (t >> jnp.uint64(32)).astype(jnp.uint32), t.astype(jnp.uint32)
    )
    j = jnp.arange(num, dtype=jnp.uint32)
    return bits_lib.join_words(*bits_lib.threefry2x32(key0, key1, jnp.zeros_like(j), j))


def uniforms(seed_key: jax.Array, t: jax.Array, num: int) -> tuple[jax.Array, jax.Array]:
    """Round ``t``'s uniforms as pairs ``(U, 1 - U)``, each with full relative precision.

    From each word ``w_j`` by :func:`~htb_jax._src.bits.two_sided_uniform`: the
    top bit picks the side and the other 63 bits give ``s = (w' + 1/2) 2^-64``
    in ``(0, 1/2)``; ``(U, 1 - U) = (s, 1 - s)`` or ``(1 - s, s)``.  ``U`` is uniform on ``(0, 1)`` up to ``2^-64`` and never 0 or 1,
    and both tails keep full relative precision (a heavy-tailed perturbation
    ``F^-1(U)`` computes from whichever of ``U``, ``1 - U`` is small).

    Args:
      seed_key: the seed's key ``key_0``.
      t: i64[] the round.
      num: static number of uniforms.

    Returns:
      ``(u, v)``: f64[num] each, ``v = 1 - u`` (the smaller of the two exact).
    """
    upper, small = bits_lib.two_sided_uniform(words(seed_key, t, num))
    return jnp.where(upper, 1.0 - small, small), jnp.where(upper, small, 1.0 - small)


def round_uniforms(seed_key: jax.Array, rounds: Any, num: int) -> tuple[jax.Array, jax.Array]:
    """A seed's round uniforms as a policy's ``ctx.uniforms(num)`` sees them, for a reference loop.

    A randomised policy, a user's included, draws in round ``t`` the pairs
    ``(U, 1 - U)`` of ``RoundContext.uniforms``; a plain-Python reference of the policy
    reads the same numbers here and can be compared with the engine exactly.

    Args:
      seed_key: the seed's key (``htb.seed_keys(key, S)[s]`` for seed ``s`` of
        ``simulate(key, ...)``).
      rounds: an int or an int array of rounds ``t >= 1``, shape ``R``.
      num: the number of uniforms per round (the ``num`` of ``ctx.uniforms``).

    Returns:
      ``(u, v)``: f64[*R, num] each, ``v = 1 - u``, equal bit for bit to
      ``ctx.uniforms(num)`` in round ``t``.

    Examples:
      >>> import jax, htb_jax as htb
      >>> key = htb.seed_keys(jax.random.key(0), 2)[1]
      >>> u, v = htb.round_uniforms(key, [1, 2, 3], 2)
      >>> u.shape, bool(((u > 0) & (u < 1) & (u + v == 1)).all())
      ((3, 2), True)
    """
    check_given("seed_key", seed_key, "a seed's key, such as htb.seed_keys(jax.random.key(0), 4)[0]")
    key = as_threefry_key(seed_key, reader="htb.round_uniforms")
    check_integer("rounds", rounds, 1)
    check_static("htb.round_uniforms", num=num)
    check_integer("num", num, 1, maximum=2**31 - 1, one=True)  # a static size
    return _round_uniforms(key, jnp.asarray(rounds, jnp.int64), int(num))


@functools.partial(jax.jit, static_argnums=2)
def _round_uniforms(key, rounds, num):
    u, v = jax.vmap(lambda t: uniforms(key, t, num))(rounds.reshape(-1))
    return u.reshape(*rounds.shape, num), v.reshape(*rounds.shape, num)
