"""The Median-of-Means as one order statistic: Beta levels by CDF, words and coupling."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import htb_jax as htb
from htb_jax._src import order_statistic

N = 20_000
levels = jax.jit(order_statistic.levels, static_argnums=1)


def _seed_keys(key, seeds):
    """The keys fold_in(key, i) in batches of N, i < seeds rounded up to a batch: one program for
    every seed count (the callers keep the first ``seeds``)."""
    fold = jax.vmap(jax.random.fold_in, in_axes=(None, 0))
    return [fold(jax.random.key(key), jnp.arange(i, i + N, dtype=jnp.uint32)) for i in range(0, seeds, N)]


def _levels(blocks, seeds=N, key=0):
    # Batches of N seeds (one program for every test, whatever its number of seeds; the same draws).
    u, v = zip(*(jax.vmap(lambda k: levels(k, 2, jnp.asarray(blocks)))(keys) for keys in _seed_keys(key, seeds)), strict=True)
    return np.concatenate(u)[:seeds], np.concatenate(v)[:seeds]


@pytest.mark.parametrize("blocks", [1, 2, 3, 8, 25, 400])
def test_levels_are_beta_order_statistics(blocks):
    # U_(k) of B uniforms, k = ceil(B/2), is Beta(k, B - k + 1).  KS against the exact CDF on
    # 20,000 seeds x 2 arms at level 1e-4 per case; a rank off by one (k = floor(B/2) + 1 for
    # even B, or Beta(k, B - k)) is rejected at these sizes for B <= 25 (at B = 8 the KS
    # distance of the wrong rank is about 0.09, against a critical value of 0.014).
    u, v = _levels([blocks])
    k = -(-blocks // 2)
    assert stats.kstest(u.ravel(), stats.beta(k, blocks - k + 1).cdf).pvalue > 1e-4
    # u + v = 1 to rounding (two quotients rounded once each: 2 ulps of 1).
    np.testing.assert_allclose(u + v, 1.0, rtol=0, atol=2.0**-51)
    assert np.all((u > 0) & (v > 0))


def test_uniform_level_resolves_both_tails():
    # B = 1 (the empirical mean): the level is the uniform itself, computed from the side it is
    # closest to, so P(U < 1e-3) and P(1 - U < 1e-3) are honoured from the small side.
    u, v = _levels([1], seeds=200_000, key=1)
    for tail in (u, v):
        rate = float(np.mean(tail < 1e-3))
        assert abs(rate - 1e-3) < 4 * np.sqrt(1e-3 / u.size)
    assert np.min(np.minimum(u, v)) < 1e-4 and np.min(v) > 0


ASKED, OTHERS = [172, 8, 172, 1], [8, 5, 2, 2]  # B = 8 asked with other counts, in another column


def test_levels_depend_on_arm_and_block_count_only():
    key = jax.random.key(3)
    u, _ = levels(key, 3, jnp.asarray(ASKED))
    u = np.asarray(u)
    np.testing.assert_array_equal(u[:, 0], u[:, 2])  # the same B: the same level
    assert len(np.unique(u)) == 3 * 3  # arms and different B are independent draws
    other, _ = levels(key, 3, jnp.asarray(OTHERS))  # the same shape: the same program
    np.testing.assert_array_equal(np.asarray(other)[:, 0], u[:, 1])  # whatever else is asked, wherever


def test_grid_points_share_the_level_through_a_monotone_coupling():
    # At one horizon every alpha has the same B_T, so each seed and arm reads one level U; a
    # Gaussian block mean is loc + scale Phi^-1(U) / sqrt(s), so (estimate - loc) sqrt(s) / scale
    # is the same z at every block size s (to float32 rounding of the estimate).
    policy = htb.AdaRETC(eps=1.0, alpha=jnp.array([2 / 3, 0.694, 0.7246]), q=0.0)
    nu = htb.Gaussian(loc=jnp.array([0.0, 0.5]), scale=2.0)
    horizon = 10**6
    out = htb.simulate(jax.random.key(4), policy, nu, [horizon, 10**7], 50)
    pulls = np.asarray(out.exploration)[:, 0, 0] // 2
    blocks = int(htb.num_blocks(2, horizon))
    size = pulls // blocks
    assert len(set(size.tolist())) == 3  # three different block sizes
    z = (np.asarray(out.estimates)[:, 0] - np.array([0.0, 0.5])) * np.sqrt(size)[:, None, None] / 2.0
    # The estimates (|m| < 8) are rounded to float32, 2^-21 at most: z moves by 2^-21 sqrt(15) / 2.
    assert np.max(np.abs(np.asarray(out.estimates))) < 8 and size.max() <= 15
    np.testing.assert_allclose(z[1], z[0], rtol=0, atol=2e-6)
    np.testing.assert_allclose(z[2], z[0], rtol=0, atol=2e-6)
    # Another horizon has another B_T: an independent level (correlation near 0).
    z_other = (np.asarray(out.estimates)[0, 1] - np.array([0.0, 0.5])) * np.sqrt(size[0])
    assert abs(np.corrcoef(z[0].ravel(), z_other.ravel())[0, 1]) < 0.4


median_levels = jax.jit(order_statistic.median_levels, static_argnums=1)
MEDIAN_BLOCKS = [1, 2, 9, 26, 1014]


def _median_levels(key, seeds=N):
    """median_levels of B = MEDIAN_BLOCKS, 2 arms, seeds fold_in(key, i): one program for both tests
    below (a level depends on its arm and B only, so column 0 is the level of B = 1 asked alone)."""
    draws = [jax.vmap(lambda k: median_levels(k, 2, jnp.asarray(MEDIAN_BLOCKS)))(keys) for keys in _seed_keys(key, seeds)]
    return tuple(np.concatenate([np.asarray(d[i]) for d in draws])[:seeds] for i in range(2))


def test_median_levels_are_beta_order_statistics():
    # Three words per level whatever B: Ulrich's Beta(k, k) for odd B, times W^(1/(2k)) for even B.
    # KS against Beta(k, B - k + 1) on 20,000 seeds x 2 arms at level 1e-4 per B.  Caught: the
    # exponent 2/(2k) for 2/(2k - 1) (at B = 1 the level would have density 2u on one side, KS
    # distance 0.25), Beta(k, k) left as it is for even B (at B = 26 a mean shift of 0.19 standard
    # deviations, KS distance about 0.08 against a critical value of 0.014), or the factor
    # W^(1/k) (at B = 2, Beta(1, 2) against the law of X W: KS distance about 0.1).
    u, v = _median_levels(0)
    for j, b in enumerate(MEDIAN_BLOCKS):
        k = -(-b // 2)
        assert stats.kstest(u[..., j].ravel(), stats.beta(k, b - k + 1).cdf).pvalue > 1e-4, b
    # u + v = 1 up to the roundings of the two sides' formulas: the sines, cosines and roots that make
    # 2 sin^2(pi w/4) = 1 - cos(pi w/2) and (1 - R^2)/(1 + R) = 1 - R exact only in real arithmetic, the
    # final sums and, for even B, the product and its complement: at most 8 half-units of 1 (2^-50;
    # measured 2^-52 with FMA, 2^-51 without).
    np.testing.assert_allclose(u + v, 1.0, rtol=0, atol=2.0**-50)
    assert np.all((u > 0) & (v > 0))


def test_median_levels_resolve_both_tails_and_depend_on_arm_and_block_count_only():
    # B = 1: the level is uniform; each side at full relative precision, so the small values are
    # not multiples of 2^-54 (as 0.5 (1 - m) with m near 1 would be), in both u and v.
    u, v = (x[..., 0] for x in _median_levels(1, seeds=50_000))
    for tail in (u, v):
        rate = float(np.mean(tail < 1e-3))
        assert abs(rate - 1e-3) < 4 * np.sqrt(1e-3 / tail.size)  # 4 standard errors
        small = tail[tail < 1e-4]
        assert small.size > 0 and np.any(small * 2.0**54 != np.round(small * 2.0**54))
    key = jax.random.key(3)
    u, _ = median_levels(key, 3, jnp.asarray(ASKED))
    u = np.asarray(u)
    np.testing.assert_array_equal(u[:, 0], u[:, 2])  # the same B: the same level
    assert len(np.unique(u)) == 3 * 3
    other, _ = median_levels(key, 3, jnp.asarray(OTHERS))
    np.testing.assert_array_equal(np.asarray(other)[:, 0], u[:, 1])
    renyi, _ = levels(key, 3, jnp.asarray(OTHERS))  # levels reads other counters of the same key
    assert not np.any(np.asarray(renyi) == np.asarray(other))
