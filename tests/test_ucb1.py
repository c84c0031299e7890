"""UCB1 through the engine against the round-by-round reference."""

import jax
import numpy as np
from reference_policies import ucb1

import htb_jax as htb
from conftest import engine_arms


def test_same_arms_as_the_reference_loop():
    nu = htb.equal_gap(htb.StudentT(loc=0.0, df=3.0), num_arms=3, gap=0.3)
    out, arms, tables = engine_arms(htb.UCB1(), nu, 600, 3, jax.random.key(1))
    for s in range(3):
        np.testing.assert_array_equal(arms[s], ucb1(tables[s], 600))
    gaps = np.asarray(htb.gaps(nu))
    np.testing.assert_allclose(out.regret, [gaps[arms[s]].sum() for s in range(3)], rtol=1e-12)
    np.testing.assert_array_equal(out.pulls, [np.bincount(arms[s], minlength=3) for s in range(3)])
