"""The policies' per-round stream: layout, independence from the table, law."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import htb_jax as htb
from htb_jax._src import bits, round_stream


def _reference_words(seed_key, t, num):
    """The words from the module docstring's definition, built from ``jax.random`` pieces."""
    data = jax.random.key_data(jax.random.fold_in(seed_key, round_stream.ROUND_STREAM))
    k0, k1 = bits.threefry2x32(data[0], data[1], jnp.uint32(t >> 32), jnp.uint32(t & 0xFFFFFFFF))
    out = []
    for j in range(num):
        hi, lo = bits.threefry2x32(k0, k1, jnp.uint32(0), jnp.uint32(j))
        out.append((int(hi) << 32) | int(lo))
    return out


@pytest.mark.parametrize("t", [1, 7, 2**32 + 7, 2**40 + 3])
def test_words_follow_the_documented_layout(t):
    """Catches a round truncated to 32 bits (t and t + 2^32 sharing words) or swapped counters."""
    key = htb.seed_keys(jax.random.key(3), 2)[1]
    got = [int(w) for w in round_stream.words(key, jnp.int64(t), 5)]
    assert got == _reference_words(key, t, 5)


def test_rounds_and_seeds_differ_and_prefixes_agree():
    keys = htb.seed_keys(jax.random.key(0), 2)
    w = round_stream.words(keys[0], jnp.int64(9), 6)
    assert np.array_equal(round_stream.words(keys[0], jnp.int64(9), 3), w[:3])  # j is the counter
    assert not np.any(round_stream.words(keys[0], jnp.int64(10), 6) == w)
    assert not np.any(round_stream.words(keys[1], jnp.int64(9), 6) == w)
    assert not np.any(round_stream.words(keys[0], jnp.int64(9 + 2**32), 6) == w)


def test_independent_of_the_reward_table():
    """The round stream is not the table's words (arm j's pull t) under any of the table's word keys."""
    key = htb.seed_keys(jax.random.key(0), 1)[0]
    t = jnp.int64(4)
    table = [bits.threefry_words(k, jnp.arange(6, dtype=jnp.uint32), jnp.uint32(4))
             for k in (key, jax.random.fold_in(key, 1))]
    w = round_stream.words(key, t, 6)
    assert not any(np.any(np.asarray(tw) == np.asarray(w)) for tw in table)


def test_uniform_pairs_are_uniform_and_complementary():
    """KS over 8192 draws (rounds x words): a side bit ignored or a half-range map fails at this size."""
    key = htb.seed_keys(jax.random.key(1), 1)[0]
    u, v = jax.vmap(lambda t: round_stream.uniforms(key, t, 8))(jnp.arange(1, 1025, dtype=jnp.int64))
    u, v = np.asarray(u).ravel(), np.asarray(v).ravel()
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    assert np.all((u > 0) & (u < 1) & (v > 0) & (v < 1))
    small = np.minimum(u, v)
    assert np.all(small < 0.5)
    assert np.all(np.maximum(u, v) == 1.0 - small)  # the small side exact, the large side its complement
    assert 0.45 < np.mean(u < 0.5) < 0.55  # 4096 +- 45 (1 SE) of 8192 on each side: +-5.5 SE


def test_context_uniforms_read_the_round_stream():
    arms = htb.Gaussian(loc=jnp.zeros(3), scale=1.0)
    key = htb.seed_keys(jax.random.key(2), 1)[0]
    ctx = htb.RoundContext(jnp.int64(12), jnp.zeros(3, jnp.int64), jnp.int64(50), htb.TableReader.create(key, arms))
    got = jax.jit(lambda c: c.uniforms(3))(ctx)
    want = round_stream.uniforms(key, jnp.int64(12), 3)
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
