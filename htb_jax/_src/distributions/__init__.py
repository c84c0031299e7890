"""Reward distributions as pytrees: sampling from 64-bit words, exact moments.

Every family is a frozen dataclass registered as a pytree; its float fields may
be arrays of any (broadcastable) shape, so a batch of distributions -- the K
arms of an instance, or a whole family of instances -- is one object that
``vmap`` and ``jit`` see through.  All families except :class:`TwoPoint` and
:class:`Empirical` (the law of observed rewards, which keeps its data static and
moves them by ``shift``) are parametrised by their mean ``loc`` (:class:`Stable`
in the S1 form, whose location is the mean), so gaps are differences of ``loc``.

Each family provides:

* ``from_bits(words)``: the bits-to-variate transform (float32) used by the
  reward table, from ``num_words`` 64-bit words per variate, with full tail
  fidelity (see :mod:`htb_jax._src.bits`);
* ``sample(key, sample_shape)``: i.i.d. draws, ``from_bits`` of fresh words;
* ``mean()``: the exact mean;
* ``abs_moment(eps)``: the raw absolute moment ``E|X|^(1+eps)`` (closed form
  for :class:`TwoPoint`, tanh-sinh quadrature otherwise, ``inf`` where it
  diverges);
* ``eps_sup()``: the supremum of the ``eps`` with ``E|X|^(1+eps) < inf``;
* ``cdf(x)`` (every family but :class:`Stable`, whose distribution function
  has no closed form) and ``shifted(delta)``;
* where the sum of ``s`` i.i.d. draws has a closed-form law (``has_block_sums``:
  :class:`TwoPoint` and :class:`Dirac` through the binomial law,
  :class:`Gaussian`, :class:`Stable`), ``block_sums_from_bits(words, size)``:
  one Median-of-Means block sum per 64-bit word, whatever ``s``; where the
  block mean also has a computable quantile (``has_block_quantile``: all but
  :class:`Stable`), ``block_mean_quantile(u, v, size)``, from which the
  Median-of-Means estimate is drawn as one order statistic; and where a block
  mean is an increasing affine map of one standard variate whose law is free of
  ``s`` (``affine_block_means``: :class:`Stable`), ``standard_from_bits`` and
  ``block_mean_from_standard``, so that the estimate is that map of the median
  of ``B`` standard variates.
"""

from htb_jax._src.distributions.base import Distribution
from htb_jax._src.distributions.empirical import Empirical
from htb_jax._src.distributions.frechet import Frechet
from htb_jax._src.distributions.gaussian import Gaussian
from htb_jax._src.distributions.log_normal import LogNormal
from htb_jax._src.distributions.pareto import Pareto
from htb_jax._src.distributions.stable import Stable
from htb_jax._src.distributions.student_t import StudentT, _sin_quarter_turn  # noqa: F401 - tests read it here
from htb_jax._src.distributions.two_point import Dirac, TwoPoint

__all__ = [
    "Dirac",
    "Distribution",
    "Empirical",
    "Frechet",
    "Gaussian",
    "LogNormal",
    "Pareto",
    "Stable",
    "StudentT",
    "TwoPoint",
]
