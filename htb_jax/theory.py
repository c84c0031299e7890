"""Closed forms of every rate the paper states: the exponents the experiments put next to the
measured ones (``import htb_jax.theory as theory``, or ``htb.theory``).

A rate ``K^k T^t`` is described by its exponents ``(k, t)``.  Following
Theorem 1, ``Phi_free(K, T) = K^b T^d`` is the moment-free distribution-free
rate and ``Phi_dep(K, T) = K^a T^c`` the gap-sum-normalized
distribution-dependent rate.  Every function takes Python floats or NumPy
arrays (concrete values: a JAX tracer, inside ``jax.jit``, is refused by name),
broadcasts them, and returns float64 (a NumPy scalar when every input is a
scalar).  Out-of-range inputs raise ``ValueError`` naming the admissible range
and the value given.
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
