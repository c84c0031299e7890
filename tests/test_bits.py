"""Bits-to-uniform transforms and the counter-based generator."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.random import threefry2x32_p

from htb_jax._src import bits


def test_threefry_matches_jax_primitive():
    words = np.random.default_rng(0).integers(0, 2**32, size=(4, 4096), dtype=np.uint64).astype(np.uint32)
    expected = threefry2x32_p.bind(*(jnp.asarray(w) for w in words))
    got = bits.threefry2x32(*(jnp.asarray(w) for w in words))
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_threefry_words_match_jax_random_bits():
    key = jax.random.key(5)
    counters = jnp.arange(1000, dtype=jnp.uint32)
    np.testing.assert_array_equal(
        np.asarray(bits.threefry_words(key, 0, counters)), np.asarray(jax.random.bits(key, (1000,), jnp.uint64))
    )


def test_uniform_extreme_bit_patterns():
    w = jnp.array([0, 1, 2, 3, 2**32, 2**63, 2**64 - 1, (2**40 + 1) << 10], jnp.uint64)
    u = np.asarray(bits.uniform_from_bits(w), np.float64)
    expected = [2.0**-65, 2.0**-64, 2.0**-63, 1.5 * 2.0**-63, 2.0**-32, 0.5, 1 - 2.0**-24, 2.0**-14]
    np.testing.assert_array_equal(u, expected)


def test_uniform_keeps_24_significant_bits_at_every_scale():
    rng = np.random.default_rng(1)
    for exponent in (1, 10, 30, 50, 63):
        raw = rng.integers(2**(exponent - 1), 2**exponent, size=1000, dtype=np.uint64)
        u = np.asarray(bits.uniform_from_bits(jnp.asarray(raw)), np.float64)
        exact = raw.astype(np.float64) / 2.0**64  # float64 holds 53 bits: truncation is visible
        assert np.all(u <= exact * (1 + 2.0**-52)), exponent
        assert np.all(u > exact * (1 - 2.0**-23)), exponent


def test_uniform_never_zero_or_one():
    w = jax.random.bits(jax.random.key(2), (10**6,), jnp.uint64)
    u = bits.uniform_from_bits(w)
    assert float(u.min()) > 0.0 and float(u.max()) < 1.0


def test_uniform_cdf_deep_in_the_tail():
    # Condition on the top 40 bits being zero: U < 2^-40, a region a float32
    # uniform cannot reach.  Then U * 2^40 is uniform on (0, 1) again.
    rng = np.random.default_rng(3)
    n = 200_000
    w = jnp.asarray(rng.integers(0, 2**24, size=n, dtype=np.uint64))
    u = np.asarray(bits.uniform_from_bits(w), np.float64) * 2.0**40
    for t in (0.01, 0.1, 0.5, 0.9):
        freq = np.mean(u < t)
        assert abs(freq - t) < 5 * np.sqrt(t * (1 - t) / n), t  # 5 standard errors


def test_signed_tail_sides_and_probabilities():
    w = jnp.array([0, 2**63, 1 << 62, (1 << 63) | (1 << 62), 2**64 - 1], jnp.uint64)
    upper, p = bits.signed_tail(w)
    np.testing.assert_array_equal(np.asarray(upper), [False, True, False, True, True])
    np.testing.assert_array_equal(np.asarray(p, np.float64), [2.0**-66, 2.0**-66, 0.25, 0.25, 0.5 * (1 - 2.0**-24)])


def test_spike_threshold_is_exact():
    for p in (1e-12, 1e-9, 3e-7, 0.25):
        thr = int(np.asarray(bits.spike_threshold(jnp.float64(p))))
        assert abs(thr / 2.0**64 - p) <= 2.0**-64 + p * 2.0**-52
