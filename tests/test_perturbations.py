"""Perturbation laws: the law of each quantile map (KS against SciPy), the exact extreme tails,
the Gamma quantile's accuracy, and parameter validation."""

import functools
import math
from decimal import Decimal, localcontext

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

import htb_jax as htb
from htb_jax._src import perturbations, round_stream

# (law, shape, scale, the SciPy distribution); Frechet at p = 2 and p = 1.3 (shape p^2/(p-1)).
CONTINUOUS = [
    ("frechet", 4.0, 1.0, stats.invweibull(4.0)),
    ("frechet", 1.69 / 0.3, 2.0, stats.invweibull(1.69 / 0.3, scale=2.0)),
    ("pareto", 3.0, 0.5, stats.pareto(3.0, scale=0.5)),
    ("pareto", 1.2, 1.0, stats.pareto(1.2)),
    ("weibull", 0.7, 2.0, stats.weibull_min(0.7, scale=2.0)),
    ("weibull", 1.0, 1.0, stats.expon()),
    ("gumbel", None, 1.5, stats.gumbel_r(scale=1.5)),
    ("uniform", None, None, stats.uniform()),
    ("symmetric_uniform", None, None, stats.uniform(-1.0, 2.0)),
]
# Gamma (shape, scale) of the KS test on the stream's draws; the shapes of the accuracy grid (scale 1).
GAMMA_KS = [(0.1, 1.0), (2.5, 0.5)]
GAMMA_GRID = [0.1, 0.35, 1.0, 2.5, 10.0, 100.0, 1000.0]
NUM_DRAWS = 4096
EXPONENTS = (65, 64, 40)  # extreme levels 2^-e in both tails
# Levels 2^-65, 2^-64, .. 1/2, increasing, for the Gamma accuracy grid (both tails).
GRID_LEVELS = np.sort(np.concatenate([2.0 ** -np.arange(65.0, 1.0, -3.0), [2.0**-64], np.linspace(0.02, 0.48, 24),
                                      [0.4999999]]))


def _name(law, shape, scale):
    return f"{law} {shape} {scale}"


@functools.cache
def _evaluated():
    """Every law at every level the tests read, in one compiled program (one Gamma Newton loop).

    Levels: 4096 pairs of the engine's round stream (rounds 1..512, words 0..7 of one seed), then
    ``U = 2^-e`` and ``1 - U = 2^-e`` for each ``e`` in ``EXPONENTS``.  Gamma: the stream's levels for
    each of ``GAMMA_KS``, then ``GAMMA_GRID`` x the grid's levels (lower tail, then upper tail), as
    one flat vector.  Returns the levels ``u`` and a dict of draws per law.
    """
    key = htb.seed_keys(jax.random.key(7), 1)[0]
    u, v = jax.jit(jax.vmap(lambda t: round_stream.uniforms(key, t, 8)))(jnp.arange(1, NUM_DRAWS // 8 + 1))
    q = np.array([2.0**-e for e in EXPONENTS])
    u = jnp.concatenate([u.ravel(), jnp.asarray(q), 1.0 - jnp.asarray(q)])
    v = jnp.concatenate([v.ravel(), 1.0 - jnp.asarray(q), jnp.asarray(q)])
    grid_u = np.tile(np.concatenate([GRID_LEVELS, 1.0 - GRID_LEVELS]), len(GAMMA_GRID))
    grid_v = np.tile(np.concatenate([1.0 - GRID_LEVELS, GRID_LEVELS]), len(GAMMA_GRID))
    gamma_u = jnp.concatenate([jnp.tile(u[:NUM_DRAWS], len(GAMMA_KS)), grid_u])
    gamma_v = jnp.concatenate([jnp.tile(v[:NUM_DRAWS], len(GAMMA_KS)), grid_v])
    shapes = np.concatenate([np.repeat([a for a, _ in GAMMA_KS], NUM_DRAWS), np.repeat(GAMMA_GRID, grid_u.size // len(GAMMA_GRID))])
    scales = np.concatenate([np.repeat([s for _, s in GAMMA_KS], NUM_DRAWS), np.ones(grid_u.size)])

    @jax.jit
    def evaluate(u, v, gamma_u, gamma_v, shapes, scales):
        out = {_name(law, shape, scale): perturbations.quantile(law, u, v, shape, scale)
               for law, shape, scale, _ in CONTINUOUS}
        out["bernoulli"] = perturbations.quantile("bernoulli", u, v)
        out["rademacher"] = perturbations.quantile("rademacher", u, v)
        out["gamma"] = perturbations.quantile("gamma", gamma_u, gamma_v, shapes, scales)
        return out

    out = {k: np.asarray(x) for k, x in evaluate(u, v, gamma_u, gamma_v, shapes, scales).items()}
    split = len(GAMMA_KS) * NUM_DRAWS
    out["gamma ks"] = out["gamma"][:split].reshape(len(GAMMA_KS), NUM_DRAWS)
    out["gamma grid"] = out.pop("gamma")[split:].reshape(len(GAMMA_GRID), -1)
    return np.asarray(u), out


def _ks_draws():
    """(law, shape, scale, dist, the 4096 stream draws) for every continuous law, Gamma included."""
    _, out = _evaluated()
    rows = [(law, shape, scale, dist, out[_name(law, shape, scale)][:NUM_DRAWS]) for law, shape, scale, dist in CONTINUOUS]
    rows += [("gamma", a, s, stats.gamma(a, scale=s), out["gamma ks"][i]) for i, (a, s) in enumerate(GAMMA_KS)]
    return rows


def test_each_law_has_its_cdf():
    # KS over 4096 draws from the round stream, each law's quantile map against SciPy's CDF;
    # p-value above 1e-3, i.e. sqrt(n) D below about 1.95 (the Kolmogorov 0.999 quantile): a wrong
    # shape (1/a for a), a scale applied as a rate, or a half-range uniform fails by far at this n.
    for law, shape, scale, dist, x in _ks_draws():
        assert np.all(np.isfinite(x)), law
        assert stats.kstest(x, dist.cdf).pvalue > 1e-3, (law, shape, scale)
    # The two-point laws: the exact map (1 iff U > 1/2) and a frequency within 4 standard errors
    # (0.5 / sqrt(n)) of 1/2.
    u, out = _evaluated()
    ones = u[:NUM_DRAWS] > 0.5
    bernoulli, rademacher = out["bernoulli"][:NUM_DRAWS], out["rademacher"][:NUM_DRAWS]
    np.testing.assert_array_equal(bernoulli, np.where(ones, 1.0, 0.0))
    np.testing.assert_array_equal(rademacher, np.where(ones, 1.0, -1.0))
    assert abs(bernoulli.mean() - 0.5) <= 4 * 0.5 / math.sqrt(NUM_DRAWS)


def _decimal_quantile(law, shape, scale, u, one_minus_u):
    """``F^-1(U)`` from the CDF's closed form in 50-digit decimals (``u``, ``1 - u`` as exact Decimals)."""
    with localcontext() as ctx:
        ctx.prec = 50
        a = Decimal(shape) if shape is not None else None
        s = Decimal(scale)
        if law == "frechet":  # F = exp(-(x/s)^-a)
            return float(s * (-u.ln()) ** (-1 / a))
        if law == "pareto":  # F = 1 - (s/x)^a
            return float(s * one_minus_u ** (-1 / a))
        if law == "weibull":  # F = 1 - exp(-(x/s)^a)
            return float(s * (-one_minus_u.ln()) ** (1 / a))
        return float(-s * (-u.ln()).ln())  # gumbel: F = exp(-exp(-x/s))


def test_extreme_tails_are_exact():
    # U = 2^-e and 1 - U = 2^-e, e = 65 (the stream's smallest level), 64, 40: every quantile is
    # finite and equals the closed form evaluated in 50 digits to within float64 rounding (Gamma:
    # the accuracy grid below includes 2^-65 and 2^-64).  A map that computed 1 - U from U would
    # give inf or the bounded value 2^(53/a) at the heavy end, and lose all digits of a light end.
    _, out = _evaluated()
    m = len(EXPONENTS)
    for e_index, e in enumerate(EXPONENTS):
        q = 2.0**-e
        small, big = Decimal(q), 1 - Decimal(q)
        at = [NUM_DRAWS + e_index, NUM_DRAWS + m + e_index]  # U = q, then 1 - U = q
        for law, shape, scale, _ in CONTINUOUS:
            if law not in perturbations.HEAVY_LAWS:
                continue
            x = out[_name(law, shape, scale)][at]
            want = [_decimal_quantile(law, shape, scale, small, big), _decimal_quantile(law, shape, scale, big, small)]
            assert np.all(np.isfinite(x)), law
            np.testing.assert_allclose(x, want, rtol=4e-15, atol=0, err_msg=f"{law} shape={shape} e={e}")


def test_gamma_quantile_reaches_float64_resolution():
    # Levels 2^-65 .. 1/2 in both tails, shapes over the admissible [0.1, 1000], against SciPy's
    # gammaincinv / gammainccinv: within 1e-12 relative (measured: 1e-13, the accuracy of P(a, x)
    # itself times the quantile's condition number; five Newton steps instead of eight: 1e-8).
    _, out = _evaluated()
    shapes = np.array(GAMMA_GRID)[:, None]
    got = out["gamma grid"]
    assert np.all(np.isfinite(got))
    want = np.concatenate([special.gammaincinv(shapes, GRID_LEVELS), special.gammainccinv(shapes, GRID_LEVELS)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    # Increasing in U, as a quantile must be: the lower tail by increasing level, then the upper
    # tail by decreasing 1 - U.
    n = len(GRID_LEVELS)
    by_u = np.concatenate([got[:, :n], got[:, n:][:, ::-1]], axis=1)
    assert np.all(np.diff(by_u, axis=1) > 0)


@pytest.mark.parametrize(
    "args,message",
    [
        (("gamma", None, None), r'X\(perturbation="gamma"\) needs shape='),
        (("rademacher", None, 2.0), r'X\(perturbation="rademacher"\) takes no scale'),
        (("uniform", 1.0, None), r'X\(perturbation="uniform"\) takes no shape'),
        (("weibull", 0.005, None), r"largest draw \(at 1 - U = 2\^-65\) must be a finite float64; got shape=0.005"),
        (("gumbel", None, 1e307), r"must be a finite float64; got shape=.*, scale=1e\+307"),
        (("pareto", np.array([1.0, -2.0]), None), r"shape must lie in \(0, inf\).*got shape=-2 \(entry \[1\]\)"),
        (("levy", None, None), r"X: perturbation must be one of"),
    ],
)
def test_check_law_errors(args, message):
    law, shape, scale = args
    with pytest.raises(ValueError, match=message):
        perturbations.check_law("X", law, perturbations.HEAVY_LAWS + perturbations.BOUNDED_LAWS, shape, scale)
