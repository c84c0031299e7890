"""A digest of the Python code a user's class runs, in the keys of htb_jax's compiled programs.

``jax.jit`` traces a function once per key and reuses the program: a helper function or a
global value that a policy's kernel reads is read when the program is traced, and an edit of
it later in the same process (a notebook cell run again) is not seen.  Every program that
takes a user's tree is keyed by :func:`class_digest` of each class defined outside htb_jax
(:func:`~htb_jax._src.pytree.class_keyed_jit`), so an edited method, helper or global value
traces the program again, and a store's fingerprint, traced through the same key, sees it.

The digest covers, for each function of the class (its methods, properties, static and class
methods, its bases' outside htb_jax), the bytecode, constants and names of the function and
of the functions nested in it, and what those names and its closure denote now; and the
class's other attributes (``W = (1.0, 2.0)``, read as ``self.W``), followed as values, but for
its lists, dicts and sets (a registry of instances or a memo, which would change the digest at
every call; give a constant as a tuple):

* functions and classes defined outside the libraries (jax, NumPy, htb_jax, the standard
  library...), followed the same way;
* plain values: numbers, strings, bytes, ``None``, the libraries' numbers and enumerations
  (``fractions.Fraction``) by their ``repr``, NumPy and jax arrays (up to 1 MiB by
  their bytes, larger ones by their identity), and tuples, lists and dicts of them (up to 2^16
  items; longer tuples by their hash, longer lists and dicts by their identity);
* ``functools.partial`` objects and decorated functions (``__wrapped__``), followed to what
  they wrap;
* bound methods, by their function and their object; objects of a class defined outside the
  libraries (a callable object, a helper held in a global), by their class, followed as above,
  and their attributes (``__dict__`` and ``__slots__``): code may read them when it is traced, so an object whose
  attributes change from call to call (a counter, a recorder a callback appends to) makes a new
  program at each call, and a store's run another program;
* anything else by its type alone.

The names followed are those the code reads as globals (``LOAD_GLOBAL``), not its attributes'
(``self.c`` reads no global ``c``: a loop variable ``c`` in a notebook changes nothing), and the
attributes read right after a global that is a user's module (``mymodule.helper``, so an edit
of ``helper`` followed by ``importlib.reload(mymodule)`` is seen).  Not followed: an attribute
read of a module through anything else (a module passed as an argument, or held in a local), an
array edited in place beyond 1 MiB, a list or dict edited in place beyond 2^16 items, code in a module named as one of the standard library's.  The digest is used within one process; a
store's fingerprint across processes is the traced program itself
(:mod:`htb_jax._src.fingerprint`), traced afresh for a user's code, and a store's chunks are
computed by programs keyed by it (:func:`~htb_jax._src.pytree.keyed_by`), so that what the digest
misses never enters a store.
"""

from __future__ import annotations

import dis
import enum
import functools
import hashlib
import numbers
import sys
import types
from typing import Any

import jax
import numpy as np

# Libraries whose code is a version of theirs, not a user's (their own checks key htb_jax's stores)
_LIBRARIES = frozenset({"jax", "jaxlib", "numpy", "htb_jax", "optax", "scipy", "matplotlib", "ml_dtypes",
                        "opt_einsum", "equinox", "flax", "chex", "__future__"})
_PLAIN = (type(None), bool, int, float, complex, str, bytes, np.generic)
_DEPTH = 4  # containers nested deeper are keyed by their type
_GLOBAL_READS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_ATTRIBUTE_READS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_ARRAY_BYTES = 2**20  # arrays up to this size are keyed by their bytes, larger ones by their identity
_ITEMS = 2**16  # tuples, lists and dicts up to this length are followed item by item, longer ones by identity


def is_users(value: Any) -> bool:
    """Whether a class, function or module is defined outside the libraries and the standard library."""
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    root = (module or "").split(".")[0]
    return bool(root) and root not in _LIBRARIES and root not in sys.stdlib_module_names and root != "builtins"


def value_digest(value: Any) -> str:
    """SHA-256 of a value as the digest follows it: a user's function by its code and what it reads
    (a callback's, say), a plain value by itself, anything else by its type."""
    h = hashlib.sha256()
    _update_value(h, value, set(), 0)
    return h.hexdigest()


def class_digest(cls: type) -> str:
    """SHA-256 of the code ``cls`` runs now (see the module's docstring)."""
    h = hashlib.sha256()
    _update_class(h, cls, set())
    return h.hexdigest()


def _update_class(h, cls: type, seen: set) -> None:
    h.update(f"class {cls.__module__}.{cls.__qualname__}|".encode())
    if id(cls) in seen:
        return
    seen.add(id(cls))
    for klass in cls.__mro__:
        if not is_users(klass):
            continue
        for name, attribute in sorted(vars(klass).items()):
            functions = [attribute.fget, attribute.fset, attribute.fdel] if isinstance(attribute, property) else [
                getattr(attribute, "__func__", attribute)]  # staticmethod, classmethod
            for function in functions:
                if isinstance(function, types.FunctionType):
                    h.update(f"{name}:".encode())
                    _update_function(h, function, seen)
            if isinstance(attribute, (property, staticmethod, classmethod, types.FunctionType)):
                continue
            if isinstance(attribute, (list, dict, set)):
                continue  # a mutable container of the class: a registry or a memo, not a constant (give a tuple)
            if not (name.startswith("__") and name.endswith("__")) or isinstance(attribute, _PLAIN):
                # a class attribute the code may read (self.W): a tuple, an array or an object as well
                h.update(f"{name}=".encode())
                _update_value(h, attribute, seen, 0)


def _update_function(h, function: types.FunctionType, seen: set) -> None:
    h.update(f"def {function.__qualname__}|".encode())
    if id(function) in seen:
        return
    seen.add(id(function))
    names: set[str] = set()
    _update_code(h, function.__code__, names)
    scope = function.__globals__
    for name in sorted(names):
        first, *attributes = name.split(".")
        if first not in scope:
            continue
        value = scope[first]
        for attribute in attributes:  # an attribute read of a user's module (mymodule.helper), followed
            if not (isinstance(value, types.ModuleType) and is_users(value)):
                break
            value = getattr(value, attribute, None)
        else:
            h.update(f"{name}=".encode())
            _update_value(h, value, seen, 0)
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (), strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not yet filled
            continue
        h.update(f"{name}~".encode())
        _update_value(h, value, seen, 0)
    for defaults in (function.__defaults__, function.__kwdefaults__):
        if defaults:
            _update_value(h, defaults, seen, 0)


def _update_code(h, code: types.CodeType, names: set[str]) -> None:
    """The bytecode, constants and names of ``code`` and of the code nested in it; collects the global
    names it reads (not its attributes' names: ``self.c`` reads no global ``c``)."""
    digest, read = _code(code)
    h.update(digest)
    names.update(read)


@functools.lru_cache(maxsize=4096)
def _code(code: types.CodeType) -> tuple[bytes, frozenset]:
    """:func:`_update_code`'s part of one code object, which never changes: the digest of its bytecode,
    constants and names (nested code included) and the global names it reads, each with the
    attributes read of it right after (``mymodule.helper``: ``"mymodule.helper"``, and ``"mymodule"``)."""
    h = hashlib.sha256(code.co_code)
    h.update(repr(code.co_names).encode())
    names = set()
    chain = None
    for i in dis.get_instructions(code):
        if i.opname in _GLOBAL_READS:
            chain = i.argval
            names.add(chain)
        elif i.opname in _ATTRIBUTE_READS and chain is not None:
            chain = f"{chain}.{i.argval}"
            names.add(chain)
        elif i.opname not in ("CACHE", "EXTENDED_ARG"):
            chain = None
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            digest, read = _code(const)
            h.update(digest)
            names.update(read)
        elif isinstance(const, frozenset):
            h.update(repr(sorted(map(repr, const))).encode())
        else:
            h.update(f"{type(const).__name__}:{const!r}|".encode())
    return h.digest(), frozenset(names)


def _slots(klass: type) -> tuple[str, ...]:
    """The attribute names ``klass`` itself declares in ``__slots__`` (a string or an iterable of them)."""
    slots = vars(klass).get("__slots__", ())
    names = (slots,) if isinstance(slots, str) else tuple(slots)
    # A private name (__scale) is stored mangled, as _Class__scale.
    private = klass.__name__.lstrip("_")  # Python mangles in a class whose name is more than underscores
    return tuple(f"_{private}{name}" if private and name.startswith("__") and not name.endswith("__") else name
                 for name in names if name not in ("__dict__", "__weakref__"))


def _update_value(h, value: Any, seen: set, depth: int) -> None:
    """``value`` as the module's docstring says; one that cannot be read (a deleted array, a failing
    ``repr``) by its type and identity."""
    try:
        _update_readable(h, value, seen, depth)
    except Exception:  # noqa: BLE001  (a value the digest cannot read is keyed as an object)
        h.update(f"<{type(value).__qualname__} {id(value)}>|".encode())


def _update_readable(h, value: Any, seen: set, depth: int) -> None:
    if isinstance(value, _PLAIN) or (isinstance(value, (numbers.Number, enum.Enum)) and not is_users(type(value))):
        # numbers and enumerations of the libraries (fractions.Fraction, decimal.Decimal) by their value too
        h.update(f"{type(value).__name__}:{value!r}|".encode())
    elif isinstance(value, (np.ndarray, jax.Array)) and not isinstance(value, jax.core.Tracer):
        h.update(f"{value.dtype}{value.shape}|".encode())
        if value.nbytes > _ARRAY_BYTES:  # not copied to the host on every call: an edit in place is not seen
            h.update(f"id {id(value)}|".encode())
            return
        if isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            value = jax.random.key_data(value)
        h.update(np.ascontiguousarray(np.asarray(value)).tobytes())
    elif isinstance(value, functools.partial):
        h.update(b"partial|")
        for part in (value.func, value.args, value.keywords):
            _update_value(h, part, seen, depth + 1)
    elif not isinstance(value, types.FunctionType) and isinstance(getattr(value, "__wrapped__", None),
                                                                types.FunctionType):
        h.update(f"<{type(value).__qualname__}>|".encode())  # a decorated function (jax.jit, functools.cache)
        _update_value(h, value.__wrapped__, seen, depth)
    elif isinstance(value, types.FunctionType) and is_users(value):
        _update_function(h, value, seen)
    elif isinstance(value, type) and is_users(value):
        _update_class(h, value, seen)
    elif isinstance(value, (tuple, list, dict)) and len(value) > _ITEMS:  # not walked on every call
        try:  # a tuple by its hash (C speed; the digest lives within one process), equal tuples alike
            key = f"hash {hash(value)}" if isinstance(value, tuple) else f"id {id(value)}"
        except TypeError:  # a tuple holding an unhashable value
            key = f"id {id(value)}"
        h.update(f"{type(value).__name__}[{len(value)}] {key}|".encode())
    elif isinstance(value, (tuple, list)) and depth < _DEPTH:
        h.update(f"{type(value).__name__}[{len(value)}]|".encode())
        for item in value:
            _update_value(h, item, seen, depth + 1)
    elif isinstance(value, dict) and depth < _DEPTH:
        h.update(f"dict[{len(value)}]|".encode())
        for key in sorted(value, key=repr):
            h.update(f"{key!r}:".encode())
            _update_value(h, value[key], seen, depth + 1)
    elif isinstance(value, types.MethodType):  # a bound method: its function, and the object it is bound to
        h.update(b"method|")
        _update_value(h, value.__func__, seen, depth)
        _update_value(h, value.__self__, seen, depth + 1)
    elif is_users(type(value)) and depth < _DEPTH:  # an object of a user's class: its class and its attributes
        _update_class(h, type(value), seen)
        if id(value) in seen:
            return
        seen.add(id(value))
        state = getattr(value, "__dict__", None)
        if isinstance(state, dict):
            _update_value(h, state, seen, depth + 1)
        slots = [name for klass in type(value).__mro__ for name in _slots(klass)]
        if slots:  # a class with __slots__ (a dataclass(slots=True)) keeps its attributes there
            _update_value(h, {name: getattr(value, name, None) for name in slots}, seen, depth + 1)
    else:
        kind = type(value)
        h.update(f"<{kind.__module__}.{kind.__qualname__}>|".encode())

