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
the loop body itself carries what XLA:CPU does not hoist: a sort, here of two
numbers computed in the body, whose result selects nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp


def unhoisted(body: Callable) -> Callable:
    """``body`` for ``lax.map``/``lax.scan``/``lax.while_loop``, with a two-element sort that XLA:CPU
    does not hoist (on a CPU; on other platforms ``body`` as it is, chosen when the program is lowered).

    The outputs are ``body``'s, bit for bit: with ``(a, b)`` the sorted pair
    (ascending in the total order, where ``-0.0 < 0.0`` and NaN comes last),
    ``a > b`` is false for every pair, so ``where(a > b, 0, x)`` is ``x``.

    Args:
      body: a loop step; its first output leaf must have at least one element.

    Returns:
      The step, returning exactly what ``body`` returns.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> jax.lax.map(unhoisted(lambda x: 2 * x), jnp.arange(3, dtype=jnp.float32))
      Array([0., 2., 4.], dtype=float32)
    """

    def step(*args):
        out = body(*args)
        return jax.lax.platform_dependent(out, cpu=_with_sort, default=lambda out: out)

    return step


def _with_sort(out):
    leaves, tree = jax.tree.flatten(out)
    first = leaves[0].reshape(-1)
    low, high = jax.lax.sort(jnp.stack([first[0], first[-1]]))
    leaves[0] = jnp.where(low > high, jnp.zeros_like(leaves[0]), leaves[0])
    return jax.tree.unflatten(tree, leaves)
