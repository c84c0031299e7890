"""Anytime AdaR-ETC by the doubling trick."""

import jax
import numpy as np
import pytest
from reference_policies import anytime_adar_etc

import htb_jax as htb
from conftest import engine_arms


@pytest.mark.parametrize("growth", [2.0, 1.5])
def test_same_arms_as_the_reference_loop(growth):
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=2, gap=0.3)
    policy = htb.AnytimeAdaRETC(eps=1.0, alpha=0.7, q=0.0, growth=growth)
    _, arms, tables = engine_arms(policy, nu, 2000, 2, jax.random.key(9))
    for s in range(2):
        np.testing.assert_array_equal(arms[s], anytime_adar_etc(tables[s], 2000, 1.0, 0.7, 0.0, growth))


def test_anytime_prefix_property():
    # The policy never looks at T: a shorter horizon sees a prefix of the same run.
    nu = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.5)
    policy = htb.AnytimeAdaRETC.order_free()
    long = htb.simulate(jax.random.key(10), policy, nu, 3000, 2, record_arms=True)
    short = htb.simulate(jax.random.key(10), policy, nu, 1000, 2, record_arms=True)
    np.testing.assert_array_equal(short.arms, long.arms[:, :1000])


def test_growth_range():
    with pytest.raises(ValueError, match=r"growth must lie in \[1.1, 16\]; got growth=1.05"):
        htb.AnytimeAdaRETC(eps=1.0, alpha=0.7, q=0.0, growth=1.05)
