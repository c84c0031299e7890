"""The XLA options htb_jax compiles its CPU programs with, for those programs alone.

The options go to each program (``jax.jit(compiler_options=...)``), never to
``XLA_FLAGS``: a user's other programs keep XLA's defaults, and nothing is set
on a GPU.  An option the user sets in ``XLA_FLAGS`` (for example
``--xla_cpu_prefer_vector_width=128``) is left to the user's value.

* :data:`VECTOR_WIDTH` lets XLA's LLVM backend use 512-bit vectors where the CPU
  has them (XLA prefers 256 bits by default).  A reward draw is 20 Threefry
  rounds of 32-bit integer operations, then a float32 ``log`` and ``exp``,
  all elementwise: wider vectors do them in half the instructions.  On a
  2-core AVX-512 AMD EPYC the Pareto draw costs 4.4-4.6 instead of 5.5-5.6 ns per
  reward on one core (``benchmarks/bench_draws.py``), the AdaR-ETC sweep of
  ``benchmarks/bench_sweep.py`` takes 0.11 s instead of 0.13 s, and UCB1 runs
  6.8-7.1e7 instead of 6.1-6.5e7 seed-rounds/s (BENCHMARKS.md).  A CPU
  without AVX-512 keeps 256 bits.  Every element is computed by the same
  operations at either width, and our sums run in a fixed order, so results
  do not change (tested).
* :data:`COPY_INSERTION` (the engine): region-analysis copy insertion, which
  updates the round loop's carry in place instead of copying it twice per
  round.
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp

VECTOR_WIDTH = ("xla_cpu_prefer_vector_width", 512)
COPY_INSERTION = ("xla_cpu_copy_insertion_use_region_analysis", True)


@functools.cache
def known(device: jax.Device, options: tuple) -> tuple:
    """The ``(name, value)`` pairs of ``options`` that a program for ``device`` can be compiled
    with: on a CPU, those its XLA knows (a trivial program compiled once per option to ask; an
    XLA without an option refuses every program that names it) and ``XLA_FLAGS`` does not set;
    none elsewhere."""
    if device.platform != "cpu":
        return ()
    flags = os.environ.get("XLA_FLAGS", "")
    probe = jax.ShapeDtypeStruct((), jnp.float32, sharding=jax.sharding.SingleDeviceSharding(device))

    def accepted(option):
        try:
            jax.jit(lambda x: x, compiler_options=dict([option])).lower(probe).compile()
        except jax.errors.JaxRuntimeError:  # "No such compile option"
            return False
        return True

    return tuple(option for option in options if f"--{option[0]}=" not in flags and accepted(option))
