"""``U_eps`` of a family's members (eq. (intrinsic_scale_unknown_parameters), Section 5), the normalization of the
worst-case search, cached."""

from __future__ import annotations

import functools

import numpy as np

from htb_jax._src.instances import intrinsic_scale


@functools.lru_cache(maxsize=64)
def _cached_family_scale(family, eps: float) -> np.ndarray:
    return np.asarray(intrinsic_scale(family.instances(), eps))


def family_scale(family, eps: float) -> np.ndarray:
    """``U_eps`` of each member of a (frozen, hashable) family, f64[F + 1], cached: the stable and Pareto
    families' moments are quadratures of a few seconds on a CPU, asked for once per schedule.

    Args:
      family: a :class:`SpikeFamily`, :class:`ParetoFamily` or :class:`StableFamily` (anything with
        ``instances()`` of batch shape ``(F + 1, K)``).
      eps: the true tail exponent in ``(0, 1]``.

    Returns:
      f64[F + 1]: the members, then the fixed instance; the cached array itself, so a caller that
      hands it on copies it.
    """
    try:
        hash(family)
    except TypeError:  # a list among its fields
        return np.asarray(intrinsic_scale(family.instances(), eps))
    return _cached_family_scale(family, float(eps))
