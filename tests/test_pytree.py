"""Pytree registration keeps the class in the tree structure."""

import jax
import jax.numpy as jnp

import htb_jax as htb


def test_families_with_the_same_layout_have_different_structures():
    # Pareto(loc, shape) and Gaussian(loc, scale): a cached trace must never be shared.
    assert jax.tree.structure(htb.Pareto(0.0, 2.0)) != jax.tree.structure(htb.Gaussian(0.0, 2.0))
    assert jax.tree.structure(htb.AdaRETC(1.0, 0.8, 0.0)) != jax.tree.structure(htb.EmpiricalETC(1.0, 0.8, 0.0))
    fn = jax.jit(lambda d: d.mean() + d.abs_moment(1.0))
    pareto, gaussian = fn(htb.Pareto(0.0, 3.0)), fn(htb.Gaussian(0.0, 3.0))
    assert float(pareto) == float(htb.Pareto(0.0, 3.0).abs_moment(1.0))
    assert float(gaussian) == float(htb.Gaussian(0.0, 3.0).abs_moment(1.0))


def test_static_fields_and_unflattening_skip_validation():
    policy = htb.RobustUCB(1.0, v=jnp.array([1.0, 2.0]), estimator="mom")
    leaves, structure = jax.tree.flatten(policy)
    assert len(leaves) == 2  # eps and v; u is None, estimator is static
    rebuilt = jax.tree.unflatten(structure, [object(), object()])  # no validation on rebuild
    assert rebuilt.estimator == "mom"
    assert jax.tree.map(lambda x: x * 2, policy).v.tolist() == [2.0, 4.0]
