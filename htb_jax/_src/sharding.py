"""One compiled program per sweep, its seed axis placed explicitly on a device mesh.

The seeds are laid out on a one-axis :class:`jax.sharding.Mesh` named
``"seeds"``: the inputs (key, policy, instance, gaps, horizons) are replicated
(``NamedSharding(mesh, P())``), every output is sharded along its seed axis
(``NamedSharding(mesh, P(..., "seeds"))``), and ``jax.shard_map`` hands each
device its own consecutive block of seeds.  A seed's numbers depend on its
global index alone, so the result is the same on any number of devices.

**Several executions per device.**  With ``threads > 1`` the program (compiled
once) runs ``threads`` times concurrently from a thread pool, each execution
on the next ``devices x num_seeds`` consecutive seeds, and the outputs are
concatenated along the seed axis: on a CPU this puts one core to work per
execution, where XLA would run the small kernels of a chunk on one core.
The outputs are concatenated on the host (one process only).

**Several hosts.**  After ``jax.distributed.initialize()`` (one process per
host), ``jax.devices()`` lists the devices of every host and the same mesh
spans them all; the replicated inputs are assembled from each process's
(identical) copy, and the sharded results are gathered back to every process
with ``multihost_utils.process_allgather``.

**Lowering for another platform.**  Inside :func:`exporting_for`, ``lower``
of a seed-sharded program exports it for the platforms named (for example
``("cuda",)``) with :func:`jax.export.export` instead of lowering it for its
own devices: lowering is tracing, so a CPU-only jaxlib checks that every
operation of the program has a CUDA lowering (``tests/test_cuda_export.py``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import functools
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from htb_jax._src.instances import gaps as instance_gaps
from htb_jax._src.pytree import class_keyed_jit

SEED_AXIS_NAME = "seeds"
_EXPORT_PLATFORMS: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "htb_jax_export_platforms", default=None
)


def seed_mesh(devices: Sequence[jax.Device]) -> Mesh:
    """The one-axis mesh ``("seeds",)`` over ``devices``."""
    return Mesh(np.asarray(devices), (SEED_AXIS_NAME,))


def seed_sharding(mesh: Mesh, seed_axis: int) -> NamedSharding:
    """Arrays split along axis ``seed_axis`` over the mesh, replicated elsewhere."""
    return NamedSharding(mesh, PartitionSpec(*([None] * seed_axis), SEED_AXIS_NAME))


@functools.lru_cache(maxsize=1)
def _pool(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="htb_jax")


@functools.lru_cache(maxsize=128)
def seed_sharded_program(
    kernel: Callable, static, devices: tuple, seed_axis: int, threads: int = 1, compiler_options: tuple = ()
) -> Callable:
    """``kernel(key, policy, instance, gaps, horizons, first_seed, static=static)`` on the seed mesh.

    Execution ``t`` (of ``threads``, run concurrently) on device ``d``
    simulates ``static.num_seeds`` consecutive seeds from ``first_seed + (t *
    len(devices) + d) * static.num_seeds``; the outputs come back as global
    arrays with the seed axis (``seed_axis`` of every output) sharded over the
    devices, or with several executions as NumPy arrays joined on that axis on
    the host (where the callers arrange them).  The returned callable places
    its arguments on the mesh first (replicated), so inputs committed
    elsewhere are moved, not refused.  Its ``lower`` attribute gives the
    lowered program (``memory_analysis()`` once compiled; inside
    :func:`exporting_for`, the program exported for other platforms).

    Args:
      kernel: the per-device program.
      static: its hashable static configuration (with ``num_seeds`` per device).
      devices: the devices (a tuple, for caching).
      seed_axis: position of the seed axis in the outputs.
      threads: concurrent executions (1: the program is called directly).
      compiler_options: ``(name, value)`` pairs of XLA options for this
        program alone (``jax.jit(compiler_options=...)``), a tuple for caching.
    """
    mesh = seed_mesh(devices)
    if len(devices) == 1:
        body = functools.partial(kernel, static=static)
    else:

        def on_devices(key, policy, instance, gaps, horizons, first_seed):
            index = jax.lax.axis_index(SEED_AXIS_NAME).astype(jnp.int64)
            first = first_seed + index * static.num_seeds
            return kernel(key, policy, instance, gaps, horizons, first, static=static)

        on_devices.__name__ = f"{kernel.__name__}_on_devices"
        body = jax.shard_map(
            on_devices,
            mesh=mesh,
            in_specs=(PartitionSpec(),) * 6,
            out_specs=PartitionSpec(*([None] * seed_axis), SEED_AXIS_NAME),
            check_vma=False,
        )
    program = class_keyed_jit(body, out_shardings=seed_sharding(mesh, seed_axis),
                              compiler_options=dict(compiler_options))
    replicated = NamedSharding(mesh, PartitionSpec())

    def place(*args):
        if jax.process_count() > 1:
            from jax.experimental import multihost_utils

            return multihost_utils.host_local_array_to_global_array(args, mesh, PartitionSpec())
        return jax.device_put(args, replicated)

    def run(*args):
        if threads == 1:
            return program(*place(*args))
        *fixed, first_seed = args
        fixed = place(*fixed)
        # Each execution's first seed computed on the host: no small program to compile for it.
        stride = len(devices) * static.num_seeds
        seeds = [place(np.asarray(first_seed, np.int64) + t * stride)[0] for t in range(threads)]
        # The first execution is dispatched here, so that the program is compiled once, in this thread.
        first = program(*fixed, seeds[0])
        # Each in this thread's context: its programs' keys (pytree.keyed_by) are the first's.
        pending = [_pool(threads - 1).submit(contextvars.copy_context().run,
                                             lambda t: jax.device_get(program(*fixed, seeds[t])), t)
                   for t in range(1, threads)]
        parts = [jax.device_get(first)] + [p.result() for p in pending]
        return [np.concatenate(outputs, axis=seed_axis) for outputs in zip(*parts, strict=True)]

    def lower(*args):
        platforms = _EXPORT_PLATFORMS.get()
        if platforms is None:
            return program.lower(*place(*args))
        # The compiler options are the CPU's (compiler_options.py), and an exported module carries
        # none: the program is exported as a device without them builds it.
        # A fresh function: jax.jit's trace cache is never shared with another export (pytree.py).
        portable = jax.jit(lambda *a: body(*a), out_shardings=seed_sharding(mesh, seed_axis))
        return jax.export.export(portable, platforms=platforms)(*place(*args))

    run.lower = lower
    run.trace = lambda *args: program.trace(*place(*args))
    run.mesh = mesh
    return run


@contextlib.contextmanager
def exporting_for(platforms: Sequence[str]):
    """Within this context, ``lower`` of every :func:`seed_sharded_program` returns the program
    exported for ``platforms`` (a :class:`jax.export.Exported`), not lowered for its devices.

    The program is the one a device of those platforms runs: the same kernel, mesh and
    shardings, without the CPU's compiler options.  Nothing is compiled, so a CPU-only jaxlib
    exports for ``("cuda",)``; an operation without a lowering there raises.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> def kernel(key, policy, instance, gaps, horizons, first_seed, static):
      ...     return [first_seed + jnp.arange(static)]
      >>> program = seed_sharded_program(kernel, 4, tuple(jax.devices()[:1]), 0)
      >>> args = (jax.random.key(0), None, None, jnp.zeros(2), jnp.ones(1), jnp.int64(0))
      >>> with exporting_for(("cuda",)):
      ...     program.lower(*args).platforms
      ('cuda',)
    """
    token = _EXPORT_PLATFORMS.set(tuple(platforms))
    try:
        yield
    finally:
        _EXPORT_PLATFORMS.reset(token)


def program_args(key, policy, instance, horizons, first_seed) -> tuple:
    """The arguments of a :func:`seed_sharded_program`: ``(key, policy, instance, gaps, horizons, first_seed)``.

    The gaps ``f64[F, K]`` are computed here, outside the program and one
    operation at a time, so that no fused multiply-add (which XLA forms on
    some machines only) enters a mean such as TwoPoint's ``low + p (high - low)``.
    """
    return (key, policy, instance, jax.device_get(instance_gaps(instance)), np.asarray(horizons),
            np.asarray(first_seed, np.int64))


def gather(outputs):
    """The program's outputs as arrays every process can read.

    On one host they are returned as they are (sharded over the local
    devices); after ``jax.distributed.initialize()`` each process receives the
    whole result (``process_allgather``).
    """
    if jax.process_count() == 1:
        return outputs
    from jax.experimental import multihost_utils

    return multihost_utils.process_allgather(outputs, tiled=True)
