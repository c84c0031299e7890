"""The standard S1 stable CDF, quantile and quantile table against independent references.

References: Gil-Pelaez inversion of the characteristic function in mpmath (30 digits, along a
rotated ray, see :func:`_gil_pelaez`), the tail's asymptotic series in mpmath, the normal law at
``alpha = 2`` and, for the sign of the S1 shift only, ``scipy.stats.levy_stable``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from htb_jax._src.distributions import stable_quantile as sq

GRID_ALPHA = (1.05, 1.2, 1.5, 1.95, 2.0)
GRID_BETA = (-1.0, -0.5, 0.0, 0.5, 1.0)


def _levels(t):
    """``(u, v)`` at ``t = log(u / v)``, each with full relative precision."""
    return special.expit(t), special.expit(-t)


def _gil_pelaez(x, a, b, dps=30):
    """``(F(x), 1 - F(x))`` as mpf, by Gil-Pelaez, ``F(x) = 1/2 - (1/pi) int_0^inf Im(e^{-itx} phi(t)) / t dt``.

    The path ``t = r e^{-i w}`` (``w`` of the sign of ``x``) makes the integrand decay like
    ``exp(-r |x| sin|w|)`` instead of oscillating; by Cauchy's theorem the rotation adds ``w``
    (the small arc around the pole of ``1/t``), so ``F = 1/2 + w/pi - (1/pi) int_0^inf Im(e^{-itx}
    phi(t)) dr / r``.  ``phi(t) = exp(-t^a (1 - i b tan(pi a/2)))`` decays along the ray while
    ``|a w + arctan(b tan(pi a/2))| < pi/2``: ``w`` is 0.6 of that bound, at most ``pi/4``.
    """
    with mp.workdps(dps):
        x, a, b = mp.mpf(x), mp.mpf(a), mp.mpf(b)
        c = 1 - 1j * b * mp.tan(mp.pi * a / 2)
        eta = mp.atan(b * mp.tan(mp.pi * a / 2))
        if x >= 0:
            w = min(mp.mpf(0.6) * (mp.pi / 2 - eta) / a, mp.pi / 4)
        else:
            w = max(mp.mpf(0.6) * (-mp.pi / 2 - eta) / a, -mp.pi / 4)
        e = mp.exp(-1j * w)

        def integrand(r):
            t = r * e
            return mp.im(mp.exp(-1j * t * x - c * t**a)) / r if r > 0 else mp.mpf(0)

        scale = 1 / max(1, abs(x) * abs(mp.sin(w)))
        points = sorted({mp.mpf(0), *(scale * mp.mpf(2) ** k for k in range(-10, 6)), *(mp.mpf(2) ** k for k in range(7))})
        lower = mp.mpf(1) / 2 + w / mp.pi - mp.quad(integrand, [p for p in points if p <= 64] + [mp.inf]) / mp.pi
        return lower, 1 - lower


# (alpha, beta, z): the bulk and tails between 1e-4 and 1 - 1e-4, both signs, light and heavy
GIL_PELAEZ_POINTS = [
    (1.05, -1.0, 10.8656), (1.05, -1.0, 15.0230), (1.05, 0.0, -2107.05), (1.05, 0.7, -676.013),
    (1.05, 0.7, -8.56191), (1.5, -1.0, -251.540), (1.5, -1.0, 4.56654), (1.5, 0.0, -0.742848),
    (1.5, 0.7, 225.732), (1.95, -1.0, 5.14156), (1.95, 0.0, -16.9777), (1.95, 0.7, -0.0318532),
    (1.95, 0.7, 22.1827),
]


def test_cdf_matches_gil_pelaez_inversion():
    """Both ``F`` and ``1 - F`` within 1e-11 relative of the 30-digit inversion (a dozen points, ~5 s)."""
    for a, b, z in GIL_PELAEZ_POINTS:
        lower, upper = _gil_pelaez(z, a, b)
        got = sq.stable_cdf(np.array([z]), a, b)[0], sq.stable_cdf(np.array([z]), a, b, upper=True)[0]
        for value, ref in zip(got, (lower, upper), strict=True):
            assert abs(value / float(ref) - 1.0) <= 1e-11, (a, b, z, value, float(ref))


def _tail_series(x, a, b, terms=8):
    """``1 - F(x)``, ``x -> +inf``, by the asymptotic series ``(1/pi) sum_n (-1)^(n+1) Gamma(a n) / n!
    rho^n sin(n (pi a/2 + eta)) x^(-a n)``, ``rho e^(-i eta) = 1 - i b tan(pi a/2)`` (term by term
    integration of the density's series; the first term is ``Gamma(a) sin(pi a/2) (1 + b) / pi x^-a``)."""
    with mp.workdps(30):
        x, a, b = mp.mpf(x), mp.mpf(a), mp.mpf(b)
        tan = mp.tan(mp.pi * a / 2)
        rho, eta = mp.sqrt(1 + (b * tan) ** 2), mp.atan(b * tan)
        total = mp.fsum((-1) ** (n + 1) * mp.gamma(a * n) / mp.factorial(n) * rho**n
                        * mp.sin(n * (mp.pi * a / 2 + eta)) * x ** (-a * n) for n in range(1, terms + 1))
        return total / mp.pi


@pytest.mark.parametrize("a, b", [(1.05, 0.0), (1.05, 1.0), (1.2, -0.5), (1.5, 0.7), (1.95, 0.5), (1.95, -1.0)])
def test_heavy_far_tails_match_the_asymptotic_series(a, b):
    """At the quantiles of levels ``2^-20`` and ``2^-30``, on each side with a power tail (``beta != -+1``
    on it), within 1e-12 relative of the series (truncated after 8 terms, ~1e-25 there)."""
    for side in (1.0, -1.0):
        bb = b * side  # F(-x; a, b) = 1 - F(x; a, -b)
        if bb == -1.0:
            continue  # light tail: below
        for level in (2.0**-20, 2.0**-30):
            x = sq.stable_quantile(1.0 - level, level, a, bb)[()]  # the upper quantile for bb
            got = sq.stable_cdf(np.array([side * x]), a, b, upper=side > 0)[0]
            ref = float(_tail_series(x, a, bb))
            assert abs(got / ref - 1.0) <= 1e-12, (a, b, side, x, got, ref)


@pytest.mark.parametrize("a", [1.05, 1.5, 1.95])
def test_light_tail_matches_gil_pelaez(a):
    """``beta = -1``: the right tail is light (no power term); at the level ``2^-20`` ``1 - F`` is within
    1e-11 relative of the inversion at 40 digits, and ``F(-x; a, 1)`` is the same number (reflection).
    ``scipy.stats.levy_stable`` (1.17) gives 0 there, as for every far tail (``z = 1e3``)."""
    x = sq.stable_quantile(1.0 - 2.0**-20, 2.0**-20, a, -1.0)[()]
    got = sq.stable_cdf(np.array([x]), a, -1.0, upper=True)[0]
    _, ref = _gil_pelaez(x, a, -1.0, dps=40)
    assert abs(got / float(ref) - 1.0) <= 1e-11
    assert sq.stable_cdf(np.array([-x]), a, 1.0)[0] == got


def test_s1_convention_against_scipy():
    """The sign of the S0 -> S1 shift (``Z1 = Z0 - zeta``): scipy's S1 CDF within 1e-9 in the bulk, and
    its S0 CDF (the other convention) off by more than 1e-3 at the same points."""
    z = np.array([-3.0, -0.5, 0.4, 2.5])
    before = stats.levy_stable.parameterization
    try:
        for a, b in [(1.5, 0.7), (1.2, -0.5), (1.95, 1.0)]:
            ours = sq.stable_cdf(z, a, b)
            stats.levy_stable.parameterization = "S1"
            np.testing.assert_allclose(ours, stats.levy_stable.cdf(z, a, b), rtol=1e-9, atol=0)
            stats.levy_stable.parameterization = "S0"
            assert np.max(np.abs(ours - stats.levy_stable.cdf(z, a, b))) > 1e-3
    finally:
        stats.levy_stable.parameterization = before


def test_alpha_two_is_the_normal_law_with_variance_two():
    t = np.concatenate([-np.geomspace(0.1, sq._T_MAX, 40), np.geomspace(0.1, sq._T_MAX, 40)])
    u, v = _levels(t)
    ref = np.sqrt(2.0) * np.where(u <= 0.5, special.ndtri(u), -special.ndtri(v))
    for b in (0.0, 0.7):
        np.testing.assert_allclose(sq.stable_quantile(u, v, 2.0, b), ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("a, b", [(1.05, 1.0), (1.05, -1.0), (1.5, 0.0), (1.95, 0.5), (1.2, -0.5)])
def test_quantile_inverts_the_cdf(a, b):
    t = np.linspace(-sq._T_MAX, sq._T_MAX, 41)
    u, v = _levels(t)
    q = sq.stable_quantile(u, v, a, b)
    got = np.where(u <= v, sq.stable_cdf(q, a, b) / u, sq.stable_cdf(q, a, b, upper=True) / v)
    assert np.max(np.abs(got - 1.0)) <= 1e-12


@pytest.mark.parametrize("a", [1.05, 1.5, 2.0])
@pytest.mark.parametrize("b", [-1.0, 0.0, 0.7, 1.0])
def test_v_decreases_on_the_whole_interval(a, b):
    """Nolan's ``V`` decreases on ``(-theta0, pi/2)`` (each level of the ladder is crossed once)."""
    c = sq._angles(a, b)
    x = np.geomspace(1e-12, 0.5 * c["length"], 2000)  # phi on the left half, psi = L - phi on the right
    log_v = np.concatenate([sq._log_v(c, x, c["length"] - x), sq._log_v(c, c["length"] - x[::-1], x[::-1])[1:]])
    # up to rounding (64 ulps of log V) where V flattens: at psi -> 0 when beta = -1 or alpha = 2
    assert np.all(np.diff(log_v) <= 64 * np.finfo(float).eps * np.maximum(1.0, np.abs(log_v[1:])))
    assert log_v[0] - log_v[-1] > 20.0


@pytest.mark.parametrize("a, b", [(1.05, 1.0), (1.05, -1.0), (1.2, 0.5), (1.5, -0.5), (1.95, 0.5), (2.0, 0.0)])
def test_table_is_within_its_bound_between_the_nodes(a, b):
    """``|Q_table - Q| <= 1e-10 max(1, |Q|)`` at 300 random levels of ``[U_MIN, 1 - U_MIN]`` (seed 0)."""
    t = np.random.default_rng(0).uniform(-sq._T_MAX, sq._T_MAX, 300)
    u, v = _levels(t)
    exact = sq.stable_quantile(u, v, a, b)
    got = np.asarray(sq.table_quantile(sq.quantile_table(a, b), u, v))
    assert np.max(np.abs(got - exact) / np.maximum(1.0, np.abs(exact))) <= 1e-10


def test_table_jit_equals_eager_and_is_monotone():
    table = sq.quantile_table(1.05, 1.0)
    width = 2.0 * table.t_max / table.coeffs.shape[0]
    ends = -table.t_max + width * np.arange(table.coeffs.shape[0] + 1)  # probe each piece's ends
    t = np.sort(np.concatenate([np.linspace(-table.t_max - 2.0, table.t_max + 2.0, 100_001),
                                ends, ends - 1e-9, ends + 1e-9]))
    u, v = _levels(t)
    eager = np.asarray(sq.table_quantile(table, u, v))
    jitted = np.asarray(jax.jit(sq.table_quantile, static_argnums=0)(table, u, v))
    # equal up to the rounding of the fused Clenshaw recurrence (2.3 ulps measured)
    assert np.all(np.abs(jitted - eager) <= 4 * np.finfo(float).eps * np.maximum(1.0, np.abs(eager)))
    assert np.all(np.diff(eager) >= 0.0)
    assert np.all(np.isfinite(eager))
    # outside [U_MIN, 1 - U_MIN] the level is clipped to the table's end
    outside = jnp.array([0.0, 2.0**-40, 2.0**-21])
    np.testing.assert_allclose(sq.table_quantile(table, outside, 1.0 - outside),
                               sq.table_quantile(table, sq.U_MIN, 1.0 - sq.U_MIN), rtol=1e-14)


def test_table_hash_and_equality_are_by_alpha_and_beta():
    table = sq.quantile_table(1.5, 0.5)
    assert sq.quantile_table(1.5, 0.5) is table
    same = sq.QuantileTable(1.5, 0.5, 0.0, np.zeros((1, 1)))
    assert same == table and hash(same) == hash(table)
    for other in (sq.QuantileTable(1.5, -0.5, table.t_max, table.coeffs),
                  sq.QuantileTable(1.2, 0.5, table.t_max, table.coeffs)):
        assert other != table
    assert table != (1.5, 0.5)
    assert not table.coeffs.flags.writeable


def test_a_new_equal_table_does_not_retrace():
    traces = []

    def f(table, u):
        traces.append(None)
        return sq.table_quantile(table, u, 1.0 - u)

    jitted = jax.jit(f, static_argnums=0)
    table = sq.quantile_table(1.5, 0.5)
    jitted(table, jnp.array([0.3]))
    jitted(sq.QuantileTable(1.5, 0.5, table.t_max, table.coeffs), jnp.array([0.4]))
    assert len(traces) == 1


@pytest.mark.parametrize("alpha, beta, message", [
    (1.0, 0.0, r"alpha must lie in \(1, 2\]; got alpha=1.0\."),
    (2.5, 0.0, r"alpha must lie in \(1, 2\]; got alpha=2.5\."),
    (math.nan, 0.0, r"alpha must lie in \(1, 2\]; got alpha=nan\."),
    (1.5, 1.5, r"beta must lie in \[-1, 1\]; got beta=1.5\."),
])
def test_bad_parameters_are_refused(alpha, beta, message):
    with pytest.raises(ValueError, match=message):
        sq.stable_cdf(np.array([0.0]), alpha, beta)
    with pytest.raises(ValueError, match=message):
        sq.quantile_table(alpha, beta)
