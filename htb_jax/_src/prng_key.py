"""The one key every simulation draws from: a threefry ``jax.random.key``, checked before anything is traced.

Reward tables, seed keys, a law's ``sample`` and the proxies take their key through
:func:`as_threefry_key`, so that every mistake with a key is refused with the same words.
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np


def as_threefry_key(key: jax.Array, *, reader: str | None = None) -> jax.Array:
    """A typed threefry key from a typed key or legacy ``uint32[2]`` key data.

    Accepts one key: ``jax.random.key(seed)`` (a typed key of shape ``()``) or
    ``jax.random.PRNGKey(seed)`` (``uint32[2]`` key data).  Traced keys pass
    with the implementation check only.  ``reader`` names a function that reads
    one seed's key (``htb.reward_table``), for the message a batch of keys gets.

    Raises:
      TypeError: for anything else that is not a key: an int, a string, a
        float or signed-integer array.
      ValueError: for keys of another implementation (``rbg``,
        ``unsafe_rbg``), a batch of keys, or key data of another length.
    """
    form = "a jax.random.key(seed) (or legacy uint32[2] key data from jax.random.PRNGKey(seed))"
    if isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        impl = str(jax.random.key_impl(key))
        if "threefry" not in impl:
            raise ValueError(
                f"htb_jax draws its reward tables with threefry2x32; got a key of impl {impl}. "
                "Use jax.random.key(seed)."
            )
        if not isinstance(key, jax.core.Tracer) and key.shape != ():
            why = (f"{reader} reads one seed's key, htb.seed_keys(root, S)[s]: index the batch, or jax.vmap "
                   f"over it" if reader else "seed s draws from fold_in(key, s): pass the root key")
            raise ValueError(f"key must be one key, {form}; got a batch of keys of shape {key.shape} ({why}).")
        return key
    if not isinstance(key, jax.core.Tracer):
        if isinstance(key, (numbers.Number, str, bytes)) or not isinstance(key, (jax.Array, np.ndarray)):
            hint = f" Use jax.random.key({key})." if isinstance(key, numbers.Integral) else ""
            raise TypeError(f"key must be {form}; got key={key!r} ({type(key).__name__}).{hint}")
        if key.dtype != jnp.uint32:
            raise TypeError(f"key must be {form}; got key data of dtype {key.dtype} and shape {key.shape}.")
        if key.shape != (2,):
            raise ValueError(f"key must be {form}; got uint32 key data of shape {key.shape}, not (2,).")
    return jax.random.wrap_key_data(jnp.asarray(key, jnp.uint32), impl="threefry2x32")
