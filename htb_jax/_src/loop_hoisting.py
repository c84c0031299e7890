"""Sequential loops that XLA:CPU runs step by step instead of as one hoisted function.

XLA:CPU's small-while-loop hoisting compiles a while loop it judges small into
one function (a ``call`` tagged ``xla_cpu_small_call``), which runs on one
core with XLA's older emitter.  Under jax 0.12.0.1 (what Python 3.12 installs,
Colab's Python) it hoists the fast path's whole loop over seed chunks, where
jax 0.10.2 hoists nothing: the AdaR-ETC sweep of ``benchmarks/bench_sweep.py``
then took 0.142 s on a 2-core CPU where XLA's runtime, running the chunk's
reward draw, block sums and selection as separate kernels, takes 0.119 s (see
BENCHMARKS.md).  The loops inside a chunk (the layouts, the selection's
passes) still gain from being hoisted.

The threshold (``--xla_backend_extra_options=
xla_cpu_small_while_loop_byte_threshold=N``) can only be set for the whole
process: ``jax.jit(compiler_options=...)`` takes no backend extra options.  So
the loop body itself carries what XLA:CPU does not hoist: a sort of two
entries of the step's first argument, whose result selects nothing
(:func:`unhoisted`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp


def unhoisted(body: Callable) -> Callable:
    """``body`` for ``lax.map``/``lax.scan``/``lax.fori_loop``, with a two-element sort that XLA:CPU
    does not hoist (on a CPU; on other platforms ``body`` as it is, chosen when the program is lowered).

    The sort takes the first and last entries of the step's first argument
    (the index of a ``fori_loop``, the slice of a ``map``): under ``vmap``
    that argument is usually not batched, so the sort stays one pair instead
    of one per batch lane (which cost 40 us a step at 500 lanes).  Its result
    selects the smallest output: with ``(a, b)`` the sorted pair (ascending in
    the total order, where ``-0.0 < 0.0`` and NaN comes last), ``a > b`` is
    false for every pair, so ``where(a > b, 0, x)`` is ``x``, and the outputs
    are ``body``'s, bit for bit.

    Args:
      body: a loop step; its first argument and one output leaf must have an element.

    Returns:
      The step, returning exactly what ``body`` returns.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> jax.lax.map(unhoisted(lambda x: 2 * x), jnp.arange(3, dtype=jnp.float32))
      Array([0., 2., 4.], dtype=float32)
    """

    def step(*args):
        out = body(*args)
        return jax.lax.platform_dependent(args[0], out, cpu=_with_sort, default=lambda _, out: out)

    return step


def _with_sort(arg, out):
    ends = jax.tree.leaves(arg)[0]
    if jax.dtypes.issubdtype(ends.dtype, jax.dtypes.prng_key):
        ends = jax.random.key_data(ends)
    ends = ends.reshape(-1)
    low, high = jax.lax.sort(jnp.stack([ends[0], ends[-1]]))
    leaves, tree = jax.tree.flatten(out)
    smallest = min((i for i, leaf in enumerate(leaves) if leaf.size), key=lambda i: leaves[i].size)
    leaves[smallest] = jnp.where(low > high, jnp.zeros_like(leaves[smallest]), leaves[smallest])
    return jax.tree.unflatten(tree, leaves)
