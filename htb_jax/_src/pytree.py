"""Frozen dataclasses registered as pytrees, with the class in the tree structure.

``jax.tree_util.register_dataclass`` builds tree structures that compare equal
across different classes with the same field layout (jax 0.10: ``Pareto(loc,
shape)`` and ``Gaussian(loc, scale)`` have equal ``PyTreeDef``s), so a cached
trace for one family could be reused for another.  Registering each class
through ``register_pytree_with_keys`` keeps the class in the structure.
Unflattening bypasses ``__init__``: validation runs where users construct a
value, not when JAX rebuilds one from tracers or placeholder leaves.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def static_field(**kwargs):
    """A dataclass field that is part of the tree structure, not a leaf."""
    return dataclasses.field(metadata=dict(static=True), **kwargs)


def dataclass(cls):
    """``@dataclass(frozen=True)`` plus registration as a pytree (static fields as aux data)."""
    cls = dataclasses.dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)
    data = tuple(f.name for f in fields if not f.metadata.get("static"))
    meta = tuple(f.name for f in fields if f.metadata.get("static"))

    def flatten_with_keys(obj):
        children = [(jax.tree_util.GetAttrKey(name), getattr(obj, name)) for name in data]
        return children, tuple(getattr(obj, name) for name in meta)

    def flatten(obj):
        return [getattr(obj, name) for name in data], tuple(getattr(obj, name) for name in meta)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for name, value in zip(data, children, strict=True):
            object.__setattr__(obj, name, value)
        for name, value in zip(meta, aux, strict=True):
            object.__setattr__(obj, name, value)
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    return cls


def abstract_signature(tree: Any) -> tuple:
    """The class, tree structure and leaf shapes and dtypes of ``tree``: all that an abstract evaluation
    sees (a program traced with abstract parameters cannot depend on their values), so a check that
    passed for one value passes for every value of the same signature.  The class is explicit: tree
    structures of different classes may compare equal."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return type(tree), treedef, tuple((np.shape(x), jnp.result_type(x).name) for x in leaves)
