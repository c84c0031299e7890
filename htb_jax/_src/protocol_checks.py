"""Checks that a value given for a policy or a reward law is an object of the protocol.

A policy is an instance with ``kernel(spec)`` and a tuple ``batch_shape``
(:mod:`htb_jax._src.policy_protocol`), a reward law an ``htb.Distribution``;
both must be registered pytrees whose leaves are numbers or arrays, and a
policy's leaves must broadcast to its ``batch_shape``.  Each check runs in
Python on the value given, before anything is traced, and its ``TypeError``
names the function, the argument, what it must be and the value given, as
:mod:`htb_jax._src.validation`'s checks do.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from typing import Any

import jax
import numpy as np

from htb_jax._src.pytree import tree_nodes
from htb_jax._src.validation import given, shown

# How the note begins that the checks add to an error raised by a user's own code when they call it
# before a run ("(raised by MyPolicy's kernel.act, evaluated abstractly before the simulation)"):
# the command line shows such an error, of any class, in one line.
USER_CODE_NOTE = "(raised by "


def _type_names(types: tuple[type, ...]) -> str:
    names = [t.__name__ for t in types]
    text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return ("an " if text[0] in "AEIOU" else "a ") + text


def check_policy(name: str, value: Any, types: type | tuple[type, ...], function: str) -> None:
    """``TypeError`` unless ``value`` is a policy of one of ``types``, naming ``function`` and the types.

    For the functions that take particular policies (``regret_proxy`` takes an
    ``AdaRETC``, ``run_on_rewards`` an ``AdaRETC`` or ``EmpiricalETC``).

    Args:
      name: parameter name used in the message (``"policy"``).
      value: the value given.
      types: the accepted policy classes.
      function: the function's name, for the message.
    """
    types = types if isinstance(types, tuple) else (types,)
    accepted = _type_names(types)
    if value is None or isinstance(value, type):
        example = types[0].__name__
        raise TypeError(
            f"{function} takes {accepted} instance for {name}, such as htb.{example}(...); got {given(name, value)}."
        )
    if not isinstance(value, types):
        raise TypeError(f"{function} takes {accepted} for {name}; got {given(name, value)}.")
    check_policy_tree(name, value, function)


def is_policy_factory(value: Any) -> bool:
    """Whether ``value`` is a function that makes policies (``member -> policy`` for
    :func:`htb_jax.frontier.measure`, ``(eps, u) -> policy`` for :func:`htb_jax.bench.run`): a plain
    callable, not a policy instance (which has ``kernel``) or a class."""
    return callable(value) and not hasattr(value, "kernel") and not isinstance(value, type)


def refusing_signature(value: Any, arguments: str) -> inspect.Signature | None:
    """``value``'s signature where it cannot take ``arguments`` (comma-separated names, passed
    positionally), else ``None``; ``None`` also where it has no signature to read (a builtin: the
    call decides).  Read before ``value`` is called, for a message that names what it takes."""
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*arguments.split(", "))
    except TypeError:
        return signature
    return None


def check_policy_factory(name: str, value: Any, function: str, arguments: str) -> None:
    """``TypeError`` unless the function ``value`` (:func:`is_policy_factory`) accepts ``arguments``
    positionally (``"member"``, ``"eps, u"``), read from its signature before it is called.

    Args:
      name: parameter name used in the message (``"policy"``).
      value: the function given.
      function: the function's name, for the message.
      arguments: the arguments it is called with, comma-separated, as the message names them.
    """
    signature = refusing_signature(value, arguments)
    if signature is not None:
        raise TypeError(
            f"{function} takes a policy or a function ({arguments}) -> policy for {name}; got {given(name, value)}, "
            f"which takes {signature}."
        )


def check_one_policy(name: str, value: Any, function: str, remedy: str) -> None:
    """:func:`check_policy_instance`, then ``ValueError`` unless ``value`` is one policy (batch shape
    ``()``), not a grid, for the functions that run one policy at a time.

    Args:
      name: parameter name used in the message (``"policy"``, ``"policy(member 0)"``).
      value: the value given.
      function: the function's name, for the message.
      remedy: what to do with a grid, for the message.
    """
    check_policy_instance(name, value, function)
    if tuple(value.batch_shape) != ():
        raise ValueError(
            f"{function} takes one policy (batch shape ()) for {name}; got {given(name, value)}, whose batch "
            f"shape is {tuple(value.batch_shape)}: {remedy}."
        )


_ABSENT = object()  # a value without the attribute


def _batch_shape(name: str, value: Any, function: str) -> Any:
    """``value.batch_shape``, or :data:`_ABSENT`; an error its property raises is refused by name where the
    policy's leaves do not broadcast together (``jnp.broadcast_shapes(self.c, self.d)`` raised JAX's bare
    "Incompatible shapes for broadcasting"), else raised with a note naming the property."""
    try:
        return value.batch_shape
    except AttributeError:
        return _ABSENT
    except Exception as e:  # noqa: BLE001  (the user's property: any error, named)
        shapes = [(_leaf_name(path), tuple(np.shape(leaf))) for path, leaf in jax.tree_util.tree_flatten_with_path(
            value)[0] if _is_array_like(leaf)]
        try:
            np.broadcast_shapes(*(shape for _, shape in shapes))
        except ValueError:
            listed = ", ".join(f"{leaf_name} of shape {shape}" for leaf_name, shape in shapes)
            raise TypeError(
                f"{function} takes a policy whose leaves broadcast together, to its batch_shape, for {name}; got "
                f"{given(name, value)}, whose leaves do not ({listed}): its batch_shape raised "
                f"{type(e).__name__}: {e}"
            ) from None
        e.add_note(f"{USER_CODE_NOTE}{type(value).__name__}'s batch_shape, read to check the policy)")
        raise


def check_policy_instance(name: str, value: Any, function: str) -> None:
    """``TypeError`` unless ``value`` is a policy: an instance with ``kernel(spec)`` and a tuple ``batch_shape``.

    A policy class has both attributes too (a function and a property), so a
    class is refused by name before the attributes are looked at.

    Args:
      name: parameter name used in the message (``"policy"``).
      value: the value given.
      function: the function's name, for the message.
    """
    what = (
        "a policy instance (htb.AdaRETC(...), htb.UCB1(), ... or any object with kernel(spec) and "
        "batch_shape)"
    )
    if value is None or isinstance(value, type):
        raise TypeError(f"{function} takes {what} for {name}; got {given(name, value)}.")
    batch_shape = _batch_shape(name, value, function)
    missing = [attr for attr, absent in (("kernel", not hasattr(value, "kernel")),
                                         ("batch_shape", batch_shape is _ABSENT)) if absent]
    if not missing and not callable(value.kernel):
        missing = ["a callable kernel"]
    if not missing and not isinstance(batch_shape, tuple):
        missing = ["a tuple batch_shape" + (" (its batch_shape is a method: decorate it with @property)"
                                            if callable(batch_shape) else "")]
    elif not missing and not all(isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) and n >= 0
                                 for n in batch_shape):
        missing = [f"a batch_shape of integers >= 0 (its batch_shape is {batch_shape!r}: return, say, "
                   f"jnp.shape(self.c))"]
    if missing:
        raise TypeError(
            f"{function} takes {what} for {name}; got {given(name, value)}, which lacks {' and '.join(missing)}."
        )
    check_policy_tree(name, value, function)


_REGISTER = (
    "@jax.tree_util.register_dataclass above @dataclasses.dataclass(frozen=True) (Python values that fix "
    "shapes as static fields)"
)


def _leaf_name(path: tuple) -> str:
    """A leaf's path as a message shows it: ``c``, ``schedule.alpha`` or ``[0]``."""
    text = jax.tree_util.keystr(path)
    return text[1:] if text.startswith(".") else text or "the value itself"


def _is_array_like(leaf: Any) -> bool:
    """A number, an array, a tracer or an abstract array (anything with a shape and a dtype)."""
    return isinstance(leaf, numbers.Number) or (hasattr(leaf, "shape") and hasattr(leaf, "dtype")) or hasattr(
        leaf, "__jax_array__")


def check_pytree(name: str, value: Any, function: str, kind: str) -> list[tuple[str, Any]]:
    """``TypeError`` unless ``value``'s class is registered as a pytree whose leaves are numbers or arrays.

    JAX sees an object of an unregistered class as one opaque leaf, and the
    first array operation on it fails with a message that names nothing
    (``float() argument must be ...``, or a recursion without end).  Checked
    in Python (``jax.tree_util.tree_flatten``), before anything is traced.

    Args:
      name: parameter name used in the message (``"policy"``, ``"instance"``).
      value: the value given, already known to be an object of the protocol.
      function: the function's name, for the message.
      kind: what ``value`` is, for the message (``"a policy"``, ``"a reward law"``).

    Returns:
      ``(name, leaf)`` for every leaf, ``name`` its path (``"c"``).
    """
    leaves = jax.tree_util.tree_flatten_with_path(value)[0]
    cls = type(value).__name__
    if len(leaves) == 1 and leaves[0][1] is value:
        raise TypeError(
            f"{function} takes {kind} registered as a pytree for {name}; got {given(name, value)}, whose class "
            f"JAX does not know (it would see one opaque leaf): decorate {cls} with {_REGISTER}, as the guide "
            f"\"Your own policy and reward law\" does (docs/guides/own-code.md)."
        )
    _check_static_data(name, value, function, kind)
    named = [(_leaf_name(path), leaf) for path, leaf in leaves]
    for leaf_name, leaf in named:
        if not _is_array_like(leaf):
            raise TypeError(
                f"{function} takes {kind} whose pytree leaves are numbers or arrays for {name}; got "
                f"{given(name, value)}, whose leaf {leaf_name} is {shown(leaf)} ({type(leaf).__name__}): "
                f"make {leaf_name} a static field of {cls} (or register its class as a pytree too)."
            )
        if np.iscomplexobj(leaf):  # float() of it failed inside the engine, naming nothing
            raise TypeError(
                f"{function} takes {kind} whose pytree leaves are real numbers or arrays for {name}; got "
                f"{given(name, value)}, whose leaf {leaf_name} is {shown(leaf)} (complex)."
            )
    return named


def _check_static_data(name: str, value: Any, function: str, kind: str) -> None:
    """``TypeError`` where a node of ``value``'s tree holds static data that cannot be hashed (a NumPy or
    jax array in a static field): JAX hashes a tree's structure, and compares it with ``==``, to key
    its programs, and an array there ran once, then failed at the next call with a message that named
    neither the class nor the field."""
    for cls, aux in tree_nodes(jax.tree_util.tree_structure(value)):
        if cls is dict:
            continue  # JAX keeps a dict's keys as its static data, in a list
        try:
            hash(aux)
        except TypeError:
            static = [f.name for f in dataclasses.fields(cls) if f.metadata.get("static")] if (
                dataclasses.is_dataclass(cls)) else []
            held = list(zip(static, aux, strict=True)) if len(static) == len(aux) else []
            field, bad = next(((f, v) for f, v in held if not _hashable(v)), (None, aux))
            where = f"its static field {cls.__name__}.{field}" if field else f"the static data of its {cls.__name__}"
            raise TypeError(
                f"{function} takes {kind} whose static fields are hashable Python values (numbers, strings, "
                f"tuples) for {name}; got {given(name, value)}, where {where} is {shown(bad)} "
                f"({type(bad).__name__}): a static field is part of the program's key, hashed and compared with "
                f"==; give a tuple (tuple(float(x) for x in ...)), or make the parameter a field that is not "
                f"static, an array."
            ) from None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def check_no_list_parameters(name: str, value: Any, function: str, kind: str, remedy: str = "") -> None:
    """``TypeError`` where a field of the dataclass ``value`` that is not static holds a list or a tuple:
    JAX would take its entries for parameters of their own, each of batch shape ``()``.

    Args:
      name: parameter name used in the message (``"policy"``, ``"instance"``).
      value: the policy or law given.
      function: the function's name, for the message.
      kind: what ``value`` is, for the message (``"a policy"``, ``"a reward law"``).
      remedy: more of the way out, after ``give jnp.asarray(...)``.
    """
    for field in dataclasses.fields(value) if dataclasses.is_dataclass(value) else ():
        parameter = getattr(value, field.name)
        if isinstance(parameter, (list, tuple)) and not field.metadata.get("static", False):
            raise TypeError(
                f"{function} takes {kind} whose parameters are numbers or arrays for {name}; got "
                f"{given(name, value)}, whose {field.name} is a {type(parameter).__name__}: give "
                f"jnp.asarray({shown(parameter)}){remedy}."
            )


def note_none_parameters(error: BaseException, value: Any) -> None:
    """Adds to ``error``, raised by the code of a user's class (it carries a :data:`USER_CODE_NOTE`), a note
    naming the fields of ``value`` that are ``None``: JAX sees no leaf there, so nothing refused it before
    the user's code read it (``unsupported operand type(s) for *: 'NoneType' and 'int'``)."""
    if type(value).__module__.startswith("htb_jax.") or not dataclasses.is_dataclass(value):
        return
    if "None" not in str(error) or not any(str(note).startswith(USER_CODE_NOTE) for note in getattr(error, "__notes__", ())):
        return  # an error about something else: an optional field left None is no suspect
    names = [f.name for f in dataclasses.fields(value) if getattr(value, f.name, 0) is None]
    if names:
        fields = ", ".join(names)
        error.add_note(f"({type(value).__name__}'s {fields} {'is' if len(names) == 1 else 'are'} None: give "
                       f"{'it a number or an array' if len(names) == 1 else 'them numbers or arrays'}.)")


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return tuple(np.broadcast_shapes(shape, target)) == tuple(target)
    except ValueError:
        return False


def check_policy_tree(name: str, value: Any, function: str) -> None:
    """``TypeError`` unless the policy ``value`` is a registered pytree whose leaves broadcast to its
    ``batch_shape`` (the engine broadcasts every leaf to the grid ``batch_shape`` and flattens it).

    Args:
      name: parameter name used in the message (``"policy"``).
      value: a policy instance (checked by :func:`check_policy_instance` or :func:`check_policy`).
      function: the function's name, for the message.
    """
    leaves = check_pytree(name, value, function, "a policy")
    check_no_list_parameters(name, value, function, "a policy")
    shape = tuple(int(n) for n in value.batch_shape)
    shapes = [(leaf_name, tuple(np.shape(leaf))) for leaf_name, leaf in leaves]
    bad = [(leaf_name, s) for leaf_name, s in shapes if not _broadcasts_to(s, shape)]
    if not bad:
        return
    listed = ", ".join(f"{leaf_name} of shape {s}" for leaf_name, s in bad)
    try:
        common = tuple(np.broadcast_shapes(*(s for _, s in shapes)))
        hint = f"; all its leaves' shapes broadcast to {common}, the batch_shape they define"
    except ValueError:
        hint = "; its leaves' shapes do not broadcast together either"
    raise TypeError(
        f"{function} takes a policy whose leaves broadcast to its batch_shape (the grid along their leading "
        f"axes) for {name}; got {given(name, value)}, whose batch_shape is {shape} but whose leaves do not "
        f"broadcast to it: {listed}{hint}."
    )
