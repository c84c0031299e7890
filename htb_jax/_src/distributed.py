"""Several processes, one sweep: ``jax.distributed`` from the command line.

``htb-jax sweep`` and ``htb-jax frontier`` take ``--coordinator HOST:PORT
--num-processes N --process-id I``: every process runs the same command with
its own ``--process-id``, they connect through the coordinator (process 0's
address), ``jax.devices()`` then lists the devices of every process, and
``simulate`` shards the seeds over all of them.  Process 0 writes the output
directory (which every process must see); the others compute their share and
write nothing.  On CPUs the processes exchange results over Gloo
(``jax_cpu_collectives_implementation``), so two processes on one machine
work as two hosts would.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys

import jax
import numpy as np

FLAGS = ("coordinator", "num_processes", "process_id")  # argparse destinations
_SLOTS = 128  # settings compared between the processes, at most (a command has about 40)
_ADDRESS = re.compile(r"^(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-]+):(?P<port>[0-9]+)$")
# A run whose processes cannot all meet within this many seconds stops with an error.
INITIALIZATION_TIMEOUT_S = 300


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds ``--coordinator``, ``--num-processes`` and ``--process-id`` to a command."""
    group = parser.add_argument_group(
        "several processes (jax.distributed; give all three, and run the same command in every process)"
    )
    group.add_argument("--coordinator", metavar="HOST:PORT", help="address of process 0's coordinator service")
    group.add_argument("--num-processes", type=int, metavar="N", help="number of processes, >= 2")
    group.add_argument("--process-id", type=int, metavar="I", help="this process, in 0..N-1 (0 writes the output)")


def check_arguments(coordinator, num_processes, process_id) -> bool:
    """Whether the flags ask for several processes; ``ValueError`` when they are incomplete or out of range."""
    given = {"--coordinator": coordinator, "--num-processes": num_processes, "--process-id": process_id}
    if all(v is None for v in given.values()):
        return False
    missing = [name for name, v in given.items() if v is None]
    if missing:
        raise ValueError(
            f"several processes need --coordinator, --num-processes and --process-id together; "
            f"missing {', '.join(missing)}"
        )
    match = _ADDRESS.match(coordinator)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise ValueError(f"--coordinator must be HOST:PORT with a port in [1, 65535]; got {coordinator!r}")
    if num_processes < 2:
        raise ValueError(f"--num-processes must be an integer >= 2; got {num_processes}")
    if not 0 <= process_id < num_processes:
        raise ValueError(f"--process-id must be an integer in [0, {num_processes - 1}]; got {process_id}")
    return True


def initialize(coordinator: str, num_processes: int, process_id: int) -> None:
    """``jax.distributed.initialize`` with Gloo collectives on CPU; call before any JAX computation.

    Says on stderr that the process is joining, and for how long it may wait: a process that cannot join
    is ended by jax after :data:`INITIALIZATION_TIMEOUT_S`, and Ctrl-C does not reach it meanwhile."""
    print(f"htb-jax: process {process_id} of {num_processes}: joining the others through {coordinator} "
          f"(up to {INITIALIZATION_TIMEOUT_S} s)", file=sys.stderr, flush=True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=INITIALIZATION_TIMEOUT_S,
        )
    except Exception as e:  # the coordinator's errors are several pages of gRPC status
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(
            f"process {process_id} of {num_processes} could not join the others through {coordinator}: {first}"
        ) from None


def check_backend() -> None:
    """``ValueError`` in one line where jax has no backend to run on, as under ``JAX_PLATFORMS=cuda`` without
    jax's CUDA plugin (jax 0.10 raised a bare ``AssertionError`` from inside its backend set-up)."""
    try:
        jax.devices()
    except (RuntimeError, AssertionError) as e:
        platforms = jax.config.jax_platforms or ""
        asked = f" for JAX_PLATFORMS={platforms}" if platforms else ""
        detail = f" ({' '.join(str(e).split()[:40])})" if str(e) else ""
        raise ValueError(
            f"jax found no backend to run on{asked}{detail}: for an NVIDIA GPU install htb-jax[cuda] "
            "(htb-jax[cuda12] under a driver older than 580); else unset JAX_PLATFORMS"
        ) from None


def what_it_sees(path: str | None) -> str:
    """What a process sees of a path: a directory's files (relative path and size each), a file's
    SHA-256, or ``"absent"``."""
    if path is None or not os.path.exists(path):
        return "absent"
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    return "; ".join(f"{os.path.relpath(os.path.join(d, f), path)}: {os.path.getsize(os.path.join(d, f))}"
                     for d, _, files in sorted(os.walk(path)) for f in sorted(files))


def check_same_command(args: argparse.Namespace) -> None:
    """``ValueError`` in every process unless every process has the same command: every flag of ``args``
    but ``--process-id``, and what it sees of ``--out`` and ``--config`` (:func:`what_it_sees`).
    Processes given another ``--key`` or ``--horizons``, or resuming from chunks process 0 alone sees,
    computed their seeds of other runs and process 0 wrote them as its own.  Nothing is checked (or read)
    in one process.
    """
    if jax.process_count() < 2:
        return
    from jax.experimental import multihost_utils

    settings = {f"--{k.replace('_', '-')}": repr(v) for k, v in vars(args).items() if k != "process_id"}
    for flag in ("out", "config"):
        if getattr(args, flag, None) is not None:
            settings[f"what --{flag} holds"] = what_it_sees(getattr(args, flag))

    def digest(text: str) -> int:
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF

    names = sorted(settings)[:_SLOTS]
    mine = np.full((2, _SLOTS), -1, np.int32)  # [name, value] digests, one slot per setting
    mine[0, : len(names)] = [digest(n) for n in names]
    mine[1, : len(names)] = [digest(f"{n}={settings[n]}") for n in names]
    every = np.asarray(multihost_utils.process_allgather(mine))  # [P, 2, slots]
    differs = np.any(every != every[0], axis=(0, 1))
    if not differs.any():
        return
    slot = int(np.argmax(differs))
    others = [int(p) for p in np.flatnonzero(np.any(every[:, :, slot] != every[0, :, slot], axis=1))]
    what = names[slot] if slot < len(names) and every[0, 0, slot] == mine[0, slot] else "the flags given"
    raise ValueError(
        f"every process must run the same command and see the same output directory: {what} differs between "
        f"process 0 and process{'es' if len(others) > 1 else ''} {', '.join(map(str, others))} (this is process "
        f"{jax.process_index()})"
    )
