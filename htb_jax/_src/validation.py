"""Input validation at the API boundary, in Python, before anything is traced.

Every check here looks only at *concrete* values (Python numbers, NumPy arrays,
committed ``jax.Array``s); tracers pass through unchecked.  ``None`` and a
class where a value belongs are refused like any other wrong type: pytree
machinery (``jax.tree.map``, ``vmap`` axis specs, unflattening under ``jit``)
rebuilds our dataclasses without calling ``__init__`` (see
:mod:`htb_jax._src.pytree`), so a placeholder leaf never reaches a check.
Parameters whose documented default is ``None`` test for it before checking.

What a number must be is checked before its range: a string, a bool, a
complex number or an array of such is a ``TypeError`` naming the argument
(NumPy would silently turn ``"0.8"`` into 0.8 and ``True`` into 1), a ragged
nested list a ``ValueError``.  Every message names the argument, what it must
be and the value given.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_TINY = float(np.finfo(np.float32).tiny)  # smallest normal float32


def shown(value: Any, limit: int = 60) -> str:
    text = " ".join(repr(value).split())  # one line: an array's repr spans several
    return text if len(text) <= limit else text[: limit - 3] + "..."


def given(name: str, value: Any) -> str:
    """How a message shows the value given: ``name=None``, ``name=Pareto (a class)`` or
    ``name=<repr> (<type>)``."""
    if value is None:
        return f"{name}=None"
    if isinstance(value, type):
        return f"{name}={value.__name__} (a class)"
    return f"{name}={shown(value)} ({type(value).__name__})"


def check_given(name: str, value: Any, what: str) -> None:
    """``TypeError`` for ``None`` or a class where ``what`` (a value or an instance) is expected.

    Args:
      name: parameter name used in the message.
      value: the value given.
      what: what ``value`` must be, e.g. ``"a distribution of htb_jax such as htb.Pareto(0.0, 1.5)"``.
    """
    if value is None:
        raise TypeError(f"{name} must be {what}; got {name}=None.")
    if isinstance(value, type):
        raise TypeError(f"{name} must be {what}, not the class {value.__name__} itself; got {given(name, value)}.")


def check_instance_type(name: str, value: Any, types: type | tuple[type, ...], what: str) -> None:
    """``TypeError`` unless ``value`` is an instance of ``types`` (``None`` and classes included).

    Args:
      name: parameter name used in the message.
      value: the value given.
      types: the accepted types.
      what: what ``value`` must be, for the message, e.g. ``"an Outcome of htb.simulate"``.
    """
    check_given(name, value, what)
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}; got {given(name, value)}.")


def check_flag(name: str, value: Any) -> None:
    """``TypeError`` unless ``value`` is ``True`` or ``False`` (a NumPy bool included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {given(name, value)}.")


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """``ValueError`` unless ``value`` is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {given(name, value)}.")


def check_path(name: str, value: Any, *, file_object: bool = False) -> None:
    """``TypeError`` unless ``value`` is a file-system path: a non-empty string or an ``os.PathLike``;
    with ``file_object``, also an open file (anything with ``read`` or ``write``, such as
    ``io.BytesIO``: NumPy and matplotlib write to both)."""
    if isinstance(value, type) or value is None:
        pass
    elif isinstance(value, os.PathLike) or (isinstance(value, str) and value):
        return
    elif file_object and (callable(getattr(value, "write", None)) or callable(getattr(value, "read", None))):
        return
    form = "a path (a non-empty string or a pathlib.Path)" + (" or an open file" if file_object else "")
    raise TypeError(f"{name} must be {form}; got {given(name, value)}.")


def check_devices(name: str, value: Any) -> None:
    """``TypeError`` unless ``value`` is ``None`` or a non-empty list, tuple or 1-D array of ``jax.Device`` objects;
    ``ValueError`` for a device listed twice."""
    if value is None:
        return
    listed = isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1)
    if listed and len(value) and all(isinstance(d, jax.Device) for d in value):
        repeated = [d for i, d in enumerate(value) if d in list(value)[:i]]
        if repeated:  # a mesh of one device twice: jax failed inside with a bare AssertionError
            raise ValueError(f"{name} must list each device once; got {repeated[0]} more than once in "
                             f"{given(name, list(value))}.")
        return
    raise TypeError(
        f"{name} must be None (every device) or a non-empty list of jax.Device, such as jax.devices()[:1]; "
        f"got {given(name, value)}."
    )


def has_tracer(value: Any) -> bool:
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(value))


def check_untraced(reason: str, remedy: str, **values: Any) -> None:
    """``TypeError`` naming the first traced value of ``values``: ``"{reason}, so it cannot be traced (jax.jit,
    jax.vmap, jax.grad); got a traced {name}{remedy}"``, for a function that compiles and runs its own
    program (``simulate``, ``run_on_rewards``)."""
    traced = [name for name, value in values.items() if has_tracer(value)]
    if traced:
        raise TypeError(f"{reason}, so it cannot be traced (jax.jit, jax.vmap, jax.grad); got a traced {traced[0]}{remedy}")


def check_static(function: str, **values: Any) -> None:
    """``TypeError`` where a value ``function`` needs concrete (it fixes a shape, a loop's length or
    the program) is traced, as under ``jax.jit`` without ``static_argnames``, naming the argument.

    Args:
      function: the public function, for the message (``"htb.tune_schedule"``).
      **values: the arguments by name.
    """
    for name, value in values.items():
        if has_tracer(value):
            raise TypeError(
                f"{function} needs {name} as a Python value (it fixes the program's shapes or loops); got a traced "
                f"{name}: pass {name!r} in static_argnames when you jit {function}, or call it outside jit."
            )


def _holds_bool(values: list | tuple) -> bool:
    """Whether a bool stands anywhere in the nested lists and tuples ``values``."""
    return any(isinstance(v, (bool, np.bool_)) or (isinstance(v, (list, tuple)) and _holds_bool(v)) for v in values)


def _is_real_dtype(dtype: Any) -> bool:
    return bool(jnp.issubdtype(dtype, jnp.integer) or jnp.issubdtype(dtype, jnp.floating))


def real_array(name: str, value: Any, what: str = "a real number or an array of real numbers") -> np.ndarray | None:
    """``value`` as a NumPy array of real numbers; ``None`` for tracers (and lists holding them).

    Args:
      name: parameter name used in the message.
      value: the value given.
      what: what ``value`` must be, for the message.

    Raises:
      TypeError: for ``None``, a class, strings, bools, complex numbers, typed
        keys, arrays (or lists) of such, and any other object that is not a
        number, an array or a sequence (or has ``__array__``).
      ValueError: for a ragged nested sequence.
    """
    if isinstance(value, jax.core.Tracer):
        return None
    check_given(name, value, what)

    def got() -> str:  # formatted only for a message: an array's repr reads it back from its device
        return f"got {given(name, value)}"

    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be {what}; {got()}.")
    if isinstance(value, (list, tuple)):
        if has_tracer(value):
            return None
        if _holds_bool(value):  # NumPy reads [0.5, True] as floats: the dtype no longer tells
            raise TypeError(f"{name} must be {what}; {got()}, which holds bools.")
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be {what} (a nested sequence of equal lengths); {got()}.") from None
        if arr.dtype == object and all(
            isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_)) for x in arr.flat
        ):
            arr = arr.astype(np.float64)  # Python ints beyond int64
    elif isinstance(value, (numbers.Number, np.ndarray, np.generic, jax.Array)):
        if isinstance(value, jax.Array) and jnp.issubdtype(value.dtype, jax.dtypes.prng_key):
            raise TypeError(f"{name} must be {what}; got a random key of shape {value.shape}.")
        if isinstance(value, numbers.Integral) and not isinstance(value, np.generic):
            arr = np.asarray(value if -(2**63) <= value < 2**63 else float(value))
        elif _exact_real(value):
            arr = np.asarray(float(value))  # a Fraction, as lists of them are read
        else:
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError, jax.errors.ConcretizationTypeError):
                return None
    elif hasattr(value, "__array__") or hasattr(value, "__jax_array__"):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError, jax.errors.ConcretizationTypeError):
            return None
    else:
        raise TypeError(f"{name} must be {what}; {got()}.")
    if not _is_real_dtype(arr.dtype):
        kind = {"b": "bools", "c": "complex numbers", "U": "strings", "S": "bytes"}.get(arr.dtype.kind, "objects")
        raise TypeError(f"{name} must be {what}; {got()}, which holds {kind} (dtype {arr.dtype}).")
    return arr


def lists_as_arrays(obj: Any, owner: str = "") -> None:
    """Replaces each data field of the frozen dataclass ``obj`` given as a list or tuple by a float64 NumPy
    array (and one given as a ``Fraction`` by a float), refusing one that does not hold real numbers
    (:func:`real_array`, the field named with ``owner`` before it, as ``"Pareto loc"``): JAX would take
    the entries for leaves of their own (a policy's grid given as ``[0.5, 0.6]`` failed inside
    ``simulate``)."""
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if not field.metadata.get("static") and isinstance(value, (list, tuple)):
            arr = real_array(f"{owner} {field.name}".strip(), value)
            if arr is not None:  # a list holding tracers is left to JAX
                object.__setattr__(obj, field.name, arr.astype(np.float64))
        elif _exact_real(value):  # a Fraction: JAX takes no such leaf
            object.__setattr__(obj, field.name, float(value))


def _exact_real(value: Any) -> bool:
    """Whether ``value`` is a real number of a type JAX cannot take: a ``Fraction`` (Python's and
    NumPy's own numbers, and bools, are not)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (int, float, bool, np.generic))


def check_increasing(name: str, values: Any, least: int = 1) -> None:
    """``ValueError`` unless ``values`` (checked numbers) are at least ``least`` and strictly increasing: a
    horizon given twice would count twice in a fit."""
    v = np.asarray(values)
    if v.size < least or np.any(np.diff(v) <= 0):
        at_least = f"at least {({2: 'two', 3: 'three'}).get(least, least)}, " if least > 1 else ""
        listed = [int(x) if float(x).is_integer() else float(x) for x in v.ravel()]
        raise ValueError(f"{name} must be {at_least}increasing; got {name}={shown(listed, 100)}.")


def check_distinct(name: str, values: Any) -> None:
    """``ValueError`` where a list of (checked) numbers repeats one: each would be run, and shown, twice."""
    listed = [int(x) if float(x).is_integer() else float(x) for x in np.asarray(values, np.float64).ravel()]
    repeated = next((x for i, x in enumerate(listed) if x in listed[:i]), None)
    if repeated is not None:
        raise ValueError(f"{name} must not repeat a value; got {name}={shown(listed, 100)}, with {repeated} "
                         f"{listed.count(repeated)} times.")


def check_real(name: str, value: Any, what: str = "a real number or an array of real numbers") -> None:
    """``TypeError`` unless ``value`` holds real numbers, as :func:`real_array` decides, without
    copying an array (a ``jax.Array`` or NumPy array is judged by its dtype)."""
    if isinstance(value, (jax.Array, np.ndarray)):
        if isinstance(value, jax.core.Tracer) or (
            not jnp.issubdtype(value.dtype, jax.dtypes.prng_key) and _is_real_dtype(value.dtype)
        ):
            return
    real_array(name, value, what)


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


def check_nonempty(name: str, values: Any) -> None:
    """``ValueError`` unless ``values`` is a non-empty list or tuple (a setting such as ``alphas``), or a
    non-empty 1-D NumPy or JAX array of them (not traced)."""
    if isinstance(values, (np.ndarray, jax.Array)) and not isinstance(values, jax.core.Tracer):
        if values.ndim == 1 and values.size > 0:
            return
    elif isinstance(values, (list, tuple)) and values:
        return
    got = given(name, values) if values is None or isinstance(values, type) else f"{name}={values!r}"
    raise ValueError(f"{name} must be a non-empty list of numbers (or a 1-D array); got {got}.")


def check_broadcasts_against(name: str, value: Any, shape: tuple[int, ...], against: str) -> None:
    """``ValueError`` unless ``value``'s shape broadcasts against ``shape`` (``against`` says whose, for the
    message: ``"x's shape without its sample axis"``)."""
    try:
        np.broadcast_shapes(np.shape(value), tuple(shape))
    except ValueError:
        raise ValueError(f"{name} must broadcast against {against}, {tuple(shape)}; got {name} of shape "
                         f"{np.shape(value)}.") from None


def check_broadcast(what: str, **values: Any) -> tuple[int, ...]:
    """The common batch shape of ``values`` (arrays, numbers or tracers), or ``ValueError``.

    Args:
      what: the object they parametrise, e.g. ``"Pareto"``.
      **values: the parameters by name.

    Raises:
      ValueError: naming every parameter and its shape, if the shapes do not
        broadcast.
    """
    shapes = {}
    for name, value in values.items():
        if value is None:
            continue
        try:
            shapes[name] = tuple(np.shape(value))
        except (TypeError, ValueError):
            continue  # not array-like: a placeholder, or refused by the type checks
    return broadcast_named_shapes(shapes, f"the parameters of {what} must broadcast to one batch shape")


def broadcast_named_shapes(shapes: dict[str, tuple[int, ...]], refusal: str) -> tuple[int, ...]:
    """The broadcast of ``shapes`` (by argument name), or ``ValueError``: ``refusal``, then every name's shape."""
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        listed = ", ".join(f"{name} of shape {shape}" for name, shape in shapes.items())
        raise ValueError(f"{refusal}; got {listed}.") from None


def check_interval(
    name: str,
    value: Any,
    low: Any,
    high: Any,
    *,
    low_closed: bool,
    high_closed: bool,
    where: str | dict = "",
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
      where: context appended to the message, e.g. ``"for eps=0.5"``; or a dict of the arrays the
        bounds depend on (``{"eps": eps}``), shown as ``for eps=0.5`` at the entry that fails.
      slack: relative tolerance at closed ends.

    Raises:
      TypeError: if ``value`` is not real (see :func:`real_array`).
      ValueError: if an entry lies outside the interval, or ``value`` does
        not broadcast against the bounds.
    """
    v = real_array(name, value)
    if v is None:
        return
    lo, hi = concrete(low), concrete(high)
    if lo is None or hi is None:
        return
    context = where if isinstance(where, dict) else {}
    ctx = f" {where}" if where and not context else ""
    try:
        v_b, lo_b, hi_b = np.broadcast_arrays(
            np.asarray(v, np.float64), np.asarray(lo, np.float64), np.asarray(hi, np.float64)
        )
    except ValueError:
        raise ValueError(
            f"{name} of shape {v.shape} does not broadcast against the shape {np.broadcast_shapes(lo.shape, hi.shape)} "
            f"of its admissible range{ctx}."
        ) from None
    tol_lo = slack * np.maximum(1.0, np.abs(lo_b))
    tol_hi = slack * np.maximum(1.0, np.abs(hi_b))
    ok_lo = (v_b >= lo_b - tol_lo) if low_closed else (v_b > lo_b)
    ok_hi = (v_b <= hi_b + tol_hi) if high_closed else (v_b < hi_b)
    ok = ok_lo & ok_hi & np.isfinite(v_b)
    if np.all(ok):
        return
    idx, at = first_entry(~ok)
    if context:
        ctx = " for " + ", ".join(f"{k}={_fmt(np.broadcast_to(np.asarray(c, np.float64), v_b.shape)[idx])}"
                                  for k, c in context.items())
    lo_s = "[" if low_closed else "("
    hi_s = "]" if high_closed else ")"
    value, ends = v_b[idx], (lo_b[idx], hi_b[idx])
    got, low_shown, high_shown = _fmt(value), _fmt(ends[0]), _fmt(ends[1])
    if any(_fmt(end) == got and end != value for end in ends):  # 6 digits would show it as the end it misses
        got, low_shown, high_shown = (repr(float(x)) if _fmt(x) == got else _fmt(x) for x in (value, *ends))
    if low_shown == high_shown and ends[0] != ends[1]:  # a narrow range, [0.9999999999999998, 1) shown as [1, 1)
        low_shown, high_shown = repr(float(ends[0])), repr(float(ends[1]))
    raise ValueError(f"{name} must lie in {lo_s}{low_shown}, {high_shown}{hi_s}{ctx}; got {name}={got}{at}.")


def first_entry(bad: np.ndarray) -> tuple[tuple[int, ...], str]:
    """The index of ``bad``'s first true entry and a message's suffix naming it, ``" (entry [1, 0])"``
    (``()`` and ``""`` for a 0-d array)."""
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if np.ndim(bad) else ()
    return idx, f" (entry {list(idx)})" if idx else ""


def check_integer(name: str, value: Any, minimum: int, *, maximum: int | None = None, one: bool = False) -> None:
    """Raises unless every entry of ``value`` is an integer in ``[minimum, maximum]``.

    Integral floats (``1e6``) are integers; ``1500.7``, ``inf`` and NaN are not.  With ``one``,
    ``value`` is a count or an index: a list or an array of any shape but ``()`` is refused.

    Raises:
      TypeError: if ``value`` is not real (a string, a bool, ...; see :func:`real_array`), or
        with ``one``, not a single number.
      ValueError: for a non-integral or out-of-range entry.
    """
    bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if value < minimum or (maximum is not None and value > maximum):
            raise ValueError(f"{name} must be an integer {bounds}; got {name}={int(value)}.")
        return
    scalar = not isinstance(value, (list, tuple)) and getattr(value, "ndim", 0) == 0
    if one and not scalar:
        raise TypeError(f"{name} must be one integer {bounds}; got {given(name, value)}.")
    arr = real_array(name, value, f"an integer {bounds}" if scalar else f"integers {bounds}")
    if arr is None:
        return
    if arr.dtype.kind not in "iu":
        as_f = arr.astype(np.float64)
        bad = ~np.isfinite(as_f) | (as_f != np.floor(np.where(np.isfinite(as_f), as_f, 0.0)))
        if np.any(bad):
            got = (arr[bad].flat[0] if arr.ndim else arr).item()
            raise ValueError(f"{name} must be an integer {bounds}; got {name}={got!r}.")
    low_bad = arr < minimum
    high_bad = (arr > maximum) if maximum is not None else np.zeros_like(low_bad)
    bad = low_bad | high_bad
    if np.any(bad):
        got = arr[bad].flat[0]
        shown = int(got) if float(got) == np.floor(float(got)) and abs(float(got)) < 2**63 else got
        if isinstance(value, (list, tuple)) and arr.ndim == 1:  # a Python int as written, 10**20 not 1e+20
            written = value[int(np.flatnonzero(bad)[0])]
            if isinstance(written, numbers.Integral) and not isinstance(written, (bool, np.bool_)):
                shown = int(written)
        raise ValueError(f"{name} must be an integer {bounds}; got {name}={shown}.")


def check_float32_scale(name: str, value: Any) -> None:
    """``ValueError`` for a positive scale below the smallest normal float32.

    Rewards are float32: a scale below ``1.2e-38`` would round to 0 (or lose
    its precision as a subnormal) and every reward would be its location.
    """
    v = real_array(name, value)
    if v is None:
        return
    v = np.asarray(v, np.float64)
    small = (v > 0) & (v < FLOAT32_TINY)
    if np.any(small):
        raise ValueError(
            f"a positive {name} must be at least {FLOAT32_TINY:.8g} (rewards are float32, so a smaller scale "
            f"would vanish); got {name}={_fmt(v[small].flat[0])}."
        )


def check_float32_above_one(name: str, value: Any) -> None:
    """``ValueError`` for a tail index above 1 that float32 rounds to 1 (at most ``1 + 2^-24``).

    The draws compute in float32: such a Pareto or Frechet shape drew every reward as ``-inf``, a Stable
    ``alpha`` NaN, a Student-t ``df`` a Cauchy law, while ``mean()`` described the float64 value.
    """
    v = real_array(name, value)
    if v is None:
        return
    v = np.asarray(v, np.float64)
    with np.errstate(over="ignore"):  # a value beyond float32 is inf there (refused by check_float32)
        rounded = (v > 1.0) & (v.astype(np.float32) <= 1.0)
    if np.any(rounded):
        raise ValueError(
            f"{name} must exceed 1 + 2^-24 (about 1.00000006), or float32, in which rewards are drawn, rounds it "
            f"to 1; got {name}={float(v[rounded].flat[0])!r}."
        )


def check_float32(name: str, value: Any, *, positive: bool = False) -> None:
    """``ValueError`` unless every entry of ``value`` lies in the float32 range.

    Rewards are float32: a location beyond ``3.4e38`` would become ``inf``.  ``positive``: a value whose
    sign is checked elsewhere (a scale), refused as above the largest float32 alone.
    """
    v = real_array(name, value)
    if v is None:
        return
    # Beyond FLOAT32_MAX by half its ulp (2^103), float32 rounds to inf; nearer, to FLOAT32_MAX.
    big = np.abs(np.asarray(v, np.float64)) >= FLOAT32_MAX + 2.0**103
    if np.any(big):
        got = np.asarray(v, np.float64)[big].flat[0]
        where = f"be at most {FLOAT32_MAX:.8g}" if positive else f"lie in [-{FLOAT32_MAX:.8g}, {FLOAT32_MAX:.8g}]"
        raise ValueError(
            f"{name} must {where} (rewards are float32, in which a larger value is inf); got {name}={float(got)!r}."
        )
