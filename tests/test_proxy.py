"""The regret proxy: a plain-Python reference, exactness with rounding, tau -> 0, gradients."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import proxy

T = 20_000
S = 8
KEY = 20261122


def _instance():
    # Heavy tails (E|X|^2 infinite) and a small gap: wrong commits happen, estimates are continuous.
    return htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.05)


# proxy_regrets as callers run it, jitted once (eagerly, each call dispatches several hundred
# operations): one program per rounding serves every schedule and temperature below.
_proxy_regrets = jax.jit(proxy.proxy_regrets, static_argnums=2, static_argnames="rounding")


@pytest.fixture(scope="module")
def table():
    return proxy.proxy_table(jax.random.key(KEY), _instance(), T, S, eps=0.5)


def proxy_reference(prefix, gaps, horizon, eps, alpha, q, tau, rounding=False):
    """One seed of the relaxed proxy, by hand: numpy arrays, explicit interpolation and median.

    Returns ``(regret, floor of every block edge, index of every arm's median block)``;
    the last two locate the proxy's kinks.
    """
    prefix = np.asarray(prefix, np.float64)
    k = prefix.shape[0]
    n_table = prefix.shape[1] - 1
    blocks = math.ceil(8.0 * (math.log(k) + 3.0 * math.log(horizon)))
    beta = (1.0 - alpha) * (1.0 + eps) / eps
    if rounding:
        explore = min(horizon, k * blocks + math.ceil(k**q * horizon**beta))
        pulls = np.array([explore // k + (i < explore % k) for i in range(k)], np.float64)
        size = np.floor(pulls / blocks)
    else:
        explore = min(horizon, k * blocks + k**q * horizon**beta)
        pulls = np.full(k, explore / k)
        size = pulls / blocks
    estimates, floors, medians = [], [], []
    for i in range(k):
        sums = []
        for b in range(blocks + 1):
            x = b * size[i]
            j = min(max(int(math.floor(x)), 0), n_table)
            sums.append(prefix[i, j] + (x - j) * (prefix[i, min(j + 1, n_table)] - prefix[i, j]))
            floors.append(j)
        means = np.diff(np.array(sums)) / (max(size[i], 1.0) if rounding else size[i])
        order = np.argsort(means, kind="stable")
        pick = order[(blocks + 1) // 2 - 1]
        medians.append(int(pick))
        estimate = means[pick]
        estimates.append(float(np.float32(estimate)) if rounding else estimate)
    estimates = np.array(estimates)
    if tau > 0:
        w = np.exp((estimates - estimates.max()) / tau)
        w /= w.sum()
    else:
        w = np.zeros(k)
        w[int(np.argmax(estimates))] = 1.0
    regret = float(np.dot(gaps, pulls) + max(horizon - explore, 0.0) * np.dot(w, gaps))
    return regret, np.array(floors), np.array(medians)


@pytest.mark.parametrize("alpha,q", [(0.75, 0.0), (0.8, 0.1), (0.95, 0.25)])
def test_rounded_hard_proxy_is_simulate_seed_by_seed(table, alpha, q):
    policy = htb.AdaRETC(eps=0.5, alpha=alpha, q=q)
    exact = htb.simulate(jax.random.key(KEY), policy, _instance(), T, S, sampler="per_pull").regret
    got = _proxy_regrets(policy, table, T, 0.0, rounding=True)
    # The same pulls, summed as simulate sums them (a plain float64 sum was an ulp off at some seeds): equal
    # unless the association of the float64 prefix sums moves an estimate's float32 rounding (about 2^-29 an
    # estimate).
    np.testing.assert_array_equal(np.asarray(got), np.asarray(exact))


def test_regret_proxy_rounded_equals_simulate_mean():
    policy = htb.AdaRETC.order_free()
    nu = _instance()
    exact = htb.simulate(jax.random.key(3), policy, nu, T, S, sampler="per_pull").regret
    got = htb.regret_proxy(jax.random.key(3), policy, nu, T, S, 0.0, rounding=True)
    assert got.shape == ()
    np.testing.assert_allclose(float(got), float(np.mean(exact)), rtol=1e-12)


def test_soft_commit_converges_to_exact_regret_as_tau_shrinks():
    # K = 2: the soft error of a seed is (T - L) Delta w_wrong, and w_wrong decreases with tau.  The
    # exact regret is the hard proxy (tau = 0, rounding), simulate's per-pull regret seed by seed
    # (test_rounded_hard_proxy_is_simulate_seed_by_seed); table and every tau are one program.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=2, gap=0.05)
    policy = htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0)
    taus = [1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-6, 0.0]

    @jax.jit
    def regrets(key, taus):
        tab = proxy.proxy_table(key, nu, T, 16, eps=0.5)
        return jax.vmap(lambda tau: proxy.proxy_regrets(policy, tab, T, tau, rounding=True))(taus)

    soft = np.asarray(regrets(jax.random.key(5), jnp.array(taus)))
    exact = soft[-1]
    assert np.ptp(exact) > 0  # some seeds commit wrongly: the test is not vacuous
    errors = np.abs(soft[:-1] - exact)
    assert np.all(np.diff(errors, axis=0) <= 1e-9 * T)  # per seed, non-increasing in tau
    assert errors[0].mean() > 1.0
    np.testing.assert_allclose(errors[-1], 0.0, atol=1e-9 * T)


@pytest.mark.parametrize("rounding", [False, True])
@pytest.mark.parametrize("alpha,q,tau", [(0.76, 0.05, 0.05), (0.9, 0.2, 0.0), (0.85, 0.0, 1.0)])
def test_proxy_matches_python_reference(table, rounding, alpha, q, tau):
    policy = htb.AdaRETC(eps=0.5, alpha=alpha, q=q)
    got = np.asarray(_proxy_regrets(policy, table, T, tau, rounding=rounding))
    gaps = np.asarray(table.gaps)
    want = [proxy_reference(table.prefix[s], gaps, T, 0.5, alpha, q, tau, rounding)[0] for s in range(S)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


# Central differences on common random numbers.  The proxy is piecewise smooth: its kinks are where
# a block edge crosses an integer pull index or an arm's median block changes.  A difference is
# valid only if [x - h, x + h] holds no kink, which the reference checks directly (same floors and
# median blocks at x - h, x, x + h); on such an interval the proxy is smooth, the truncation error
# is O(h^2) and the float64 rounding error about 1e-16 |R| / h ~ 1e-5 for R ~ 1e3.  With ~10^4
# edges moving at |d edge / d alpha| ~ 10^3, h = 1e-9 moves each edge by ~1e-6: crossings are rare,
# and the check proves there is none at the points used.
H = 1e-9


def _kink_free(table, gaps, params, direction, h=H):
    marks = [
        proxy_reference(table.prefix[s], gaps, T, *(params + sign * h * direction), 0.05)[1:]
        for sign in (-1, 0, 1)
        for s in range(S)
    ]
    per_sign = [marks[i * S:(i + 1) * S] for i in range(3)]
    return all(
        np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        for other in (per_sign[0], per_sign[2])
        for a, b in zip(per_sign[1], other, strict=True)
    )


def _mean_proxy(alpha, q, eps, table, tau=0.05):
    return jnp.mean(proxy.proxy_regrets(htb.AdaRETC(eps=eps, alpha=alpha, q=q), table, T, tau))


# Jitted, the table an argument: one program for the values and one for the gradients, shared by
# every point (op by op, the gradient alone ran several hundred operations).
_mean_proxy_jit = jax.jit(_mean_proxy)
_grad_proxy_jit = jax.jit(jax.grad(_mean_proxy, argnums=(0, 1, 2)))


@pytest.mark.parametrize("alpha,q", [(0.78, 0.1), (0.85, 0.05), (0.93, 0.2)])
def test_grad_matches_central_differences(table, alpha, q):
    gaps = np.asarray(table.gaps)
    grad = _grad_proxy_jit(alpha, q, 0.5, table)
    for i, direction in enumerate(np.eye(3)):
        params = np.array([0.5, alpha, q])
        assert _kink_free(table, gaps, params, direction[[2, 0, 1]])
        plus = [alpha, q, 0.5] + H * direction
        minus = [alpha, q, 0.5] - H * direction
        fd = (_mean_proxy_jit(*plus, table) - _mean_proxy_jit(*minus, table)) / (2 * H)
        assert abs(float(grad[i]) - float(fd)) <= 1e-3 * abs(float(fd)), (i, grad[i], fd)
        assert abs(float(grad[i])) > 0


def test_grad_in_eps_bar_matches_central_differences():
    # The calibrated form is differentiable in eps_bar; its table covers all of T (eps traced).
    nu = _instance()
    tab = proxy.proxy_table(jax.random.key(KEY), nu, T, S)

    def mean_proxy(e, tab):
        return jnp.mean(proxy.proxy_regrets(htb.AdaRETC.calibrated(e), tab, T, 0.05))

    f, grad = jax.jit(mean_proxy), jax.jit(jax.grad(mean_proxy))  # one program each for both points
    gaps = np.asarray(tab.gaps)
    for e in (0.4, 0.7):
        def marks(x):
            p = htb.AdaRETC.calibrated(x)
            return [proxy_reference(tab.prefix[s], gaps, T, x, float(p.alpha), float(p.q), 0.05)[1:]
                    for s in range(S)]
        mid = marks(e)
        for other in (marks(e - H), marks(e + H)):
            assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(mid, other, strict=True))
        fd = (f(e + H, tab) - f(e - H, tab)) / (2 * H)
        g = grad(e, tab)
        assert abs(float(g) - float(fd)) <= 1e-3 * abs(float(fd))


def test_grad_under_jit_and_vmap():
    nu = _instance()
    key = jax.random.key(KEY)

    def f(a):
        return htb.regret_proxy(key, htb.AdaRETC(eps=0.5, alpha=a, q=0.1), nu, 5_000, 4, 0.05)

    alphas = jnp.array([0.76, 0.9])
    # Op by op at both points (the second reuses the first's operations), against one jit of vmap
    # (test_grad_matches_central_differences checks jitted gradients of single points).
    eager = [jax.grad(f)(a) for a in alphas]
    # Compiled programs may reassociate float64 sums (prefix sums of ~10^3 rewards, the gradient
    # a difference of such sums): agreement to 1e-9, far below any step the tuning takes.
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(f)))(alphas), eager, rtol=1e-9)


def test_batched_policy_equals_loop_and_no_retrace(table):
    # Jitted: one program for the batch and one the three single points share (eager, each call
    # ran several hundred operations).
    regrets = jax.jit(proxy.proxy_regrets, static_argnums=(2,))
    alphas = np.array([0.76, 0.85, 0.95])
    batched = regrets(htb.AdaRETC(eps=0.5, alpha=alphas, q=0.1), table, T, 0.05)
    assert batched.shape == (3, S)
    for g, a in enumerate(alphas):
        np.testing.assert_allclose(
            batched[g], regrets(htb.AdaRETC(eps=0.5, alpha=a, q=0.1), table, T, 0.05), rtol=1e-12
        )
    traces = []

    @jax.jit
    def f(a, tau):
        traces.append(1)
        return jnp.mean(proxy.proxy_regrets(htb.AdaRETC(eps=0.5, alpha=a, q=0.1), table, T, tau))

    f(0.8, 0.05)
    f(0.9, 0.01)
    assert len(traces) == 1


def test_instance_family_layout():
    family = htb.lower_bound_pair(2, 1.0, jnp.array([0.01, 0.1, 0.5]))[1]
    policy = htb.AdaRETC(eps=1.0, alpha=jnp.array([0.7, 0.8]), q=0.0)
    regret_proxy = jax.jit(htb.regret_proxy, static_argnums=(3, 4))  # not op by op
    r = regret_proxy(jax.random.key(0), policy, family, 3_000, 4, 0.1)
    assert r.shape == (2, 3)
    one = regret_proxy(jax.random.key(0), htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0),
                       htb.lower_bound_pair(2, 1.0, 0.1)[1], 3_000, 4, 0.1)
    np.testing.assert_allclose(r[1, 1], one, rtol=1e-12)


def test_validation_errors():
    nu = _instance()
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    with pytest.raises(ValueError, match=r"tau must lie in \[0, inf\); got tau=-0.1"):
        htb.regret_proxy(jax.random.key(0), policy, nu, T, S, -0.1)
    with pytest.raises(ValueError, match="prefix sums.*MiB.*limit of 1024 MiB; lower num_seeds or num_pulls\\.$"):
        htb.regret_proxy(jax.random.key(0), htb.AdaRETC.calibrated(0.5), nu, 10**9, 64, 0.1, num_pulls=10**7)
    # A traced eps (differentiating in eps_bar) tabulates every pull: the remedy is num_pulls (it said
    # "lower num_seeds or horizon" alone).
    with pytest.raises(ValueError, match=r"; lower num_seeds or horizon \(T=100000000\), or give num_pulls: with a "
                                         r"traced eps \(under jax.grad or jit\) the table covers every pull, T/K per arm\.(\n|$)"):
        jax.grad(lambda e: htb.regret_proxy(jax.random.key(0), htb.AdaRETC.calibrated(e), nu, 10**8, 4, 0.01))(0.5)
    with pytest.raises(ValueError, match="horizon"):
        htb.regret_proxy(jax.random.key(0), policy, nu, 0, S, 0.1)
    with pytest.raises(TypeError, match="AdaRETC"):
        proxy.proxy_regrets(htb.UCB1(), proxy.proxy_table(jax.random.key(0), nu, 100, 2), 100, 0.1)


def test_table_covers_every_admissible_schedule():
    # The default table holds the largest admissible exploration: alpha*(eps), q = eps/(1+2eps).
    for eps in (0.25, 0.5, 1.0):
        k, horizon = 3, 10**5
        n = proxy.max_proxy_pulls(eps, k, horizon)
        widest = htb.AdaRETC(eps=eps, alpha=htb.theory.balanced_alpha(eps), q=eps / (1 + 2 * eps))
        assert n >= int(widest.exploration_length(k, horizon)) // k + 1
        assert n <= -(-horizon // k)


def test_a_table_shorter_than_the_exploration_is_refused_or_gives_nan(table):
    # The prefix sums are clipped to the table: a schedule exploring past it read the last blocks' means
    # as 0 and gave a plausible regret (this table, drawn for T = 20000, at T = 10^6).  A concrete schedule
    # is refused, naming the pulls it needs; a traced one (under jit) gives NaN.
    policy = htb.AdaRETC(eps=0.5, alpha=0.76, q=0.0)
    most = -(-int(policy.exploration_length(3, 10**6)) // 3)
    assert most > table.num_pulls
    with pytest.raises(ValueError, match=rf"holds {table.num_pulls} pulls per arm, but the policy explores up to "
                                         rf"{most} per arm at horizon T=1000000: .* or num_pulls >= {most}\.$"):
        proxy.proxy_regrets(policy, table, 10**6, 0.05)
    assert np.all(np.isnan(_proxy_regrets(policy, table, 10**6, 0.05)))
    assert np.all(np.isfinite(_proxy_regrets(policy, table, T, 0.05)))  # the table's own horizon
    # a traced NaN tau was read as 0, the hard commit: a finite regret (the same program as the line above)
    assert np.all(np.isnan(_proxy_regrets(policy, table, T, np.nan)))
    with pytest.raises(ValueError, match=r"table.gaps must broadcast to .* \(3,\); got table.gaps of shape \(4,\)"):
        proxy.proxy_regrets(policy, proxy.ProxyTable(prefix=table.prefix, gaps=np.ones(4)), T, 0.05)
    # a hand-built table: negative gaps gave negative regrets, float32 sums ran (the docs say f64)
    with pytest.raises(ValueError, match=r"^table.gaps must be finite and non-negative, each arm's gap to the best "
                                         r"mean; got a gap of -0.5\.$"):
        proxy.proxy_regrets(policy, proxy.ProxyTable(prefix=table.prefix, gaps=np.array([0.0, -0.5, 1.0])), T, 0.05)
    with pytest.raises(TypeError, match=r"^table.prefix must be float64 prefix sums \(proxy_table's\); got float32\.$"):
        proxy.proxy_regrets(policy, proxy.ProxyTable(prefix=table.prefix.astype(np.float32), gaps=table.gaps), T, 0.05)


def test_analytic_bound_matches_hand_formula_and_has_gradients():
    nu = htb.lower_bound_pair(2, 1.0, 0.1)[1]  # gaps (1, 0); u = 2^2 / 0.1
    eps, alpha, q, horizon = 1.0, 0.8, 0.1, 10**6
    # Jitted (one program for the value and its gradient; op by op it ran ~100 operations).
    value, g = jax.jit(jax.value_and_grad(
        lambda a: htb.analytic_regret_bound(htb.AdaRETC(eps=eps, alpha=a, q=q), nu, horizon)))(alpha)
    got = float(value)
    blocks = math.ceil(8 * (math.log(2) + 3 * math.log(horizon)))
    explore = min(horizon, 2 * blocks + 2**q * horizon ** ((1 - alpha) * 2))
    s = explore / 2 / blocks
    u = 0.1 * (2 / 0.1) ** 2
    tail = min(1.0, 2**3 * u * s ** (-1.0) / 0.5**2)
    wrong = min(1.0, 2 * math.exp(-2 * blocks * max(0.5 - tail, 0.0) ** 2))
    want = explore / 2 * 1.0 + (horizon - explore) * 1.0 * wrong
    assert got == pytest.approx(want, rel=1e-12)
    assert np.isfinite(float(g))


def test_analytic_bound_on_arms_without_the_moment_has_the_hand_gradient():
    # Pareto(1.5) arms lack the moment of order 1 + eps = 2: every block tail is 1, so the bound is
    # sum(gaps) (L/K + T - L).  Its gradient was NaN (inf * 0), which left a tuning where it began.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=2, gap=0.2)
    alpha, q, horizon = 0.8, 0.1, 10**6
    value, g = jax.jit(jax.value_and_grad(
        lambda a: htb.analytic_regret_bound(htb.AdaRETC(eps=1.0, alpha=a, q=q), nu, horizon)))(alpha)
    blocks = math.ceil(8 * (math.log(2) + 3 * math.log(horizon)))
    grown = 2**q * horizon ** ((1 - alpha) * 2)
    explore = 2 * blocks + grown
    assert float(value) == pytest.approx(0.2 * (explore / 2 + horizon - explore), rel=1e-12)
    assert float(g) == pytest.approx(0.2 * (1 / 2 - 1) * grown * (-2 * math.log(horizon)), rel=1e-9)
    # The same in eps and in the instance's parameters: NaN through the divergent moment and its power
    # (0 * inf in the derivative of U_eps), though the value was finite.
    bound = jax.jit(jax.grad(lambda e, gap: htb.analytic_regret_bound(
        htb.AdaRETC(eps=e, alpha=alpha, q=q), htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=2, gap=gap),
        horizon), argnums=(0, 1)))
    d_eps, d_gap = bound(1.0, 0.2)
    assert float(d_eps) == pytest.approx(0.2 * (1 / 2 - 1) * grown * math.log(horizon) * -(1 - alpha), rel=1e-9)
    assert float(d_gap) == pytest.approx(explore / 2 + horizon - explore, rel=1e-12)


def test_a_traced_schedule_past_the_table_has_a_nan_gradient(table):
    # NaN in value and gradient (the gradient was 0: a flat objective, where an optimizer stalls silently).
    value, slope = jax.jit(jax.value_and_grad(
        lambda a: jnp.mean(proxy.proxy_regrets(htb.AdaRETC(eps=0.5, alpha=a, q=0.0), table, 10**6, 0.05))))(0.76)
    assert np.isnan(value) and np.isnan(slope)


def test_a_traced_nan_temperature_has_a_nan_gradient(table):
    # A NaN tau made the commit weights NaN by a where: the value was NaN but the slope in tau 0 (a flat objective).
    value, slope = jax.jit(jax.value_and_grad(
        lambda tau: jnp.mean(proxy.proxy_regrets(htb.AdaRETC(eps=0.5, alpha=0.9, q=0.0), table, T, tau))))(jnp.nan)
    assert np.isnan(value) and np.isnan(slope)


def test_counts_given_as_integral_floats_run_as_their_integers():
    # check_integer accepts 300.0, but num_pulls went on as a float into the trace: "'float' object
    # cannot be interpreted as an integer" 14 frames down (regret_proxy's through proxy_table's;
    # tune_schedule's num_steps in test_tuning).
    key, nu = jax.random.key(KEY), htb.equal_gap(htb.Gaussian(loc=0.0, scale=1.0), num_arms=2, gap=0.5)
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    assert np.array_equal(htb.proxy_table(key, nu, 1000, 4, num_pulls=300.0).prefix,
                          htb.proxy_table(key, nu, 1000, 4, num_pulls=300).prefix)
    lengths = jnp.array([400, 600])  # at least K B_T = 344
    assert np.array_equal(htb.regret_at_lengths(key, nu, 1000, 4, lengths, sampler="per_pull", num_pulls=500.0),
                          htb.regret_at_lengths(key, nu, 1000, 4, lengths, sampler="per_pull", num_pulls=500))
    assert htb.smoothed_regret(key, policy, nu, 1000, 4, sampler="per_pull", num_pulls=500.0) == htb.smoothed_regret(
        key, policy, nu, 1000, 4, sampler="per_pull", num_pulls=500)


def test_the_analytic_bound_refuses_an_eps_beyond_the_policys_batch():
    # One schedule and two true eps failed inside the trace ("Cannot broadcast to shape with fewer
    # dimensions", from lax); one eps per schedule of a batch is the documented use.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.5), num_arms=2, gap=0.2)
    with pytest.raises(ValueError, match=r"eps must broadcast to the policy's batch shape \(\) \(one true eps per "
                                         r"schedule\); got eps of shape \(2,\)\."):
        htb.analytic_regret_bound(htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0), nu, 1000, eps=[0.2, 0.3])
    pair = htb.AdaRETC(eps=0.5, alpha=jnp.array([0.8, 0.9]), q=0.0)
    both = htb.analytic_regret_bound(pair, nu, 1000, eps=[0.2, 0.3])
    first = htb.analytic_regret_bound(htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0), nu, 1000, eps=0.2)
    assert both.shape == (2,) and both[0] == first
