"""Binomial variates from words: exact log-pmf ratios, the law by CDF, tiny spike probabilities."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

import htb_jax  # noqa: F401  (enables x64)
from htb_jax._src import binomial

N = 200_000
draw = jax.jit(binomial.binomial_from_words, static_argnames="tile")


def _draw(key, n, p, size=N):
    words = jax.random.bits(jax.random.key(key), (size,), jnp.uint64)
    return np.asarray(draw(words, jnp.full(size, float(n)), jnp.full(size, p)))


def test_stirling_tail_against_lgamma():
    k = np.arange(0, 40, dtype=float)
    expected = special.gammaln(k + 1) - ((k + 0.5) * np.log(k + 1) - (k + 1) + 0.5 * np.log(2 * np.pi))
    np.testing.assert_allclose(binomial.stirling_tail(jnp.asarray(k)), expected, rtol=0, atol=4e-13)  # first omitted series term at k = 10


@pytest.mark.parametrize("n, p", [(60, 0.4), (1000, 0.01), (10**6, 0.3), (10**6, 2e-5)])
def test_log_pmf_ratio_against_scipy(n, p):
    m = np.floor((n + 1) * p)
    sd = np.sqrt(n * p * (1 - p))
    k = np.clip(np.floor(m + np.array([-30, -4, -1, 0, 1, 5, 30]) * sd), 0, n)
    expected = stats.binom.logpmf(k, n, p) - stats.binom.logpmf(m, n, p)
    np.testing.assert_allclose(binomial.log_pmf_ratio(jnp.asarray(k), m, float(n), p), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    "n, p",
    [
        (7, 0.9),  # symmetry p > 1/2, inversion
        (40, 0.2),  # inversion, mean 8
        (60, 0.25),  # rejection, mean 15
        (10**6, 0.5),
        (10**12, 1e-9),  # rejection, mean 1000, huge n
        (10**15, 0.37),  # huge mean: log-ratio without cancellation
        (10**6, 3e-7),  # inversion, P(X >= 1) = 0.26
    ],
)
def test_law_by_cdf(n, p):
    # Empirical CDF at the 1%..99% quantiles of the law, each within 5 standard errors.
    x = _draw(1, n, p)
    assert np.all(x == np.floor(x)) and x.min() >= 0 and x.max() <= n
    points = np.unique(stats.binom.ppf([0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99], n, p))
    expected = stats.binom.cdf(points, n, p)
    observed = np.array([(x <= t).mean() for t in points])
    se = np.sqrt(expected * (1 - expected) / N)
    np.testing.assert_array_less(np.abs(observed - expected), 5 * se + 1e-12)


@pytest.mark.parametrize("p, n", [(1e-9, 10**8), (1e-12, 10**11)])
def test_tiny_spike_probabilities_through_block_sums(p, n):
    # 10^4 blocks of n pulls: 10^12 (resp. 10^15) pulls, 1000 spikes expected; total within 4 SE.
    x = _draw(2, n, p, size=10_000)
    total, mean = x.sum(), 10_000 * n * p
    assert abs(total - mean) < 4 * np.sqrt(mean)
    # P(X >= 1) = 1 - (1 - p)^n, honoured well below float32 resolution.
    assert abs((x > 0).mean() - (-np.expm1(n * np.log1p(-p)))) < 4 * np.sqrt(0.1 / 10_000)


def test_trivial_lanes_and_batch_independence():
    words = jax.random.bits(jax.random.key(3), (6,), jnp.uint64)
    n = jnp.array([0.0, 5.0, 5.0, 1e6, 30.0, 2.0**53])
    p = jnp.array([0.3, 0.0, 1.0, 0.5, 0.1, 1e-3])
    x = np.asarray(draw(words, n, p))
    np.testing.assert_array_equal(x[:3], [0.0, 0.0, 5.0])
    # A variate is a function of its word, n and p: alone, in a batch and in other tiles alike.
    for i in range(6):
        alone = draw(words[i : i + 1], n[i : i + 1], p[i : i + 1])
        assert float(alone[0]) == x[i]
    np.testing.assert_array_equal(draw(words, n, p, tile=2), x)


def test_huge_n_mean():
    n, p = 2.0**53, 0.3
    x = _draw(4, n, p, size=50_000)
    assert abs(x.mean() - n * p) < 5 * np.sqrt(n * p * (1 - p) / 50_000)
