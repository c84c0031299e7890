"""Where a compiled call spends its time: the JAX profiler's trace, summed per XLA operation.

``top_ops(fn)`` runs ``fn`` once under ``jax.profiler.trace`` (a Perfetto trace,
no TensorBoard needed), sums the device-side events by name and returns the
largest, so that a benchmark can print where its time goes next to its
figures.  On a CPU the operations run on host threads; on a GPU only the
device's own timelines (processes named ``/device:...``: the kernels on its
streams) are counted, not the host threads that launch them.  ``save_as``
keeps the trace (open it at https://ui.perfetto.dev), for example to read a
GPU's timeline after the machine is gone.
"""

from __future__ import annotations

import collections
import glob
import gzip
import json
import os
import shutil
import tempfile

import jax

# Host-side waits (np.asarray: a thread fetching the results of its execution) and bookkeeping
# events that enclose the operations rather than being one.
_ENCLOSING = ("$", "ThunkExecutor", "PjitFunction", "PjRt", "XlaModule", "Thunk::", "TfrtCpu", "np.asarray")


Figures = tuple[float, list[tuple[str, float, int]], list[tuple[int, float, int]]]


def top_ops(fn, count: int = 10, save_as: str | None = None) -> Figures:
    """Runs ``fn`` once under the profiler.

    Args:
      fn: a function of no arguments returning arrays.
      count: how many operations to return.
      save_as: where to copy the trace (``.trace.json.gz``), or None.

    Returns:
      ``(total_ms, [(name, ms, calls), ...], by_calls)``: the summed self time
      of every XLA operation event, the ``count`` largest operations, and the
      time grouped by call count (:func:`by_calls`), in milliseconds.
    """
    with tempfile.TemporaryDirectory() as d:
        with jax.profiler.trace(d, create_perfetto_trace=True):
            jax.block_until_ready(fn())
        files = glob.glob(os.path.join(d, "**", "*.trace.json.gz"), recursive=True)
        if not files:
            return 0.0, [], []
        if save_as is not None:
            os.makedirs(os.path.dirname(os.path.abspath(save_as)), exist_ok=True)
            shutil.copyfile(files[0], save_as)
        with gzip.open(files[0]) as f:
            trace = json.load(f)
    return operation_times(trace["traceEvents"] if isinstance(trace, dict) else trace, count)


def operation_times(events: list[dict], count: int = 10) -> Figures:
    """:func:`top_ops`'s figures from a trace's events (Chrome trace format: complete events
    ``ph == "X"`` with ``ts``, ``dur`` in microseconds, and ``process_name`` metadata)."""
    devices = {e.get("pid") for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
               and str(e.get("args", {}).get("name", "")).startswith("/device:")}
    if devices:  # an accelerator: its own timelines, not the host threads that launch its kernels
        events = [e for e in events if e.get("pid") in devices]
    # Self time: an event's duration less that of the events nested in it on the same thread
    # (a while loop's body operations are events of their own).
    by_thread = collections.defaultdict(list)
    for e in events:
        name = e.get("name", "")
        if e.get("ph") == "X" and "dur" in e and not name.startswith(_ENCLOSING):
            by_thread[e.get("pid"), e.get("tid")].append((float(e["ts"]), float(e["dur"]), name))
    time_us, calls = collections.Counter(), collections.Counter()
    for spans in by_thread.values():
        spans.sort(key=lambda x: (x[0], -x[1]))
        stack: list[list] = []  # [end, name, self time]
        for ts, dur, name in spans:
            while stack and stack[-1][0] <= ts:
                end, top, self_time = stack.pop()
                time_us[top] += self_time
            if stack:
                stack[-1][2] -= dur
            stack.append([ts + dur, name, dur])
            calls[name] += 1
        for _, top, self_time in stack:
            time_us[top] += self_time
    total = sum(time_us.values()) / 1e3
    return total, [(n, t / 1e3, calls[n]) for n, t in time_us.most_common(count)], by_calls(time_us, calls)


def by_calls(time_us, calls) -> list[tuple[int, float, int]]:
    """``[(calls, ms, operations), ...]``: self time summed over the operations run that many
    times, most time first; an operation inside a loop runs once per trip, so the call counts
    tell the loop levels apart (e.g. once per seed chunk, once per bisection step)."""
    ms, ops = collections.Counter(), collections.Counter()
    for name, t in time_us.items():
        ms[calls[name]] += t / 1e3
        ops[calls[name]] += 1
    return [(c, m, ops[c]) for c, m in ms.most_common()]


def format_ops(total_ms: float, ops, grouped=(), indent: str = "  ", groups: int = 6) -> str:
    lines = [f"{indent}{'ms':>9s} {'share':>6s} {'calls':>7s}  XLA operation"]
    for name, ms, n in ops:
        share = ms / total_ms if total_ms else 0.0
        lines.append(f"{indent}{ms:9.1f} {100 * share:5.1f}% {n:7d}  {name[:90]}")
    lines.append(f"{indent}{total_ms:9.1f} total self time of every operation event")
    if grouped:
        lines.append(f"{indent}by call count (loop level): "
                     + "; ".join(f"{c} calls: {ms:.0f} ms in {k} ops" for c, ms, k in grouped[:groups]))
    return "\n".join(lines)
