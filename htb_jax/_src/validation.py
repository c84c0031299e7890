"""Input validation at the API boundary, in Python, before anything is traced.

Every check here looks only at *concrete* values (Python numbers, NumPy arrays,
committed ``jax.Array``s).  Tracers, ``None`` and other placeholders pass
through unchecked, because pytree machinery (``jax.tree.map``, ``vmap`` axis
specs, unflattening under ``jit``) rebuilds our dataclasses with such leaves.
"""

from __future__ import annotations

import numbers
from typing import Any

import jax
import numpy as np


def concrete(value: Any) -> np.ndarray | None:
    """Returns ``value`` as a NumPy array if it is concrete, else ``None``."""
    if value is None or isinstance(value, jax.core.Tracer):
        return None
    if isinstance(value, (numbers.Number, np.ndarray, np.generic, jax.Array, list, tuple)):
        try:
            return np.asarray(value)
        except (TypeError, ValueError, jax.errors.ConcretizationTypeError):
            return None
    return None


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def check_interval(
    name: str,
    value: Any,
    low: Any,
    high: Any,
    *,
    low_closed: bool,
    high_closed: bool,
    where: str = "",
    slack: float = 1e-12,
) -> None:
    """Raises ``ValueError`` unless every entry of ``value`` lies in the interval.

    ``low`` and ``high`` may be arrays broadcastable against ``value`` (the
    admissible range of ``alpha`` depends on ``eps``, for example).  Closed
    ends accept values within ``slack`` (relative) of the end point, so that a
    typed ``2/3`` is admissible where the bound is ``(1+eps)/(1+2eps)``.

    Args:
      name: parameter name used in the message.
      value: the value given; checked only if concrete.
      low: lower end of the interval.
      high: upper end of the interval.
      low_closed: whether ``low`` belongs to the interval.
      high_closed: whether ``high`` belongs to the interval.
      where: context appended to the message, e.g. ``"for eps=0.5"``.
      slack: relative tolerance at closed ends.
    """
    v = concrete(value)
    if v is None:
        return
    lo, hi = concrete(low), concrete(high)
    if lo is None or hi is None:
        return
    v_b, lo_b, hi_b = np.broadcast_arrays(
        np.asarray(v, np.float64), np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    )
    tol_lo = slack * np.maximum(1.0, np.abs(lo_b))
    tol_hi = slack * np.maximum(1.0, np.abs(hi_b))
    ok_lo = (v_b >= lo_b - tol_lo) if low_closed else (v_b > lo_b)
    ok_hi = (v_b <= hi_b + tol_hi) if high_closed else (v_b < hi_b)
    ok = ok_lo & ok_hi & np.isfinite(v_b)
    if np.all(ok):
        return
    idx = tuple(int(i) for i in np.argwhere(~ok)[0]) if v_b.ndim else ()
    at = f" (entry {list(idx)})" if idx else ""
    ctx = f" {where}" if where else ""
    lo_s = "[" if low_closed else "("
    hi_s = "]" if high_closed else ")"
    raise ValueError(
        f"{name} must lie in {lo_s}{_fmt(lo_b[idx])}, {_fmt(hi_b[idx])}{hi_s}{ctx}; "
        f"got {name}={_fmt(v_b[idx])}{at}."
    )


def check_integer(name: str, value: Any, minimum: int, *, maximum: int | None = None) -> None:
    """Raises ``ValueError`` unless every entry of ``value`` is an integer in range."""
    v = concrete(value)
    if v is None:
        return
    arr = np.asarray(v)
    if arr.dtype.kind not in "iu":
        as_f = arr.astype(np.float64)
        if not np.all(np.isfinite(as_f)) or not np.all(as_f == np.floor(as_f)):
            shown = v.item() if v.ndim == 0 else v.tolist()
            raise ValueError(f"{name} must be an integer; got {name}={shown!r}.")
    bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    low_bad = arr < minimum
    high_bad = (arr > maximum) if maximum is not None else np.zeros_like(low_bad)
    bad = low_bad | high_bad
    if np.any(bad):
        got = arr[bad].flat[0]
        raise ValueError(f"{name} must be an integer {bounds}; got {name}={got}.")
