"""What computes a stored result: a fingerprint of the simulation programs behind a store's chunks.

A resumable run's store (:mod:`htb_jax._src.chunk_store`) keeps its chunks of seeds
only for the program that computed them.  Its identity (the configuration, a
policy's ``repr``) does not change when the code of a policy or a reward law
does, so every store also records :func:`fingerprint`: the SHA-256 of

* each simulation's traced program (its jaxpr, as ``simulate`` would build it
  for one seed on one device): every operation of the engine or the fast path,
  of a policy's kernel and of a law's ``from_bits``, with the literals they
  use, but not their source lines, so that a comment changes nothing, and the Python code of
  its callbacks (``jax.pure_callback``: a jaxpr names their function only), followed as
  :mod:`htb_jax._src.code_digest` follows a user's code;
* the values of the program's constants and arguments (the policy's and the
  instance's parameters, the gaps that ``mean()`` gives, the horizons, the key);

next to the versions of htb_jax, jax and jaxlib, whose numbers may change from
one release to the next.  A store whose fingerprint differs from the run's is
refused (:class:`~htb_jax._src.chunk_store.StaleStoreError`).

The program is traced on the local device's platform: on another kind of
device htb_jax may build another program (the engine runs a family's
instances side by side off a CPU), whose numbers agree in law only.

Tracing costs 0.2 to 1.5 s a program, so a store's manifest also records
:func:`inputs_sha256`: the SHA-256 of everything a program made of htb_jax's
own classes is a function of (the files of the installed package, the
versions, the platform, and the calls' values and tree structures), computed
without tracing.  Where it equals the stored one, the stored program is this
run's (:class:`Program`); where it differs (a file of htb_jax edited, even a
comment) the program is traced and compared as before.  A call that holds a
class from outside htb_jax (a user's policy or law) has no such key: its
program is always traced, afresh rather than from ``jax.jit``'s cache of
traces, so that an edit of its code is always seen, and the store's chunks are
computed by programs keyed by the fingerprint
(:func:`~htb_jax._src.chunk_store.run_chunks`), traced from the same code.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr

from htb_jax._src import code_digest, version
from htb_jax._src.pytree import keyed_by

# A function shown in a jaxpr's parameters prints with its address, which changes from one process to the next.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# Options of simulate that place the work and change no number: the fingerprint fixes them.
_PLACEMENT = ("memory_budget", "seed_chunk", "threads", "devices")
_TRACES = itertools.count()  # the keys of fresh traces of a user's code (fingerprint)


def identity_repr(value: Any) -> str:
    """``repr(value)`` without memory addresses (``<mymodule.Wrapped object>``): the same in every process, for
    the identities that stores compare (an address differed in each run, and the store never resumed)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def versions() -> dict[str, str | None]:
    """The versions a stored result depends on: htb_jax's, jax's and jaxlib's."""
    return {"htb_jax": version.__version__, "jax": jax.__version__, "jaxlib": _jaxlib_version()}


def _jaxlib_version() -> str | None:
    try:
        import jaxlib

        return jaxlib.__version__
    except (ImportError, AttributeError):
        return None


def _update_array(h, value) -> None:
    if isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
        value = jax.random.key_data(value)
    a = np.ascontiguousarray(np.asarray(value))
    h.update(f"{a.dtype.str}{a.shape}|".encode())
    h.update(a.tobytes())


def _update_consts(h, jaxpr) -> None:
    """The constants of a (closed) jaxpr and of every jaxpr nested in its equations' parameters, and the
    Python code of every callback among their equations (``jax.pure_callback``, ``io_callback``,
    ``jax.debug.callback``: a jaxpr names a callback's function only), in one pass."""
    if isinstance(jaxpr, ClosedJaxpr):
        for const in jaxpr.consts:
            _update_array(h, const)
        jaxpr = jaxpr.jaxpr
    for eqn in jaxpr.eqns:
        if "callback" in eqn.params:
            callback = eqn.params["callback"]
            h.update(code_digest.value_digest(getattr(callback, "callback_func", callback)).encode())
        for param in eqn.params.values():
            for value in param if isinstance(param, (tuple, list)) else (param,):
                if isinstance(value, (ClosedJaxpr, Jaxpr)):
                    _update_consts(h, value)


def program_sha256(traced: Sequence[jax.stages.Traced], arguments: Sequence[Any]) -> str:
    """SHA-256 of traced programs (their jaxprs without source lines, their constants and the code of
    their callbacks) and of their arguments' values."""
    h = hashlib.sha256()
    for t in traced:
        h.update(_ADDRESS.sub("", str(t.jaxpr)).encode())
        _update_consts(h, t.jaxpr)
    for leaf in jax.tree.leaves(arguments):
        _update_array(h, leaf)
    return h.hexdigest()


def fingerprint(calls: Sequence[Mapping[str, Any]], fresh: bool = False) -> dict:
    """The fingerprint of the ``simulate`` calls that compute one chunk of seeds.

    Each call is traced as ``simulate`` builds it for one seed (``first_seed =
    0``) on the first local device with one execution, so that the
    fingerprint does not depend on the chunk, the device count, the threads
    or the memory budget, which change no number.  Nothing is compiled:
    about 0.2 to 1 s a call on a CPU.

    Args:
      calls: the keyword arguments of each ``simulate`` call but ``num_seeds``
        and ``first_seed`` (``key``, ``policy``, ``instance``, ``horizon`` and
        options such as ``sampler`` or ``num_checkpoints``).
      fresh: trace afresh, not from ``jax.jit``'s cache of traces, as :class:`Program` does for calls
        without an :func:`inputs_sha256` (a user's code): code edited since a cached trace in a way its
        digest does not see (an array beyond 1 MiB edited in place) is seen then.

    Returns:
      ``{"program_sha256": ..., "htb_jax": ..., "jax": ..., "jaxlib": ...}``.

    Raises:
      TypeError, ValueError: as ``simulate`` would for the same call.
    """
    from htb_jax._src.simulate.program import prepare

    traced, arguments = [], []
    for call in calls:
        _, run = prepare(num_seeds=1, first_seed=0, seed_chunk=1, threads=1, devices=jax.local_devices()[:1],
                         **{k: v for k, v in call.items() if k not in _PLACEMENT})
        with keyed_by(f"fingerprint {next(_TRACES)}" if fresh else None):
            traced.append(run.trace())
        arguments.append(run.arguments)
    return {"program_sha256": program_sha256(traced, arguments), **versions()}


# Node data hashed by repr: plain values, whose repr is exact and the same in every process.
_PLAIN = (type(None), bool, int, float, complex, str, bytes, np.generic, np.dtype)


@functools.cache
def _package_sha256() -> str:
    """SHA-256 of every file of the installed htb_jax package (its code and its data), by relative path."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../htb_jax
    h = hashlib.sha256()
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(directory, name)
            h.update(f"{os.path.relpath(path, root)}|{os.path.getsize(path)}|".encode())
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def _own_class(cls: type) -> bool:
    return cls.__module__ == "htb_jax" or cls.__module__.startswith("htb_jax.")


def _update_static(h, value) -> bool:
    """Hashes a tree node's static data; ``False`` for anything but plain values, NumPy arrays, and
    tuples, lists and dataclasses of htb_jax's own of such."""
    if isinstance(value, _PLAIN):
        h.update(f"{value!r}|".encode())
        return True
    if isinstance(value, np.ndarray):
        _update_array(h, value)
        return True
    if isinstance(value, (tuple, list)):
        h.update(f"{type(value).__name__}{len(value)}(".encode())
        parts = value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type) and _own_class(type(value)):
        h.update(f"{type(value).__module__}.{type(value).__qualname__}(".encode())
        parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
    else:
        return False
    if not all(_update_static(h, part) for part in parts):
        return False
    h.update(b")")
    return True


def _update_tree(h, treedef) -> bool:
    """Hashes a tree's structure; ``False`` where a node is a class from outside htb_jax or holds
    static data :func:`_update_static` refuses."""
    data = treedef.node_data()
    if data is None:  # a leaf
        h.update(b"*")
        return True
    cls, aux = data
    if cls not in (tuple, list, dict, type(None)) and not _own_class(cls):
        return False
    h.update(f"({cls.__module__}.{cls.__qualname__}|".encode())
    if not _update_static(h, list(aux) if cls is dict else aux):
        return False
    if not all(_update_tree(h, child) for child in treedef.children()):
        return False
    h.update(b")")
    return True


def _update_value(h, value) -> bool:
    if isinstance(value, jax.core.Tracer):
        return False
    if isinstance(value, (str, bytes, bool, int, float, complex)) or value is None:
        # Python numbers by type and exact repr: weakly typed in JAX, so 1.0 and float64(1.0) may trace apart.
        h.update(f"{type(value).__name__}:{value!r}|".encode())
        return True
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        h.update(f"{type(value).__name__}:{value.dtype}:{getattr(value, 'weak_type', False)}|".encode())
        _update_array(h, value)
        return True
    leaves, treedef = jax.tree_util.tree_flatten(value)
    if treedef.node_data() is None:  # an object that is no tree, of a kind the key cannot read
        return False
    if not _update_tree(h, treedef):
        return False
    for leaf in leaves:
        if not _update_value(h, leaf):
            return False
    return True


def inputs_sha256(calls: Sequence[Mapping[str, Any]]) -> str | None:
    """SHA-256 of what the programs of ``calls`` are a function of, where htb_jax's code alone builds them.

    The files of the installed htb_jax package, the versions of htb_jax, jax, jaxlib and NumPy,
    the local device's platform and whether 64-bit types are on, and each call's options and
    values with the structure of its trees (the classes and their static fields), but not the
    options of placement.  Nothing is traced: about a millisecond a call.

    Args:
      calls: as for :func:`fingerprint`.

    Returns:
      The hex digest, or ``None`` where a call holds a class defined outside htb_jax (a user's
      policy or law, whose code only a trace shows), a static field that is not a plain value,
      or a tracer.
    """
    h = hashlib.sha256()
    environment = {**versions(), "numpy": np.__version__, "platform": jax.local_devices()[0].platform,
                   "x64": bool(jax.config.jax_enable_x64), "package": _package_sha256()}
    h.update(repr(sorted(environment.items())).encode())
    for call in calls:
        for name in sorted(call):
            if name in _PLACEMENT:
                continue
            h.update(f"{name}=".encode())
            if not _update_value(h, call[name]):
                return None
    return h.hexdigest()


class Program:
    """The fingerprint of a store's ``simulate`` calls, traced only where needed.

    :meth:`resolve` takes a stored fingerprint as this run's where its :func:`inputs_sha256` and
    versions are this run's, without tracing; otherwise, and for a new store, :meth:`fingerprint`
    traces (once) and records the inputs' key beside the program's (where the calls have one).

    Args:
      calls: as for :func:`fingerprint`.
    """

    def __init__(self, calls: Sequence[Mapping[str, Any]]):
        self._calls = list(calls)
        self._traced: dict | None = None

    @functools.cached_property
    def inputs(self) -> str | None:
        """:func:`inputs_sha256` of the calls."""
        return inputs_sha256(self._calls)

    def resolve(self, stored: Mapping[str, Any]) -> dict:
        """This run's fingerprint, to compare with ``stored``: ``stored`` itself where its inputs'
        key and versions are this run's (nothing traced), else :meth:`fingerprint`."""
        if (self.inputs is not None and stored.get("inputs_sha256") == self.inputs
                and all(stored.get(name) == value for name, value in versions().items())):
            return dict(stored)
        return self.fingerprint()

    def fingerprint(self) -> dict:
        """:func:`fingerprint` of the calls, with ``"inputs_sha256"`` where they have one."""
        if self._traced is None:
            inputs = {} if self.inputs is None else {"inputs_sha256": self.inputs}
            # Calls without an inputs key hold a user's code: traced afresh, as run_chunks keys their programs.
            self._traced = {**fingerprint(self._calls, fresh=self.inputs is None), **inputs}
        return self._traced
