"""Closed forms of every rate the paper states (see :mod:`htb_jax._src.theory`).

``import htb_jax.theory as theory`` (or ``htb_jax.theory``) gives the
exponents that the experiments put next to the measured ones.
"""

from htb_jax._src.theory import (
    CalibratedProfile,
    Exponents,
    ForceMoMExponents,
    OperatingPoint,
    alpha_range,
    balanced_alpha,
    balanced_exponent,
    balanced_q,
    beta_alpha,
    calibrated_profile,
    dependent_exponents,
    force_mom_exponents,
    free_exponents,
    k_frontier,
    oracle_exponents,
    order_free_exponent,
    pairwise_lower_bound,
    price_of_order_freedom,
    q_range,
    t_frontier,
    table1_points,
)

__all__ = [
    "CalibratedProfile",
    "Exponents",
    "ForceMoMExponents",
    "OperatingPoint",
    "alpha_range",
    "balanced_alpha",
    "balanced_exponent",
    "balanced_q",
    "beta_alpha",
    "calibrated_profile",
    "dependent_exponents",
    "force_mom_exponents",
    "free_exponents",
    "k_frontier",
    "oracle_exponents",
    "order_free_exponent",
    "pairwise_lower_bound",
    "price_of_order_freedom",
    "q_range",
    "t_frontier",
    "table1_points",
]
