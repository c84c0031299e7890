"""ForceMoM against the reference loop; its exploration count is D_t."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_policies import force_mom as force_mom_reference

import htb_jax as htb
from conftest import engine_arms
from htb_jax._src.policies import force_mom


def test_same_arms_as_the_reference_loop():
    # K = 3: m0 = 35, so the first K m0 = 105 rounds are the initial forced pulls; at T = 3000,
    # D_T = ceil(3^(1 - rho) 3000^rho) = 190 (rho = 0.6) and 532 (rho = 0.75): the rate-driven
    # forced pulls interleaved with exploitation are most of the exploration.
    k, horizon, rhos = 3, 3000, (0.6, 0.75)
    m0 = force_mom.initial_pulls(k)
    nu = htb.equal_gap(htb.Frechet(loc=0.0, shape=2.5), num_arms=k, gap=0.4)
    out, arms, tables = engine_arms(htb.ForceMoM(rho=jnp.array(rhos)), nu, horizon, 2, jax.random.key(5))
    for g, rho in enumerate(rhos):
        assert int(out.exploration[g, 0]) == math.ceil(k ** (1 - rho) * horizon**rho) > k * m0
        for s in range(2):
            reference, forced = force_mom_reference(tables[s], horizon, rho)
            np.testing.assert_array_equal(arms[g, s], reference)
            assert int(out.exploration[g, s]) == forced


def test_exploration_count_is_d_t_at_every_checkpoint():
    k, rho = 4, 0.55
    m0 = math.ceil(16 * math.log(2 * k + math.e))
    assert force_mom.initial_pulls(k) == m0 == 38
    horizons = [k * m0, 200, 1000, 3000, 8000]
    nu = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=k, gap=0.5)
    out = htb.simulate(jax.random.key(6), htb.ForceMoM(rho), nu, horizons, 2)
    expected = [max(k * m0, math.ceil(k ** (1 - rho) * t**rho)) for t in horizons]
    np.testing.assert_array_equal(out.exploration, np.array(expected)[:, None].repeat(2, 1))


def test_block_counts():
    # q(n): the largest odd integer <= min(n, 2 ceil(log 2K + log log(e^e + n)) + 1).
    n = np.array([1, 2, 3, 10, 100, 10**6])
    cap = 2 * np.ceil(np.log(8) + np.log(np.log(np.exp(np.e) + n))) + 1
    expected = np.minimum(n, cap)
    expected = np.where(expected % 2 == 0, expected - 1, expected)
    np.testing.assert_array_equal(force_mom.num_blocks(jnp.asarray(n), 4), expected)


def test_rho_grid_is_one_program():
    nu = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.5)
    out = htb.simulate(jax.random.key(7), htb.ForceMoM(jnp.array([0.4, 0.7])), nu, 2000, 2)
    assert out.regret.shape == (2, 2)
    assert np.all(np.asarray(out.exploration[0]) < np.asarray(out.exploration[1]))


@pytest.mark.parametrize("rho", [0.0, 1.0, -0.5])
def test_rho_range(rho):
    with pytest.raises(ValueError, match=r"rho must lie in \(0, 1\)"):
        htb.ForceMoM(rho)
