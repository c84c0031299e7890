"""``lower_tail_magnitude`` against ``jax.scipy.special.ndtri``: bit for bit on float32."""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy import special

from htb_jax._src import ndtri

_NORMAL_MIN, _HALF = 0x00800000, 0x3F000000  # bit patterns of 2^-126 and 1/2


def _both(p):
    p = jnp.asarray(p, jnp.float32)
    return np.asarray(jax.jit(ndtri.lower_tail_magnitude)(p)), np.asarray(jax.jit(lambda q: -special.ndtri(q))(p))


def test_every_float32_at_a_stride_equals_ndtri():
    # Every 61st normal float32 in [2^-126, 1/2] (17 million values, all three approximations:
    # p > e^-2, e^-32 < p <= e^-2 and p <= e^-32).  A wrong coefficient, a swapped branch
    # condition or a reordered operation moves the last bit of most values in its range.
    bits = np.arange(_NORMAL_MIN, _HALF + 1, 61, dtype=np.uint32)
    p = bits.view(np.float32)
    assert p.min() < math.exp(-32) < math.exp(-2) < p.max()
    got, want = _both(p)
    np.testing.assert_array_equal(got, want)


def test_branch_edges_and_extremes_equal_ndtri():
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
