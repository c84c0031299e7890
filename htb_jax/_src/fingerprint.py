"""What computes a stored result: a fingerprint of the simulation programs behind a store's chunks.

A resumable run (:mod:`htb_jax._src.resumable`) keeps its chunks of seeds
only for the program that computed them.  Its identity (the configuration, a
policy's ``repr``) does not change when the code of a policy or a reward law
does, so every store also records :func:`fingerprint`: the SHA-256 of

* each simulation's traced program (its jaxpr, as ``simulate`` would build it
  for one seed on one device): every operation of the engine or the fast path,
  of a policy's kernel and of a law's ``from_bits``, with the literals they
  use, but not their source lines, so that a comment changes nothing;
* the values of the program's constants and arguments (the policy's and the
  instance's parameters, the gaps that ``mean()`` gives, the horizons, the key);

next to the versions of htb_jax, jax and jaxlib, whose numbers may change from
one release to the next.  A store whose fingerprint differs from the run's is
refused (:class:`~htb_jax._src.resumable.StaleStoreError`).

The program is traced on the local device's platform: on another kind of
device htb_jax may build another program (the engine runs a family's
instances side by side off a CPU), whose numbers agree in law only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr

from htb_jax._src import version

# A function shown in a jaxpr's parameters prints with its address, which changes from one process to the next.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# Options of simulate that place the work and change no number: the fingerprint fixes them.
_PLACEMENT = ("memory_budget", "seed_chunk", "threads", "devices")


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
    """The constants of a (closed) jaxpr and of every jaxpr nested in its equations' parameters."""
    if isinstance(jaxpr, ClosedJaxpr):
        for const in jaxpr.consts:
            _update_array(h, const)
        jaxpr = jaxpr.jaxpr
    for eqn in jaxpr.eqns:
        for param in eqn.params.values():
            for value in param if isinstance(param, (tuple, list)) else (param,):
                if isinstance(value, (ClosedJaxpr, Jaxpr)):
                    _update_consts(h, value)


def program_sha256(traced: Sequence[jax.stages.Traced], arguments: Sequence[Any]) -> str:
    """SHA-256 of traced programs (their jaxprs without source lines, and their constants) and of their
    arguments' values."""
    h = hashlib.sha256()
    for t in traced:
        h.update(_ADDRESS.sub("", str(t.jaxpr)).encode())
        _update_consts(h, t.jaxpr)
    for leaf in jax.tree.leaves(arguments):
        _update_array(h, leaf)
    return h.hexdigest()


def fingerprint(calls: Sequence[Mapping[str, Any]]) -> dict:
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
        traced.append(run.trace())
        arguments.append(run.arguments)
    return {"program_sha256": program_sha256(traced, arguments), **versions()}
