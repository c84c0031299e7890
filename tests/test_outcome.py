"""``pseudo_regret``: the exact sum rounded once, with no product a fused multiply-add could change."""

from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import outcome
from htb_jax._src.outcome import pseudo_regret


def _exact(gaps, pulls) -> float:
    """``sum_i Delta_i n_i`` in rational arithmetic, rounded once to float64."""
    return float(sum(Fraction(float(g)) * int(n) for g, n in zip(gaps, pulls, strict=True)))


def _random_case(seed: int, rows: int, arms: int):
    rng = np.random.default_rng(seed)
    gaps = rng.random((rows, arms)) * 10.0 ** rng.integers(-6, 4, (rows, arms))
    gaps[:, 0] = 0.0
    pulls = rng.integers(0, 2 ** rng.integers(1, 61, (rows, arms)), dtype=np.int64)
    return gaps, pulls


def test_equals_the_exact_sum_rounded_once():
    # Catches a plain sum of rounded products: on these rows it differs from the exact sum
    # in about 40% of them (checked below), and with a fused multiply-add in yet others.
    gaps, pulls = _random_case(0, 500, 7)
    exact = np.array([_exact(g, n) for g, n in zip(gaps, pulls, strict=True)])
    got = np.asarray(jax.jit(pseudo_regret)(gaps, pulls))
    np.testing.assert_array_equal(got, exact)
    naive = np.sum(gaps * pulls, axis=-1)
    assert np.mean(naive != exact) > 0.2


def test_hard_cases():
    # A gap one unit below 1 (Theorem 1's spike mean beta * (2 / beta) can be 2 - 2^-52),
    # counts at both ends of the split at 2^31 and near the largest horizon, and zero counts.
    g = 1.0 - 2.0**-52
    cases = [
        ([0.0, g], [5, 778]),
        ([g, g / 3, 0.1], [2**31 - 1, 2**31, 2**31 + 1]),
        ([0.3, 0.7], [10**18, 10**18 - 1]),
        ([1e-300, 1e300], [2**61, 1]),
        ([0.25, 0.5], [0, 0]),
    ]
    for gaps, pulls in cases:
        assert float(pseudo_regret(jnp.asarray(gaps), jnp.asarray(pulls))) == _exact(gaps, pulls), (gaps, pulls)


def test_broadcasts_and_keeps_the_batch_shape():
    gaps, pulls = _random_case(1, 12, 3)
    got = pseudo_regret(gaps.reshape(3, 4, 3)[:, None], pulls.reshape(3, 4, 3)[None, :, :, :])
    assert got.shape == (3, 3, 4)
    np.testing.assert_array_equal(np.asarray(got[1, 1]), [_exact(g, n) for g, n in zip(gaps[4:8], pulls[4:8], strict=True)])


def test_many_arms_sum_in_a_loop_to_the_same_bits():
    # Past 32 arms the sum runs one arm a step instead of fully unrolled (350 arms took 76 s and 6.6 GB
    # to compile): the same exact two-sums in the same order, so the same bits, equal to the exact sum.
    gaps, pulls = _random_case(1, 40, 40)
    assert 6 * 40 > outcome._UNROLLED_TERMS
    exact = np.array([_exact(g, n) for g, n in zip(gaps, pulls, strict=True)])
    np.testing.assert_array_equal(np.asarray(jax.jit(pseudo_regret)(gaps, pulls)), exact)
