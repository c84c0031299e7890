"""AdaR-ETC's schedule (Algorithm 1, line 1) against hand computation and exact arithmetic."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from conftest import schedule_reference

# (K, T, eps, alpha, q) -> (B_T, L_T), worked by hand:
#   B_T = ceil(8 (ln K + 3 ln T)),  L_T = min(T, K B_T + ceil(K^q T^beta)),  beta = (1-alpha)(1+eps)/eps.
HAND = [
    # ln(10^19) = 43.7491 -> B = ceil(349.99) = 350; beta = 2/3: T^beta = 10^4.
    ((10, 10**6, 1.0, 2 / 3, 0.0), (350, 3500 + 10_000)),
    # 10^(1/3) 10^4 = 21544.35 -> 21545.
    ((10, 10**6, 1.0, 2 / 3, 1 / 3), (350, 3500 + 21_545)),
    # beta = 1/2: 10^3.
    ((10, 10**6, 1.0, 0.75, 0.0), (350, 3500 + 1_000)),
    # ln(2 10^27) = 62.8631 -> B = ceil(502.90) = 503; 10^(9 * 2/3) = 10^6 exactly (no +1).
    ((2, 10**9, 1.0, 2 / 3, 0.0), (503, 1006 + 1_000_000)),
    # ln(2 10^9) = 21.4164 -> B = ceil(171.33) = 172; 10^2.
    ((2, 1000, 1.0, 2 / 3, 0.0), (172, 344 + 100)),
    # ln(5 10^6) = 15.4249 -> B = 124; K B = 620 > T, so L = T.
    ((5, 100, 1.0, 2 / 3, 0.0), (124, 100)),
    # eps = 1/2 balanced point: beta = 3/4, q = 1/4; ln(4 10^24) = 56.6483 -> B = 454;
    # 4^(1/4) 10^6 = 1414213.56 -> 1414214.
    ((4, 10**8, 0.5, 0.75, 0.25), (454, 1816 + 1_414_214)),
    # eps = 1/4, alpha = 0.9: beta = 0.1 * 1.25 / 0.25 = 1/2; ln(3 10^12) = 28.7297 -> B = 230;
    # 3^0.1 10^2 = 111.61 -> 112.
    ((3, 10**4, 0.25, 0.9, 0.1), (230, 690 + 112)),
    # ln(2 10^54) = 125.0328 -> B = ceil(1000.26) = 1001; 10^12 exactly.
    ((2, 10**18, 1.0, 2 / 3, 0.0), (1001, 2002 + 10**12)),
    # T = 1: B = ceil(8 ln 2) = 6, L = 1.
    ((2, 1, 1.0, 2 / 3, 0.0), (6, 1)),
]


@pytest.mark.parametrize("args,expected", HAND)
def test_schedule_by_hand(args, expected):
    k, t, eps, alpha, q = args
    policy = htb.AdaRETC(eps=eps, alpha=alpha, q=q)
    assert int(policy.num_blocks(k, t)) == expected[0]
    assert int(policy.exploration_length(k, t)) == expected[1]
    assert schedule_reference(k, t, eps, alpha, q) == expected  # the reference agrees with the hand


def test_schedule_matches_exact_arithmetic_on_random_grid():
    rng = np.random.default_rng(0)
    for _ in range(300):
        k = int(rng.integers(2, 200))
        t = int(10 ** rng.uniform(0, 15))
        eps = float(rng.choice([1.0, 0.5, 0.25, 0.75, 1 / 3]))
        lo = (1 + eps) / (1 + 2 * eps)
        alpha = float(rng.choice([lo, rng.uniform(lo, 0.999)]))
        q = float(rng.choice([0.0, eps / (1 + 2 * eps), rng.uniform(0, eps / (1 + 2 * eps))]))
        # Exact rationals: round the random draws to short decimals.
        alpha, q = (round(v, 6) if v not in (lo, eps / (1 + 2 * eps)) else v for v in (alpha, q))
        alpha = max(alpha, lo)
        policy = htb.AdaRETC(eps=eps, alpha=alpha, q=q)
        got = (int(policy.num_blocks(k, t)), int(policy.exploration_length(k, t)))
        assert got == schedule_reference(k, t, eps, alpha, q), (k, t, eps, alpha, q)


def test_schedule_at_the_largest_horizons_is_within_float64s_error():
    # eps = 1/4 at alpha = 5/6: beta = 5/6, K^q T^beta up to 1e15 at T = 1e18, where float64's power
    # (beta's rounding times log T) is off by whole rounds and the 2^-44 snap rounds to the nearest
    # integer.  The guide and exploration_length's docstring state at most 2e-14 relative (9 rounds of
    # 7e14 measured); a power computed in float32 (1e-7 relative), or a snap window that grows with
    # the value in absolute terms beyond its 2^-44 relative, is off by far more.
    rng = np.random.default_rng(5)
    horizons = np.unique((10 ** rng.uniform(17, 18, 40)).astype(np.int64))
    got = np.asarray(htb.AdaRETC(eps=0.25, alpha=5 / 6, q=0.0).exploration_length(3, horizons))
    want = np.array([schedule_reference(3, int(t), 0.25, 5 / 6, 0.0)[1] for t in horizons])
    assert np.max(np.abs(got - want) / want) <= 2e-14


def test_named_forms():
    for eps_bar in (0.25, 0.5, 1.0):
        cal = htb.AdaRETC.calibrated(eps_bar)
        known = htb.AdaRETC(eps=eps_bar, alpha=(1 + eps_bar) / (1 + 2 * eps_bar), q=eps_bar / (1 + 2 * eps_bar))
        assert float(cal.beta) == pytest.approx((1 + eps_bar) / (1 + 2 * eps_bar), rel=1e-15)
        for t in (10**3, 10**7, 10**12):
            assert int(cal.exploration_length(7, t)) == int(known.exploration_length(7, t))
    free = htb.AdaRETC.order_free()
    # L = K B + ceil(K^(1/3) T^(2/3)) = 5160 + ceil(2154434.69) for K = 10, T = 10^9.
    assert int(free.exploration_length(10, 10**9)) == 5160 + 2_154_435


def test_batched_grid_and_horizons():
    policy = htb.AdaRETC(eps=1.0, alpha=jnp.array([2 / 3, 0.75, 0.9])[:, None], q=jnp.array([0.0, 1 / 3]))
    assert policy.batch_shape == (3, 2)
    lengths = policy.exploration_length(10, 10**6)
    assert lengths.shape == (3, 2) and lengths.dtype == jnp.int64
    assert int(lengths[0, 1]) == 25_045
    per_horizon = htb.AdaRETC(1.0, 0.75, 0.0).exploration_length(10, jnp.array([10**4, 10**6]))
    # ln(10^13) = 29.934 -> B = ceil(239.47) = 240; sqrt(10^4) = 100.
    np.testing.assert_array_equal(per_horizon, [10 * 240 + 100, 4500])
    cal = htb.AdaRETC.calibrated(jnp.array([0.25, 0.5, 1.0]))
    assert cal.batch_shape == (3,)


def test_jit_equals_eager_without_retracing():
    traces = []

    def lengths(policy):
        traces.append(1)
        return policy.exploration_length(10, 10**6)

    fn = jax.jit(lengths)
    for alpha, q in [(0.7, 0.1), (0.8, 0.0), (2 / 3, 1 / 3)]:
        policy = htb.AdaRETC(eps=jnp.float64(1.0), alpha=jnp.float64(alpha), q=jnp.float64(q))
        with jax.disable_jit():
            eager = lengths(policy)
        assert int(fn(policy)) == int(eager)
    for eps_bar in (0.3, 0.6):
        fn(htb.AdaRETC.calibrated(jnp.float64(eps_bar)))
    assert len(traces) == 1 + 3  # one trace, plus the three eager runs


def test_differentiable_in_the_exponents():
    grad = jax.grad(lambda e: htb.AdaRETC.calibrated(e).beta)(0.5)
    assert float(grad) == pytest.approx(-1 / (1 + 2 * 0.5) ** 2)


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: htb.AdaRETC(eps=1.5, alpha=0.8, q=0.0), r"eps must lie in \(0, 1\]; got eps=1.5"),
        (lambda: htb.AdaRETC(eps=0.0, alpha=0.8, q=0.0), r"eps must lie in \(0, 1\]; got eps=0"),
        (lambda: htb.AdaRETC(eps=1.0, alpha=0.6, q=0.0), r"alpha must lie in \[0.666667, 1\) for eps=1; got alpha=0.6"),
        (lambda: htb.AdaRETC(eps=0.5, alpha=1.0, q=0.0), r"alpha must lie in \[0.75, 1\) for eps=0.5; got alpha=1"),
        (lambda: htb.AdaRETC(eps=1.0, alpha=0.8, q=0.4), r"q must lie in \[0, 0.333333\] for eps=1; got q=0.4"),
        (lambda: htb.AdaRETC(eps=1.0, alpha=0.8, q=-0.1), r"q must lie in \[0, 0.333333\] for eps=1; got q=-0.1"),
        (lambda: htb.AdaRETC(eps=1.0, alpha=jnp.array([0.7, 0.5]), q=0.0), r"got alpha=0.5 \(entry \[1\]\)"),
        # A grid of eps names the eps of the entry that fails (it said "for eps=(array)").
        (lambda: htb.AdaRETC(eps=jnp.array([0.5, 1.0]), alpha=jnp.array([0.8, 0.6]), q=0.0),
         r"alpha must lie in \[0.666667, 1\) for eps=1; got alpha=0.6 \(entry \[1\]\)\.$"),
        (lambda: htb.theory.beta_alpha(jnp.array([0.9, 0.7]), jnp.array([[1.0], [0.5]])),
         r"alpha must lie in \[0.75, 1\) for eps=0.5; got alpha=0.7 \(entry \[1, 1\]\)\.$"),
        (lambda: htb.AdaRETC.calibrated(1.2), r"eps_bar must lie in \[1e-09, 1\] \(below, float64 leaves beta_bar few "
                                               r"correct digits\); got eps_bar=1.2"),
        # At 1e-15 beta_bar came out 0.888 for 1: a tenth of the exploration.
        (lambda: htb.AdaRETC.calibrated(1e-15), r"eps_bar must lie in \[1e-09, 1\].*got eps_bar=1e-15"),
        (lambda: htb.AdaRETC.order_free().exploration_length(1, 100), r"num_arms \(K\) must be an integer >= 2; got num_arms \(K\)=1"),
        (lambda: htb.AdaRETC.order_free().exploration_length(2.5, 100), r"num_arms \(K\) must be an integer"),
        (lambda: htb.AdaRETC.order_free().exploration_length(3, 0), r"horizon \(T\) must be an integer in \[1, 1000000000000000000\]; got horizon \(T\)=0"),
        (lambda: htb.AdaRETC.order_free().num_blocks(3, 10**19), r"horizon \(T\) must be an integer in"),
    ],
)
def test_errors_name_range_and_value(make, message):
    with pytest.raises(ValueError, match=message):
        make()
