"""smoothed_regret: simulate's exact mean regret, gradients equal to CRN central differences of simulate."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src.smoothing import smoothed_regret

KEY = 7
S = 64
T = 20_000
POINTS = ((0.72, 0.1), (0.9, 0.2))  # (alpha, q), eps = 1
WIDTHS = (1e-3, 1e-2)


def _student():
    # Student-t(2.4): E|X|^2 finite, E|X|^2.4 infinite; three arms, means (0.25, 0, 0).
    return htb.StudentT(loc=jnp.array([0.25, 0.0, 0.0]), df=2.4, scale=1.0)


def _grid():
    """Every point, its alpha +- h and q +- h for both widths: one simulate program."""
    alphas, qs = [], []
    for a, q in POINTS:
        for h in WIDTHS:
            alphas += [a, a + h, a - h, a, a]
            qs += [q, q, q, q + h, q - h]
    return np.array(alphas), np.array(qs)


@pytest.fixture(scope="module")
def simulated():
    alphas, qs = _grid()
    policy = htb.AdaRETC(eps=1.0, alpha=alphas, q=qs)
    regret = htb.simulate(jax.random.key(KEY), policy, _student(), T, S, sampler="per_pull").regret
    return np.asarray(regret).reshape(len(POINTS), len(WIDTHS), 5, S)


def test_value_and_gradient_are_simulates_mean_and_crn_central_differences(simulated):
    # The value is simulate's mean on the same seeds; the gradient in (alpha, q) at width h is the
    # central difference of simulate's mean at h, on the same seeds: both exact (same integer
    # schedule, same float32 estimates, same pseudo-regret arithmetic), up to the association of
    # float64 prefix sums (rtol 1e-12).  A gradient through the relaxation, or one whose
    # perturbed schedule differed from Algorithm 1's by one pull, would miss by far more.
    def f(a, q, h):
        return smoothed_regret(jax.random.key(KEY), htb.AdaRETC(eps=1.0, alpha=a, q=q), _student(), T, S, h,
                               sampler="per_pull")

    traces = []

    def value_and_grad(a, q, h):
        traces.append(1)
        return jax.value_and_grad(f, argnums=(0, 1))(a, q, h)

    run = jax.jit(value_and_grad)
    significant = 0
    for p, (a, q) in enumerate(POINTS):
        for w, h in enumerate(WIDTHS):
            value, (g_alpha, g_q) = run(a, q, h)
            sim = simulated[p, w]
            np.testing.assert_allclose(float(value), sim[0].mean(), rtol=1e-12)
            for g, (plus, minus) in ((g_alpha, (1, 2)), (g_q, (3, 4))):
                diff = (sim[plus] - sim[minus]) / (2 * h)  # per-seed CRN differences
                np.testing.assert_allclose(float(g), diff.mean(), rtol=1e-12, atol=1e-9)
                se = diff.std(ddof=1) / np.sqrt(S)
                significant += bool(abs(diff.mean()) > 3 * se)
    # The comparison is not vacuous: most differences exceed 3 standard errors.
    assert significant >= 4
    assert len(traces) == 1  # a new alpha, q or width does not recompile


def test_only_the_moving_schedule_coordinates_are_differenced(monkeypatch):
    # A schedule coordinate whose tangent is symbolically zero (a constant, or q under stop_gradient as
    # tune_schedule holds it without tune_q) costs no evaluation: the gradient in alpha alone evaluates
    # 3 exploration lengths (the point, alpha +- h), in (alpha, q) 5, in all three 7 -- and the alpha
    # component is the same in alpha alone and in all three (up to the association of float64 sums,
    # rtol 1e-12).  Differencing the wrong coordinate, or pairing the wrong slope with a tangent,
    # changes the alpha component.
    from htb_jax._src import smoothing

    counts, inner = [], smoothing._mean_regret

    def counting(crn, lengths, *args):
        counts.append(lengths.shape[0])
        return inner(crn, lengths, *args)

    monkeypatch.setattr(smoothing, "_mean_regret", counting)
    a, q, h = POINTS[0] + (WIDTHS[1],)

    def f(e, a, q):
        return smoothed_regret(jax.random.key(KEY), htb.AdaRETC(eps=e, alpha=a, q=q), _student(), T, S, h,
                               sampler="per_pull")

    # The count is the trace's (one count per evaluation of the lengths): the gradients in (alpha, q)
    # and under stop_gradient are only traced (test_value_and_gradient_... runs the former against
    # simulate); those in alpha alone and in all three run, jitted (one program each instead of
    # several hundred eager operations), and their alpha components agree.
    grads = {}
    for argnums in ((1,), (1, 2), (0, 1, 2)):
        counts.clear()
        if argnums == (1, 2):
            jax.make_jaxpr(jax.grad(f, argnums=argnums))(1.0, a, q)
        else:
            grads[argnums] = jax.jit(jax.grad(f, argnums=argnums))(1.0, a, q)
        assert counts == [1 + 2 * len(argnums)], argnums
    np.testing.assert_allclose(float(grads[(0, 1, 2)][1]), float(grads[(1,)][0]), rtol=1e-12)
    assert float(grads[(1,)][0]) != 0.0
    counts.clear()
    jax.make_jaxpr(jax.grad(lambda z: f(1.0, z[0], jax.lax.stop_gradient(z[1]))))(jnp.array([a, q]))
    assert counts == [3]


def test_instance_gradient_is_simulates_difference_in_the_spike_probability():
    # Theorem 1's two-point pair on the per-pull table (the order-statistic path is the doctest's).
    # d/d beta of the mean regret at relative width 0.1: simulate's CRN central difference,
    # computed on the family (beta (1 + 0.1), beta (1 - 0.1)) with the same key.  alpha = 0.7
    # gives blocks of one pull (L = 868, B_T = 244); beta = 0.45: the spike (block mean 2/beta > 1)
    # is in about half the blocks, so the median, hence the commit, moves with beta.
    key, horizon, beta, rel, seeds = jax.random.key(3), T, 0.45, 0.1, 128
    policy = htb.AdaRETC(eps=1.0, alpha=0.7, q=0.0)
    fam = htb.lower_bound_pair(2, 1.0, jnp.array([beta, beta * (1 + rel), beta * (1 - rel)]))[1]
    sim = np.asarray(htb.simulate(key, policy, fam, horizon, seeds, sampler="per_pull").regret)

    def f(b):
        return smoothed_regret(key, policy, htb.lower_bound_pair(2, 1.0, b)[1], horizon, seeds,
                               instance_width=rel, sampler="per_pull")

    value, grad = jax.jit(jax.value_and_grad(f))(beta)
    np.testing.assert_allclose(float(value), sim[0].mean(), rtol=1e-12)
    # lower_bound_pair moves both the spike's probability and its height 2 gap / beta; the chain
    # rule adds the two central differences, each at relative width 0.1: to first order the
    # difference of simulate between beta (1 +- 0.05).  Tolerance: 3 standard errors of that
    # difference plus 10% of it for the two-leaf chain rule against the joint difference (measured:
    # -9.17e4 against -7.97e4 +- 0.91e4).
    diff = (sim[1] - sim[2]) / (2 * rel * beta)
    se = diff.std(ddof=1) / np.sqrt(seeds)
    assert abs(diff.mean()) > 3 * se
    assert abs(float(grad) - diff.mean()) <= 3 * se + 0.1 * abs(diff.mean())


def test_bad_input_errors():
    key, nu = jax.random.key(0), _student()
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    with pytest.raises(ValueError, match=r"width must lie in \(0, 1\]; got width=0"):
        smoothed_regret(key, policy, nu, T, S, 0.0)
    with pytest.raises(ValueError, match=r"instance_width must lie in \(0, 1\]; got instance_width=2"):
        smoothed_regret(key, policy, nu, T, S, 0.01, instance_width=2.0)
    with pytest.raises(ValueError, match="sampler='order_statistic' needs a family with closed-form"):
        smoothed_regret(key, policy, nu, T, S, sampler="order_statistic")
    with pytest.raises(ValueError, match="sampler must be one of auto, per_pull, block_sums, order_statistic; got sampler='exact'"):
        smoothed_regret(key, policy, nu, T, S, sampler="exact")
    with pytest.raises(TypeError, match="AdaRETC"):
        smoothed_regret(key, htb.UCB1(), nu, T, S)


def test_order_statistic_path_is_simulates_mean_and_crn_differences():
    # Gaussian arms take the order-statistic sampler (one Beta level and one quantile per arm and
    # seed), so T = 10^8 and 4096 seeds cost what T = 10^3 does.  Means (0.05, 0, 0), scale 1, alpha = 0.8:
    # L = 2941, n_i = 980, B_T = 452, blocks of 2 pulls; the best arm's estimate falls below another
    # arm's in a share of the seeds that moves with L and with the gap, so the differences are large.
    # The value is simulate's mean, the gradients in alpha (width h) and in each arm's mean (relative
    # width 0.1, absolute 0.1 at a mean of 0) are simulate's CRN central differences, exactly (rtol
    # 1e-12): a gradient of another sampler's run, or without common random numbers, would miss.
    key, horizon, seeds, alpha, h, rel = jax.random.key(11), 10**8, 4096, 0.8, 1e-3, 0.1
    loc = np.array([0.05, 0.0, 0.0])
    policy = htb.AdaRETC(eps=1.0, alpha=jnp.array([alpha, alpha + h, alpha - h]), q=0.0)
    deltas = np.where(loc != 0, rel * np.abs(loc), rel)
    shifted = np.stack([loc] + [loc + side * deltas[i] * np.eye(3)[i] for i in range(3) for side in (1, -1)])
    family = htb.Gaussian(loc=jnp.asarray(shifted), scale=1.0)
    sim = np.asarray(htb.simulate(key, policy, family, horizon, seeds, sampler="order_statistic").regret)  # [3, 7, S]

    def f(a, mean):
        return smoothed_regret(key, htb.AdaRETC(eps=1.0, alpha=a, q=0.0), htb.Gaussian(loc=mean, scale=1.0),
                               horizon, seeds, h, instance_width=rel, sampler="order_statistic")

    value, (g_alpha, g_instance) = jax.jit(jax.value_and_grad(f, argnums=(0, 1)))(alpha, jnp.asarray(loc))
    np.testing.assert_allclose(float(value), sim[0, 0].mean(), rtol=1e-12)
    differences = [(sim[1, 0] - sim[2, 0]) / (2 * h)]
    differences += [(sim[0, 1 + 2 * i] - sim[0, 2 + 2 * i]) / (2 * deltas[i]) for i in range(3)]
    gradients = [float(g_alpha)] + [float(g) for g in np.asarray(g_instance)]
    significant = 0
    for g, diff in zip(gradients, differences, strict=True):
        np.testing.assert_allclose(g, diff.mean(), rtol=1e-12, atol=1e-6)
        significant += bool(abs(diff.mean()) > 3 * diff.std(ddof=1) / np.sqrt(seeds))
    # Measured: -1055 +- 21 in alpha; -4.0e6 +- 2.0e6, 1.30e6 and 1.34e6 +- 0.25e6 in the means.
    assert significant >= 3, (gradients, [d.std(ddof=1) / np.sqrt(seeds) for d in differences])


def test_a_table_read_past_under_a_trace_is_nan_in_value_and_gradient():
    # Under jit or grad num_pulls cannot be checked against the exploration: reads past the table were
    # clipped, a plausible wrong value and gradient (-587 for -988; +3852 under jit with 300 pulls).
    key, nu = jax.random.key(KEY), _student()
    horizon, seeds = 2000, 8
    blocks = math.ceil(8 * math.log(3 * horizon**3))  # B_T, K = 3
    length = 3 * blocks + math.ceil(horizon ** (2 * (1 - 0.8)))  # L_T at alpha = 0.8, eps = 1, q = 0
    pulls = -(-length // 3)  # covers alpha = 0.8, not its difference at alpha - width = 0.75, nor alpha = 0.79

    def regret(alpha, num_pulls):
        policy = htb.AdaRETC(eps=1.0, alpha=alpha, q=0.0)
        return smoothed_regret(key, policy, nu, horizon, seeds, 0.05, sampler="per_pull", num_pulls=num_pulls)

    at = jax.jit(jax.vmap(jax.value_and_grad(regret), (0, None)), static_argnums=1)
    full_value, full_slope = at(jnp.array([0.8]), -(-horizon // 3))
    value, slope = at(jnp.array([0.8, 0.79]), pulls)
    assert value[0] == full_value[0] and np.isfinite(full_slope[0]) and np.isnan(slope[0])  # the point covered
    # a traced NaN schedule: its length a NaN cast to an integer gave 92.0 with a zero gradient (same program)
    nan_value, nan_slope = at(jnp.array([np.nan]), -(-horizon // 3))
    assert np.isnan(nan_value[0]) and np.isnan(nan_slope[0])
    assert np.isnan(value[1]) and np.isnan(slope[1])  # the point itself not covered
    # regret_at_lengths, traced lengths: NaN past the table, a covered one the smoothed regret at its schedule
    traced = jax.jit(lambda n: htb.regret_at_lengths(key, nu, horizon, seeds, n, sampler="per_pull",
                                                     num_pulls=pulls))(jnp.array([length, length + 3]))
    assert traced[0] == full_value[0] and np.isnan(traced[1])


def test_the_eps_derivative_is_nan_where_eps_minus_width_has_no_schedule():
    # eps - width <= 0 makes beta infinite: the difference there was a number (-8949), the slope of nothing.
    key, nu = jax.random.key(KEY), _student()

    def regret(eps, width):
        return smoothed_regret(key, htb.AdaRETC(eps=eps, alpha=0.999, q=0.0), nu, 2000, 8, width, sampler="per_pull")

    grad = jax.jit(jax.grad(regret))
    assert np.isfinite(grad(0.05, 0.01)) and np.isnan(grad(0.05, 0.05)) and np.isnan(grad(0.05, 0.06))


def test_a_width_up_to_eps_sizes_the_table_without_overflow():
    # default_pulls covered eps - width by max(eps - width, 1e-6): at alpha = 0.8, eps = width = 0.5 that
    # made T^beta overflow (OverflowError, naming nothing). Below 0 the eps difference is NaN and reads
    # nothing, so the table covers alpha - width and q + width at eps itself.
    from htb_jax._src.smoothing import default_pulls

    key, nu = jax.random.key(KEY), _student()
    policy = htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0)
    held = default_pulls(policy, 3, 1000, 0.5, eps_moves=False)
    assert default_pulls(policy, 3, 1000, 0.5) == held
    assert held == -(-1000 // 3)  # at alpha - width = 0.3, beta = 2.1: the exploration reaches T
    value, slope = jax.value_and_grad(
        lambda eps: smoothed_regret(key, htb.AdaRETC(eps=eps, alpha=0.8, q=0.0), nu, 1000, 4, 0.5, sampler="per_pull")
    )(0.5)
    assert value == htb.simulate(key, policy, nu, 1000, 4, sampler="per_pull").regret.mean() and np.isnan(slope)
    # A small positive eps - width is still covered: eps = 0.05, width 0.01 covers eps 0.04.
    assert default_pulls(htb.AdaRETC(eps=0.05, alpha=0.99, q=0.0), 3, 10**6, 0.01) > default_pulls(
        htb.AdaRETC(eps=0.05, alpha=0.99, q=0.0), 3, 10**6, 0.01, eps_moves=False)


def test_the_table_check_counts_every_instance_held_at_once(monkeypatch):
    # The per-pull tables of a batch of instances are drawn together (one vmap), but the check counted
    # one instance's: eight instances of 200 MiB passed a 1 GiB limit.  Here against a limit of 1 MiB
    # (a regression draws 2 MiB, not 1.6 GB): eight instances of 256 KiB.
    from htb_jax._src import smoothing

    monkeypatch.setattr(smoothing, "MAX_TABLE_BYTES", 2**20)
    batch = htb.Gaussian(loc=jnp.tile(jnp.array([0.5, 0.0]), (8, 1)), scale=1.0)
    with pytest.raises(ValueError, match=r"^smoothed_regret holds the per-pull prefix sums of every instance at once: "
                                         r"num_seeds=4 x 8 instance\(s\) x K=2 x 4096 pulls x 8 bytes = 2 MiB, more "
                                         r"than the limit of 1 MiB; lower num_seeds, num_pulls or the instances\.$"):
        smoothed_regret(jax.random.key(KEY), htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), batch, 10**4, 4,
                        sampler="per_pull", num_pulls=4095)
