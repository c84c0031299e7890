"""Random words and the bits-to-uniform transforms behind every sampler.

Tail fidelity is the point of a heavy-tailed simulator.  A float32 uniform drawn
the usual way lives on a 2^-23 grid, so an inverse-CDF Pareto(1.5) sample built
from it can never exceed about 4e4, and a two-point arm whose spike probability
is below about 1e-7 gets the wrong frequency.  Here every variate starts from a
64-bit word ``w`` instead:

* :func:`uniform_from_bits` maps ``w`` to ``U = w / 2^64`` rounded *down* to 24
  significant bits, so ``U`` keeps full float32 relative precision all the way
  down to ``2^-64`` (``w = 0`` maps to ``2^-65``).  Its CDF is exact up to a
  relative error below ``2^-23`` for every ``u >= 2^-64``; the first value it
  cannot represent has probability ``2^-64``.
* :func:`signed_tail` spends the top bit on a side and the other 63 bits on a
  tail probability in ``(0, 1/2)`` with the same relative precision, for
  distributions with two tails.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

_MANTISSA_BITS = 23
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotate_left(v: jax.Array, r: int) -> jax.Array:
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def threefry2x32(key0, key1, x0, x1) -> tuple[jax.Array, jax.Array]:
    """The Threefry-2x32 block cipher (20 rounds), unrolled in elementwise ops.

    Bit-for-bit the function behind ``jax.random`` (``threefry2x32_p``).  On
    CPU JAX lowers that primitive to a rolled loop whose iterations copy the
    whole state; written out like this XLA fuses the 20 rounds into one loop
    over the elements, which makes the reward table several times cheaper.

    Args:
      key0, key1: uint32 key words (broadcast against the counters).
      x0, x1: uint32 counter words.

    Returns:
      The two uint32 output words.
    """
    ks = (key0, key1, key0 ^ key1 ^ np.uint32(0x1BD11BDA))
    x = [x0 + ks[0], x1 + ks[1]]
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x[0] = x[0] + x[1]
            x[1] = _rotate_left(x[1], r) ^ x[0]
        x[0] = x[0] + ks[(block + 1) % 3]
        x[1] = x[1] + ks[(block + 2) % 3] + np.uint32(block + 1)
    return x[0], x[1]


def threefry_words(key: jax.Array, counter_hi: jax.Array, counter_lo: jax.Array) -> jax.Array:
    """64-bit words ``threefry2x32(key, (hi, lo))``: counter-based randomness.

    Equal to ``jax.random.bits(key, (N,), jnp.uint64)[j]`` for
    ``(hi, lo) = (0, j)`` (JAX's partitionable threefry).

    Args:
      key: a threefry key (typed ``jax.random.key`` or a legacy ``uint32[2]``).
      counter_hi: uint32 array, high word of the 64-bit counter.
      counter_lo: uint32 array, low word; broadcast against ``counter_hi``.

    Returns:
      u64[broadcast shape]: one independent word per counter value.
    """
    data = jax.random.key_data(key)
    hi, lo = jnp.broadcast_arrays(
        jnp.asarray(counter_hi, jnp.uint32), jnp.asarray(counter_lo, jnp.uint32)
    )
    return join_words(*threefry2x32(data[0], data[1], hi, lo))


def join_words(a: jax.Array, b: jax.Array) -> jax.Array:
    """u64 ``(a << 32) | b`` from the two uint32 halves of a Threefry output."""
    return (a.astype(jnp.uint64) << jnp.uint64(32)) | b.astype(jnp.uint64)


def _words(w: jax.Array, function: str) -> jax.Array:
    """``w`` as a uint64 array; ``TypeError`` for another dtype (a float or a signed word would map
    to a different law without a word of warning)."""
    dtype = getattr(w, "dtype", None)
    if isinstance(w, type) or dtype is None or dtype != jnp.uint64:
        shown = f"w={w.__name__} (a class)" if isinstance(w, type) else (
            "w=None" if w is None else f"w of type {type(w).__name__}" + (f" and dtype {dtype}" if dtype else "")
        )
        raise TypeError(f"{function} takes w, a uint64 array of random words (a family's from_bits words); got {shown}.")
    return w


def uniform_from_bits(w: jax.Array) -> jax.Array:
    """Maps a 64-bit word to a float32 uniform with full relative precision.

    The building block of every family's ``from_bits`` (``F^-1(U)``, or
    ``F^-1(1 - U)`` computed from ``U`` for an upper tail), a user's own
    family's included.

    ``U = 2^-(z+1) * (1 + m / 2^23)`` where ``z`` counts the leading zeros of
    ``w`` and ``m`` holds the 23 bits after its leading one: ``w / 2^64``
    truncated to 24 significant bits.

    Args:
      w: u64[...] random words.

    Returns:
      f32[...] in ``{2^-65} U [2^-64, 1 - 2^-24]``; never 0, never 1.

    Raises:
      TypeError: ``w`` is not a uint64 array.

    Examples:
      >>> import jax.numpy as jnp, htb_jax as htb
      >>> htb.uniform_from_bits(jnp.array([0, 1, 2**63, 2**64 - 1], jnp.uint64)).tolist()
      [2.710505431213761e-20, 5.421010862427522e-20, 0.5, 0.9999999403953552]
    """
    w = _words(w, "uniform_from_bits")
    shift = jnp.minimum(jax.lax.clz(w), jnp.uint64(63))
    normalised = w << shift
    mantissa = (normalised >> jnp.uint64(64 - 1 - _MANTISSA_BITS)) & jnp.uint64(
        (1 << _MANTISSA_BITS) - 1
    )
    exponent = jnp.uint64(126) - shift
    bits = (exponent << jnp.uint64(_MANTISSA_BITS)) | mantissa
    u = jax.lax.bitcast_convert_type(bits.astype(jnp.uint32), jnp.float32)
    return jnp.where(w == 0, jnp.float32(2.0**-65), u)


def two_sided_uniform(w: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Splits a word into a side and the small side of a float64 uniform, ``(U, 1 - U)`` both exact.

    Args:
      w: u64[...] random words.

    Returns:
      ``(upper, small)``: ``upper`` is bool[...] (the top bit, probability
      1/2) and ``small = (w' + 1/2) 2^-64`` is f64[...] in ``(0, 1/2)`` from
      the other 63 bits ``w'``.  The uniform is ``U = 1 - small`` where
      ``upper``, else ``U = small``: uniform on ``(0, 1)`` up to ``2^-64``,
      never 0 or 1, with whichever of ``U`` and ``1 - U`` is small at full
      relative precision.
    """
    w = jnp.asarray(w, jnp.uint64)
    small = (w & jnp.uint64(2**63 - 1)).astype(jnp.float64) * 2.0**-64 + 2.0**-65
    return (w >> jnp.uint64(63)) == 1, small


def signed_tail(w: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Splits a word into a side and a tail probability, for two-tailed laws.

    Args:
      w: u64[...] random words.

    Returns:
      ``(upper, p)``: ``upper`` is bool[...] (the top bit, probability 1/2) and
      ``p`` is f32[...] in ``(0, 1/2)``, uniform with full relative precision
      down to ``2^-64``.  The variate is the quantile at ``p`` of the lower
      tail, or at ``1 - p`` of the upper tail, computed from ``p`` directly.

    Raises:
      TypeError: ``w`` is not a uint64 array.
    """
    w = _words(w, "signed_tail")
    upper = (w >> jnp.uint64(63)) == 1
    return upper, 0.5 * uniform_from_bits(w << jnp.uint64(1))


def spike_threshold(p: jax.Array) -> jax.Array:
    """``floor(p * 2^64)`` as uint64, so that ``P(w < threshold) = p`` exactly.

    Args:
      p: f64[...] probabilities in [0, 1); ``p >= 1`` saturates (callers treat
        ``p >= 1`` as certain).

    Returns:
      u64[...]: ``P(w < threshold)`` equals ``p`` up to ``2^-64``.
    """
    scaled = jnp.asarray(p, jnp.float64) * 2.0**64
    capped = jnp.minimum(scaled, jnp.float64(2.0**64 - 2.0**11))
    return jnp.floor(capped).astype(jnp.uint64)
