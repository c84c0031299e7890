"""Pytree registration keeps the class in the tree structure, and programs are keyed by class.

The library's own classes are registered with their class in the tree structure.  A user's class
registered with ``jax.tree_util.register_dataclass`` (the registration the README shows for a
policy or a law) is not: classes with the same fields have tree structures that compare equal, and
``jax.jit``'s caches can then return the program traced for one class when called with the other
(an edited class re-imported in a notebook, or two laws with the same fields, would silently run
the old code).  Measured without the class key on jax 0.10: 10 to 15 of the 64 reward tables
below, and 31 to 33 of the 200 traces through a plain ``jax.jit`` below, came from another class's
program.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxpr_as_fun

import htb_jax as htb
from htb_jax._src.pytree import class_keyed_jit, node_classes


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


def _scaled(k):
    """A new class (same fields, same name) whose ``f`` multiplies by ``k``."""

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class Scaled:
        c: jax.Array

        def f(self):
            return self.c * k

    return Scaled


def _constant_law(k):
    """A new reward law class (same fields, same name) whose every reward is ``loc + k``."""

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class Constant(htb.Distribution):
        loc: jax.Array

        def from_bits(self, words):
            return jnp.asarray(self.loc, jnp.float32) + jnp.zeros(words.shape[:-1], jnp.float32) + k

        def mean(self):
            return jnp.asarray(self.loc, jnp.float64) + k

        def eps_sup(self):
            return jnp.full(self.batch_shape, jnp.inf)

    return Constant


def test_the_hazard_exists_in_this_jax():
    """The premise: two classes of one layout have equal tree structures (if a jax release fixes this,
    the class key costs nothing and this test says so)."""
    a, b = _scaled(1.0)(1.0), _scaled(2.0)(1.0)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    assert node_classes(a) != node_classes(b)


def test_class_keyed_jit_runs_each_class_its_own_program():
    """200 classes of one layout traced through one function with a static argument (traces are what a
    store's fingerprint hashes), then compiled and called, by keyword and through ``lower``: each gives
    its own ``c * k * n``.  Catches a key without the classes (31 of 200 traces another class's, as
    measured), the static argument shifted onto the classes, and ``lower`` unkeyed."""
    f = class_keyed_jit(lambda tree, n: tree.f() * n, static_argnums=1)
    traced = [jaxpr_as_fun(f.trace(_scaled(float(k))(jnp.float32(1.0)), 2).jaxpr)(jnp.float32(1.0))[0] for k in range(200)]
    np.testing.assert_array_equal(np.array(traced, np.float32), 2.0 * np.arange(200))
    assert [float(f(_scaled(k)(jnp.float32(1.0)), 3)) for k in (4.0, 6.0)] == [12.0, 18.0]

    g = class_keyed_jit(lambda tree, *, n: tree.f() * n, static_argnames="n")
    assert [float(g(_scaled(k)(jnp.float32(1.0)), n=2)) for k in (3.0, 5.0)] == [6.0, 10.0]
    lowered = [g.lower(_scaled(k)(jnp.float32(1.0)), n=1).compile()(_scaled(k)(jnp.float32(1.0))) for k in (7.0, 9.0)]
    assert [float(x) for x in lowered] == [7.0, 9.0]


def test_reward_tables_of_laws_of_one_layout_are_their_own():
    """64 user laws of one layout (``register_dataclass``, the field ``loc``), each re-defined as a
    notebook cell re-run would: each ``htb.reward_table`` is its own law's constant.  Catches
    ``reward_table``'s program keyed by tree structure alone (15 of 64 tables another law's, as
    measured)."""
    key = jax.random.key(0)
    firsts = [float(htb.reward_table(key, _constant_law(k)(jnp.zeros(2, jnp.float32)), 4)[0, 0]) for k in range(64)]
    np.testing.assert_array_equal(firsts, np.arange(64, dtype=np.float32))
