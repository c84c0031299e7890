"""The p-robust estimator (psi_p, b_p, the masked-buffer estimate) against direct evaluation."""

import functools
import math
from decimal import Decimal, localcontext

import jax
import jax.numpy as jnp
import numpy as np

import htb_jax  # noqa: F401  (x64)
from htb_jax._src import p_robust

PS = [2.0, 1.999999, 1.9, 1.5, 1.2, 1.01, 1.0001]


def _b_decimal(p):
    """``b_p`` from the formula in 50-digit decimals (``b_2 = 1/2``)."""
    with localcontext() as ctx:
        ctx.prec = 50
        p = Decimal(p)
        if p == 2:
            return Decimal(1) / 2
        r = (2 - p) / (p - 1)
        return (2 * r ** (1 - 2 / p) + r ** (2 - 2 / p)) ** (-p / 2)


def _psi_decimal(x, p):
    """``sign(x) log(1 + |x| + b_p |x|^p)`` in 50-digit decimals (no overflow at |x| = 1e300)."""
    if math.isinf(x):
        return x
    with localcontext() as ctx:
        ctx.prec = 50
        a = abs(Decimal(x))
        if a == 0:
            return 0.0
        s = a + _b_decimal(p) * a ** Decimal(p)
        log1p = s * (1 - s / 2 + s * s / 3) if s < Decimal("1e-20") else (1 + s).ln()  # series: 1 + s rounds to 1
        return math.copysign(float(log1p), x)


H = 10.0 ** -np.arange(3.0, 13.0)
B_PS = np.concatenate([PS, 2.0 - H, [1.0 + 1e-9]])
# 1e308 and the largest float64: |x| + b_p |x|^p overflows there, and for p near 1 |x| is as large as
# b_p |x|^p (a form that dropped it was 9e-4 off at p = 1.0001).
MAGS = [0.0, 1e-300, 1e-8, 0.3, 1.0, 1.0 + 2.0**-40, 2.0, 37.5, 1e10, 1e300, 1e308, 1.7976931348623157e308]
XS = np.array([s * m for m in MAGS for s in (1.0, -1.0)] + [math.inf, -math.inf])
INF_SAMPLES = np.array([1.0, math.inf, 2.0, -math.inf], np.float32)


@functools.cache
def _small_cases():
    """b_p, psi_p, horizon_log and the estimates of INF_SAMPLES, in one compiled program."""

    @jax.jit
    def run(ps, xs, grid_p, samples):
        return (
            p_robust.b_p(ps),
            p_robust.psi_p(xs, grid_p),
            p_robust.horizon_log(jnp.int64(300), 3, jnp.array([1, 99, 100, 101, 300], jnp.int64)),
            jax.vmap(p_robust.p_robust_mean, (None, 0, None, None))(samples, jnp.array([0, 3, 4]), 1.5, 1.0),
        )

    return [np.asarray(x) for x in run(jnp.asarray(B_PS), jnp.asarray(XS), jnp.array(PS)[:, None], INF_SAMPLES)]


def test_b_p_matches_the_formula_and_its_limits():
    got = _small_cases()[0]
    want = [float(_b_decimal(p)) for p in PS]
    np.testing.assert_allclose(got[: len(PS)], want, rtol=4e-15, atol=0)
    assert got[0] == 0.5  # b_2 exactly
    np.testing.assert_array_equal(np.asarray(p_robust.b_p(jnp.asarray(B_PS))), got)  # eager (op by op) equals jit
    # p -> 2: the general formula tends to 1/2, |b_p - 1/2| = O(h log(1/h)) with h = 2 - p (a formula
    # with the exponents swapped, or b_2 = 1, would jump at p = 2); p -> 1: b_p -> 1.
    near_two = got[len(PS):-1]
    assert np.all(np.abs(near_two - 0.5) <= H * (1.0 + np.log(1.0 / H)))
    assert np.all(np.diff(np.abs(near_two - 0.5)) < 0)
    assert abs(got[-1] - 1.0) < 1e-6


def test_psi_p_matches_direct_evaluation():
    # |x| <= 1 (log1p branch), |x| > 1 (log-space branch), up to 1e300 where |x|^p overflows a
    # direct float64 evaluation, signs, zero and infinities.
    # Tolerance: |x|^p is exp(p log|x|), whose relative error is about 2^-53 (3 + 2 p |log|x||)
    # (1.5e-13 at |x| = 1e-300), plus a few roundings of the sum and the log.
    got = _small_cases()[1]
    want = np.array([[_psi_decimal(x, pi) for x in XS] for pi in PS])
    with np.errstate(divide="ignore"):
        log_x = np.where(np.isfinite(XS) & (XS != 0), np.log(np.abs(XS)), 0.0)
    rtol = 2.0**-53 * (8.0 + 2.0 * np.array(PS)[:, None] * np.abs(log_x))
    finite = np.isfinite(want)
    assert np.all(np.abs(got[finite] - want[finite]) <= (rtol * np.abs(want))[finite])
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert np.all(np.isfinite(got[:, :-2]))


P2_MAGS = [0.0, 1e-300, 1e-8, 0.3, 1.0, 2.0, 37.5, 1e10, 1e154, 1.4e154, 1.9e154, 2.0**499, 2.0**500, 2.0**501, 1e300,
           1.7976931348623157e308]
P2_XS = np.array([s * m for m in P2_MAGS for s in (1.0, -1.0)] + [math.inf, -math.inf, math.nan])


def test_psi_2_matches_direct_evaluation_and_the_general_form():
    """At p = 2, psi is log1p(|x| + x^2 / 2) with x^2 = x x, and log1p(m^2 / 2 - 1) + 2 e log 2 from
    |x| = 2^500 on (x^2 / 2 overflows from 2^512.5 = 1.9e154 on): within 4 ulp of 50-digit decimals
    at every magnitude (no |log x| factor as in exp(2 log|x|)): catches a switch to the large-|x|
    form above 2^512.5 (inf at 1.9e154), an exponent off by one (off by 2 log 2) and a mantissa
    outside [1, 2).  The same values come out of a p grid that mixes 2 with other orders
    and out of vmap over p, bit for bit."""
    two = np.asarray(jax.jit(p_robust.psi_p)(jnp.asarray(P2_XS), 2.0))
    want = np.array([_psi_decimal(x, 2.0) if not math.isnan(x) else math.nan for x in P2_XS])
    finite = np.isfinite(want)
    assert np.all(np.abs(two[finite] - want[finite]) <= 4 * np.spacing(np.abs(want[finite])))
    np.testing.assert_array_equal(two[~finite], want[~finite])
    mixed = np.asarray(jax.jit(p_robust.psi_p)(jnp.asarray(P2_XS), jnp.array([[1.5], [2.0]])))
    np.testing.assert_array_equal(mixed[1], two)
    general = np.asarray(jax.jit(p_robust.psi_p)(jnp.asarray(P2_XS), 1.9999999))
    np.testing.assert_array_equal(mixed[0], np.asarray(jax.jit(p_robust.psi_p)(jnp.asarray(P2_XS), 1.5)))
    assert np.all(np.abs(general[finite] - two[finite]) <= 1e-6 * np.abs(two[finite]))  # continuous in p
    vmapped = np.asarray(jax.jit(jax.vmap(p_robust.psi_p, (None, 0)))(jnp.asarray(P2_XS), jnp.array([2.0, 1.5])))
    np.testing.assert_array_equal(vmapped[0], two)


def _estimate_direct(y, p, scale):
    """The estimate with Python floats and ``math``, and the same prefactor times ``sum |psi|``."""
    n = len(y)
    width = scale * n ** (1.0 / p)
    b = float(_b_decimal(p))
    terms = [math.copysign(math.log1p(abs(v / width) + b * abs(v / width) ** p), v) for v in y]
    return scale * n ** (1.0 / p - 1.0) * math.fsum(terms), scale * n ** (1.0 / p - 1.0) * math.fsum(map(abs, terms))


CASES = [(p, scale, n) for p in (2.0, 1.5, 1.1, 1.0001) for scale in (0.1, 1.0, 25.0) for n in (1, 7, 300)]


def test_p_robust_mean_matches_direct_evaluation():
    # Rows of one buffer (f32[R, 320], as the engine stores rewards) with NaN and 1e30 past each
    # row's count: masking that reads them shows.  The whole buffer at once, and chunks of 64: n = 300
    # then ends mid-chunk (4 full chunks and 44 entries), and a vmapped count runs each row's own
    # number of chunks.  Tolerance: the float64 sum of n terms, n 2^-52 sum |terms|, times the prefactor.
    rng = np.random.default_rng(0)
    buf = (rng.pareto(1.8, size=(len(CASES), 320)) * rng.choice([-1.0, 1.0], size=(len(CASES), 320)) * 3.0)
    buf = buf.astype(np.float32)
    for r, (_, _, n) in enumerate(CASES):
        buf[r, n:] = np.nan if r % 2 else 1e30
    p, scale, n = (jnp.asarray(np.array(col)) for col in zip(*CASES, strict=True))

    @jax.jit
    def both(x, k, q, s):
        return [jax.vmap(lambda *a, c=c: p_robust.p_robust_mean(*a, chunk=c))(x, k, q, s) for c in (None, 64)]

    wanted = [_estimate_direct([float(v) for v in buf[r, :ni]], pi, si) for r, (pi, si, ni) in enumerate(CASES)]
    for got in map(np.asarray, both(jnp.asarray(buf), n, p, scale)):
        for r, ((pi, si, ni), (want, magnitude)) in enumerate(zip(CASES, wanted, strict=True)):
            assert abs(got[r] - want) <= ni * 2.0**-52 * magnitude + 1e-15 * abs(want), (pi, si, ni, got[r], want)


def test_empty_and_infinite_samples():
    empty, plus_inf, both = _small_cases()[3]  # counts 0, 3, 4 of [1, inf, 2, -inf]
    assert np.isnan(empty)  # no sample: NaN
    assert plus_inf == np.inf  # +inf makes the estimate +inf
    assert np.isnan(both)  # both signs: NaN


def test_horizon_log_is_capped_at_zero():
    # log(max(T/(K n), 1)) with T = 300, K = 3, n = 1, 99, 100, 101, 300: positive below n = 100,
    # 0 from n = 100 on.
    want = [math.log(100.0), math.log(100 / 99), 0.0, 0.0, 0.0]
    np.testing.assert_allclose(_small_cases()[2], want, rtol=1e-15, atol=0)
