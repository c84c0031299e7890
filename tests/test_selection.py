"""Exact order statistics by bisection on order-preserving keys."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import selection


def _awkward_rows(dtype, rows=60, width=37):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, width)).astype(dtype)
    x[1, 5] = np.inf
    x[2, :3] = -np.inf
    x[3, 2] = np.nan
    x[4] = 1.0  # all ties
    x[5, ::2], x[5, 1::2] = -0.0, 0.0
    x[6] = np.round(x[6])  # many ties
    x[7] *= np.float32(1e-40) if dtype == np.float32 else 1e-310  # subnormals
    x[8] = np.finfo(dtype).max * np.sign(x[8])
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 2, 19, 36, 37])
def test_equals_sorting(dtype, k):
    x = _awkward_rows(dtype)
    got = np.asarray(htb.kth_smallest(jnp.asarray(x), k))
    np.testing.assert_array_equal(got, np.sort(x, axis=-1)[:, k - 1])


def test_per_row_ranks_and_other_axis():
    x = _awkward_rows(np.float32)
    k = np.arange(1, x.shape[0] + 1) % x.shape[1] + 1
    got = np.asarray(htb.kth_smallest(jnp.asarray(x), jnp.asarray(k)))
    np.testing.assert_array_equal(got, np.sort(x, axis=-1)[np.arange(x.shape[0]), k - 1])
    got0 = np.asarray(htb.kth_smallest(jnp.asarray(x.T), 30, axis=0))
    np.testing.assert_array_equal(got0, np.sort(x, axis=-1)[:, 29])


def test_out_of_range_rank_is_nan():
    x = jnp.arange(5.0, dtype=jnp.float32)
    assert np.isnan(float(htb.kth_smallest(x, 0)))
    assert np.isnan(float(htb.kth_smallest(x, 6)))


def test_order_keys_are_monotone_and_invertible():
    x = np.sort(_awkward_rows(np.float64).ravel())
    x = x[~np.isnan(x) & (x != 0)]
    keys = np.asarray(selection.order_keys(jnp.asarray(x)))
    assert np.all(keys[1:] >= keys[:-1])
    np.testing.assert_array_equal(np.asarray(selection.from_order_keys(jnp.asarray(keys), jnp.float64)), x)
    special = np.asarray(selection.order_keys(jnp.array([-np.inf, -0.0, 0.0, np.inf, np.nan, -np.nan])))
    assert special[0] < special[1] < special[2] < special[3] < special[4] == special[5]


def test_jit_equals_eager_and_vmap_equals_loop():
    x = jnp.asarray(_awkward_rows(np.float32))
    with jax.disable_jit():
        eager = htb.kth_smallest(x, 7)
    np.testing.assert_array_equal(htb.kth_smallest(x, 7), eager)
    # rows of the NumPy array (iterating over the jax array would compile a 60-output unstack)
    looped = np.array([float(htb.kth_smallest(jnp.asarray(row), 7)) for row in np.asarray(x)])
    np.testing.assert_array_equal(jax.vmap(lambda r: htb.kth_smallest(r, 7))(x), looped)
