"""The standard normal quantile of a lower-tail probability, float32, one approximation per element.

``jax.scipy.special.ndtri`` evaluates Cephes' ``ndtri``: a rational function
``P0/Q0`` of ``w^2`` (``w = p - 1/2``) where ``p > e^-2``, and beyond it
``z - log(z)/z - P(1/z)/(z Q(1/z))`` with ``z = sqrt(-2 log p)`` and one of
two pairs ``P1/Q1`` (``z < 8``) or ``P2/Q2`` (``z >= 8``).  Elementwise code
cannot branch, so it computes all three rational functions (six polynomials
of degree up to 8 and their divisions) for every element and selects one.

:func:`lower_tail_magnitude` performs the same float32 operations in the same
order, but selects the *coefficients* before a single Horner evaluation: each
element runs one rational function instead of three.  A shorter polynomial is
padded with leading zero coefficients, which Horner's rule passes through
exactly (``0 t + 0 = 0``, then ``0 t + c = c``), so the result equals
computing all three and selecting, bit for bit (tested on every normal
float32 in ``(0, 1/2]`` at a stride, and at the branch edges): that is
``-jax.scipy.special.ndtri(p)`` up to jax 0.10.  jax 0.12 evaluates its
``ndtri`` otherwise (43% of float32 inputs differ in the last bit or two); the
Gaussian and log-normal draws, which go through this function, do not
change with it.  It is also what makes a Gaussian reward cheap.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

# Cephes ndtri (Moshier): x/sqrt(2 pi) = w + w^3 P0(w^2)/Q0(w^2) for p > exp(-2), and
# x = z - log(z)/z - (1/z) P(1/z)/Q(1/z) below, with (P1, Q1) for z < 8 and (P2, Q2) beyond.
_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
       1.39312609387279679503e1, -1.23916583867381258016e0)
_Q0 = (1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
       -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
       1.59056225126211695515e1, -1.18331621121330003142e0)
_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
       4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
       -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4)
_Q1 = (1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
       1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
       -3.80806407691578277194e-2, -9.33259480895457427372e-4)
_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
       1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
       3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9)
_Q2 = (1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
       2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
       2.89247864745380683936e-6, 6.79019408009981274425e-9)
_DEGREE = 8


def _padded(coefficients) -> np.ndarray:
    return np.array((0.0,) * (_DEGREE + 1 - len(coefficients)) + coefficients, np.float32)


# Per Horner step, the three approximations' coefficients (central, tail, far tail), float32.
_NUMERATOR = tuple(zip(_padded(_P0), _padded(_P1), _padded(_P2), strict=True))
_DENOMINATOR = tuple(zip(_padded(_Q0), _padded(_Q1), _padded(_Q2), strict=True))


def _horner(coefficients: list[jax.Array], t: jax.Array) -> jax.Array:
    """``sum_i c_i t^(8 - i)`` by Horner's rule from 0, as ``jnp.polyval`` evaluates it."""
    y = jnp.zeros_like(t)
    for c in coefficients:
        y = y * t + c
    return y


def lower_tail_magnitude(p: jax.Array) -> jax.Array:
    """``-Phi^-1(p)`` for ``p`` in ``(0, 1/2]``: Cephes' ``ndtri`` in float32 (``-jax.scipy.special.ndtri(p)``
    of jax 0.10, bit for bit).

    Args:
      p: f32[...] lower-tail probabilities in ``[2^-126, 1/2]``, normal float32 (0, subnormals, whose
        logarithm a CPU flushes to ``-inf``, NaN and values above 1/2 are outside the contract; the
        samplers' ``p`` is at least ``2^-66``).

    Returns:
      f32[...] ``>= 0``: the magnitude of the ``p``-quantile of ``N(0, 1)``.
    """
    p = jnp.asarray(p, jnp.float32)
    one = np.float32
    central = p > one(math.exp(-2.0))
    w = p - one(0.5)
    ww = jax.lax.square(w)
    z = jax.lax.sqrt(one(-2.0) * jax.lax.log(p))
    far = z >= one(8.0)
    t = jnp.where(central, ww, 1 / z)
    numerator, denominator = (
        _horner([jnp.where(central, c0, jnp.where(far, c2, c1)) for c0, c1, c2 in steps], t)
        for steps in (_NUMERATOR, _DENOMINATOR)
    )
    ratio = numerator / denominator
    x_central = (w + w * ww * ratio) * -one(math.sqrt(2.0 * math.pi))
    x_tail = (z - jax.lax.log(z) / z) - ratio / z
    return jnp.where(central, x_central, x_tail)
