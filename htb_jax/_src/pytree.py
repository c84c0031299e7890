"""Frozen dataclasses registered as pytrees, with the class in the tree structure.

``jax.tree_util.register_dataclass`` builds tree structures that compare equal
across different classes with the same field layout (jax 0.10: ``Pareto(loc,
shape)`` and ``Gaussian(loc, scale)`` have equal ``PyTreeDef``s), so a cached
trace for one family could be reused for another.  Registering each class
through ``register_pytree_with_keys`` keeps the class in the structure.
Unflattening bypasses ``__init__``: validation runs where users construct a
value, not when JAX rebuilds one from tracers or placeholder leaves.

A user's policy or law registered with ``register_dataclass`` (as the guide to
one's own code shows) has such a structure, and ``jax.jit``'s caches, which
hash a structure by its class but compare it without, can then hand one
class's program to another class of the same layout: an edited policy
re-imported in a notebook, or two laws with the same fields.  Every program that takes a user's tree is
therefore compiled by :func:`class_keyed_jit`, whose cache key holds the
classes of every node (:func:`node_classes`), and, for a class defined outside
htb_jax, the digest of the code it runs (:mod:`htb_jax._src.code_digest`): an
edited method, helper function or global value traces the program again.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src.code_digest import class_digest, is_users, value_digest


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


def node_classes(tree: Any) -> tuple[type, ...]:
    """The class of every node of ``tree``'s structure, root first, depth first (leaves excluded).

    Examples:
      >>> import htb_jax as htb
      >>> [c.__name__ for c in node_classes((htb.UCB1(), None))]
      ['tuple', 'UCB1', 'NoneType']
    """
    return tuple(c for c, _ in tree_nodes(jax.tree_util.tree_structure(tree)))


def code_keyed_classes(tree: Any) -> tuple:
    """:func:`node_classes`, each class defined outside htb_jax and the libraries paired with the digest
    of the code it runs now (:func:`~htb_jax._src.code_digest.class_digest`) and with the digest of its
    node's static data (:func:`~htb_jax._src.code_digest.value_digest`: a function held in a static field
    is followed as the code is): a key of compiled programs and of checks that an edited method, helper
    or global value changes."""
    return tuple((c, class_digest(c), value_digest(aux)) if is_users(c) else c
                 for c, aux in tree_nodes(jax.tree_util.tree_structure(tree)))


def tree_nodes(treedef) -> tuple[tuple[type, Any], ...]:
    """``(class, static data)`` of every node of ``treedef``, root first, depth first."""
    data = treedef.node_data()
    own = () if data is None else (data,)
    return own + tuple(node for child in treedef.children() for node in tree_nodes(child))


def abstract_signature(tree: Any) -> tuple:
    """The classes, tree structure and leaf shapes and dtypes of ``tree``: all that an abstract evaluation
    sees (a program traced with abstract parameters cannot depend on their values), so a check that
    passed for one value passes for every value of the same signature.  The classes are explicit: tree
    structures of different classes may compare equal; a user's class comes with the digest of its code
    (:func:`code_keyed_classes`), so an edited one is checked again."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return code_keyed_classes(tree), treedef, tuple((np.shape(x), jnp.result_type(x).name) for x in leaves)


_PROGRAM_SALT: contextvars.ContextVar[str | None] = contextvars.ContextVar("htb_jax_program_salt", default=None)


@contextlib.contextmanager
def keyed_by(salt: str | None):
    """Within this context, every :func:`class_keyed_jit` program is keyed by ``salt`` too (``None``:
    not at all), so that none traced before it, or under another salt, is reused.

    A store's chunks of a user's code are computed under its fingerprint (:func:`~htb_jax._src.chunk_store.run_chunks`):
    the fingerprint traces the code as it is now, and a program traced earlier in the process from code
    edited since, in a way the code's digest does not see (an array beyond 1 MiB edited in place), would
    otherwise compute chunks stored under the new code's fingerprint.
    """
    token = _PROGRAM_SALT.set(salt)
    try:
        yield
    finally:
        _PROGRAM_SALT.reset(token)


def class_keyed_jit(
    fun: Callable, *, static_argnums: int | Sequence[int] = (), static_argnames: str | Sequence[str] = (), **jit_kwargs
) -> Callable:
    """``jax.jit(fun, ...)`` whose compiled programs are keyed by the classes of its arguments' nodes too, a
    user's class with the digest of the code it runs (:func:`code_keyed_classes`).

    A program traced for one class is never reused for another whose tree structure compares equal
    (see the module's docstring).  The returned callable takes ``fun``'s arguments; its ``lower``
    and ``trace`` attributes are ``jax.jit``'s for the same arguments.

    Args:
      fun: the function to compile.
      static_argnums, static_argnames: as for ``jax.jit``: arguments that are not traced (their
        nodes' classes are not read).
      **jit_kwargs: ``jax.jit``'s other options (``out_shardings``, ``compiler_options``, ...).
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    signature = inspect.signature(fun)
    # Each static argument by position and by name, as jax.jit infers them when given one kind only.
    positional = [p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums = tuple(sorted({*nums, *(i for i, name in enumerate(positional) if name in names)}))
    names = tuple(dict.fromkeys((*names, *(positional[i] for i in nums if i < len(positional)))))

    def keyed(classes, *args, **kwargs):
        del classes  # a static argument: a key of the compiled programs only
        return fun(*args, **kwargs)

    first = inspect.Parameter("classes", inspect.Parameter.POSITIONAL_ONLY)
    keyed.__signature__ = signature.replace(parameters=[first, *signature.parameters.values()])
    # The name jax.jit would give the program (a partial's function's), in logs and profiles.
    keyed.__name__ = keyed.__qualname__ = getattr(fun, "__name__", None) or getattr(fun, "func", fun).__name__
    jitted = jax.jit(keyed, static_argnums=(0, *(i + 1 for i in nums)), static_argnames=names, **jit_kwargs)

    def classes(args, kwargs):
        traced = [a for i, a in enumerate(args) if i not in nums], {k: v for k, v in kwargs.items() if k not in names}
        salt = _PROGRAM_SALT.get()
        return code_keyed_classes(traced) if salt is None else (code_keyed_classes(traced), salt)

    def call(*args, **kwargs):
        return jitted(classes(args, kwargs), *args, **kwargs)

    call.lower = lambda *args, **kwargs: jitted.lower(classes(args, kwargs), *args, **kwargs)
    call.trace = lambda *args, **kwargs: jitted.trace(classes(args, kwargs), *args, **kwargs)
    call.__name__ = call.__qualname__ = keyed.__name__
    call.__doc__ = fun.__doc__
    return call
