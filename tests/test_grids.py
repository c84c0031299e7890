"""``powers_of_ten``: correctly rounded powers of ten, whatever NumPy or libm the machine has."""

import math
from fractions import Fraction

import pytest

from htb_jax import powers_of_ten


def _ulp(x: float) -> Fraction:
    return Fraction(math.ulp(x))


def test_integer_exponents_are_the_decimal_literals():
    # Python reads "1e-5" correctly rounded; NumPy's 10.0 ** -5.0 is one unit off on AVX-512 CPUs.
    assert powers_of_ten(-16.0, 3.0, 1.0) == tuple(float(f"1e{k}") for k in range(-16, 3))


@pytest.mark.parametrize("k", range(-16, 3))
def test_half_integer_exponents_are_correctly_rounded(k):
    # 10^(k + 1/2) = sqrt(10^(2k + 1)): the float returned is within half a unit of the square root.
    x = powers_of_ten(k + 0.5, k + 0.6, 1.0)[0]
    target = Fraction(10) ** (2 * k + 1)
    half = _ulp(x) / 2
    assert (Fraction(x) - half) ** 2 <= target <= (Fraction(x) + half) ** 2


def test_grid_bounds_and_decimal_steps():
    assert len(powers_of_ten(-10.0, 0.0, 0.5)) == 20
    assert powers_of_ten(-3.0, -0.3, 0.25)[-1] == powers_of_ten(-0.5, -0.4, 1.0)[0]  # stops below -0.3
    # Exponents stepped in decimals: eight steps of 0.1 reach 0.8 exactly (added up in floats they
    # reach 0.7999999999999999, and 10^0.8 would join the grid).
    assert len(powers_of_ten(0.0, 0.8, 0.1)) == 8
    with pytest.raises(ValueError, match="step must be > 0"):
        powers_of_ten(0.0, 1.0, 0.0)
