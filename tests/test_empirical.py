"""The empirical law of observed rewards: its index rule, its reads by every path, its law and moments."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_engine import _hash_reference, _HashReads, _reported_hashes

import htb_jax as htb
from htb_jax._src.bits import threefry_words

# Three arms of different lengths, values that float32 does not represent (0.1 steps), repeated values.
_RNG = np.random.default_rng(5)
SAMPLES = [
    _RNG.pareto(1.5, 50) * 0.1,
    np.round(_RNG.standard_t(2.5, 37), 1) + 0.3,
    np.array([0.1, 0.1, 0.7, -2.3, 1e3]),
]


@pytest.fixture(scope="module")
def nu():
    return htb.Empirical.from_samples(SAMPLES, shift=np.array([0.0, 0.05, -0.2]))


def _reference(words, arm, shift):
    """The index rule in Python integers: observation floor(w n / 2^64) of the sorted float32 data, plus
    the shift in float32."""
    data = np.sort(np.asarray(SAMPLES[arm], np.float32))
    index = [(int(w) * data.size) >> 64 for w in np.asarray(words).ravel()]
    return (data[index] + np.float32(shift)).reshape(np.shape(words))


def test_reward_table_applies_the_index_rule_to_every_familys_words(nu):
    """The table equals the rule applied to the words every family reads (threefry of (arm, pull) under
    the seed's key).  Catches an index from the high word alone (``(h n) >> 32``, off by one near
    the boundaries of the n intervals), unsorted data, or another arm's word or run."""
    key = htb.seed_keys(jax.random.key(3), 2)[1]
    table = np.asarray(htb.reward_table(key, nu, 300))
    shift = [0.0, 0.05, -0.2]
    for arm in range(3):
        words = threefry_words(key, arm, jnp.arange(300, dtype=jnp.uint32))
        np.testing.assert_array_equal(table[arm], _reference(words, arm, shift[arm]))
    # Words at the ends of the n intervals {w : floor(w n / 2^64) = i}: the first of each and the
    # last of the one before, where a rule that drops the low word's carry is off by one.
    one = htb.Empirical.from_samples(SAMPLES[1])
    n = SAMPLES[1].size
    firsts = [-(-(i << 64) // n) for i in range(1, n)]
    edges = np.array([0, 2**64 - 1, *firsts, *(f - 1 for f in firsts)], np.uint64)
    got = np.asarray(one.from_bits(jnp.asarray(edges)[:, None]))
    np.testing.assert_array_equal(got, _reference(edges, 1, 0.0))


def test_simulate_reads_the_reward_table_on_the_fast_path_and_in_the_engine(nu):
    """AdaR-ETC's per-pull fast path (chosen by ``sampler="auto"``) gives ``run_on_rewards``'s
    outcome on ``reward_table``'s rewards; the round-by-round engine reads every reward of the table
    bit for bit (a hash of every read, as tests/test_engine.py checks the other families; a gather
    and one addition leave no rounding to the vector width, so one seed chunk, 2, is enough).  Catches an engine or fast path that read another arm's run or pull."""
    key, horizon = jax.random.key(9), 300  # 300 pulls: reward_table's program of the first test
    policy = htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0)
    fast = htb.simulate(key, policy, nu, horizon, 1)
    table = htb.reward_table(htb.seed_keys(key, 1)[0], nu, horizon)
    reference = htb.run_on_rewards(policy, table, nu.mean(), horizon)
    np.testing.assert_array_equal(np.asarray(fast.regret)[..., 0], np.asarray(reference.regret))
    np.testing.assert_array_equal(np.asarray(fast.pulls)[..., 0, :], np.asarray(reference.pulls))
    seeds = 4
    keys = htb.seed_keys(key, seeds)
    want = [
        _hash_reference(np.asarray(htb.reward_table(keys[s], nu, horizon)), horizon) for s in range(seeds)
    ]
    out = htb.simulate(key, _HashReads(), nu, horizon, seeds, seed_chunk=2)
    assert _reported_hashes(out).tolist() == want


def test_draws_follow_the_empirical_cdf():
    """Kolmogorov-Smirnov: 10^5 draws of the 50-point arm against its empirical CDF at every atom.
    For a discrete law the statistic is stochastically smaller than for a continuous one, so the
    continuous 1% critical value 1.63 / sqrt(m) = 0.0052 is conservative.  Catches draws that
    never reach the largest observation (n - 1 in place of n: a jump of 1/50 missing) or that read
    past the arm's run."""
    arm = htb.Empirical.from_samples(SAMPLES[0])
    m = 10**5
    draws = np.sort(np.asarray(arm.sample(jax.random.key(11), (m,))))
    atoms = np.sort(np.asarray(SAMPLES[0], np.float32))
    empirical = np.searchsorted(draws, atoms, side="right") / m
    law = np.asarray(arm.cdf(atoms.astype(np.float64)))
    # count / n, up to one rounding (XLA may multiply by 1 / n)
    np.testing.assert_allclose(law, np.searchsorted(atoms, atoms, side="right") / atoms.size, rtol=2**-52)
    assert np.max(np.abs(empirical - law)) < 1.63 / math.sqrt(m)


def test_moments_are_the_averages_over_the_float32_observations(nu):
    """``mean`` and ``abs_moment`` are averages over each arm's float32 observations plus the float32
    shift, against math.fsum in NumPy; ``cdf`` is the fraction at or below.  Tolerance: a float64
    sum of n <= 50 terms errs by at most n 2^-53 of the sum of their magnitudes (the bound used
    here, 1e-14 relative to the average magnitude).  Catches averages over the unrounded float64
    data (off by about 1e-9 relative), over the padded run of the longest arm, or a shift added
    in float64."""
    shift = np.float32([0.0, 0.05, -0.2])
    draws = [np.asarray(s, np.float32) + shift[i] for i, s in enumerate(SAMPLES)]
    eps = np.array([0.2, 0.5, 1.0])
    mean, moments = np.asarray(nu.mean()), np.asarray(nu.abs_moment(eps[:, None]))
    assert moments.shape == (3, 3)
    for i, d in enumerate(draws):
        d = d.astype(np.float64)
        size = np.mean(np.abs(d))
        assert abs(mean[i] - math.fsum(d) / d.size) <= 1e-14 * size
        for e, r in enumerate(1.0 + eps):
            want = math.fsum(np.abs(d) ** r) / d.size
            assert abs(moments[e, i] - want) <= 1e-14 * want
        assert np.asarray(nu.cdf(0.1))[i] == pytest.approx(np.mean(d <= 0.1), rel=2**-52)
    assert np.asarray(nu.eps_sup()).tolist() == [math.inf] * 3
    scale = float(htb.intrinsic_scale(nu, 0.5))
    assert scale == pytest.approx(float(np.max(moments[1])) ** (1 / 1.5), rel=1e-15)


def test_table_construction_indexing_and_equal_gap_give_the_same_laws(nu):
    """``from_table`` with padding equals ``from_samples``; ``nu[i]`` is arm i's law; ``equal_gap``
    of one arm's data shifts arm 0 by the gap in float32; the law is a pytree that ``jit`` and
    ``vmap`` see through, and equal data compare equal (shared programs).  Catches padding read as
    data, an index that loses the static data, a ``broadcast`` that drops the shift, or data that
    compare equal by their pooled values alone (a program gathering 2 values per arm reused for an
    arm of 3)."""
    lengths = [s.size for s in SAMPLES]
    table = np.full((3, max(lengths)), np.nan)
    for i, s in enumerate(SAMPLES):
        table[i, : s.size] = s
    padded = htb.Empirical.from_table(table, lengths, shift=np.array([0.0, 0.05, -0.2]))
    assert jax.tree_util.tree_structure(padded) == jax.tree_util.tree_structure(nu)
    # A shift given as a list is an array, as the other laws' parameters are (every consumer refused the list).
    listed = htb.Empirical.from_table(table, lengths, shift=[0.0, 0.05, -0.2])
    assert jax.tree_util.tree_structure(listed) == jax.tree_util.tree_structure(nu)
    # The same pooled values in runs of other lengths: another structure, so another program.
    assert htb.Empirical.from_samples([[1.0, 2.0], [3.0, 4.0]]).mean().tolist() == [1.5, 3.5]
    assert htb.Empirical.from_samples([[1.0], [2.0, 3.0, 4.0]]).mean().tolist() == [1.0, 3.0]
    key = jax.random.key(1)
    np.testing.assert_array_equal(htb.reward_table(key, padded, 300), htb.reward_table(key, nu, 300))
    assert float(nu[1].mean()) == float(nu.mean()[1])
    words = jax.random.bits(key, (64, 3, 1), jnp.uint64)
    np.testing.assert_array_equal(nu[..., 1:].from_bits(words[:, 1:]), nu.from_bits(words)[:, 1:])
    gapped = htb.equal_gap(htb.Empirical.from_samples(SAMPLES[2]), num_arms=3, gap=0.5)
    base = np.asarray(SAMPLES[2], np.float32)
    assert np.asarray(gapped.mean()).tolist() == [
        np.mean((base + np.float32(0.5)).astype(np.float64)),
        np.mean(base.astype(np.float64)),
        np.mean(base.astype(np.float64)),
    ]
    means = jax.jit(jax.vmap(lambda s: htb.Empirical.from_samples(SAMPLES[2], shift=s).mean()))(
        jnp.arange(3.0)
    )
    np.testing.assert_allclose(means, np.mean(base) + np.arange(3.0), rtol=1e-6)


@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda: htb.Empirical.from_samples([[1.0, 2.0], []]),
            ValueError,
            r"samples\[1\] must hold at least one",
        ),
        (lambda: htb.Empirical.from_samples([]), ValueError, r"samples must hold at least one"),
        (
            lambda: htb.Empirical.from_samples([1.0, np.nan]),
            ValueError,
            r"samples must hold finite .*samples\[1\]=nan",
        ),
        (lambda: htb.Empirical.from_samples([[1.0], [np.inf]]), ValueError, r"samples\[1\] must hold finite"),
        (
            lambda: htb.Empirical.from_samples([1.0, 1e39]),
            ValueError,
            r"samples must lie in \[-3.40282\d*e\+38",
        ),
        (
            lambda: htb.Empirical.from_samples(1.0),
            ValueError,
            r"samples must be a one-dimensional .*shape \(\)",
        ),
        (
            lambda: htb.Empirical.from_samples(np.zeros((2, 2, 2))),
            ValueError,
            r"one-dimensional .*shape \(2, 2, 2\)",
        ),
        (
            lambda: htb.Empirical.from_samples([np.zeros(3), np.zeros((2, 2))]),
            ValueError,
            r"samples\[1\] must be a one-dimensional .*shape \(2, 2\)",
        ),
        (lambda: htb.Empirical.from_samples(["a", "b"]), TypeError, r"samples must be observed rewards"),
        (lambda: htb.Empirical.from_samples([1.0], shift=np.inf), ValueError, r"Empirical shift must lie in"),
        # each accepted, then drawn as inf (the mean and the reward table inf, nothing said)
        (
            lambda: htb.Empirical.from_samples([[3e38, 0.0], [1.0, 2.0]], shift=[1e38, 0.0]),
            ValueError,
            r"^Empirical shift moves an observation beyond the float32 range of the rewards: 3e\+38 \+ shift 1e\+38 is "
            r"inf; give a smaller shift \(or gap\), or observations nearer 0\.$",
        ),
        (
            lambda: htb.equal_gap(htb.Empirical.from_samples([-1.0, 3e38]), 3, gap=1e38),
            ValueError,
            r"^Empirical shift moves an observation beyond the float32 range of the rewards: 3e\+38 \+ shift 1e\+38",
        ),
        # drawn as 0, which is none of the observations (XLA's CPU code flushes subnormal floats to 0)
        (
            lambda: htb.Empirical.from_samples([[1.0, 3e-39], [1.0, 2.0]]),
            ValueError,
            r"^samples\[0\] must hold 0 or rewards of absolute value at least 1.1754944e-38 \(the least normal float32: "
            r"smaller ones are flushed to 0 when drawn\); got samples\[0\]\[1\]=3e-39; rescale the data\.$",
        ),
        # the largest float32, printed as the bound, was refused as beyond it, "would be inf"
        (
            lambda: htb.Empirical.from_samples([1.0, 3.4028236e38]),
            ValueError,
            r"^samples must lie in \[-3.4028235e\+38, 3.4028235e\+38\] \(rewards are float32, in which a larger value "
            r"is inf\); got samples=3.4028236e\+38\.$",
        ),
        (
            lambda: htb.Empirical(2.0, 3.0, 0.0, data=htb.Empirical.from_samples([1.0, 2.0, 3.0]).data),
            ValueError,
            r"^Empirical start \+ size must be at most the 3 pooled observations; got start=2, size=3\.$",
        ),
        (
            lambda: htb.Empirical.from_table(np.zeros((2, 3)), [1, 4]),
            ValueError,
            r"counts must be .*\[1, 3\].*got counts=4",
        ),
        (
            lambda: htb.Empirical.from_table(np.zeros((2, 3)), [1, 2, 3]),
            ValueError,
            r"counts must hold one count per row",
        ),
        (
            lambda: htb.Empirical.from_table(np.zeros(3), [1]),
            ValueError,
            r"values must be a table f\[K, n_max\]",
        ),
        (  # no arm: NumPy's "need at least one array to concatenate"; no column: counts "in [1, 0]"
            lambda: htb.Empirical.from_table(np.zeros((0, 3)), np.zeros(0, int)),
            ValueError,
            r"values must be a table f\[K, n_max\] of observed rewards, K >= 1 arms of n_max >= 1; got shape \(0, 3\)\.",
        ),
        (
            lambda: htb.Empirical.from_table(np.zeros((2, 0)), [0, 0]),
            ValueError,
            r"K >= 1 arms of n_max >= 1; got shape \(2, 0\)\.",
        ),
        (
            lambda: htb.Empirical(0.0, 1.0, 0.0, data=np.zeros(3)),
            TypeError,
            r"Empirical data must be the pooled",
        ),
    ],
)
def test_bad_input_is_refused_by_name(make, error, message):
    """Each bad input raises before anything is traced, naming the argument and the value given."""
    with pytest.raises(error, match=message):
        make()


def test_the_largest_float32_and_the_least_normal_one_are_observations():
    # The bounds of the refusals above are admissible themselves: each is drawn as it is.
    big, tiny = float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny)
    nu = htb.Empirical.from_samples([[3.4028235e38, -big], [tiny, 0.0]])
    draws = np.asarray(htb.reward_table(jax.random.key(0), nu, 64))
    assert set(draws[0]) == {np.float32(big), np.float32(-big)} and set(draws[1]) == {np.float32(tiny), 0.0}


@pytest.mark.parametrize("sampler", ["block_sums", "order_statistic"])
def test_block_samplers_are_refused_by_name(nu, sampler):
    """No closed-form block law: the block samplers are refused, as for the other families without one."""
    with pytest.raises(ValueError, match=f"sampler='{sampler}' needs .*got Empirical"):
        htb.simulate(jax.random.key(0), htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0), nu, 100, 2, sampler=sampler)


def test_the_moments_of_many_laws_on_long_data_hold_a_bounded_number_of_draws():
    # Every law's draws were one f64[batch, longest] array: a 22-member family of 10 arms on 4e5 observations
    # compiled to 1.36 GiB of temporary memory (gigabytes for frontier.measure's U_eps on longer data).
    x = np.random.default_rng(0).standard_t(3.0, 400_000)
    family = htb.equal_gap(htb.Empirical.from_samples(x), 10, gap=jnp.linspace(0.1, 1.0, 22))
    for moment in (lambda law: law.abs_moment(0.5), lambda law: law.mean()):
        memory = jax.jit(moment).lower(family).compile().memory_analysis()
        assert memory.temp_size_in_bytes < 64 * 2**20, memory.temp_size_in_bytes
