"""Alpha-stable arms: draws against scipy and an exact tail law, moments against the characteristic
function, the block law against explicit sums and the per-pull sampler, and its common random numbers."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

import htb_jax as htb
from conftest import count_calls
from htb_jax._src.distributions import stable as stable_module
from htb_jax._src.reward_table import block_words, standard_words
from htb_jax._src.smoothing import smoothed_regret

# KS at level 1e-3: sqrt(-log(5e-4) / 2) = 1.95 over sqrt(n) (two-sided, asymptotic).
KS_1E3 = 1.95


@pytest.fixture(scope="module", autouse=True)
def _s1():
    old = stats.levy_stable.parameterization
    stats.levy_stable.parameterization = "S1"
    yield
    stats.levy_stable.parameterization = old


def _words(seed, shape):
    return jax.random.bits(jax.random.key(seed), (*shape, 2), jnp.uint64)


# Draws from words, as a caller jits them: one program per words shape for every scalar-parameter
# Stable (op by op, each test's own shapes compiled ~60 small programs).  N_WORDS words everywhere.
N_WORDS = 3000
_from_bits = jax.jit(lambda d, w: (d.from_bits(w), d.standard_from_bits(w)))
_block_laws = jax.jit(lambda d, w, s: (d.block_mean_from_standard(d.standard_from_bits(w), s),
                                       d.block_sums_from_bits(w, s)))


@pytest.mark.parametrize("a,b", [(1.05, 0.7), (1.5, 0.0), (1.95, -1.0), (1.3, 1.0)])
def test_draws_follow_scipy_levy_stable_s1(a, b):
    # KS distance of 20000 draws from scipy's S1 CDF, taken over 48 sample quantiles (a lower bound
    # of the full statistic: scipy's CDF is a numerical integral per point), below the level-1e-3
    # critical value.  Nolan's S0 law in place of S1 is off by beta tan(pi a / 2) (12.7 scales at
    # a = 1.05, 0.7 scales at a = 1.3); a wrong S constant or angle B moves the quantiles too.
    n, loc, scale = 20_000, 0.3, 1.7
    d = htb.Stable(loc=loc, alpha=a, beta=b, scale=scale)
    x = np.sort(np.asarray(d.sample(jax.random.key(int(100 * a + 10 * b) + 7), (n,)), np.float64))
    idx = np.linspace(0, n - 1, 48).astype(int)
    cdf = stats.levy_stable.cdf(x[idx], a, b, loc=loc, scale=scale)
    distance = np.max(np.maximum(np.abs((idx + 1) / n - cdf), np.abs(idx / n - cdf)))
    assert distance < KS_1E3 / math.sqrt(n), distance


def _tail_words(seed, n, word1_random=True):
    """Words whose angle lies in the right tail, ``p < 2^-40`` (probability 2^-41 per draw)."""
    r = np.asarray(jax.random.bits(jax.random.key(seed), (n, 2), jnp.uint64))
    w0 = np.uint64(1 << 63) | (r[:, 0] >> np.uint64(40))
    return jnp.asarray(np.stack([w0, r[:, 1]], axis=-1))


@pytest.mark.parametrize("a,b", [(1.5, 0.5), (1.05, -0.7)])
def test_far_right_tail_below_1e_10_follows_the_exact_tail_law(a, b):
    # Conditioned on the angle's tail probability p < 2^-40 (an event of probability 2^-41, far below
    # 1e-10), Z = K (pi p)^(-1/a) W^(1 - 1/a) (1 + O(p)) with K^a = (1 + beta) sin(pi a / 2) (the
    # stable tail constant: P(Z > x) ~ Gamma(a) sin(pi a / 2) (1 + beta) x^-a / pi), so
    # Y = K^a Z^-a / (pi 2^-40) = U W^(1 - a), U uniform, with P(Y <= y) = y Gamma(a) P(a, w0)
    # + exp(-w0), w0 = y^(-1/(a-1)).  Here scipy's CDF has no accuracy left (1 - 1e-12), so the
    # reference is this law.  Uniforms on a 2^-24 grid would put every p of the event at one value
    # (Y constant); a wrong S constant or sin(theta_+) scales Y: both fail the KS test.
    n = N_WORDS
    d = htb.Stable(loc=0.0, alpha=a, beta=b)
    k_a = (1.0 + b) * math.sin(math.pi * a / 2)

    def reference(y):
        with np.errstate(over="ignore"):  # w0 = inf where y is tiny: P(a, inf) = 1, exp(-inf) = 0
            w0 = y ** (-1.0 / (a - 1.0))
        return y * special.gamma(a) * special.gammainc(a, w0) + np.exp(-w0)

    words = _tail_words(int(10 * a), n)
    for z in _from_bits(d, words):
        z = np.asarray(z, np.float64)
        assert np.all(z > 1e6)
        y = k_a * z ** (-a) / (math.pi * 2.0**-40)
        assert stats.kstest(y, reference).pvalue > 1e-3


def test_cut_off_side_and_gaussian_limit_have_no_spurious_tail():
    # beta = -1 has no right power tail: at p -> 0 on the right the draw stays bounded (a rounded
    # sin(theta_+) of 1e-16 would give |Z| ~ 1e-8 (pi p)^(-1/a)).  alpha = 2 is N(0, 2): the draws
    # at p < 2^-40 are 2 sin(V) sqrt(W) exactly, |Z| <= 2 sqrt(45).
    words = _tail_words(3, N_WORDS)
    for d in (htb.Stable(loc=0.0, alpha=1.5, beta=-1.0), htb.Stable(loc=0.0, alpha=2.0, beta=0.8)):
        for z in _from_bits(d, words):
            z = np.asarray(z)
            assert np.all(np.isfinite(z)) and np.max(np.abs(z)) < 20.0
    w = np.asarray(words[:, 1])
    small = (w & np.uint64(2**63 - 1)).astype(np.float64) * 2.0**-64 + 2.0**-65
    expo = np.where(w >> np.uint64(63) == 1, -np.log1p(-small), -np.log(small))
    z = np.asarray(_from_bits(htb.Stable(loc=0.0, alpha=2.0, beta=0.8), words)[1])
    np.testing.assert_allclose(z, 2.0 * np.sqrt(expo), rtol=2.0**-18)


def _weron_reference(words, a, b):
    """Standard S1 variates from the same words, Weron's formula in plain NumPy float64."""
    words = np.asarray(words)

    def side_small(w):
        return w >> np.uint64(63) == 1, (w & np.uint64(2**63 - 1)).astype(np.float64) * 2.0**-64 + 2.0**-65

    s, p = side_small(words[..., 0])
    v = np.where(s, 1.0, -1.0) * (np.pi / 2 - np.pi * p)
    up, q = side_small(words[..., 1])
    w = np.where(up, -np.log1p(-q), -np.log(q))
    t = np.tan(np.pi * a / 2)
    big_b = np.arctan(b * t) / a
    big_s = (1 + b * b * t * t) ** (1 / (2 * a))
    return (big_s * np.sin(a * (v + big_b)) / np.cos(v) ** (1 / a)
            * (np.cos(v - a * (v + big_b)) / w) ** ((1 - a) / a))


@pytest.mark.parametrize("a,b", [(1.2, 0.6), (1.7, -1.0), (2.0, 0.0)])
def test_draws_equal_weron_formula_on_the_same_words(a, b):
    # The boundary-expanded angles are Weron's S1 formula rewritten; the float32 draw (a reward and
    # its standard variate alike) is within 2^-18 of max(|Z|, 1): Z = sin(theta) exp(log|Z|) with |log|Z||
    # up to ~45, whose float32 rounding is 2^-18 relative at most (measured: 51 ulps at a = 1.05).
    # A draw from the other side's constants, or a wrong exponent, is off by far more.
    words = _words(5, (N_WORDS,))
    want = _weron_reference(words, float(np.float32(a)), float(np.float32(b)))  # the parameters as float32
    d = htb.Stable(loc=0.0, alpha=a, beta=b)
    rewards, standard = _from_bits(d, words)
    for got in (standard, rewards):
        got = np.asarray(got, np.float64)
        assert np.all(np.abs(got - want) <= 2.0**-18 * np.maximum(np.abs(want), 1.0))
    np.testing.assert_array_equal(standard, rewards)


def _moment_by_characteristic_function(r, a, b, loc, scale):
    """E|X|^r = 2 Gamma(1 + r) sin(pi r / 2) / pi int_0^inf (1 - Re phi(t)) t^(-1-r) dt (0 < r < 2)."""
    zeta = b * math.tan(math.pi * a / 2)

    def integrand(t):
        decay = (scale * t) ** a
        g = loc * t + decay * zeta
        return (-math.expm1(-decay) + math.exp(-decay) * 2.0 * math.sin(g / 2) ** 2) * t ** (-1.0 - r)

    total = sum(integrate.quad(integrand, lo, hi, limit=400, epsabs=0.0, epsrel=1e-12)[0]
                for lo, hi in ((0.0, 1e-3), (1e-3, 1.0), (1.0, 30.0), (30.0, np.inf)))
    return 2.0 * special.gamma(1 + r) * math.sin(math.pi * r / 2) / math.pi * total


def _centred_moment(r, a, b, scale):
    """E|scale Z|^r of a centred S1 law in closed form (Zolotarev; Nolan, Stable Distributions,
    Thm 3.6): (1 + t^2)^(r/2a) Gamma(1 - r/a) cos(r/a arctan t) / (Gamma(1 - r) cos(pi r/2)),
    t = beta tan(pi a/2), for -1 < r < a, r != 1."""
    t = b * math.tan(math.pi * a / 2)
    return (scale**r * (1 + t * t) ** (r / (2 * a)) * special.gamma(1 - r / a) * math.cos(r / a * math.atan(t))
            / (special.gamma(1 - r) * math.cos(math.pi * r / 2)))


def test_abs_moment_evaluates_one_copy_of_the_inner_mean(monkeypatch):
    # The outer integral's eight pieces (two sides, four pieces each) share one copy of the inner
    # mean over W in the program, evaluated a piece at a time: with a copy per piece the program
    # compiled in 2.7 s instead of 1.0 s, and 100 arms held 864 MiB of temporaries instead of 157.
    # Traced only.
    inner = count_calls(monkeypatch, stable_module, "_abs_moment_by_quadrature")
    law = htb.Stable(loc=jnp.array([0.0, 0.5]), alpha=1.6, beta=0.3)
    jax.make_jaxpr(lambda eps: law._abs_moment(eps))(0.4)
    assert len(inner) == 1


def test_abs_moment_against_the_characteristic_function():
    # E|loc + scale Z|^(1+eps) with loc != 0 by quadrature over the draw's representation, against an
    # independent route: the characteristic function's integral (scipy quad, relative 1e-9).  Also
    # at 1 + eps close to alpha (r = 1.45, a = 1.5), where the moment is large and the outer tail
    # carries it.  alpha = 2: N(loc, 2 scale^2), against the Gaussian family.  Centred laws (loc = 0)
    # against their closed form, relative 1e-13 (measured 2e-14 or less): for beta != 0 the integrand
    # has a kink inside a side, which the quadrature splits at (unsplit, row 3's last lane is 7e-7
    # off); at r = 1.3, a = 1.31 (row 0's last lane) the outer tail runs to delta = e^-10000, where
    # |K|^r overflows unless factored out (dropped, 4e-3 of the moment).  Every case is a lane of
    # one batch: rows of three arms with one eps per row, the shape that intrinsic_scale (max over the
    # arms of a row) compiles, so both read one quadrature program.  Row 0's locations are
    # equal_gap(Stable(0, 1.5), 3, 0.5)'s, at eps = 0.3; r = alpha at row 1's middle is inf.
    eps = np.array([0.3, 0.5, 0.2, 0.45])
    rows = [[(1.5, 0.0, 0.5, 1.0), (1.5, 0.0, 0.0, 1.0), (1.31, 0.0, 0.0, 1.0)],  # (alpha, beta, loc, scale)
            [(1.8, 0.5, 0.8, 0.7), (1.5, 0.0, 0.0, 1.0), (1.7, -0.3, 0.5, 2.0)],
            [(1.3, -1.0, -2.0, 1.5), (2.0, 0.3, 0.5, 1.0), (1.9, 1.0, -1.0, 0.5)],
            [(1.5, 0.7, 1.0, 1.0), (1.6, -0.5, -0.5, 1.2), (1.6, -1.0, 0.0, 2.0)]]
    a, b, loc, scale = np.moveaxis(np.array(rows), -1, 0)  # [4, 3] each
    d = htb.Stable(loc=loc, alpha=a, beta=b, scale=scale)
    got = np.asarray(d.abs_moment(eps[:, None]))
    cf = [(i, j) for i in range(4) for j in range(3) if (i, j) not in ((1, 1), (2, 1))]
    want = [_moment_by_characteristic_function(1 + eps[i], a[i, j], b[i, j], loc[i, j], scale[i, j]) for i, j in cf]
    np.testing.assert_allclose([got[i, j] for i, j in cf], want, rtol=1e-9)
    centred = [(0, 1), (0, 2), (3, 2)]
    np.testing.assert_allclose([got[i, j] for i, j in centred],
                               [_centred_moment(1 + eps[i], a[i, j], b[i, j], scale[i, j]) for i, j in centred], rtol=1e-13)
    np.testing.assert_allclose(got[2, 1], htb.Gaussian(0.5, math.sqrt(2.0)).abs_moment(0.2), rtol=1e-9)
    assert got[1, 1] == np.inf
    np.testing.assert_array_equal(d.eps_sup(), np.where(a < 2, a - 1, np.inf))
    np.testing.assert_array_equal(d.mean(), loc)
    np.testing.assert_allclose(htb.intrinsic_scale(d, eps), np.max(got, -1) ** (1 / (1 + eps)), rtol=1e-15)
    nu = htb.equal_gap(htb.Stable(loc=0.0, alpha=1.5), num_arms=3, gap=0.5)
    np.testing.assert_array_equal(np.asarray(nu.loc), loc[0])


@pytest.mark.parametrize("a,b", [(1.3, 0.5), (1.8, -1.0)])
def test_block_mean_law_equals_explicit_sums(a, b):
    # loc + scale s^(1/a - 1) Z against the means of s per-pull draws (two-sample KS, 3000 blocks,
    # level 1e-3).  s = 128 at a = 1.3: exponent -1/2 in place of 1/a - 1 shrinks the spread 3.7x;
    # the S0 location would move the mean by beta scale (s^(1/a-1) - 1) tan(pi a / 2).
    # One draw of 128 pulls per block, whose first s pulls make the block of s (one compiled
    # sampler), and the block laws from words jitted with the size traced (one program).
    n, loc, scale = N_WORDS, -0.4, 1.3
    d = htb.Stable(loc=loc, alpha=a, beta=b, scale=scale)
    pulls = np.asarray(d.sample(jax.random.key(128), (n, 128)), np.float64)
    for s in (2, 16, 128):
        draws = pulls[:, :s].mean(axis=1)
        block, sums = (np.asarray(v) for v in _block_laws(d, _words(1000 + s, (n,)), float(s)))
        np.testing.assert_allclose(sums, s * block, rtol=1e-12)
        assert stats.ks_2samp(draws, block).pvalue > 1e-3, s


# Two arms of different (alpha, beta), a grid of two exploration lengths, T = 10^6 (B = 338 blocks):
# the block sums' estimates serve the per-pull and the order-statistic laws (one program).
TWO_ARMS = htb.Stable(loc=jnp.array([0.3, 0.0]), alpha=jnp.array([1.5, 1.2]), beta=jnp.array([0.6, -1.0]), scale=2.0)
TWO_POLICY = htb.AdaRETC(eps=0.5, alpha=jnp.array([0.75, 0.8]), q=0.0)


@functools.cache
def _two_arm_block_sums():
    return htb.simulate(jax.random.key(9), TWO_POLICY, TWO_ARMS, 10**6, 1500, sampler="block_sums")


def test_median_of_means_law_against_the_per_pull_sampler():
    # simulate's estimates with B standard draws per arm against the reward table read pull by pull:
    # T = 10^6, K = 2, AdaRETC(0.5, [0.75, 0.8], 0): B = 338 blocks of 47 pulls at grid point 0 (6 at
    # point 1: a wrong exponent, -1/2 for 1/a - 1 = -1/3 and -1/6, shrinks the estimates' spread
    # 47^(1/6) = 1.9x and 47^(1/3) = 3.6x at point 0); two-sample KS per arm and grid point, 1500 against 300
    # seeds, level 1e-3.
    block = _two_arm_block_sums()
    pulls = htb.simulate(jax.random.key(8), TWO_POLICY, TWO_ARMS, 10**6, 300, sampler="per_pull")
    for g in range(2):
        for arm in range(2):
            assert stats.ks_2samp(block.estimates[g, :, arm], pulls.estimates[g, :, arm]).pvalue > 1e-3, (g, arm)
    np.testing.assert_array_equal(block.exploration[:, 0], pulls.exploration[:, 0])


# Three arms, a grid of two exploration lengths, T = 10^4 and 10^18, 3 seeds: one simulate program
# for the plain reference and smoothed_regret.
A3, B3, SCALE3 = 1.4, 0.3, 0.8
THREE_ARMS = htb.equal_gap(htb.Stable(loc=0.0, alpha=A3, beta=B3, scale=SCALE3), num_arms=3, gap=0.2)
THREE_POLICY = htb.AdaRETC(eps=0.5, alpha=jnp.array([0.8, 0.9]), q=0.0)
THREE_HORIZONS, THREE_SEEDS = [10**4, 10**18], 3


@functools.cache
def _three_arm_run():
    return htb.simulate(jax.random.key(4), THREE_POLICY, THREE_ARMS, THREE_HORIZONS, THREE_SEEDS)


# standard_words of every seed at once, jitted (op by op it compiled ~60 small programs).
_standard_words = jax.jit(jax.vmap(standard_words, (0, None, None, None)), static_argnums=(1, 2, 3))


def test_estimates_equal_a_plain_reference_on_the_same_words_and_keep_common_numbers():
    # The estimate of arm i under seed s is loc + scale s_i^(1/a-1) med(Z_0..Z_(B-1)) with Z from the
    # standard words of seed s (Weron's formula in NumPy on the same words, float64): the same numbers for
    # every grid point and horizon that has the same B.  auto takes this sampler.
    a, b, scale, nu = A3, B3, SCALE3, THREE_ARMS
    key, horizons, seeds = jax.random.key(4), THREE_HORIZONS, THREE_SEEDS
    out = _three_arm_run()
    same = htb.simulate(key, THREE_POLICY, nu, horizons, seeds, sampler="block_sums")
    np.testing.assert_array_equal(out.estimates, same.estimates)
    keys = htb.seed_keys(key, seeds)
    locs = np.asarray(nu.loc, np.float32).astype(np.float64)
    # Block b's words do not depend on how many blocks are drawn: the largest B's serve both.
    words = _standard_words(keys, 3, max(int(htb.num_blocks(3, horizon)) for horizon in horizons), 2)  # [S, B, K, 2]
    for g in range(2):
        for h, horizon in enumerate(horizons):
            blocks = int(htb.num_blocks(3, horizon))
            for s in range(seeds):
                length = int(out.exploration[g, h, s])
                sizes = np.asarray(htb.exploration_pulls(length, 3)) // blocks
                z = _weron_reference(words[s, :blocks], a, b)  # [B, K]
                med = np.sort(z, axis=0)[(blocks + 1) // 2 - 1]
                want = (locs + np.float64(np.float32(scale)) * sizes.astype(np.float64) ** (1 / np.float64(np.float32(a)) - 1) * med)
                # Z in float32 within 2^-18 max(|Z|, 1) of the float64 formula (the draw's accuracy).
                tol = 2.0**-18 * scale * sizes ** (1 / a - 1) * np.maximum(np.abs(med), 1.0) + 2.0**-23
                assert np.all(np.abs(out.estimates[g, h, s] - want) <= tol)


def test_order_statistic_law_small_blocks_and_common_numbers():
    # sampler="order_statistic": loc + scale s^(1/a-1) Q(U) with the tabulated quantile Q, one level
    # per seed, arm and B.  Two arms of different (a, beta), so each arm must find its own table:
    # two-sample KS per arm against the block sums (B = 338 standard draws per arm), 1500 seeds each,
    # level 1e-3.  The standardized estimates have median near Q(1/2) and spread about 1/sqrt(B):
    # beta of the wrong sign, the other arm's table or Q(1 - U) move them by many spreads.
    # The memory plan bounds the compiled program's own peak (temp + outputs + arguments), at a budget
    # that forces chunks (an estimate per arm and horizon only, not per configuration, is below it);
    # simulate then runs the program the plan compiled, in those chunks (T = 10^6 is horizon 1).
    nu, policy = TWO_ARMS, TWO_POLICY
    budget = 2**22
    options = dict(sampler="order_statistic", memory_budget=budget, devices=jax.devices()[:1], threads=1)
    plan = htb.memory_plan(jax.random.key(8), policy, nu, [10**3, 10**6], 1500, measure=True, **options)
    assert plan.num_chunks > 1 and plan.measured_peak <= budget
    table = htb.simulate(jax.random.key(8), policy, nu, [10**3, 10**6], 1500, **options)
    estimates, exploration = np.asarray(table.estimates)[:, 1], np.asarray(table.exploration)[:, 1]  # [G, S, K], [G, S]
    draws = _two_arm_block_sums()
    for arm in range(2):
        assert stats.ks_2samp(estimates[0, :, arm], draws.estimates[0, :, arm]).pvalue > 1e-3, arm
    # Common random numbers: both grid points read each seed's level, so their standardized
    # estimates are one z (on a CPU, to the float32 rounding of the two estimates: 2^-24 |m| / factor
    # each).  On an NVIDIA H100 (jax 0.11.2) the two z of arm 1 differed by more than those roundings
    # allow (by up to 2.6e-7 at |z| = 2.4 in the rows shown; cause not found): off a CPU they are held
    # to 16 times them, 2^-20 |m| / factor, still about 10^4 below the spread 1/sqrt(B) = 0.05 that a
    # level drawn per grid point would put between them.
    sizes = exploration[:, 0] // 2 // int(htb.num_blocks(2, 10**6))
    expo = 1.0 / np.array([1.5, 1.2], np.float32).astype(np.float64) - 1.0  # of the float32 alpha, as simulate
    factor = 2.0 * sizes[:, None].astype(np.float64) ** expo  # [G, K]
    z = (estimates.astype(np.float64) - np.array([0.3, 0.0], np.float32)) / factor[:, None]
    assert sizes[0] != sizes[1]
    bound = 2.0**-24 * np.abs(estimates.astype(np.float64)) / factor[:, None]  # [G, S, K]
    gap, roundings = np.abs(z[1] - z[0]), bound[0] + bound[1]  # [S, K]; gap at most 0.92 roundings on a CPU
    allowed = 1.0 if jax.default_backend() == "cpu" else 16.0
    assert np.all(gap <= allowed * roundings), (
        f"|z1 - z0| / roundings, largest per arm: {(gap / roundings).max(axis=0)}"  # on failure only
    )
    # B <= SMALL_BLOCKS (the empirical mean: B = 1, a uniform level) is drawn, bit for bit as the
    # block sums draw it; from the table, the level would be clipped to [2^-20, 1 - 2^-20].
    etc = htb.EmpiricalETC(eps=0.5, alpha=0.75, q=0.0)
    np.testing.assert_array_equal(htb.simulate(jax.random.key(3), etc, nu, 10**4, 50, sampler="order_statistic").estimates,
                                  htb.simulate(jax.random.key(3), etc, nu, 10**4, 50, sampler="block_sums").estimates)
    with pytest.raises(ValueError, match=r"sampler='order_statistic' on Stable arms needs concrete alpha and beta"):
        jax.jit(lambda a: htb.Stable(0.0, a).quantile_tables())(1.5)
    with pytest.raises(ValueError, match=r"got Stable \(its quantile table is simulate's alone: use sampler='block_sums'\)\.$"):
        htb.regret_at_lengths(jax.random.key(0), nu, 10**6, 4, [10**5], sampler="order_statistic")


def test_block_words_keep_word_zero_and_smoothed_regret_equals_simulate():
    # Two words per block leave word 0 (every other family's block sums) bit for bit.  smoothed_regret
    # with the standard medians is simulate's mean regret exactly (T = 10^18, 2 10^7 and 84 pulls per block),
    # jitted once, as callers do (op by op, the same comparison took 6 s more).
    key = jax.random.key(2)
    size = jnp.array([[3, 7], [5, 1]], jnp.int64)
    two, one = jax.jit(lambda k, s: (block_words(k, s, 4, 2)[..., 0], block_words(k, s, 4)))(key, size)
    np.testing.assert_array_equal(two, one)
    r = jax.jit(smoothed_regret, static_argnums=(3, 4))(jax.random.key(4), THREE_POLICY, THREE_ARMS, 10**18, THREE_SEEDS, 0.01)
    np.testing.assert_array_equal(r, _three_arm_run().regret.mean(-1)[:, 1])


def test_parameters_are_checked():
    for kwargs, message in [
        (dict(loc=0.0, alpha=1.0), r"Stable alpha must lie in \(1, 2\]"),
        (dict(loc=0.0, alpha=2.1), r"Stable alpha must lie in \(1, 2\]"),
        (dict(loc=0.0, alpha=1.5, beta=1.5), r"Stable beta must lie in \[-1, 1\]"),
        (dict(loc=0.0, alpha=1.5, scale=0.0), r"Stable scale must lie in \(0, inf\)"),
    ]:
        with pytest.raises(ValueError, match=message):
            htb.Stable(**kwargs)
    d = htb.Stable(loc=0.0, alpha=1.5).shifted(0.25)
    assert isinstance(d, htb.Stable) and float(d.loc) == 0.25
    with pytest.raises(NotImplementedError, match="levy_stable"):
        d.cdf(0.0)
