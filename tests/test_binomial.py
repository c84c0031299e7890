"""Binomial variates from words: exact log-pmf ratios, the law by CDF, tiny spike probabilities."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

import htb_jax  # noqa: F401  (enables x64)
from htb_jax._src import binomial, binomial_quantile

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
    # N = 2 10^5 blocks of n pulls (the law test's program): 2 10^13 (resp. 2 10^16) pulls, 2 10^4
    # spikes expected; total within 4 SE.
    x = _draw(2, n, p)
    total, mean = x.sum(), N * n * p
    assert abs(total - mean) < 4 * np.sqrt(mean)
    # P(X >= 1) = 1 - (1 - p)^n, honoured well below float32 resolution (4 SE, variance <= 0.1 / N).
    assert abs((x > 0).mean() - (-np.expm1(n * np.log1p(-p)))) < 4 * np.sqrt(0.1 / N)


def test_trivial_lanes_and_batch_independence():
    words = jax.random.bits(jax.random.key(3), (6,), jnp.uint64)
    n = jnp.array([0.0, 5.0, 5.0, 1e6, 30.0, 2.0**53])
    p = jnp.array([0.3, 0.0, 1.0, 0.5, 0.1, 1e-3])
    # The six lanes lead a batch of N (the law test's program), the rest of it other (n, p).
    rest = N - 6
    x = np.asarray(draw(jnp.concatenate([words, jax.random.bits(jax.random.key(4), (rest,), jnp.uint64)]),
                        jnp.concatenate([n, jnp.full(rest, 1e4)]), jnp.concatenate([p, jnp.full(rest, 0.2)])))[:6]
    np.testing.assert_array_equal(x[:3], [0.0, 0.0, 5.0])
    # A variate is a function of its word, n and p: alone, in a batch and in other tiles alike.
    for i in range(6):
        alone = draw(words[i : i + 1], n[i : i + 1], p[i : i + 1])
        assert float(alone[0]) == x[i]
    np.testing.assert_array_equal(draw(words, n, p, tile=2), x)


def test_huge_n_mean():
    n, p = 2.0**53, 0.3
    x = _draw(4, n, p)  # N draws: the law test's program
    assert abs(x.mean() - n * p) < 5 * np.sqrt(n * p * (1 - p) / N)


# -- quantiles: exact brackets against exact arithmetic ---------------------------------------

quantile = jax.jit(binomial_quantile.binomial_quantile, static_argnames="tile")
tail = jax.jit(binomial_quantile.tail)


def _exact_cdf(n, p):
    """P(X <= x) for x = 0..n with Fractions (p taken exactly as its float64 value)."""
    from fractions import Fraction
    from math import comb

    p = Fraction(p)
    pmf = [comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1)]
    cdf, total = [], Fraction(0)
    for term in pmf:
        total += term
        cdf.append(total)
    return cdf


def _levels(count, key):
    """Levels u in (0, 1) with both tails down to 1e-15 and 1 - u exact for the small side."""
    rng = np.random.default_rng(key)
    small = 10.0 ** rng.uniform(-15, np.log10(0.5), count)
    upper = rng.random(count) < 0.5
    return np.where(upper, 1 - small, small), np.where(upper, small, 1 - small)


@pytest.mark.parametrize(
    "n, p",
    [
        (9, 0.3),  # sequential search from 0
        (40, 0.2),  # mean 8: search from 0, up to the deep upper tail
        (60, 0.25),  # mean 15: corrected normal start, steps both ways
        (200, 0.5),  # symmetric, start from the normal quantile
        (150, 0.93),  # p > 1/2: X = n - Y at level v
        (120, 0.999),  # p > 1/2 with a mean of Y below 10
        (300, 1e-16),  # almost never a success: P(X >= 1) = 3e-14
    ],
)
def test_quantile_against_fractions(n, p):
    # The quantile x = min{x : F(x) >= u} brackets u: F(x - 1) < u <= F(x), with F in exact
    # rational arithmetic.  Both tails reach 1e-15, where a float64 "u" alone would round
    # 1 - 1e-15 and a search on one tail only would lose the level.  An off-by-one in the
    # start or in the step direction, or the wrong tail compared with the wrong level, fails.
    from fractions import Fraction

    cdf = _exact_cdf(n, p)
    u, v = _levels(400, n)
    x = np.asarray(quantile(u, v, np.full(400, float(n)), np.full(400, p))).astype(int)  # the vmap test's direct program
    for xi, ui, vi in zip(x, u, v, strict=True):
        level = 1 - Fraction(vi) if vi < 0.5 else Fraction(ui)  # the level as given, exactly
        assert cdf[xi] >= level, (xi, ui, vi)
        assert xi == 0 or cdf[xi - 1] < level, (xi, ui, vi)


def _mp_tail(x, n, p, upper):
    """The tail of Binomial(n, p) beyond x by 40-digit summation of the pmf from x outward."""
    import mpmath

    mpmath.mp.dps = 40
    p = mpmath.mpf(p)
    q = 1 - p
    k = x + 1 if upper else x
    log_pmf = (mpmath.loggamma(n + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(n - k + 1)
               + k * mpmath.log(p) + (n - k) * mpmath.log(q))
    term = mpmath.exp(log_pmf)
    total = term
    while term > total * mpmath.mpf(10) ** -30:
        if upper:
            term, k = term * (n - k) / (k + 1) * p / q, k + 1
        else:
            term, k = term * k / (n - k + 1) * q / p, k - 1
        total += term
    return total


@pytest.mark.parametrize(
    "n, p",
    [
        (10**18, 1e-16),  # mean 100 at n = 10^18: the corner of the frontier's horizons
        (10**15, 1e-11),  # mean 10^4
        (10**12, 1e-6),  # mean 10^6, sd 10^3
        (10**6, 2e-5),  # mean 20: deep lower tail from the corrected start
    ],
)
def test_quantile_and_tail_at_huge_n_against_mpmath(n, p):
    # tail() against 40-digit sums to 1e-12 relative (it is accurate to about 1e-13; summing
    # lgamma(n) in float64 instead would lose every digit at n = 10^15).  The quantile then
    # brackets its level with those reference tails: F(x - 1) < u <= F(x), written on the
    # smaller tail of each side.
    import mpmath

    mean, sd = n * p, np.sqrt(n * p * (1 - p))
    points = np.unique(np.clip(np.floor(mean + np.array([-8.0, -1.0, 0.0, 2.0, 8.0]) * sd), 0, n - 1))
    upper, value, _ = tail(jnp.asarray(points), jnp.full(points.shape, float(n)), jnp.full(points.shape, p))
    for x, up, got in zip(points, np.asarray(upper), np.asarray(value), strict=True):
        expected = _mp_tail(int(x), n, p, bool(up))
        assert abs(got / float(expected) - 1) < 1e-12, (x, up, got, float(expected))
    u, v = _levels(6, n)
    x = np.asarray(quantile(u, v, float(n), p)).astype(int)
    for xi, ui, vi in zip(x, u, v, strict=True):
        level_small = mpmath.mpf(vi) if vi < 0.5 else mpmath.mpf(ui)
        if vi < 0.5:  # F(x) >= u  <=>  P(X > x) <= v, and P(X > x - 1) > v
            assert _mp_tail(xi, n, p, True) <= level_small
            assert _mp_tail(xi - 1, n, p, True) > level_small
        else:  # F(x - 1) = 0 < u at x = 0
            assert _mp_tail(xi, n, p, False) >= level_small
            assert xi == 0 or _mp_tail(xi - 1, n, p, False) < level_small


def test_quantile_is_monotone_and_covers_the_trivial_lanes():
    u = np.linspace(1e-6, 1 - 1e-6, 2001)
    for n, p in [(10**6, 0.5), (10**6, 3e-7), (77, 0.6)]:
        x = np.asarray(quantile(u, 1 - u, float(n), p))
        assert np.all(np.diff(x) >= 0) and x[0] >= 0 and x[-1] <= n
    n = jnp.array([0.0, 5.0, 5.0, 12.0])
    p = jnp.array([0.3, 0.0, 1.0, 0.5])
    x = np.asarray(quantile(jnp.full(4, 0.5), jnp.full(4, 0.5), n, p, tile=2))
    np.testing.assert_array_equal(x, [0.0, 0.0, 5.0, 6.0])


def test_vmap_joins_the_lanes_and_keeps_every_lane():
    # Nested vmaps over arguments of different ranks, some unbatched, against one direct call: the
    # same numbers lane by lane.  Both methods of each function are reached (spike probabilities from
    # 1e-12, n to 1e12).  Batched the usual way, the quantile's cond on "any lane needs the tail
    # quadrature" would become a select computing 257 nodes for every lane (10x slower tuning); it
    # stays a cond only if the batch axes join the lanes.
    # The direct calls take the lanes flattened, at the shapes of the quantile's and the law's tests
    # (400 and N lanes): their programs serve here too.
    rng = np.random.default_rng(5)
    u = rng.random((2, 5, 40))
    n = np.floor(10 ** rng.uniform(0, 12, (5, 40)))
    p = 10 ** rng.uniform(-12, np.log10(0.9), 40)
    by_tail = n * np.minimum(p, 1 - p) >= binomial.INVERSION_MEAN
    assert 0 < by_tail.mean() < 1  # both the tail start and the search from 0
    batched = jax.vmap(jax.vmap(lambda u, n: binomial_quantile.binomial_quantile(u, 1 - u, n, p)), in_axes=(0, None))
    lanes = [np.broadcast_to(a, u.shape).ravel() for a in (u, 1 - u, n, p)]
    np.testing.assert_array_equal(jax.jit(batched)(u, n), np.asarray(quantile(*lanes)).reshape(u.shape))
    assert " cond[" in str(jax.make_jaxpr(batched)(u, n))  # the printed jaxpr, nested ones included
    shape = (5, N // 200, 40)
    n = np.floor(10 ** rng.uniform(0, 12, shape[1:]))
    words = jax.random.bits(jax.random.key(6), shape, jnp.uint64)
    draws = jax.vmap(lambda w, p: binomial.binomial_from_words(w, n, p), in_axes=(0, None))
    lanes = [np.broadcast_to(a, shape).ravel() for a in (n, p)]
    np.testing.assert_array_equal(jax.jit(draws)(words, p), np.asarray(draw(words.ravel(), *lanes)).reshape(shape))
