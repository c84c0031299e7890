"""Exponent fits and their seed-bootstrap intervals against synthetic power laws."""

import math

import jax
import numpy as np
import pytest

from htb_jax._src.exponents import (
    ExponentFit,
    _resamples,
    fit_exponent,
    fit_worst_case_exponent,
    local_slopes,
)

X = np.logspace(2.0, 5.0, 5)  # horizons 10^2 .. 10^5


def _power_law(rng, x, exponent, num_seeds, shared=0.5, own=0.8, coef=3.0):
    """``coef * x**exponent * exp(noise)``: f[P, S], lognormal noise shared by seed plus per point."""
    noise = shared * rng.standard_normal((1, num_seeds)) + own * rng.standard_normal((len(x), num_seeds))
    return coef * x[:, None] ** exponent * np.exp(noise)


def _ls_slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def test_known_exponent_lies_in_the_interval():
    regret = _power_law(np.random.default_rng(0), X, 0.6, num_seeds=400)
    for statistic in ("mean", "median"):
        fit = fit_exponent(X, regret, key=1, statistic=statistic)
        assert fit.low < fit.slope < fit.high
        assert fit.contains(0.6)
        assert fit.high - fit.low < 0.1
        assert (fit.level, fit.num_bootstrap, fit.argmax) == (0.95, 1000, None)
    y = np.mean(regret, axis=1)
    fit = fit_exponent(X, regret)
    np.testing.assert_allclose(fit.slope, _ls_slope(X, y), rtol=1e-12)
    np.testing.assert_allclose(fit.intercept, np.polyfit(np.log(X), np.log(y), 1)[1], rtol=1e-12)


def test_same_key_same_interval_other_key_other_interval():
    regret = _power_law(np.random.default_rng(1), X, 0.6, num_seeds=50)
    a, b = fit_exponent(X, regret, key=7), fit_exponent(X, regret, key=7)
    c = fit_exponent(X, regret, key=8)
    assert a == b
    assert a.slope == c.slope and (a.low, a.high) != (c.low, c.high)


def test_coverage_is_nominal_within_four_standard_errors():
    # 200 independent data sets, each with its own 95% interval.  The number
    # covering 0.6 is Binomial(200, coverage); accept |rate - 0.95| <= 4 SE with
    # SE = sqrt(0.95 * 0.05 / 200) = 0.0154.  (With S = 100 skewed lognormal
    # seeds the percentile bootstrap is known to run about 1 point below
    # nominal, well inside the band.)
    rng = np.random.default_rng(2)
    num_sets = 200
    hits = sum(
        fit_exponent(X, _power_law(rng, X, 0.6, num_seeds=100), key=i, num_bootstrap=200).contains(0.6)
        for i in range(num_sets)
    )
    se = math.sqrt(0.95 * 0.05 / num_sets)
    assert abs(hits / num_sets - 0.95) <= 4 * se, hits


def test_common_random_numbers_are_resampled_jointly():
    # Noise shared by seed across points: log(mean_s C x^b e^z_s) = log C + b log x + const in every
    # draw, so resampling seeds jointly gives the exact slope in every draw.
    rng = np.random.default_rng(3)
    shared = np.exp(rng.standard_normal(200))
    fit = fit_exponent(X, 2.0 * X[:, None] ** 0.6 * shared, key=0)
    np.testing.assert_allclose([fit.slope, fit.low, fit.high], 0.6, rtol=0, atol=1e-12)
    # The same noise drawn independently per point leaves a wide interval.
    independent = 2.0 * X[:, None] ** 0.6 * np.exp(rng.standard_normal((len(X), 200)))
    loose = fit_exponent(X, independent, key=0)
    assert loose.high - loose.low > 0.02


def test_noiseless_data_give_the_exact_slope_and_a_zero_width_interval():
    x = np.array([3.0, 30.0, 70.0, 1e3, 1e6])
    regret = np.repeat((5.0 * x**0.6)[:, None], 17, axis=1)
    for statistic in ("mean", "median"):
        fit = fit_exponent(x, regret, statistic=statistic)
        np.testing.assert_allclose([fit.slope, fit.low, fit.high], 0.6, rtol=1e-12)
        np.testing.assert_allclose(fit.intercept, math.log(5.0), rtol=1e-12)
        assert fit.high - fit.low <= 1e-12
    worst = fit_worst_case_exponent(x, regret[:, None, :], np.array([2.0]))
    np.testing.assert_allclose([worst.slope, worst.low, worst.high], 0.6, rtol=1e-12)
    np.testing.assert_allclose(worst.intercept, math.log(2.5), rtol=1e-12)


def test_interval_holds_the_point_estimate_where_every_seed_agrees():
    # Every seed equal: the resamples' means (counts @ regret) round apart from the point's mean, and
    # here every resampled slope lay 1 ulp above the point estimate (0.0536322212539684[8] against
    # [6]), so the fit did not contain its own slope.
    x = np.array([1e3, 1e4, 1e5, 1e6])
    y = np.array([2899.1216570105576, 8144.328665688651, 897.842528941649, 9125.546528629093])
    fit = fit_exponent(x, np.repeat(y[:, None], 8, axis=1))
    worst = fit_worst_case_exponent(x, np.repeat(y[:, None, None], 8, axis=2), np.array([1.0]))
    for f in (fit, worst):
        assert f.low <= f.slope <= f.high and f.contains(f.slope) and f.high - f.low <= 1e-15


def test_worst_case_follows_the_switching_worst_member():
    x = np.logspace(0.0, 4.0, 9)
    members = np.stack([4.0 * x**0.3, 0.1 * x**0.9, 0.5 * x**0.5], axis=1)  # f[P, 3]
    scale = np.array([2.0, 0.5, 1.0])
    fit = fit_worst_case_exponent(x, np.repeat(members[:, :, None], 6, axis=2), scale)
    normalised = members / scale
    assert fit.argmax == tuple(int(f) for f in np.argmax(normalised, axis=1))
    assert fit.argmax[0] == 0 and fit.argmax[-1] == 1  # the worst member switches
    np.testing.assert_allclose(fit.slope, _ls_slope(x, normalised.max(axis=1)), rtol=1e-12)
    assert 0.3 < fit.slope < 0.9 and fit.high - fit.low <= 1e-12
    # A per-point scale f[P, F] that inflates member 2 at the largest x makes it the worst there.
    scale_pf = np.tile(scale, (len(x), 1))
    scale_pf[-1, 2] = 1e-3
    assert fit_worst_case_exponent(x, np.repeat(members[:, :, None], 2, axis=2), scale_pf).argmax[-1] == 2


def test_worst_case_bootstrap_equals_a_loop_over_draws():
    # Two members that cross inside the noise, so the worst member changes between draws.
    rng = np.random.default_rng(4)
    x, num_seeds, num_bootstrap = np.logspace(1.0, 3.0, 4), 40, 300
    base = np.stack([x**0.5, 0.3 * x**0.7], axis=1)[:, :, None]
    regret = base * np.exp(
        rng.standard_normal((1, 2, num_seeds)) + 0.3 * rng.standard_normal((4, 2, num_seeds))
    )
    scale = np.array([1.0, 0.9])
    fit = fit_worst_case_exponent(x, regret, scale, key=5, num_bootstrap=num_bootstrap, level=0.9)

    slopes, worst_members = [], set()
    for indices, _ in _resamples(5, num_bootstrap, num_seeds):
        for draw in indices:
            normalised = regret[:, :, draw].mean(axis=2) / scale
            worst_members.add(tuple(np.argmax(normalised, axis=1)))
            slopes.append(_ls_slope(x, normalised.max(axis=1)))
    assert len(worst_members) > 1
    want_low = np.quantile(slopes, 0.05, method="lower")
    want_high = np.quantile(slopes, 0.95, method="higher")
    np.testing.assert_allclose([fit.low, fit.high], [want_low, want_high], rtol=1e-10)
    np.testing.assert_allclose(fit.slope, _ls_slope(x, (regret.mean(axis=2) / scale).max(axis=1)), rtol=1e-12)


def test_single_member_worst_case_equals_the_plain_fit():
    regret = _power_law(np.random.default_rng(6), X, 0.6, num_seeds=60)
    plain = fit_exponent(X, regret, key=3, num_bootstrap=500)
    worst = fit_worst_case_exponent(X, 4.0 * regret[:, None, :], np.array([4.0]), key=3, num_bootstrap=500)
    np.testing.assert_allclose(
        [worst.slope, worst.intercept, worst.low, worst.high],
        [plain.slope, plain.intercept, plain.low, plain.high],
        rtol=1e-12,
    )
    assert worst.argmax == (0,) * len(X)


def test_member_with_infinite_scale_contributes_nothing():
    regret = _power_law(np.random.default_rng(7), X, 0.6, num_seeds=30)[:, None, :]
    heavy = np.concatenate([regret, 1e6 * regret], axis=1)
    one = fit_worst_case_exponent(X, regret, np.array([1.0]), num_bootstrap=200)
    two = fit_worst_case_exponent(X, heavy, np.array([1.0, np.inf]), num_bootstrap=200)
    assert one == two


def test_zero_and_negative_draws_widen_the_interval():
    x = np.array([1.0, 10.0])
    # At x = 10 only seed 2 is nonzero: draws without it have statistic 0 there -> slope -inf.
    fit = fit_exponent(x, np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 3.0]]), num_bootstrap=400)
    assert fit.slope == 0.0 and fit.low == -np.inf and np.isfinite(fit.high)
    # A negative resampled mean leaves the slope undefined: it widens both ends.
    fit = fit_exponent(x, np.array([[1.0, 1.0], [-1.0, 3.0]]), num_bootstrap=400)
    assert fit.slope == 0.0 and (fit.low, fit.high) == (-np.inf, np.inf)


def test_local_slopes_of_power_laws():
    x = np.array([1.0, 4.0, 10.0, 1e3, 1e5])
    np.testing.assert_allclose(local_slopes(x, 7.0 * x**0.6), np.full(4, 0.6), rtol=1e-12)
    # A bending curve x^0.5 + x shows its slopes rising towards 1; f[P, 2] gives f[P-1, 2].
    y = np.stack([x**0.5 + x, 2.0 * x**-1.5], axis=1)
    got = local_slopes(x, y)
    assert got.shape == (4, 2)
    assert np.all(np.diff(got[:, 0]) > 0) and 0.5 < got[0, 0] and got[-1, 0] < 1.0
    np.testing.assert_allclose(got[:, 1], -1.5, rtol=1e-12)


def test_exponent_fit_str_and_contains():
    fit = ExponentFit(slope=2 / 3, intercept=0.1, low=0.65, high=0.684, level=0.95, num_bootstrap=1000)
    assert str(fit) == "0.667 [0.650, 0.684]"
    assert fit.contains(0.65) and fit.contains(0.684) and not fit.contains(0.7)
    assert fit.contains(0.7, tol=0.02) and fit.contains(0.64, tol=0.01)
    with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
        fit.contains(0.6, tol=-0.1)
    with pytest.raises(Exception, match="cannot assign"):
        fit.slope = 1.0  # frozen


_GOOD_REGRET = np.ones((3, 4))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(x=np.ones((3, 1))), r"x must be f\[P\] \(1 dimensions\); got shape \(3, 1\)"),
        (dict(x=[5.0]), r"x must have length P >= 2; got shape \(1,\)"),
        (dict(x=[1.0, -2.0, 3.0]), r"x must be positive; got -2 at index \[1\]"),
        (dict(x=[1.0, np.nan, 3.0]), r"x must be finite"),
        (dict(x=[2.0, 2.0, 2.0]), r"at least two distinct values"),
        (dict(regret=np.ones(3)), r"regret must be f\[P, S\] \(2 dimensions\); got shape \(3,\)"),
        (dict(regret=np.ones((4, 4))), r"regret must have shape \(P, S\) = \(3, S\).*got shape \(4, 4\)"),
        (dict(regret=np.ones((3, 0))), r"S >= 2 seeds.*got shape \(3, 0\)"),
        # one seed: every resample is that seed, an interval of width 0 that claimed certainty
        (dict(regret=np.ones((3, 1))), r"S >= 2 seeds \(the bootstrap interval resamples them\).*got shape \(3, 1\)"),
        (dict(regret=np.array([[1.0, np.inf]] * 3)), r"regret must be finite"),
        (
            dict(regret=np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 1.0]])),
            r"regret is 0 for every seed at point 1 \(x = 10\)",
        ),
        (
            dict(regret=np.array([[1.0, 2.0], [-3.0, 1.0], [1.0, 1.0]])),
            r"mean regret over seeds must be positive.*-1 at point 1",
        ),
        (
            dict(regret=np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), statistic="median"),
            r"median regret over seeds must be positive.*got 0 at point 1",
        ),
        (dict(statistic="max"), r"statistic must be one of \('mean', 'median'\); got 'max'"),
        (dict(key=-1), r"key must be an int >= 0 \(a numpy seed\); got -1"),
        (dict(key=1.5), r"key must be an int >= 0"),
        (dict(num_bootstrap=1), r"num_bootstrap must be an int in \[2, 1000000\]; got 1"),
        (dict(num_bootstrap=10.0), r"num_bootstrap must be an int in \[2, 1000000\]; got 10.0"),
        (dict(num_bootstrap=2**70), r"num_bootstrap must be an int in \[2, 1000000\]; got 1180591620717411303424"),
        (dict(level=np.array([0.9])), r"level must be a real number in \(0, 1\), a Python or NumPy float; got "
                                      r"array\(\[0.9\]\) \(ndarray\)"),
        (dict(level=1.0), r"level must lie in \(0, 1\); got 1.0"),
        (dict(level=0), r"level must lie in \(0, 1\); got 0"),
    ],
)
def test_fit_exponent_rejects(kwargs, match):
    args = dict(x=[1.0, 10.0, 100.0], regret=_GOOD_REGRET) | kwargs
    with pytest.raises(ValueError, match=match):
        fit_exponent(args.pop("x"), args.pop("regret"), **args)


@pytest.mark.parametrize("call, match", [
    (lambda: fit_exponent(["a", "b", "c"], _GOOD_REGRET), r"x must be a real array f\[P\]; got .*strings"),
    # Bools were read as 1 and 0: "x must be positive; got 0 at index [1]".
    (lambda: local_slopes([True, False, True], [1.0, 2.0, 3.0]), r"x must be a real array f\[P\]; got .*bools"),
    (lambda: fit_worst_case_exponent([1.0, 10.0, 100.0], np.ones((3, 2, 4)), [True, True]),
     r"scale must be a real array f\[F\] or f\[P, F\]; got .*bools"),
    (lambda: fit_worst_case_exponent([1.0, 10.0, 100.0], np.ones((3, 2, 4)), "big"),
     r"scale must be a real array f\[F\] or f\[P, F\]; got scale='big' \(str\)"),
    (lambda: jax.jit(lambda y: local_slopes([1.0, 10.0], y))(np.ones(2)), r"y must be .* not a traced value"),
])
def test_fits_refuse_what_is_not_a_real_array(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(regret=np.ones((3, 4))), r"regret must be f\[P, F, S\] \(3 dimensions\); got shape \(3, 4\)"),
        (
            dict(regret=np.ones((2, 2, 4))),
            r"regret must have shape \(P, F, S\) = \(3, F, S\).*got shape \(2, 2, 4\)",
        ),
        (dict(regret=np.ones((3, 2, 0))), r"F >= 1 and S >= 2 seeds.*got shape \(3, 2, 0\)"),
        (dict(regret=np.ones((3, 2, 1))), r"F >= 1 and S >= 2 seeds.*got shape \(3, 2, 1\)"),
        (
            dict(scale=np.ones(3)),
            r"scale must have shape \(F,\) = \(2,\) or \(P, F\) = \(3, 2\); got shape \(3,\)",
        ),
        (dict(scale=np.ones((2, 2))), r"got shape \(2, 2\)"),
        (dict(scale=[1.0, 0.0]), r"scale must lie in \(0, inf\]; got 0 at index \[1\]"),
        (dict(scale=[np.nan, 1.0]), r"scale must lie in \(0, inf\]; got nan at index \[0\]"),
        (dict(scale=[np.inf, np.inf]), r"worst normalised mean regret must be positive.*got 0 at point 0"),
        (
            dict(regret=np.where(np.arange(3)[:, None, None] == 2, 0.0, np.ones((3, 2, 4)))),
            r"regret is 0 for every seed at point 2 \(x = 100\)",
        ),
        (dict(num_bootstrap=0), r"num_bootstrap must be an int in \[2, 1000000\]"),
        (dict(level=-0.5), r"level must lie in \(0, 1\)"),
        (dict(x=[1.0, 0.0, 3.0]), r"x must be positive"),
    ],
)
def test_fit_worst_case_exponent_rejects(kwargs, match):
    args = dict(x=[1.0, 10.0, 100.0], regret=np.ones((3, 2, 4)), scale=np.ones(2)) | kwargs
    with pytest.raises(ValueError, match=match):
        fit_worst_case_exponent(args.pop("x"), args.pop("regret"), args.pop("scale"), **args)


@pytest.mark.parametrize(
    "x, y, match",
    [
        ([1.0], [1.0], r"x must have length P >= 2"),
        ([1.0, -1.0], [1.0, 2.0], r"x must be positive"),
        ([1.0, 2.0, 2.0], [1.0, 2.0, 3.0], r"consecutive x must differ; got x\[1\] = x\[2\] = 2"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], r"y must have shape \(P, ...\) with P = 2; got shape \(3,\)"),
        ([1.0, 2.0], 1.0, r"y must have shape \(P, ...\) with P = 2; got shape \(\)"),
        ([1.0, 2.0], [1.0, 0.0], r"y must be positive; got 0 at index \[1\]"),
        ([1.0, 2.0], [1.0, np.inf], r"y must be finite"),
    ],
)
def test_local_slopes_rejects(x, y, match):
    with pytest.raises(ValueError, match=match):
        local_slopes(x, y)
