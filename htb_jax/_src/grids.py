"""Log-spaced grids that are the same floats on every machine.

``10.0 ** np.arange(...)`` is not: NumPy evaluates ``power`` with SIMD code
chosen at run time (on AVX-512 CPUs its float64 ``10.0 ** -5.0`` is one unit
in the last place away from the value other CPUs return), so a family built
that way is a different family on another machine.  The grids here are
computed in decimal arithmetic and rounded once to float64.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from htb_jax._src.validation import given, real_array

_CONTEXT = decimal.Context(prec=40)
_LOWEST, _HIGHEST = -307, 308  # exponents: 10^-307 is a normal float64, 10^308 the last power below inf
_MAX_POINTS = 10**6


def powers_of_ten(start: float, stop: float, step: float) -> tuple[float, ...]:
    """``10^x`` for ``x = start, start + step, ...`` below ``stop``, each rounded once to float64.

    The exponents are read as the decimals they are written as (``0.1`` is
    one tenth), stepped exactly, and ``10^x`` is evaluated to 40 digits
    before rounding: the result does not depend on the CPU, NumPy or libm.

    Args:
      start: first exponent, ``>= -307``.
      stop: exponents stay strictly below it; ``> start`` and ``<= 308`` (float64's range).
      step: positive spacing of the exponents (a grid of at most 10^6 points).

    Returns:
      The grid as a tuple of Python floats.

    Examples:
      >>> powers_of_ten(-6.0, -4.0, 0.5)
      (1e-06, 3.162277660168379e-06, 1e-05, 3.1622776601683795e-05)
    """
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        v = real_array(name, value, "a finite real number")
        if v is None or v.ndim or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite real number; got {given(name, value)}.")
    first, last, spacing = (Fraction(decimal.Decimal(repr(float(v)))) for v in (start, stop, step))
    if not spacing > 0:
        raise ValueError(f"step must be > 0; got step={step!r}.")
    if not first < last:  # the grid [start, stop) would be empty
        raise ValueError(f"stop must exceed start (the grid runs from start up to, not including, stop); got "
                         f"start={start!r}, stop={stop!r}.")
    # float64's range: beyond it 10^x rounds to inf or 0, which no grid of horizons, gaps or spike
    # probabilities means
    if first < _LOWEST or last > _HIGHEST:
        name, value, end = ("start", start, f">= {_LOWEST}") if first < _LOWEST else ("stop", stop, f"<= {_HIGHEST}")
        raise ValueError(f"{name} must be {end} (10^x within float64's normal range); got {name}={value!r}.")
    count = math.ceil((last - first) / spacing)
    if count > _MAX_POINTS:  # each point is evaluated to 40 digits in Python: about 10^5 a second
        raise ValueError(f"the grid would hold {count} points, more than {_MAX_POINTS}; give a larger step (got "
                         f"step={step!r} from {start!r} to {stop!r}).")
    grid = []
    x = first
    while x < last:
        exponent = _CONTEXT.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
        grid.append(float(_CONTEXT.power(decimal.Decimal(10), exponent)))
        x += spacing
    return tuple(grid)
