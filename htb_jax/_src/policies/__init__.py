"""The policies: one module per policy, each a pytree whose ``kernel(spec)`` runs in the engine.

The public names are re-exported by :mod:`htb_jax`.  Pieces several policies
share (robust estimators, root finders) live in modules of their own under
``htb_jax/_src``.
"""
