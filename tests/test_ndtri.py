"""``lower_tail_magnitude``: Cephes' coefficients against SciPy's ``ndtri`` in float64, and the
coefficient selection bit for bit against all three approximations computed and then selected."""

import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special

from htb_jax._src import ndtri

_NORMAL_MIN, _HALF = 0x00800000, 0x3F000000  # bit patterns of 2^-126 and 1/2


def _all_three_then_select(p):
    """``-ndtri(p)`` in float32 as branch-free code writes Cephes: the three rational functions
    (``jnp.polyval`` of the unpadded coefficients) for every element, then a selection; the form of
    ``jax.scipy.special.ndtri`` up to jax 0.10, which defined the Gaussian draws."""
    f32 = np.float32
    w = p - f32(0.5)
    ww = jax.lax.square(w)
    z = jax.lax.sqrt(f32(-2.0) * jax.lax.log(p))

    def rational(numerator, denominator, t):
        return jnp.polyval(jnp.asarray(numerator, jnp.float32), t) / jnp.polyval(
            jnp.asarray(denominator, jnp.float32), t)

    def tail(numerator, denominator):
        return (z - jax.lax.log(z) / z) - rational(numerator, denominator, 1 / z) / z

    central = (w + w * ww * rational(ndtri._P0, ndtri._Q0, ww)) * -f32(math.sqrt(2.0 * math.pi))
    beyond = jnp.where(z >= f32(8.0), tail(ndtri._P2, ndtri._Q2), tail(ndtri._P1, ndtri._Q1))
    return jnp.where(p > f32(math.exp(-2.0)), central, beyond)


def _both(p):
    p = jnp.asarray(p, jnp.float32)
    return (np.asarray(jax.jit(ndtri.lower_tail_magnitude)(p)),
            np.asarray(jax.jit(_all_three_then_select)(p)))


def test_coefficients_are_cephes_to_double_precision():
    # The module's three approximations evaluated in float64 against SciPy's ndtri (Cephes in
    # double): at most 4.6e-16 relative here.  A coefficient changed by 1e-9 of itself moves the
    # result by about 2e-10, so a wrong digit anywhere in the first 13 is caught, far below what
    # float32 resolves.
    p = np.concatenate([np.linspace(math.exp(-2.0) * (1 + 1e-4), 0.5, 2000),
                        np.geomspace(math.exp(-32.0) * (1 + 1e-4), math.exp(-2.0), 2000),
                        np.geomspace(1e-300, math.exp(-32.0) * (1 - 1e-4), 2000)])

    def rational(numerator, denominator, t):
        return np.polyval(np.array(numerator), t) / np.polyval(np.array(denominator), t)

    w, z = p - 0.5, np.sqrt(-2.0 * np.log(p))
    central = -(w + w**3 * rational(ndtri._P0, ndtri._Q0, w * w)) * math.sqrt(2.0 * math.pi)
    near = z - np.log(z) / z - rational(ndtri._P1, ndtri._Q1, 1 / z) / z
    far = z - np.log(z) / z - rational(ndtri._P2, ndtri._Q2, 1 / z) / z
    got = np.where(p > math.exp(-2.0), central, np.where(z >= 8.0, far, near))
    want = -special.ndtri(p)
    np.testing.assert_allclose(got, want, rtol=2e-15, atol=0)


def test_every_float32_at_a_stride_equals_the_three_approximations():
    # Every 61st normal float32 in [2^-126, 1/2] (17 million values, all three approximations:
    # p > e^-2, e^-32 < p <= e^-2 and p <= e^-32).  A swapped branch condition, a padding that is
    # not exact or a reordered operation moves the last bit of most values in its range.
    bits = np.arange(_NORMAL_MIN, _HALF + 1, 61, dtype=np.uint32)
    p = bits.view(np.float32)
    assert p.min() < math.exp(-32) < math.exp(-2) < p.max()
    got, want = _both(p)
    np.testing.assert_array_equal(got, want)


def test_branch_edges_and_extremes_equal_the_three_approximations():
    # 1000 consecutive float32 on each side of each branch edge (p = e^-2; z = 8, i.e. p = e^-32),
    # the smallest normal float32, the smallest tail probability a word gives (2^-66) and 1/2.
    edges = [np.float32(math.exp(-2.0)), np.float32(math.exp(-32.0)), np.float32(2.0**-126),
             np.float32(2.0**-66), np.float32(0.5)]
    bits = np.concatenate([e.view(np.uint32) + np.arange(-1000, 1001) for e in edges]).astype(np.uint32)
    p = bits.view(np.float32)
    p = p[(p >= 2.0**-126) & (p <= 0.5)]
    got, want = _both(p)
    np.testing.assert_array_equal(got, want)
    assert np.all(got >= 0) and got[p == 0.5] == 0.0
