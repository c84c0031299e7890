"""The closed-form exponents against the paper's printed values, figures and identities."""

import inspect
from fractions import Fraction

import jax
import numpy as np
import pytest

import htb_jax.theory as public
from htb_jax._src import theory

EPS_GRID = np.array([1e-3, 0.1, 0.25, 1 / 3, 0.5, 0.75, 0.9, 1.0])


def assert_exact(actual, expected):
    """``actual`` equals ``expected`` (numbers or Fractions) up to float64 rounding."""
    np.testing.assert_allclose(
        np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=1e-12, atol=1e-15
    )


def admissible_grid(eps):
    """(alpha, q, eps) covering the admissible rectangle of each eps, ends included: f64[n_eps, 5, 4]."""
    eps = np.asarray(eps, np.float64)[:, None, None]
    lo = (1 + eps) / (1 + 2 * eps)
    alpha = lo + (1 - lo) * np.array([0.0, 0.25, 0.5, 0.9, 0.999])[:, None]
    q = eps / (1 + 2 * eps) * np.array([0.0, 0.3, 0.7, 1.0])
    return np.broadcast_arrays(alpha, q, eps)


@pytest.mark.parametrize(
    "alpha,eps,beta",
    [
        (Fraction(2, 3), Fraction(1), Fraction(2, 3)),
        (Fraction(3, 4), Fraction(1), Fraction(1, 2)),
        (Fraction(3, 4), Fraction(1, 2), Fraction(3, 4)),
        (Fraction(9, 10), Fraction(1, 4), Fraction(1, 2)),
        (Fraction(5, 6), Fraction(1, 4), Fraction(5, 6)),
    ],
)
def test_beta_alpha_by_hand(alpha, eps, beta):
    assert_exact(theory.beta_alpha(float(alpha), float(eps)), beta)


@pytest.mark.parametrize(
    "eps,alpha_lo,q_hi",
    [
        (Fraction(1), Fraction(2, 3), Fraction(1, 3)),
        (Fraction(1, 2), Fraction(3, 4), Fraction(1, 4)),
        (Fraction(1, 4), Fraction(5, 6), Fraction(1, 6)),
    ],
)
def test_admissible_ranges(eps, alpha_lo, q_hi):
    assert_exact(theory.alpha_range(float(eps)), [alpha_lo, 1])
    assert_exact(theory.q_range(float(eps)), [0, q_hi])


def test_range_ends_are_the_papers_equivalences():
    # Section 4: alpha >= beta_alpha <=> alpha >= (1+eps)/(1+2eps), q <= eps/(1+2eps) <=> q <= (1-q) eps/(1+eps).
    lo, hi = theory.alpha_range(EPS_GRID)
    assert_exact(theory.beta_alpha(lo, EPS_GRID), lo)
    assert_exact(hi, np.ones_like(EPS_GRID))
    q_hi = theory.q_range(EPS_GRID)[1]
    assert_exact(q_hi, (1 - q_hi) * EPS_GRID / (1 + EPS_GRID))
    alpha, q, eps = admissible_grid(EPS_GRID)
    beta = theory.beta_alpha(alpha, eps)
    assert np.all((beta > 0) & (beta <= alpha + 1e-12))
    assert np.all(q <= (1 - q) * eps / (1 + eps) + 1e-12)


def test_theorems_2_and_3_lie_on_theorem_1_frontiers_for_every_admissible_alpha_q():
    alpha, q, eps = admissible_grid(EPS_GRID)
    b, d = theory.free_exponents(alpha, q, eps)
    a, c = theory.dependent_exponents(alpha, q, eps)
    assert_exact(theory.t_frontier(d, eps), c)  # c + d(1+eps)/eps = (1+eps)/eps
    assert_exact(theory.k_frontier(b, eps), a)  # a + b(1+eps)/eps = 0
    assert_exact(alpha + c * eps / (1 + eps), np.ones_like(alpha))  # alpha + beta_alpha eps/(1+eps) = 1
    # The estimation term K^b T^alpha dominates the exploration term K^q T^beta (Theorem 2).
    assert np.all((b >= q - 1e-12) & (d >= c - 1e-12))


def test_theorem_2_and_3_rates_by_hand():
    # Introduction: Phi_free = K^(eps(1-q)/(1+eps)) T^alpha, Phi_dep = K^(q-1) T^beta_alpha.
    assert_exact(
        theory.free_exponents(0.9, 0.1, 0.25),
        [Fraction(1, 4) * Fraction(9, 10) / Fraction(5, 4), Fraction(9, 10)],
    )
    assert_exact(theory.dependent_exponents(0.9, 0.1, 0.25), [Fraction(-9, 10), Fraction(1, 2)])
    # Section 3, eps = 1: the balanced point is Phi_free = K^(1/3) T^(2/3), Phi_dep = K^(-2/3) T^(2/3).
    assert_exact(theory.free_exponents(2 / 3, 1 / 3, 1.0), [Fraction(1, 3), Fraction(2, 3)])
    assert_exact(theory.dependent_exponents(2 / 3, 1 / 3, 1.0), [Fraction(-2, 3), Fraction(2, 3)])


def test_balanced_point():
    # Section 5: alpha* = 2/3, q* = 1/3 at eps = 1; alpha*(eps) = (1+eps)/(1+2eps), q*(eps) = eps/(1+2eps).
    assert_exact(theory.balanced_alpha(1.0), Fraction(2, 3))
    assert_exact(theory.balanced_q(1.0), Fraction(1, 3))
    assert_exact(theory.balanced_exponent([1.0, 0.5, 0.25]), [Fraction(2, 3), Fraction(3, 4), Fraction(5, 6)])
    alpha, q = theory.balanced_alpha(EPS_GRID), theory.balanced_q(EPS_GRID)
    common = theory.balanced_exponent(EPS_GRID)
    b, d = theory.free_exponents(alpha, q, EPS_GRID)
    a, c = theory.dependent_exponents(alpha, q, EPS_GRID)
    assert_exact(d, common)
    assert_exact(c, common)  # c = d on the T-frontier
    assert_exact(theory.t_frontier(common, EPS_GRID), common)
    assert_exact(b, EPS_GRID / (1 + 2 * EPS_GRID))  # b = eps/(1+2eps)
    assert_exact(a, -(1 + EPS_GRID) / (1 + 2 * EPS_GRID))  # a = -(1+eps)/(1+2eps)
    assert_exact(a + 1, b)  # equal-gap regret and Phi_free share the K exponent


@pytest.mark.parametrize(
    "eps,kink,mark",
    [
        (Fraction(1), Fraction(1, 2), Fraction(2, 3)),
        (Fraction(1, 2), Fraction(2, 3), Fraction(3, 4)),
        (Fraction(1, 4), Fraction(4, 5), Fraction(5, 6)),
    ],
)
def test_figure_1(eps, kink, mark):
    # Solid polyline (0, 1) -- (kink, 1) -- (1, 0); dotted guides and dot at (mark, mark); ticks 0, 2/3, 3/4, 5/6, 1.
    e = float(eps)
    d = np.array([0, kink / 2, kink, (kink + 1) / 2, 1], np.float64)
    assert_exact(theory.t_frontier(d, e), [1, 1, 1, Fraction(1, 2), 0])
    assert_exact(theory.oracle_exponents(e).t, kink)
    assert_exact(theory.balanced_exponent(e), mark)
    assert_exact(theory.t_frontier(float(mark), e), mark)
    dense = np.linspace(0.0, 1.0, 101)
    c = theory.t_frontier(dense, e)
    assert np.all((0 <= c) & (c <= 1)) and np.all(np.diff(c) <= 0)


def test_figure_2():
    # pgfplots: domain=0.001:1, samples=200; curves 1/(1+x), (1+x)/(1+2x), (3+x)/(3(1+x)).
    x = np.linspace(0.001, 1, 200)
    oracle, balanced, order_free = (
        theory.oracle_exponents(x).t,
        theory.balanced_exponent(x),
        theory.order_free_exponent(x),
    )
    assert_exact(oracle, 1 / (1 + x))
    assert_exact(balanced, (1 + x) / (1 + 2 * x))
    assert_exact(order_free, (3 + x) / (3 * (1 + x)))
    assert np.all(oracle[:-1] < balanced[:-1]) and np.all(balanced[:-1] < order_free[:-1])
    # Marks: filled (1, 1/2) and (1, 2/3); open (0, 1), the eps -> 0 limit of every curve.
    assert_exact([oracle[-1], balanced[-1], order_free[-1]], [Fraction(1, 2), Fraction(2, 3), Fraction(2, 3)])
    tiny = 1e-12
    limits = [
        theory.oracle_exponents(tiny).t,
        theory.balanced_exponent(tiny),
        theory.order_free_exponent(tiny),
    ]
    np.testing.assert_allclose(limits, 1.0, atol=1e-11)


def test_price_of_order_freedom():
    # eq. (unknown_epsilon_price) and the K-exponent identity after Figure 2.
    price = theory.price_of_order_freedom(EPS_GRID)
    assert_exact(price, theory.order_free_exponent(EPS_GRID) - theory.balanced_exponent(EPS_GRID))
    order_free = theory.calibrated_profile(EPS_GRID, 1.0)
    assert_exact(order_free.free.k - theory.balanced_q(EPS_GRID), -price)
    assert np.all(price[:-1] > 0)
    assert_exact(theory.price_of_order_freedom([0.5, 1.0]), [Fraction(7, 9) - Fraction(3, 4), 0])


def test_theorem_4_is_the_eps_bar_1_calibration():
    profile = theory.calibrated_profile(EPS_GRID, 1.0)
    ratio = EPS_GRID / (1 + EPS_GRID)
    # eq. (unknown_parameters_free_rate) and its form K^(2/3 eps/(1+eps)) T^(1 - 2/3 eps/(1+eps)).
    assert_exact(profile.free.k, 2 * EPS_GRID / (3 * (1 + EPS_GRID)))
    assert_exact(profile.free.k, 2 / 3 * ratio)
    assert_exact(profile.free.t, theory.order_free_exponent(EPS_GRID))
    assert_exact(profile.free.t, 1 - 2 / 3 * ratio)
    # eq. (unknown_parameters_dep_rate): K^(-2/3) T^(2/3).
    assert_exact(profile.dep.k, np.full_like(EPS_GRID, -2 / 3))
    assert_exact(profile.dep.t, np.full_like(EPS_GRID, 2 / 3))
    # Phi_free Phi_dep^(eps/(1+eps)) = O~(T): on both of Theorem 1's frontiers for every eps.
    assert_exact(profile.free.t + profile.dep.t * ratio, np.ones_like(EPS_GRID))
    assert_exact(profile.free.k + profile.dep.k * ratio, np.zeros_like(EPS_GRID))
    assert_exact(theory.calibrated_profile(0.5, 1.0).free, [Fraction(2, 9), Fraction(7, 9)])


def test_theorem_6_branches():
    eps, eps_bar = np.meshgrid(EPS_GRID, EPS_GRID, indexing="ij")
    profile = theory.calibrated_profile(eps, eps_bar)
    q_bar, beta_bar = theory.balanced_q(eps_bar), theory.balanced_exponent(eps_bar)
    ratio = eps / (1 + eps)
    under, over = eps <= eps_bar, eps >= eps_bar
    # eps <= eps_bar: Theorem 2's estimation term with q_bar, beta_bar; eps >= eps_bar: exploration K^q_bar T^beta_bar.
    assert_exact(profile.free.k[under], ((1 - q_bar) * ratio)[under])
    assert_exact(profile.free.t[under], (1 - beta_bar * ratio)[under])
    assert_exact(profile.free.k[over], q_bar[over])
    assert_exact(profile.free.t[over], beta_bar[over])
    assert_exact(profile.free.t, np.maximum(beta_bar, 1 - beta_bar * ratio))
    assert_exact(profile.dep.k, -beta_bar)
    assert_exact(profile.dep.t, beta_bar)
    # At eps = eps_bar both branches give the balanced rate of eps_bar.
    assert_exact(np.diagonal(profile.free.t), theory.balanced_exponent(EPS_GRID))
    assert_exact(np.diagonal(profile.free.k), theory.balanced_q(EPS_GRID))
    # On the T-frontier when eps <= eps_bar; strictly inside (conservative) when eps > eps_bar.
    frontier = theory.t_frontier(profile.free.t, eps)
    assert_exact(profile.dep.t[under], frontier[under])
    assert np.all(profile.dep.t[~under] > frontier[~under])
    # Theorem 5 makes both branches tight: pair (eps, eps_bar) below eps_bar, (eps_bar, eps) above.
    below = theory.pairwise_lower_bound(q_bar, beta_bar, eps)
    assert_exact(below.k[under], profile.free.k[under])
    assert_exact(below.t[under], profile.free.t[under])
    above = theory.pairwise_lower_bound(profile.free.k, profile.free.t, eps_bar)
    assert_exact(above.k[over], q_bar[over])
    assert_exact(above.t[over], beta_bar[over])


def test_pairwise_lower_bound_specialisations():
    # eq. (unknown_parameters_matching_lower_bound): Phi_1 = K^(1/3) T^(2/3) forces the Theorem 4 rate.
    bound = theory.pairwise_lower_bound(1 / 3, 2 / 3, EPS_GRID)
    order_free = theory.calibrated_profile(EPS_GRID, 1.0).free
    assert_exact(bound.k, order_free.k)
    assert_exact(bound.t, order_free.t)
    # An endpoint schedule K^(1-q)/2 T^(2/3) forces K^((1+q)/2 eps/(1+eps)), which matches the Median of
    # Means exponent eps(1-q)/(1+eps) only at q = 1/3.
    q = np.linspace(0.0, 1.0, 301)
    eps = 0.5
    forced = theory.pairwise_lower_bound((1 - q) / 2, 2 / 3, eps).k
    assert_exact(forced, (1 + q) / 2 * eps / (1 + eps))
    gap = eps * (1 - q) / (1 + eps) - forced
    assert_exact(gap[100], 0.0)
    assert np.all(np.abs(np.delete(gap, 100)) > 1e-4)
    # a t within the check's slack below 0 is 0: the T exponent was 1 + 3e-14, above its [0, 1]
    assert theory.pairwise_lower_bound(0.3, -1e-13, 0.5).t == 1.0


def test_table_1():
    rows = theory.table1_points()
    assert [r.label for r in rows] == ["Instance-oriented", "K-balanced"]
    printed = [
        (Fraction(1, 2), Fraction(-1), Fraction(0), Fraction(0)),
        (Fraction(1, 3), Fraction(-2, 3), Fraction(1, 3), Fraction(1, 3)),
    ]  # (b, a), equal-gap K, q
    for row, (b, a, equal_gap, q) in zip(rows, printed, strict=True):
        assert_exact([row.b, row.a, row.equal_gap_k, row.q], [b, a, equal_gap, q])
        assert_exact(theory.k_frontier(row.b, 1.0), row.a)  # a + 2b = 0
        assert_exact(row.a + 1, row.equal_gap_k)
        for alpha in (2 / 3, 0.8):  # q realises the point whatever alpha
            assert_exact(theory.free_exponents(alpha, row.q, 1.0).k, row.b)
            assert_exact(theory.dependent_exponents(alpha, row.q, 1.0).k, row.a)


def test_oracle_exponents():
    # eq. (oracleBound): u^(1/(1+eps)) K^(eps/(1+eps)) T^(1/(1+eps)).
    assert_exact(theory.oracle_exponents(1.0), [Fraction(1, 2), Fraction(1, 2)])
    assert_exact(theory.oracle_exponents(0.25), [Fraction(1, 5), Fraction(4, 5)])


def test_force_mom_exponents():
    assert_exact(theory.force_mom_exponents(0.5, 1.0), [Fraction(1, 2), Fraction(3, 4)])
    assert_exact(theory.force_mom_exponents(0.6, 0.25), [Fraction(3, 5), Fraction(22, 25)])
    rho = np.linspace(0.05, 0.95, 19)[:, None]
    fixed, worst = theory.force_mom_exponents(rho, EPS_GRID)
    assert fixed.shape == worst.shape == (19, len(EPS_GRID))
    assert_exact(theory.t_frontier(worst, EPS_GRID), fixed)  # on Theorem 1's T-frontier for every rho
    # rho = 2/3 has the order-free AdaR-ETC exponents (Theorem 4).
    at_two_thirds = theory.force_mom_exponents(2 / 3, EPS_GRID)
    assert_exact(at_two_thirds.worst_case, theory.order_free_exponent(EPS_GRID))
    assert_exact(at_two_thirds.fixed_instance, np.full_like(EPS_GRID, 2 / 3))


@pytest.mark.parametrize("rho,consistent", [(0.3, True), (2 / 3, True), (0.7, False)])
def test_force_mom_against_theorem_5(rho, consistent):
    # The worst-case T exponents at eps <= eps' must respect the pairwise lower bound: only rho <= 2/3 does.
    worst = theory.force_mom_exponents(rho, EPS_GRID).worst_case
    small, large = np.triu_indices(len(EPS_GRID))
    required = theory.pairwise_lower_bound(0.0, worst[large], EPS_GRID[small]).t
    assert np.all(worst[small] >= required - 1e-12) == consistent


def test_broadcasting_and_scalars():
    alpha = np.linspace(0.8, 0.95, 3)[:, None]
    eps = np.array([0.5, 1.0])
    for pair in (theory.free_exponents(alpha, 0.0, eps), theory.dependent_exponents(alpha, 0.0, eps)):
        assert pair.k.shape == pair.t.shape == (3, 2)
    profile = theory.calibrated_profile(eps[:, None], np.array([0.25, 0.5, 1.0]))
    assert all(x.shape == (2, 3) for x in (*profile.free, *profile.dep))
    assert theory.alpha_range(eps)[1].shape == theory.q_range(eps)[0].shape == (2,)
    assert theory.t_frontier(np.zeros((4, 1)), eps).shape == (4, 2)
    scalars = [*theory.free_exponents(0.8, 0.1, 0.5), *theory.calibrated_profile(0.5, 1.0).dep]
    scalars += [theory.beta_alpha(0.8, 0.5), theory.price_of_order_freedom(0.5), *theory.alpha_range(1.0)]
    assert all(isinstance(x, np.float64) for x in scalars)
    out = theory.calibrated_profile(eps, 1.0).dep.t
    out[0] = 0.0  # results are fresh arrays, not read-only views
    assert theory.calibrated_profile(eps, 1.0).dep.t[0] == pytest.approx(2 / 3)


def test_closed_ends_accept_typed_fractions():
    theory.free_exponents(2 / 3, 1 / 3, 1.0)
    theory.free_exponents(5 / 6, 1 / 6, 0.25)
    theory.t_frontier([0.0, 1.0], 1.0)
    theory.pairwise_lower_bound(-2.0, [0.0, 1.0], 1.0)


def test_values_within_the_slack_of_an_end_are_that_end():
    # The checks accept a closed end missed by a rounding (relative 1e-12); the formulas then take the end
    # itself, so the documented bounds of the results hold (the price was -2.8e-14, beta_alpha above alpha*).
    assert theory.price_of_order_freedom(1 + 5e-13) == 0.0
    assert theory.alpha_range(1 + 1e-13)[0] == 2 / 3
    assert theory.beta_alpha(2 / 3 * (1 - 5e-13), 1.0) == theory.beta_alpha(2 / 3, 1.0)
    assert theory.free_exponents(0.8, 1 / 3 + 1e-13, 1.0).k == theory.free_exponents(0.8, 1 / 3, 1.0).k


EPS_ONLY = [
    theory.alpha_range,
    theory.q_range,
    theory.oracle_exponents,
    theory.balanced_alpha,
    theory.balanced_q,
    theory.balanced_exponent,
    theory.order_free_exponent,
    theory.price_of_order_freedom,
]


@pytest.mark.parametrize("fn", EPS_ONLY)
@pytest.mark.parametrize("eps,shown", [(0.0, "0"), (1.5, "1.5"), (np.nan, "nan"), ([0.5, -1.0], "-1")])
def test_eps_outside_0_1_raises(fn, eps, shown):
    with pytest.raises(ValueError, match=rf"eps must lie in \(0, 1\]; got eps={shown}"):
        fn(eps)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: theory.beta_alpha(0.5, 1.0), r"alpha must lie in \[0.666667, 1\) for eps=1; got alpha=0.5"),
        (lambda: theory.beta_alpha(1.0, 0.5), r"alpha must lie in \[0.75, 1\) for eps=0.5; got alpha=1"),
        (lambda: theory.beta_alpha(0.9, 2.0), r"eps must lie in \(0, 1\]; got eps=2"),
        (
            lambda: theory.free_exponents(0.7, 0.0, [1.0, 0.5]),
            r"alpha must lie in \[0.75, 1\) for eps=0.5; got alpha=0.7 \(entry \[1\]\)",
        ),
        (
            lambda: theory.free_exponents(0.8, -0.1, 1.0),
            r"q must lie in \[0, 0.333333\] for eps=1; got q=-0.1",
        ),
        (lambda: theory.free_exponents(0.8, 0.3, 0.5), r"q must lie in \[0, 0.25\] for eps=0.5; got q=0.3"),
        (lambda: theory.dependent_exponents(0.6, 0.0, 1.0), r"alpha must lie in \[0.666667, 1\)"),
        (lambda: theory.dependent_exponents(0.8, 0.4, 1.0), r"q must lie in \[0, 0.333333\]"),
        (lambda: theory.t_frontier(1.5, 1.0), r"d must lie in \[0, 1\]; got d=1.5"),
        (lambda: theory.t_frontier(-0.1, 1.0), r"d must lie in \[0, 1\]; got d=-0.1"),
        (lambda: theory.t_frontier(0.5, 0.0), r"eps must lie in \(0, 1\]; got eps=0"),
        (lambda: theory.k_frontier(np.nan, 1.0), r"b must lie in \(-inf, inf\); got b=nan"),
        (lambda: theory.k_frontier(0.5, 1.1), r"eps must lie in \(0, 1\]; got eps=1.1"),
        (lambda: theory.calibrated_profile(0.0, 1.0), r"eps must lie in \(0, 1\]; got eps=0"),
        (lambda: theory.calibrated_profile(0.5, 1.2), r"eps_bar must lie in \(0, 1\]; got eps_bar=1.2"),
        (lambda: theory.pairwise_lower_bound(np.inf, 0.5, 0.5), r"k must lie in \(-inf, inf\); got k=inf"),
        (lambda: theory.pairwise_lower_bound(0.5, 1.1, 0.5), r"t must lie in \[0, 1\]; got t=1.1"),
        (lambda: theory.pairwise_lower_bound(0.5, 0.5, 0.0), r"eps must lie in \(0, 1\]; got eps=0"),
        (lambda: theory.force_mom_exponents(0.0, 1.0), r"rho must lie in \(0, 1\); got rho=0"),
        (lambda: theory.force_mom_exponents(1.0, 1.0), r"rho must lie in \(0, 1\); got rho=1"),
        (lambda: theory.force_mom_exponents(0.5, 0.0), r"eps must lie in \(0, 1\]; got eps=0"),
        # shapes that do not broadcast, named (NumPy's "operands could not be broadcast" named nothing)
        (lambda: theory.t_frontier([0.6, 0.7], [1.0, 0.5, 0.25]),
         r"the arguments of t_frontier must broadcast to one shape; got d of shape \(2,\), eps of shape \(3,\)\."),
        (lambda: theory.k_frontier([0.1, 0.2], [1.0, 0.5, 0.25]), r"k_frontier .* b of shape \(2,\), eps of shape"),
        (lambda: theory.calibrated_profile([0.5, 0.6], [1.0, 1.0, 1.0]), r"calibrated_profile .* eps_bar of shape"),
        (lambda: theory.pairwise_lower_bound([0.1, 0.2], 0.5, [1.0, 0.5, 0.25]), r"pairwise_lower_bound .* k of"),
        (lambda: theory.force_mom_exponents([0.5, 0.6], [1.0, 0.5, 0.25]), r"force_mom_exponents .* rho of"),
        (lambda: theory.free_exponents([0.8, 0.9], [0.0, 0.1, 0.2], 1.0),
         r"the arguments of free_exponents must broadcast to one shape; got alpha of shape \(2,\), q of shape \(3,\), "
         r"eps of shape \(\)\."),
        (lambda: theory.dependent_exponents([0.8, 0.9], [0.0, 0.1, 0.2], 1.0), r"dependent_exponents .* q of shape"),
        # below 1.67e-16, alpha*(eps) rounds to 1: the range of alpha was [1, 1), refused for every alpha
        (lambda: theory.alpha_range(1e-17), r"eps must be at least 1.6653345369377348e-16: from there on alpha\*\(eps\) = "
         r"\(1\+eps\)/\(1\+2eps\) is below 1 in float64, while below it rounds to 1 for some eps, leaving no "
         r"alpha in \[alpha\*\(eps\), 1\); got eps=1e-17\."),
        (lambda: theory.beta_alpha(0.99, [0.5, 1e-17]), r"eps must be at least 1.6653345369377348e-16"),
        # 1e-16 was taken (its quotient rounds below 1) though 1.12e-16 to 1.58e-16 were refused
        (lambda: theory.alpha_range(1e-16), r"eps must be at least 1.6653345369377348e-16: .* got eps=1e-16\.$"),
        # a narrow range shown with every digit ([0.9999999999999998, 1.0), not [1, 1))
        (lambda: theory.beta_alpha(0.9999, 2e-16), r"alpha must lie in \[0.9999999999999998, 1.0\) for eps=2e-16"),
    ],
)
def test_out_of_range_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# A concrete argument list per public function (every argument traced in turn below).
_ARGUMENTS = {
    "alpha_range": (0.5,), "q_range": (0.5,), "beta_alpha": (0.8, 0.5), "free_exponents": (0.8, 0.1, 0.5),
    "dependent_exponents": (0.8, 0.1, 0.5), "t_frontier": (0.8, 0.5), "k_frontier": (0.1, 0.5),
    "oracle_exponents": (0.5,), "balanced_alpha": (0.5,), "balanced_q": (0.5,), "balanced_exponent": (0.5,),
    "order_free_exponent": (0.5,), "price_of_order_freedom": (0.5,), "calibrated_profile": (0.5, 0.5),
    "pairwise_lower_bound": (0.1, 0.8, 0.5), "force_mom_exponents": (0.5, 0.5),
}


def test_every_function_is_listed():
    functions = {n for n in public.__all__ if callable(getattr(public, n)) and n[0].islower()}
    assert functions == set(_ARGUMENTS) | {"table1_points"}


@pytest.mark.parametrize("name", sorted(_ARGUMENTS))
def test_a_traced_argument_is_refused_by_name(name):
    # NumPy closed forms: under jit each argument is a tracer, and JAX's TracerArrayConversionError
    # named neither the function nor the argument. Catches a function left without the check.
    function, args = getattr(theory, name), _ARGUMENTS[name]
    function(*args)  # the arguments are admissible
    for i, parameter in enumerate(inspect.signature(function).parameters):
        def traced(x, i=i):
            return function(*args[:i], x, *args[i + 1:])

        with pytest.raises(TypeError, match=rf"^htb.theory.{name} computes in NumPy on concrete values; got a "
                                            rf"traced {parameter} \(inside jax.jit, vmap or grad\)"):
            jax.jit(traced)(args[i])
