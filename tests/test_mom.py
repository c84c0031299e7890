"""Median-of-Means against the paper's definition (a plain numpy reference)."""

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from conftest import mom_reference
from htb_jax._src import mom


def _check(x, num_blocks, n=None):
    got = float(htb.median_of_means(jnp.asarray(x), num_blocks, n))
    want = mom_reference(np.asarray(x)[: len(x) if n is None else n], num_blocks)
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-13, abs=1e-13)


def test_random_inputs_any_n_and_blocks():
    rng = np.random.default_rng(0)
    x = rng.standard_t(1.5, (300, 80))
    blocks = rng.integers(1, 15, 300)
    lengths = rng.integers(0, 81, 300)
    got = np.asarray(htb.median_of_means(jnp.asarray(x), jnp.asarray(blocks), jnp.asarray(lengths)))
    want = np.array([mom_reference(x[i, : lengths[i]], blocks[i]) for i in range(300)])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_n_not_divisible_discards_the_tail():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 1e9])
    # n = 7, B = 3: s = 2, blocks (1,2) (3,4) (5,6); 7 and 1e9 are discarded.
    assert float(htb.median_of_means(jnp.asarray(x), 3, 7)) == 3.5
    _check(x, 3, 7)


def test_ties():
    # B = 1 .. 10 on ten samples with tied block means (and a tail of two discarded samples, n = 10),
    # and twelve zeros in five blocks: one call, one program (block sizes up to 12, static branches).
    x = np.array([2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 3.0, 3.0, 1e9, -1e9])
    rows = np.vstack([np.tile(x, (10, 1)), np.zeros(12)])
    blocks, lengths = np.array([*range(1, 11), 5]), np.array([10] * 10 + [12])
    got = np.asarray(htb.median_of_means(jnp.asarray(rows), jnp.asarray(blocks), jnp.asarray(lengths)))
    want = [mom_reference(rows[i, : lengths[i]], blocks[i]) for i in range(11)]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(got[10], 0.0)


def test_infinite_sample_spoils_only_its_own_block():
    x = np.arange(1.0, 13.0)  # blocks of 3 with B = 4: means 2, 5, 8, 11
    x[4] = np.inf  # block 1 -> +inf
    assert float(htb.median_of_means(jnp.asarray(x), 4)) == 8.0  # 2nd smallest of (2, 8, 11, inf)
    x[10] = -np.inf  # block 3 -> -inf
    assert float(htb.median_of_means(jnp.asarray(x), 4)) == 2.0  # 2nd smallest of (-inf, 2, 8, inf)
    x[5] = -np.inf  # block 1 holds both: NaN, sorted last
    _check(x, 4)
    assert float(htb.median_of_means(jnp.asarray(x), 4)) == 2.0
    y = np.arange(1.0, 13.0)
    y[0] = np.nan
    _check(y, 4)


@pytest.mark.parametrize("seed", range(4))
def test_infinities_against_reference(seed):
    # B = 1, 3, 7, 12, 20 in one call (one program for every seed): B = 1 (blocks of 60) takes the
    # prefix-sum route, the others (blocks of 20, 8, 5, 3) static branches.
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(60)
    x[rng.integers(0, 60, 5)] = np.inf
    x[rng.integers(0, 60, 3)] = -np.inf
    blocks = np.array([1, 3, 7, 12, 20])
    got = np.asarray(htb.median_of_means(jnp.asarray(x), jnp.asarray(blocks)))
    want = np.array([mom_reference(x, b) for b in blocks])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_too_few_samples_is_an_error_or_nan_in_a_grid():
    with pytest.raises(ValueError, match=r"num_blocks must be at most the number of samples N=5.*num_blocks=6"):
        htb.median_of_means(jnp.ones(5), 6)
    with pytest.raises(ValueError, match=r"at most the number of samples n=2.*num_blocks=3"):
        htb.median_of_means(jnp.ones(10), 3, 2)
    got = htb.median_of_means(jnp.ones((2, 10)), 3, jnp.array([2, 10]))  # row 0: n < B
    np.testing.assert_array_equal(np.isnan(np.asarray(got)), [True, False])


def test_an_integral_float_max_blocks_is_its_integer():
    # check_integer accepted max_blocks=2.0, then JAX failed on it as a shape, naming nothing.
    x = jnp.arange(12.0)
    assert htb.median_of_means(x, 2, max_blocks=2.0) == htb.median_of_means(x, 2, max_blocks=2) == 2.5  # the lower of 2.5, 8.5


@pytest.mark.parametrize("length", [40, 16])
def test_traced_blocks_and_lengths_one_program(length):
    # N = 40: every static branch and the prefix sums (blocks of 40); N = 16: branches up to 16
    # only (the block size is at most N), the first row's one block of 16 samples on the last.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, length))
    blocks = np.array([1, 2, 5, 7, 9, 3])
    lengths = np.minimum([40, 39, 10, 21, 40, 4], length)
    fn = jax.jit(lambda x, b, n: htb.median_of_means(x, b, n, max_blocks=9))
    got = np.asarray(fn(jnp.asarray(x), jnp.asarray(blocks), jnp.asarray(lengths)))
    want = [mom_reference(x[i, : lengths[i]], blocks[i]) for i in range(6)]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    if length == 40:  # op by op, the static branches and the prefix route (N = 16 takes no other op)
        with jax.disable_jit():
            eager = np.asarray(htb.median_of_means(jnp.asarray(x), jnp.asarray(blocks), jnp.asarray(lengths)))
        np.testing.assert_array_equal(got, eager)


def test_vmap_equals_loop():
    x = jnp.asarray(np.random.default_rng(2).standard_normal((5, 33)), jnp.float32)
    looped = np.array([float(htb.median_of_means(row, 4)) for row in x])
    np.testing.assert_array_equal(jax.vmap(lambda r: htb.median_of_means(r, 4))(x), looped)


def test_float32_agrees_with_float64_within_documented_bound():
    # |MoM_f32 - MoM_f64| <= 2^-24 (max_b mean_b |x| + |MoM|), up to float64 rounding.  B = 7, 25 and
    # 150 in one call per dtype (blocks of 42 samples by prefix sums, of 12 and 2 by static branches).
    rng = np.random.default_rng(3)
    x64 = rng.pareto(1.2, (200, 300)) - 5.0  # heavy tails, large values
    blocks = np.array([7, 25, 150])
    m64 = np.asarray(htb.median_of_means(jnp.asarray(x64)[:, None], jnp.asarray(blocks)))
    m32 = np.asarray(htb.median_of_means(jnp.asarray(x64, jnp.float32)[:, None], jnp.asarray(blocks)), np.float64)
    for j, b in enumerate(blocks):
        s = 300 // b
        scale = np.abs(x64[:, : b * s]).reshape(200, b, s).mean(-1).max(-1)
        bound = 2.0**-24 * (scale + np.abs(m64[:, j])) * (1 + 1e-9)
        assert np.all(np.abs(m32[:, j] - m64[:, j]) <= bound), b


def _chunked_block_sums(x, size, blocks, chunk):
    """Plain-Python block sums added as the static route documents: within a chunk, the block's
    samples one after the other in float64 (from the first); then onto the running sum, chunk by chunk."""
    sums = []
    for b in range(blocks):
        total = 0.0
        for start in range(0, len(x), chunk):
            part = None
            for t in range(max(b * size, start), min((b + 1) * size, start + chunk)):
                part = float(x[t]) if part is None else part + float(x[t])
            if part is not None:
                total = total + part
        sums.append(total)
    return np.array(sums)


def _exact_sum(samples):
    """The exact sum rounded once (math.fsum), with IEEE infinities: NaN for both signs."""
    if np.isnan(samples).any() or (np.isposinf(samples).any() and np.isneginf(samples).any()):
        return math.nan
    return math.fsum(samples)


@partial(jax.jit, static_argnums=(3, 4, 5, 6, 7))
def _stream_sums(x, size, blocks, chunk, steps, max_blocks, bound=None, lowest=1):
    """mom.stream_block_sums over ``steps`` chunks of ``x`` f[..., A, N]: the tests below give it
    the same shapes, so that they share the unbounded program."""
    return mom.stream_block_sums(lambda j: jax.lax.dynamic_slice_in_dim(x, j * chunk, chunk, -1), steps,
                                 size, blocks, chunk, max_blocks, bound, lowest)


def test_stream_block_sums_static_and_prefix_routes():
    # Block sizes on both sides of STATIC_BLOCK_SIZES (32), a 37-sample chunk that no block size
    # divides (blocks start inside a chunk and straddle two or three of them), an empty layout, and
    # infinities: +inf, -inf, both in one block (NaN).  Static rows must equal the plain-Python
    # additions in their documented order bit for bit (a shifted block edge, a lost or doubled
    # sample, a reordered sum all fail); prefix-sum rows equal the exact sums within their bound
    # C 2^-53 max|prefix| over a chunk of C = 37 samples, with the same infinities.
    size = np.array([[3, 33, 0], [32, 1, 5], [40, 7, 2]])
    blocks = np.array([[30, 4, 1], [4, 50, 18], [2, 13, 40]])
    chunk = 37
    rng = np.random.default_rng(5)
    # Magnitudes 2^-30 .. 2^30, so that float64 sums round and their order shows.
    x = (rng.standard_t(3.0, (2, 3, 4 * chunk)) * 2.0 ** rng.integers(-30, 31, (2, 3, 4 * chunk)))
    x = x.astype(np.float32)  # 2 leading rows (seeds)
    x[0, 0, 10] = np.inf  # row 0, layout s = 3: block 3; s = 33: block 0
    x[1, 2, 45] = -np.inf  # s = 40 and s = 7: blocks 1 and 6 hold both signs -> NaN; s = 2: block 22
    x[1, 2, 47] = np.inf  # s = 2: block 23
    steps = -(-int((size * blocks).max()) // chunk)
    assert mom.STATIC_BLOCK_SIZES == 32  # s = 33 and 40 take the prefix route
    got = _stream_sums(jnp.asarray(x), jnp.asarray(size), jnp.asarray(blocks), chunk, steps, 56)
    assert got.shape == (56, 3, 3, 2)
    got = np.asarray(got)
    for lead in range(2):
        for a in range(3):
            for g in range(3):
                s, b = int(size[a, g]), int(blocks[a, g])
                if s == 0:
                    np.testing.assert_array_equal(got[:, a, g, lead], 0.0)
                    continue
                row = x[lead, a].astype(np.float64)
                sums = got[:b, a, g, lead]
                if s <= 32:
                    want = _chunked_block_sums(row, s, b, chunk)
                    np.testing.assert_array_equal(sums, want, err_msg=f"{lead, a, g}")
                else:
                    want = np.array([_exact_sum(row[i * s:(i + 1) * s]) for i in range(b)])
                    np.testing.assert_array_equal(np.isfinite(sums), np.isfinite(want))
                    finite = np.isfinite(want)
                    np.testing.assert_array_equal(sums[~finite], want[~finite])
                    prefix = np.abs(np.cumsum(np.where(np.isfinite(row), row, 0.0).reshape(-1, chunk), -1)).max()
                    np.testing.assert_allclose(sums[finite], want[finite], rtol=0, atol=chunk * 2.0**-53 * prefix)
    assert np.isposinf(got[3, 0, 0, 0]) and np.isnan(got[6, 2, 1, 1]) and np.isnan(got[1, 2, 0, 1])
    assert np.isposinf(got[0, 0, 1, 0])
    assert np.isneginf(got[22, 2, 2, 1]) and np.isposinf(got[23, 2, 2, 1])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: htb.median_of_means(jnp.ones(10), 0), "num_blocks must be an integer >= 1"),
        (lambda: htb.median_of_means(jnp.ones(10), 2, 11), r"n must be an integer in \[0, 10\]; got n=11"),
        (lambda: jax.jit(lambda b: htb.median_of_means(jnp.ones(10), b))(2), "needs a static max_blocks"),
    ],
)
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_static_bound_on_block_sizes_compiles_fewer_branches_and_equals_any_size():
    # simulate compiles branches up to the schedule's largest block size rounded up to 4, 8, 16 or 32
    # (and no prefix-sum route): the sums must equal the unbounded program's, bit for bit.
    sizes = (1, 4, 5, 8, 9, 16, 17, 32, 33, 10**6)
    assert [mom.static_block_sizes(s) for s in sizes] == [4, 4, 8, 8, 16, 16, 32, 32, None, None]
    # The layouts, chunks and shapes of test_stream_block_sums_static_and_prefix_routes (whose
    # unbounded program this is), block sizes up to 8: blocks straddle the 37-sample chunks, an empty layout.
    size = np.array([[1, 3, 8], [5, 0, 7], [2, 4, 6]])
    blocks = np.array([[56, 11, 4], [6, 1, 5], [20, 30, 24]])
    chunk = 37
    x = jnp.asarray(np.random.default_rng(6).standard_cauchy((2, 3, 4 * chunk)), jnp.float32)

    def sums(bound):
        return np.asarray(_stream_sums(x, jnp.asarray(size), jnp.asarray(blocks), chunk, 4, 56, bound))

    unbounded = sums(None)
    np.testing.assert_array_equal(sums(8), unbounded)
    for a, g in np.ndindex(3, 3):  # and the documented additions (blocks of 4 and 6 straddle chunks)
        want = _chunked_block_sums(np.asarray(x[0, a], np.float64), size[a, g], blocks[a, g], chunk)
        np.testing.assert_array_equal(unbounded[: blocks[a, g], a, g, 0], want, err_msg=f"{a, g}")


def test_a_static_lower_bound_compiles_no_static_route_and_equals_any_size():
    # Where every nonzero block is longer than STATIC_BLOCK_SIZES (the empirical mean's one block),
    # simulate compiles no static branch: the sums must equal the unbounded program's, bit for bit
    # (the shapes of test_stream_block_sums_static_and_prefix_routes, whose program this is; blocks
    # straddle the 37-sample chunks, empty layouts).  A bound of 33 where a block of 32 occurs would
    # send it to the empty branch: the rounding keeps 1 there.
    assert [mom.static_smallest_block_size(s) for s in (0, 1, 32, 33, 10**6)] == [1, 1, 1, 33, 33]
    size = np.array([[33, 40, 0], [57, 0, 35], [148, 74, 36]])
    blocks = np.array([[4, 3, 1], [2, 1, 4], [1, 2, 4]])
    x = jnp.asarray(np.random.default_rng(7).standard_cauchy((2, 3, 4 * 37)), jnp.float32)
    unbounded = np.asarray(_stream_sums(x, jnp.asarray(size), jnp.asarray(blocks), 37, 4, 56))
    np.testing.assert_array_equal(np.asarray(_stream_sums(x, jnp.asarray(size), jnp.asarray(blocks), 37, 4, 56,
                                                          None, 33)), unbounded)
    assert np.all(unbounded[:, 0, 2] == 0.0) and np.all(unbounded[0, 2, 0] != 0.0)


@pytest.mark.parametrize("blocks", [7, 8])
def test_differentiable_median_is_the_sorted_element_and_its_derivative(blocks):
    # Reference: jnp.sort (stable) at rank ceil(B/2) and its derivative, and NumPy's stable argsort.
    # B = 7 and 8 (odd and even ranks), 12 columns: ties below, at and above the median (two-point
    # arms tie often; -0.0 ties +0.0), and NaN (sorted last).  Catches: the wrong rank (floor instead of ceil), a
    # median averaged at even B, the rank along the wrong axis, and a derivative given to another
    # of the tied blocks than the stable sort's (the first, say).
    rng = np.random.default_rng(blocks)
    means = rng.standard_normal((blocks, 3, 4))
    means[2, 0, 0] = means[5, 0, 0]  # a pair of ties
    means[:, 1, :] = np.round(means[:, 1, :])  # many ties, at the median too, -0.0 tying +0.0
    means[:, 2, 0] = 1.0  # all equal
    means[0, 2, 3] = means[1, 2, 2] = np.nan  # NaN is the largest
    x = jnp.asarray(means)
    rank = (blocks + 1) // 2
    weights = jnp.asarray(rng.standard_normal((3, 4)))

    @jax.jit  # one program for the value and both derivatives (not some hundred eager operations)
    def value_and_grads(m):
        grad = jax.grad(lambda m: jnp.sum(weights * mom.differentiable_median(m)))(m)
        sort_grad = jax.grad(lambda m: jnp.sum(weights * jnp.sort(m, axis=0)[rank - 1]))(m)
        return mom.differentiable_median(m), grad, sort_grad

    got, grad, sort_grad = (np.asarray(v) for v in value_and_grads(x))
    np.testing.assert_array_equal(got, np.sort(means, axis=0)[rank - 1])
    np.testing.assert_array_equal(np.asarray(grad), np.asarray(sort_grad))
    position = np.argsort(means, axis=0, kind="stable")[rank - 1]
    assert np.all(np.asarray(grad)[position, np.arange(3)[:, None], np.arange(4)] == weights)
    assert (means[:, 1, :] == np.sort(means, axis=0)[rank - 1][1]).sum() > 4  # ties at the median
