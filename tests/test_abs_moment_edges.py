"""``abs_moment`` at the edges of its range, against references computed here in mpmath.

The edges: ``1 + eps`` equal to the tail index (``inf``), just above it (``inf``) and just
below it (``GAP = 2^-20``: a large finite moment), ``eps = 1`` (the top of ``eps``'s range) and,
for :class:`htb.Stable`, ``alpha = 2`` (the Gaussian ``N(loc, 2 scale^2)``, every moment finite)
and ``alpha`` just below 2.  Each family is one call over all of its lanes (one compiled program
per family).  The references are closed forms where the law has one and otherwise one-dimensional
mpmath integrals in which the power-law tail is mapped to ``u -> 0`` and its singular part
``u^(b - 1)`` (``b = a - r``) integrated in closed form, so that nothing about the code's
log-tail substitution is shared.

Tolerances.  A moment just below the tail index is ``~ C / (a - r)``: rounding the exponents
``r``, ``r / a`` by one ulp in float64 moves it by about ``2^-52 a / (a - r)`` relative, the
problem's own condition number; the lanes within ``16 GAP`` of the divergence get four such ulps,
``2^-50 a / (a - r)`` (1.4e-9 at ``GAP``; measured 0.2 ulps of it at most).  Every other lane gets
the documented accuracy of ``abs_moment``: ``1e-12`` (measured ``1e-14`` or less), and ``1e-10``
for :class:`htb.Stable`, whose quadrature is nested (measured ``1.1e-11`` at ``alpha = 1.1``,
``loc = -1.5``, ``1e-13`` or less elsewhere).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np

import htb_jax as htb

GAP = 2.0**-20  # how far 1 + eps sits from the tail index in the "just" lanes (exact in binary)
INF = math.inf


def _check(got, want, r, a, rtol):
    """``got`` equals ``want`` lane by lane: ``inf`` exactly, finite values within ``rtol``, or within
    ``2^-50 a / (a - r)`` for lanes within ``16 GAP`` below the tail index ``a`` (``inf`` for none)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"got {got}, want {want}")
    r, a = (np.broadcast_to(np.asarray(x, np.float64), got.shape) for x in (r, a))
    near = np.isfinite(a) & (a > r) & (a - r <= 16 * GAP)
    bound = np.where(near, 2.0**-50 * a / np.where(near, a - r, 1.0), rtol)
    finite = np.isfinite(want)
    error = np.abs(got[finite] / want[finite] - 1.0)
    assert np.all(error <= bound[finite]), f"relative errors {error} against {bound[finite]}"


def _from_zero(f, b, kinks, end):
    """``int_0^end u^(b-1) f(u) du`` for ``f`` smooth at 0: ``f(0) end^b / b`` in closed form plus
    ``int u^(b-1) (f(u) - f(0)) du``, whose integrand is bounded (split at ``kinks`` of ``f``)."""
    f0 = f(mp.mpf(0))
    points = [mp.mpf(0)] + sorted(mp.mpf(k) for k in kinks if 0 < k < end) + [mp.mpf(end)]
    return f0 * mp.mpf(end) ** b / b + mp.quad(lambda u: (f(u) - f0) * u ** (b - 1), points)


def _pareto(r, a, loc):
    """``E|c + Y|^r``, ``c = loc - a/(a-1)``, ``Y ~ Pareto(a)``: with ``u = 1/Y``,
    ``a int_0^1 |1 + c u|^r u^(a-r-1) du``."""
    with mp.workdps(30):
        r, a, loc = mp.mpf(r), mp.mpf(a), mp.mpf(loc)
        c = loc - a / (a - 1)
        kinks = [-1 / c] if c < 0 else []
        return _from_zero(lambda u: a * abs(1 + c * u) ** r, a - r, kinks, 1)


def _frechet(r, a, loc, scale):
    """``E|c + s W|^r``, ``W = E^(-1/a)``: with ``u = 1/W`` (density ``a u^(a-1) exp(-u^a)``),
    ``int_0^inf |s + c u|^r u^(a-r-1) a exp(-u^a) du``."""
    with mp.workdps(30):
        r, a, loc, s = mp.mpf(r), mp.mpf(a), mp.mpf(loc), mp.mpf(scale)
        c = loc - s * mp.gamma(1 - 1 / a)
        kinks = [s / -c] if c < 0 else []

        def f(u):
            return a * abs(s + c * u) ** r * mp.exp(-(u**a))

        rest = [mp.mpf(1)] + [k for k in kinks if k > 1] + [mp.inf]
        return _from_zero(f, a - r, kinks, 1) + mp.quad(lambda u: f(u) * u ** (a - r - 1), rest)


def _student_t(r, nu, loc, scale):
    """``E|loc + s T|^r``: ``|T| <= 1`` directly, each tail with ``u = 1/|T|`` (``u^(nu-r-1)`` times a
    smooth function)."""
    with mp.workdps(30):
        r, nu, loc, s = mp.mpf(r), mp.mpf(nu), mp.mpf(loc), mp.mpf(scale)
        norm = mp.gamma((nu + 1) / 2) / (mp.gamma(nu / 2) * mp.sqrt(nu * mp.pi))
        centre = mp.quad(lambda t: abs(loc + s * t) ** r * norm * (1 + t * t / nu) ** (-(nu + 1) / 2),
                         sorted({mp.mpf(-1), mp.mpf(1), min(max(-loc / s, mp.mpf(-1)), mp.mpf(1))}))
        tails = 0
        for side in (1, -1):  # t = side / u
            def f(u, side=side):
                return (norm * nu ** ((nu + 1) / 2) * abs(s + side * loc * u) ** r
                        * (1 + nu * u * u) ** (-(nu + 1) / 2))

            kinks = [s / (-side * loc)] if side * loc < 0 else []
            tails += _from_zero(f, nu - r, kinks, 1)
        return centre + tails


def _stable_centred(r, a, beta, scale):
    """``E|scale Z|^r`` of the centred S1 law ``S_a(scale, beta, 0)``, ``r < a``: Zolotarev's closed form
    (Nolan, Univariate Stable Distributions, Thm 3.6), with ``t = beta tan(pi a / 2)``,
    ``(1 + t^2)^(r/(2a)) Gamma(1 - r/a) cos((r/a) arctan t) / (Gamma(1 - r) cos(pi r / 2))``;
    at ``a = 2``, the Gaussian ``N(0, 2 scale^2)``'s ``2^r Gamma((1 + r)/2) / sqrt(pi)``."""
    with mp.workdps(30):
        r, a, beta, scale = mp.mpf(r), mp.mpf(a), mp.mpf(beta), mp.mpf(scale)
        if a == 2:
            return scale**r * 2**r * mp.gamma((1 + r) / 2) / mp.sqrt(mp.pi)
        t = beta * mp.tan(mp.pi * a / 2)
        return (scale**r * (1 + t * t) ** (r / (2 * a)) * mp.gamma(1 - r / a) * mp.cos(r / a * mp.atan(t))
                / (mp.gamma(1 - r) * mp.cos(mp.pi * r / 2)))


def _gaussian(r, loc, sd):
    """``E|N(loc, sd^2)|^r = sd^r 2^(r/2) Gamma((r+1)/2) / sqrt(pi) 1F1(-r/2; 1/2; -loc^2 / (2 sd^2))``."""
    with mp.workdps(30):
        r, loc, sd = mp.mpf(r), mp.mpf(loc), mp.mpf(sd)
        return (sd**r * 2 ** (r / 2) * mp.gamma((r + 1) / 2) / mp.sqrt(mp.pi)
                * mp.hyp1f1(-r / 2, mp.mpf(1) / 2, -(loc**2) / (2 * sd**2)))


def _stable_by_characteristic_function(r, a, beta, loc, scale):
    """``E|X|^r = 2 Gamma(1 + r) sin(pi r / 2) / pi int_0^inf (1 - Re phi(t)) t^(-1-r) dt`` (``0 < r < 2``),
    ``phi`` the S1 characteristic function; near ``t = 0`` the terms ``(scale t)^a + (loc t)^2 / 2`` of
    ``1 - Re phi`` are integrated in closed form (the first diverges as ``r -> a``)."""
    with mp.workdps(30):
        r, a, beta, loc, s = (mp.mpf(v) for v in (r, a, beta, loc, scale))
        zeta = beta * mp.tan(mp.pi * a / 2)

        def one_minus_re_phi(t):
            x = (s * t) ** a
            return 1 - mp.exp(-x) * mp.cos(loc * t + zeta * x)

        def head(t):
            return (one_minus_re_phi(t) - (s * t) ** a - (loc * t) ** 2 / 2) * t ** (-1 - r)

        total = mp.quad(head, [mp.mpf(10) ** -12, mp.mpf(10) ** -4, mp.mpf(10) ** -2, 1])
        total += s**a / (a - r) + loc**2 / (2 * (2 - r))
        total += mp.quad(lambda t: one_minus_re_phi(t) * t ** (-1 - r), [1, 4, 16, mp.inf])
        return 2 * mp.gamma(1 + r) * mp.sin(mp.pi * r / 2) / mp.pi * total


def _lanes(rows):
    return [np.array(column, np.float64) for column in zip(*rows, strict=True)]


def test_stable_at_alpha_2_and_at_its_tail_index():
    """Stable lanes: ``alpha = 2`` at ``eps = 1`` (``loc^2 + 2 scale^2``, whatever ``beta``) and
    below it (Gaussian closed forms), ``alpha`` just below 2 (1.9999, 1.999, 1.99; closed forms and
    the characteristic function), and ``1 + eps`` at, just above and just below ``alpha = 1.5``.

    Mutations caught: the outer tail integrated at the power-law rate ``(a - r)/a`` alone, which is
    0 at ``alpha = 2, eps = 1`` (the tail ``delta < 1/4`` dropped: 1.3765 for 2, the first lane); the
    same at ``alpha = 1.9999, r = 1.999`` (1.3e-9 off, K's bend at ``delta ~ 2 - a`` not resolved);
    a special case of ``alpha == 2`` alone (the same lane); the inner integral split at a root of
    ``loc + scale K W^k`` far beyond the mass of ``exp(-W)`` (1.2e-5 off at ``alpha = 1.1``,
    ``loc = -1.5``; 2.4e-8 at ``alpha = 1.2, loc = 2``); ``r <= a`` or no test at all for the
    divergence (the ``inf`` lanes); ``inf`` at ``alpha = 2, r = 2`` (``r >= a`` without the
    Gaussian exception).
    """
    #        alpha,      beta,  loc, scale, eps
    rows = [(2.0,        0.0,   0.0, 1.0,   1.0),
            (2.0,        0.7,  -1.3, 0.6,   1.0),
            (2.0,        0.0,   0.0, 1.0,   0.999),
            (2.0,        0.5,   0.8, 1.3,   0.998),
            (1.9999,     0.0,   0.0, 1.0,   0.999),
            (1.999,      0.0,   0.0, 1.0,   0.998),
            (1.999,      0.0,   0.8, 1.3,   0.998),
            (1.999,     -1.0,   0.0, 1.0,   0.998),
            (1.99,      -0.5,   0.0, 1.0,   0.98),
            (1.999,      0.0,   0.5, 1.0,   1.0),      # just above: inf
            (1.5,        0.3,   0.4, 1.0,   0.5),      # equal: inf
            (1.5 - GAP,  0.0,   0.0, 1.0,   0.5),      # just above: inf
            (1.5 + GAP,  0.5,   0.0, 1.0,   0.5),
            (1.5 + GAP,  0.0,  -0.7, 1.0,   0.5),
            (1.1,        0.0,  -1.5, 1.3,   0.05),
            (1.2,        0.5,   2.0, 1.0,   0.1)]
    a, beta, loc, scale, eps = _lanes(rows)
    got = htb.Stable(loc=loc, alpha=a, beta=beta, scale=scale).abs_moment(eps)
    r = 1.0 + eps  # as abs_moment forms it, in float64
    want = []
    for a_, b_, l_, s_, r_ in zip(a, beta, loc, scale, r, strict=True):
        if r_ >= a_ and a_ < 2:
            want.append(INF)
        elif a_ == 2 and r_ == 2:
            want.append(l_**2 + 2 * s_**2)
        elif a_ == 2:
            want.append(float(_gaussian(r_, l_, math.sqrt(2) * s_)))
        elif l_ == 0:
            want.append(float(_stable_centred(r_, a_, b_, s_)))
        else:
            want.append(float(_stable_by_characteristic_function(r_, a_, b_, l_, s_)))
    _check(got, want, r, np.where(a < 2, a, INF), rtol=1e-10)


def test_power_tails_at_their_tail_index():
    """Pareto, Student-t and Frechet of tail index ``a``, lane by lane: ``1 + eps = a`` (``inf``), just
    above ``a`` (``inf``), just below it centred (closed forms: ``a / (a - r)``, the Student-t's and
    Frechet's Gamma ratios) and with a kink of ``|x|`` inside the support (:func:`_pareto`,
    :func:`_student_t`, :func:`_frechet`), and ``eps = 1`` with ``a = 2`` (``inf``) or just above 2
    (``loc^2`` plus the variance, ``~ 1 / (a - 2)``).

    Mutations caught (measured on Pareto): ``r <= a`` for the divergence (the equal lanes finite); a
    floor of ``1e-5`` on the tail's rate ``a - r`` (the lanes just below ``a`` 2.5e-4 off; a floor of
    ``1e-6``, 5% above their rate, passes); the kink of ``|x|`` not split at (the lane with ``loc``
    inside the support 3e-9 off, twice its bound).
    """
    a = np.array([1.5, 1.5 - GAP, 1.5 + GAP, 1.5 + GAP, 2.0, 2.0 + GAP])
    eps = np.array([0.5, 0.5, 0.5, 0.5, 1.0, 1.0])
    r, near, above = 1.0 + eps, a[2], a[5]  # r = 1.5, 1.5, 1.5, 1.5, 2, 2
    s = 2.0

    pareto = htb.Pareto(loc=np.array([0.0, 0.0, near / (near - 1.0), 0.0, 0.5, 0.5]), shape=a)
    want = [INF, INF, near / (near - 1.5), float(_pareto(1.5, near, 0.0)),
            INF, 0.25 + above / ((above - 1) ** 2 * (above - 2))]
    _check(pareto.abs_moment(eps), want, r, a, rtol=1e-12)

    student_t = htb.StudentT(loc=np.array([0.0, 0.0, 0.0, 0.7, 0.5, 0.5]), df=a, scale=s)
    centred = s**1.5 * mp.mpf(near) ** 0.75 * mp.gamma(1.25) * mp.gamma((near - 1.5) / 2) / (
        mp.sqrt(mp.pi) * mp.gamma(mp.mpf(near) / 2))
    want = [INF, INF, float(centred), float(_student_t(1.5, near, 0.7, s)),
            INF, 0.25 + s**2 * above / (above - 2)]
    _check(student_t.abs_moment(eps), want, r, a, rtol=1e-12)

    mean_w = math.gamma(1 - 1 / near)  # E W: loc = s E W centres the law at 0
    frechet = htb.Frechet(loc=np.array([0.0, 0.0, s * mean_w, 0.0, 0.5, 0.5]), shape=a, scale=s)
    variance = s**2 * (mp.gamma(1 - 2 / mp.mpf(above)) - mp.gamma(1 - 1 / mp.mpf(above)) ** 2)
    want = [INF, INF, float(s**1.5 * mp.gamma(1 - 1.5 / mp.mpf(near))), float(_frechet(1.5, near, 0.0, s)),
            INF, float(0.25 + variance)]
    _check(frechet.abs_moment(eps), want, r, a, rtol=1e-12)


def test_light_tails_and_point_masses_at_eps_1():
    """``eps = 1`` (``E X^2 = loc^2 + variance``) for the families with every moment: Gaussian
    (also ``scale = 0``, a point mass: ``|loc|^r``), LogNormal up to ``sigma = 8``, the top of its
    range (``E X^2 ~ e^128``, carried by ``z`` near ``2 sigma``), TwoPoint at ``p = 0``, 1 and
    ``1e-12`` with a spike of ``1e6``, and :func:`htb.Dirac`; the point masses also at ``eps = 0.5``.

    Mutations caught: LogNormal's bump of ``|X|^r phi(z)`` at ``z = r sigma`` left to the tail's
    nodes in ``log z`` (5.9e-5 off at ``sigma = 8``), a dropped term or ``0 * inf`` at ``p = 0`` or 1,
    a Gaussian point mass divided by its zero scale (``nan``).
    """
    loc, scale = np.array([-0.6, 0.0, 2.5, -1.5]), np.array([1.7, 1.0, 0.0, 0.0])
    got = htb.Gaussian(loc=loc, scale=scale).abs_moment(np.array([1.0, 1.0, 1.0, 0.5]))
    want = [0.36 + 1.7**2, 1.0, 6.25, 1.5**1.5]
    _check(got, want, np.array([2.0, 2.0, 2.0, 1.5]), INF, rtol=1e-12)

    sigma, loc = np.array([1.0, 8.0, 8.0]), np.array([0.3, 0.3, -2.0])
    got = htb.LogNormal(loc=loc, sigma=sigma, scale=2.0).abs_moment(1.0)
    want = [float(l_**2 + 4 * mp.expm1(mp.mpf(s_) ** 2) * mp.exp(mp.mpf(s_) ** 2))
            for l_, s_ in zip(loc, sigma, strict=True)]
    _check(got, want, 2.0, INF, rtol=1e-12)

    low, high = np.array([-1.0, -1.0, 0.5, 3.0]), np.array([3.0, 3.0, 1e6, -2.0])
    p = np.array([0.0, 1.0, 1e-12, 0.25])
    for eps in (1.0, 0.5):
        r = 1.0 + eps
        got = htb.TwoPoint(low=low, high=high, p=p).abs_moment(eps)
        want = (1 - p) * np.abs(low) ** r + p * np.abs(high) ** r
        _check(got, want, r, INF, rtol=1e-12)
        assert float(htb.Dirac(-2.0).abs_moment(eps)) == 2.0**r


def test_a_location_far_beyond_the_scale():
    # E X^2 = loc^2 + scale^2 var(Z) in closed form. With the kink -loc/scale at 1e4 and beyond, the law's bulk
    # lay on one tanh-sinh piece from -1 to the kink: 5e-8 of a Gaussian's moment lost at 1e4, 7e-5 at 1e6,
    # 4e-9 and 4e-6 of a Student-t's. Within the documented relative accuracy of about 1e-12 now.
    for ratio in (1e2, 1e4, 1e6, 1e8):
        for law, variance in ((htb.Gaussian(loc=ratio, scale=1.0), 1.0), (htb.StudentT(loc=-ratio, df=3.0), 3.0),
                              (htb.Gaussian(loc=1.0, scale=1.0 / ratio), ratio**-2)):
            exact = float(law.loc) ** 2 + variance
            assert abs(float(law.abs_moment(1.0)) / exact - 1.0) < 1e-12, (law, ratio)
