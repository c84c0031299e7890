"""Memory budgets: how many seeds a compiled simulation works on at once.

A simulation runs its seeds in chunks (``lax.map`` over chunks inside one
compiled program, ``vmap`` within a chunk), so its device memory is about

    threads * (fixed + seed_chunk * bytes_per_seed) + output_bytes

per device: the working memory of one chunk (reused chunk after chunk) in each
of the ``threads`` executions that run concurrently on the device, plus the
results of every seed on that device.  On a CPU device the seeds are split
over one execution per core (:func:`default_threads`): XLA runs the small
kernels of a round or a chunk on one core, so concurrent executions are what
puts the other cores to work.  :func:`plan_seed_chunk` picks the
largest chunk that fits a budget.  The per-seed figures are estimates from the
program's array shapes, written to err on the large side; ``memory_plan``
(:func:`htb_jax.memory_plan`) compares them with the compiled program's own
``memory_analysis()``.  Seed ``s`` draws from ``fold_in(key, s)`` alone, so no
choice of chunk changes a number.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence

import jax

from htb_jax._src.validation import check_given, check_integer, given

CPU_MEMORY_BUDGET = 2 * 2**30
ACCELERATOR_MEMORY_FRACTION = 0.5
ACCELERATOR_FALLBACK_BUDGET = 4 * 2**30
FIXED_BYTES = 2**20  # seed-independent buffers: schedules, checkpoints, constants (measured 0.1-0.2 MiB)

# The regret curve's working memory per checkpoint and arm: the pull counts i64[C, K] and the six float64
# products per arm of outcome.pseudo_regret, measured at 56 bytes (1 GiB past a 160 MiB budget at C = 1024,
# K = 10, 1000 seeds a chunk, when it was left out).
CURVE_BYTES = 56


def default_memory_budget(device: jax.Device | None = None) -> int:
    """Bytes per device a simulation may use by default.

    2 GiB on a CPU device; half of an accelerator's memory (``bytes_limit``
    of ``device.memory_stats()``), or 4 GiB where the device does not report
    it.

    Args:
      device: the device (default: ``jax.devices()[0]``).

    Returns:
      The budget in bytes, a Python int.

    Raises:
      TypeError: where ``device`` is neither ``None`` nor a ``jax.Device``.
    """
    if device is not None:
        check_given("device", device, "None or a jax.Device such as jax.devices()[0]")
        if not isinstance(getattr(device, "platform", None), str):  # read as a device: a string had no platform
            raise TypeError(
                f"device must be None or a jax.Device such as jax.devices()[0]; got {given('device', device)}."
            )
    device = jax.devices()[0] if device is None else device
    if device.platform == "cpu":
        return CPU_MEMORY_BUDGET
    try:
        limit = (device.memory_stats() or {}).get("bytes_limit")
    except Exception:  # a backend without memory statistics
        limit = None
    return int(limit * ACCELERATOR_MEMORY_FRACTION) if limit else ACCELERATOR_FALLBACK_BUDGET


@dataclasses.dataclass(frozen=True)
class MemoryPlan:
    """How a simulation splits its seeds to fit a memory budget (figures per device).

    Attributes:
      memory_budget: the budget, bytes per device.
      seed_chunk: seeds simulated together.
      num_chunks: chunks per execution, run one after another inside the program.
      seeds_per_device: seeds on each device (``threads * seed_chunk *
        num_chunks``, the last chunk of each execution padded).
      bytes_per_seed: estimated working memory of one seed within a chunk.
      output_bytes: the results held on each device.
      fixed_bytes: the seed-independent allowance.
      measured_peak: ``temp + output + argument`` bytes of one execution of
        the compiled program from ``memory_analysis()``, times ``threads``
        (``None`` unless measured, or where the backend does not report it).
      threads: executions of the program running concurrently on each
        device, each on its own consecutive ``seeds_per_device / threads``
        seeds.

    Properties :attr:`estimated_peak` (the estimate the budget bounds) and
    :attr:`seeds_per_thread` follow from these.
    """

    memory_budget: int
    seed_chunk: int
    num_chunks: int
    seeds_per_device: int
    bytes_per_seed: int
    output_bytes: int
    fixed_bytes: int = FIXED_BYTES
    measured_peak: int | None = None
    threads: int = 1

    @property
    def estimated_peak(self) -> int:
        """The estimate ``threads * (fixed + seed_chunk * bytes_per_seed) + output_bytes``, at most ``memory_budget``."""
        return self.threads * (self.fixed_bytes + self.seed_chunk * self.bytes_per_seed) + self.output_bytes

    @property
    def seeds_per_thread(self) -> int:
        """Seeds of one execution, ``seed_chunk * num_chunks``."""
        return self.seed_chunk * self.num_chunks


def check_memory_budget(memory_budget) -> None:
    """``ValueError`` unless ``memory_budget`` is ``None`` or an integer number of bytes ``>= 1``.

    A string such as ``"1GiB"`` is a ``TypeError`` (the command line reads those; in Python give
    ``2**30``).
    """
    if isinstance(memory_budget, str):
        raise TypeError(
            f"memory_budget must be an integer number of bytes >= 1 (e.g. 2**30 for 1 GiB); "
            f"got memory_budget={memory_budget!r} (str)."
        )
    if memory_budget is not None:
        check_integer("memory_budget", memory_budget, 1, one=True)


def host_memory() -> int | None:
    """This machine's physical memory in bytes (``None`` where the platform does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_host_results(num_seeds: int, bytes_per_seed: float, remedy: str) -> None:
    """``ValueError`` where the results of ``num_seeds`` seeds, which a run holds in the host's memory
    at its end (and writes to disk), exceed the host's physical memory: such a run could only fail
    after computing them.

    Args:
      num_seeds: the run's seeds.
      bytes_per_seed: the results of one seed.
      remedy: what to do instead, for the message.
    """
    total, limit = num_seeds * bytes_per_seed, host_memory()
    if limit is not None and total > limit:
        raise ValueError(
            f"num_seeds={num_seeds} seeds make {total / 2**30:.1f} GiB of results ({bytes_per_seed:.0f} bytes a "
            f"seed), held in memory at the end of the run and written to disk, more than this machine's "
            f"{limit / 2**30:.1f} GiB of memory; {remedy}."
        )


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


THREADS_VARIABLE = "HTB_JAX_THREADS"


def default_threads(devices: Sequence[jax.Device], seeds_per_device: int) -> int:
    """Concurrent executions per device: on CPU devices, the usable cores shared out over them
    (one per core), or the environment variable ``HTB_JAX_THREADS`` where it is set (for
    processes that share the cores with others, e.g. pytest-xdist workers), at most one per
    seed; one on an accelerator (its streams already fill it) and under several processes
    (``jax.distributed``, whose results are gathered across hosts).

    Raises:
      ValueError: for an ``HTB_JAX_THREADS`` that is not an integer ``>= 1``.
    """
    if devices[0].platform != "cpu" or jax.process_count() > 1:
        return 1
    setting = os.environ.get(THREADS_VARIABLE)
    if setting is not None:
        if not setting.strip().isdigit() or int(setting) < 1:
            raise ValueError(f"{THREADS_VARIABLE} must be an integer >= 1; got {THREADS_VARIABLE}={setting!r}.")
        return min(int(setting), seeds_per_device)
    return max(1, min(usable_cores() // len(devices), seeds_per_device))


def plan_seed_chunk(
    seeds_per_device: int,
    bytes_per_seed: int,
    output_bytes_per_seed: int,
    memory_budget: int,
    preferred_bytes: int,
    seed_chunk: int | None = None,
    threads: int | None = 1,
    devices: Sequence[jax.Device] | None = None,
) -> MemoryPlan:
    """The largest seed chunk whose chunks and outputs fit ``memory_budget``.

    The seeds of a device are split over ``threads`` concurrent executions
    (``ceil(seeds_per_device / threads)`` each), and each execution gets an
    equal share of the budget.  The chunk is also at most ``preferred_bytes /
    bytes_per_seed`` (a chunk size that keeps the working set in cache on a
    CPU; larger chunks do not run faster) and at most the seeds per
    execution.  Padding the last chunk adds up to ``seed_chunk - 1`` seeds of
    outputs per execution, which the budget covers.

    Args:
      seeds_per_device: seeds each device simulates.
      bytes_per_seed: working memory of one seed within a chunk.
      output_bytes_per_seed: results of one seed.
      memory_budget: bytes per device.
      preferred_bytes: chunk working memory beyond which throughput stops growing.
      seed_chunk: a chunk given by the caller (overrides the budget; ``simulate`` refuses one that
        exceeds a budget given with it), at most the seeds per
        execution (a larger one held them all and padded the rest: 10^7 for 4 seeds asked for
        160 GB).
      threads: concurrent executions per device (at most one per seed), or
        ``None``: :func:`default_threads` of ``devices``, lowered (down to one)
        where the budget cannot hold that many executions of one seed per
        chunk; a thread count the caller gave is kept.
      devices: the devices, for ``threads=None``.

    Raises:
      ValueError: if not even one seed per chunk fits the budget.
    """
    bytes_per_seed = max(int(bytes_per_seed), 1)

    def least_budget(threads):
        return threads * (FIXED_BYTES + bytes_per_seed + output_bytes_per_seed * math.ceil(seeds_per_device / threads))

    if threads is None:
        threads = default_threads(devices, seeds_per_device)
        while seed_chunk is None and threads > 1 and memory_budget < least_budget(threads):
            threads -= 1
    threads = min(threads, seeds_per_device)
    per_thread = math.ceil(seeds_per_device / threads)
    share = memory_budget // threads
    minimum = least_budget(threads)
    if seed_chunk is None:
        if memory_budget < minimum:
            raise ValueError(
                f"memory_budget must be at least {minimum} bytes for this simulation ({threads} concurrent "
                f"execution(s) per device, each {FIXED_BYTES} fixed, {bytes_per_seed} for one seed per chunk "
                f"and {output_bytes_per_seed * per_thread} for the results of its {per_thread} seeds); "
                f"got memory_budget={memory_budget}."
            )
        fits = (share - FIXED_BYTES - output_bytes_per_seed * (per_thread - 1)) // (
            bytes_per_seed + output_bytes_per_seed
        )
        seed_chunk = int(max(1, min(per_thread, fits, max(1, preferred_bytes // bytes_per_seed))))
    seed_chunk = min(int(seed_chunk), per_thread)
    num_chunks = math.ceil(per_thread / seed_chunk)
    padded = threads * seed_chunk * num_chunks
    return MemoryPlan(
        memory_budget=int(memory_budget),
        seed_chunk=int(seed_chunk),
        num_chunks=num_chunks,
        seeds_per_device=padded,
        bytes_per_seed=bytes_per_seed,
        output_bytes=int(output_bytes_per_seed * padded),
        threads=int(threads),
    )
