"""A policy and a reward law written outside the package, through the public protocol only.

Nothing here imports ``htb_jax._src``: :class:`EpsilonGreedy` and
:class:`TwoSidedLomax` are written as a user writes them (docs/guides/own-code.md, "Your own
policy and reward law"), checked exactly against plain-Python references on
the same reward table and round uniforms, measured together on the frontier
(``htb.frontier.measure``) and run by ``htb-jax sweep --family
MODULE:EXPRESSION`` (the command line's ``--policy`` is in
``test_frontier_measure.py``), and a malformed policy is refused with a
message naming what is wrong before anything is compiled.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, stats

import htb_jax as htb


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class EpsilonGreedy:
    """Explores a uniform arm with probability ``min(1, c K / t)``, else plays the best running mean."""

    c: jax.Array = 1.0

    @property
    def batch_shape(self):
        return jnp.shape(self.c)

    def kernel(self, spec):
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros(k, jnp.float64)  # reward sums

        def act(sums, ctx):
            u, _ = ctx.uniforms(2)  # word 0: explore or not; word 1: which arm
            means = jnp.where(ctx.pulls > 0, sums / jnp.maximum(ctx.pulls, 1), jnp.inf)
            explore = u[0] * ctx.t < self.c * k
            return jnp.where(explore, jnp.int32(u[1] * k), htb.first_argmax(means))

        def update(sums, ctx, arm, reward):
            return sums.at[arm].add(reward.astype(jnp.float64))

        def summary(sums, ctx):
            means = jnp.where(ctx.pulls > 0, sums / jnp.maximum(ctx.pulls, 1), jnp.nan)
            return htb.PolicySummary(jnp.int32(-1), jnp.int64(0), means.astype(jnp.float32))

        return htb.PolicyKernel(init, act, update, summary)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TwoSidedLomax(htb.Distribution):
    """``X = loc + scale * S * Y``: ``S`` a fair sign, ``P(Y > y) = (1 + y)^-shape`` (Lomax)."""

    loc: jax.Array
    scale: jax.Array
    shape: jax.Array

    def from_bits(self, words):
        upper, p = htb.signed_tail(words[..., 0])  # p = P(X - loc > scale y) in (0, 1/2)
        a = jnp.asarray(self.shape, jnp.float32)
        y = jnp.exp(-jnp.log(2.0 * p) * (1.0 / a)) - 1.0
        side = jnp.where(upper, 1.0, -1.0).astype(jnp.float32)
        return jnp.asarray(self.loc, jnp.float32) + jnp.asarray(self.scale, jnp.float32) * side * y

    def mean(self):
        return jnp.broadcast_to(jnp.asarray(self.loc, jnp.float64), self.batch_shape)

    def eps_sup(self):
        return jnp.broadcast_to(jnp.asarray(self.shape, jnp.float64) - 1.0, self.batch_shape)

    def abs_moment(self, eps):
        a = jnp.asarray(self.shape, jnp.float64)

        def log_density(v, side):  # density of S Y at w = side e^v
            return jnp.log(0.5 * a[..., None]) - (a[..., None] + 1.0) * jnp.logaddexp(0.0, v)

        return htb.abs_moment_by_quadrature(log_density, eps, loc=self.loc, scale=self.scale, tail_index=a)


KEY = jax.random.key(7)
ARMS = TwoSidedLomax(loc=jnp.array([0.5, 0.0, -0.3]), scale=jnp.array([1.0, 0.5, 2.0]), shape=1.6)
HORIZON = 400


def epsilon_greedy_reference(table: np.ndarray, u: np.ndarray, c: float) -> np.ndarray:
    """Arms played, a plain loop: ``table`` f32[K, T] the seed's rewards, ``u`` f64[T, 2] its round uniforms."""
    k, horizon = table.shape
    sums, pulls, arms = np.zeros(k), np.zeros(k, np.int64), []
    for t in range(1, horizon + 1):
        if u[t - 1, 0] * t < c * k:
            arm = int(u[t - 1, 1] * k)
        else:
            means = np.where(pulls > 0, sums / np.maximum(pulls, 1), np.inf)
            arm = int(np.argmax(means))
        sums[arm] += float(table[arm, pulls[arm]])
        pulls[arm] += 1
        arms.append(arm)
    return np.asarray(arms)


def test_the_engine_plays_the_reference_arms_on_a_users_law():
    # c = 2: the first 6 rounds explore for sure, later ones with probability 6/t, so both branches
    # run (checked); a wrong uniform word, a wrong pull index or an f32 sum would change the arms.
    num_seeds = 3
    out = htb.simulate(KEY, EpsilonGreedy(c=2.0), ARMS, HORIZON, num_seeds, record_arms=True)
    keys = htb.seed_keys(KEY, num_seeds)
    gaps = np.asarray(htb.gaps(ARMS))
    for s in range(num_seeds):
        table = np.asarray(htb.reward_table(keys[s], ARMS, HORIZON))
        u, _ = htb.round_uniforms(keys[s], np.arange(1, HORIZON + 1), 2)
        explored = np.asarray(u[:, 0]) * np.arange(1, HORIZON + 1) < 2.0 * 3
        assert 6 < explored.sum() < HORIZON - 100
        arms = epsilon_greedy_reference(table, np.asarray(u), 2.0)
        np.testing.assert_array_equal(np.asarray(out.arms[s]), arms)
        np.testing.assert_allclose(float(out.regret[s]), gaps[arms].sum(), rtol=1e-12)
        means = [table[i, : (arms == i).sum()].astype(np.float64).mean() for i in range(3)]
        np.testing.assert_allclose(np.asarray(out.estimates[s]), np.float32(means), rtol=1e-6)


def test_a_grid_of_the_users_policy_is_the_policies_run_one_by_one():
    # batch_shape from the leaves: a grid [3] equals three single runs (each grid point its own
    # kernel; a policy that read c[0] for every point would fail).  The single runs are the
    # program of the test above.
    cs = np.array([0.5, 2.0, 8.0])
    grid = htb.simulate(KEY, EpsilonGreedy(c=jnp.asarray(cs)), ARMS, HORIZON, 3, record_arms=True)
    assert grid.regret.shape == (3, 3)
    for g, c in enumerate(cs):
        one = htb.simulate(KEY, EpsilonGreedy(c=float(c)), ARMS, HORIZON, 3, record_arms=True)
        np.testing.assert_array_equal(np.asarray(grid.regret[g]), np.asarray(one.regret))
        np.testing.assert_array_equal(np.asarray(grid.arms[g]), np.asarray(one.arms))


def test_the_users_law_against_scipy():
    # 40000 draws of arm 2 (loc -0.3, scale 2): |X - loc| / scale is Lomax(1.6) and the sign fair.
    # KS at 40000 draws detects a CDF error of about 0.01; the tail at probability 1e-3 is checked
    # to 4.5 binomial standard errors (a 2^-24 uniform or a missing factor 2 in p would fail it).
    arm = TwoSidedLomax(loc=-0.3, scale=2.0, shape=1.6)
    x = np.asarray(arm.sample(jax.random.key(3), (40000,)), np.float64)
    y = np.abs(x + 0.3) / 2.0
    assert stats.kstest(y, stats.lomax(1.6).cdf).pvalue > 1e-3
    assert abs(np.mean(x > -0.3) - 0.5) < 4.5 * np.sqrt(0.25 / x.size)
    q = stats.lomax(1.6).isf(2e-3)  # P(X - loc > 2 q) = 1e-3
    count = np.sum(x + 0.3 > 2.0 * q)
    assert abs(count - 40.0) < 4.5 * np.sqrt(40.0)


@pytest.mark.parametrize("loc, scale, eps", [(0.0, 1.0, 0.5), (2.0, 0.5, 0.5), (-3.0, 2.0, 0.4)])
def test_the_users_moment_against_quadpack(loc, scale, eps):
    # E|loc + scale S Y|^(1+eps) by QUADPACK, each side on its own and split at the kink of |.|:
    # a quadrature that did not split the law's own kink at w = 0 misses by about 6e-4 at loc = 2.
    a = 1.6
    arm = TwoSidedLomax(loc=loc, scale=scale, shape=a)
    total = 0.0
    for side in (1.0, -1.0):
        def f(y, side=side):
            return abs(loc + side * scale * y) ** (1 + eps) * 0.5 * a * (1 + y) ** (-(a + 1))

        kink = -side * loc / scale
        ends = [0.0, *([kink] if kink > 0 else []), np.inf]
        total += sum(integrate.quad(f, lo, hi, limit=1000, epsabs=0, epsrel=1e-13)[0]
                     for lo, hi in zip(ends[:-1], ends[1:], strict=True))
    np.testing.assert_allclose(float(arm.abs_moment(eps)), total, rtol=1e-10)
    assert float(TwoSidedLomax(loc=loc, scale=scale, shape=1.4).abs_moment(eps)) == np.inf


def test_a_density_that_is_nan_or_infinite_where_integrated_gives_a_nan_moment():
    # The rule drops non-finite terms; a user's density that is NaN (or +inf) beyond w = e^2 was read as 0
    # there and gave a finite, wrong E W^2 (1.94 for Exp(1), whose E W^2 is 2).  NaN on the side a
    # one-sided law never integrates leaves the moment exact.
    def exponential(bad=None):  # Exp(1)'s log-density -e^v, replaced by bad beyond v = 2, NaN at w < 0
        return lambda v, side: jnp.where(side > 0, jnp.where(v > 2.0, -jnp.exp(v) if bad is None else bad,
                                                             -jnp.exp(v)), jnp.nan)

    moments = [float(htb.abs_moment_by_quadrature(exponential(bad), 1.0, loc=0.0, scale=1.0, tail_index=jnp.inf,
                                                  lower=0.0)) for bad in (jnp.nan, jnp.inf, -jnp.inf)]
    assert np.isnan(moments[0]) and np.isnan(moments[1])
    assert np.isfinite(moments[2])  # a density of 0 (-inf) is a density: the integral is finite
    # The rule's end node at w = 0 (v = -inf) is not flagged: Gamma(k)'s log-density there is +inf (k < 1) or
    # 0 * -inf (k = 1), and E W^2 = k (k + 1) is finite.
    for k in (0.5, 1.0):
        def gamma(v, side, k=k):
            return jnp.where(side > 0, (k - 1.0) * v - jnp.exp(v) - jax.scipy.special.gammaln(k), -jnp.inf)

        moment = htb.abs_moment_by_quadrature(gamma, 1.0, loc=0.0, scale=1.0, tail_index=jnp.inf, lower=0.0)
        assert float(moment) == pytest.approx(k * (k + 1.0), rel=1e-6), k
    assert float(htb.abs_moment_by_quadrature(exponential(), 1.0, loc=0.0, scale=1.0, tail_index=jnp.inf,
                                              lower=0.0)) == pytest.approx(2.0, rel=1e-12)  # NaN at w < 0 is unread


def test_intrinsic_scale_of_the_users_instance():
    # U_eps = max_i (E|X_i|^(1+eps))^(1/(1+eps)), eq. (intrinsic_scale_unknown_parameters),
    # from the family's own moments.
    moments = [float(ARMS[i].abs_moment(0.5)) for i in range(3)]
    np.testing.assert_allclose(float(htb.intrinsic_scale(ARMS, 0.5)), max(moments) ** (1 / 1.5), rtol=1e-12)


def test_the_users_policy_and_law_on_the_frontier():
    # measure takes a family as any distribution of batch (F + 1, K): here three two-sided Lomax
    # members (gaps 0.05, 0.2, 0.8) and a fixed instance, the user's policy read at checkpoints.
    # Its runs are simulate's on the same instances, and d and c the numpy slopes of their worst
    # normalized mean and of the fixed instance's mean.
    gaps = np.array([0.05, 0.2, 0.8, 0.3])
    family = TwoSidedLomax(loc=np.stack([gaps, np.zeros(4)], -1), scale=1.0, shape=1.8)
    horizons = htb.frontier.checkpoint_horizons(400, 100, per_decade=5)
    (m,) = htb.frontier.measure(EpsilonGreedy(c=2.0), 0.5, horizons, 4, family=family, key=3, per_decade=5)
    direct = np.asarray(htb.simulate(jax.random.key(3), EpsilonGreedy(c=2.0), family, horizons.tolist(), 4).regret)
    np.testing.assert_array_equal(m.regret, direct)
    t = np.log(np.asarray(horizons, float))
    worst = np.max(direct[:-1].mean(-1) / np.asarray(htb.intrinsic_scale(family, 0.5))[:-1, None], axis=0)
    np.testing.assert_allclose(m.d.slope, np.polyfit(t, np.log(worst), 1)[0], rtol=1e-12)
    np.testing.assert_allclose(m.c.slope, np.polyfit(t, np.log(direct[-1].mean(-1)), 1)[0], rtol=1e-12)


def test_the_users_law_through_the_sweep_command(tmp_path):
    # htb-jax sweep --family MODULE:EXPRESSION in a fresh process: the user's module (this file's class,
    # written out) imported from the current directory, its equal-gap instance simulated, resumed
    # from the output directory when started again, and refused in one line (status 2) where the
    # law lacks the (1+eps)-moment.
    import inspect
    import subprocess
    import sys

    (tmp_path / "mylaws.py").write_text(
        "import dataclasses\n\nimport jax\nimport jax.numpy as jnp\n\nimport htb_jax as htb\n\n\n"
        + inspect.getsource(TwoSidedLomax)
    )

    def sweep(*args):
        return subprocess.run([sys.executable, "-m", "htb_jax", "sweep", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)

    law = "mylaws:TwoSidedLomax(loc=0.0, scale=1.0, shape=1.8)"
    rest = ["--arms", "3", "--gap", "0.5", "--eps", "0.5", "--alphas", "0.8", "--qs", "0", "--horizons", "1e3,1e4",
            "--seeds", "8", "--seed-chunk", "4"]
    run = sweep("--family", law, *rest, "--out", "out")
    assert run.returncode == 0, run.stderr
    assert "K=3 equal-gap TwoSidedLomax(loc=0.0, scale=1.0, shape=1.8) arms, gap 0.5" in run.stderr
    nu = htb.equal_gap(TwoSidedLomax(loc=0.0, scale=1.0, shape=1.8), num_arms=3, gap=0.5)
    policy = htb.AdaRETC(eps=0.5, alpha=jnp.array([[0.8]]), q=jnp.array([[0.0]]))
    # Seeds 0-3 and 4-7 in two calls, as the sweep's chunks are: the same program, which the
    # compilation cache (JAX_COMPILATION_CACHE_DIR, inherited by the command) gives back compiled.
    direct = [htb.simulate(jax.random.key(0), policy, nu, [1000, 10_000], 4, first_seed=f).regret for f in (0, 4)]
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "sweep.npz")["regret"], np.concatenate(direct, -1))
    again = sweep("--family", law, *rest, "--out", "out")
    assert again.returncode == 0 and "resumed: 2 of 2 chunks read back" in again.stderr, again.stderr
    refused = sweep("--family", law.replace("1.8", "1.4"), *rest, "--out", "other")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "htb-jax: error: family 'mylaws:TwoSidedLomax(loc=0.0, scale=1.0, shape=1.4)' has a finite (1+eps)-moment "
        "only for eps < 0.4; got --eps=0.5."
    )


# -- malformed policies ---------------------------------------------------------------------------------


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _Broken:
    """EpsilonGreedy with one of its functions replaced (``what``) or no PolicyKernel at all."""

    what: str = dataclasses.field(metadata=dict(static=True), default="")

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        good = EpsilonGreedy().kernel(spec)
        k = spec.num_arms
        if self.what == "tuple":
            return tuple(good[:4])
        if self.what == "act":
            return good._replace(act=lambda sums, ctx: jnp.zeros(k))
        if self.what == "python int":  # an arm all the same, as a Python int
            return good._replace(act=lambda sums, ctx: 1 - 1)
        if self.what == "act float":  # a scalar, not an integer
            return good._replace(act=lambda sums, ctx: jnp.float32(0.0))
        if self.what == "act vector":  # integers, not a scalar
            return good._replace(act=lambda sums, ctx: jnp.zeros(k, jnp.int32))
        if self.what == "update":
            return good._replace(update=lambda sums, ctx, arm, reward: sums.astype(jnp.float32))
        if self.what == "act arity":  # the state alone
            return good._replace(act=lambda sums: jnp.int32(0))
        if self.what == "update arity":  # no reward
            return good._replace(update=lambda sums, ctx, arm: sums)
        if self.what == "python if":  # a Python branch on a traced round
            return good._replace(act=lambda sums, ctx: jnp.int32(0) if ctx.t < 10 else good.act(sums, ctx))
        if self.what == "outcome summary":
            return good._replace(summary=lambda sums, ctx: htb.Summary(jnp.zeros(()), jnp.zeros(()), 2))
        if self.what == "estimates":
            return good._replace(summary=lambda sums, ctx: htb.PolicySummary(jnp.int32(-1), jnp.int64(0), sums))
        if self.what == "python ints":
            return good._replace(summary=lambda sums, ctx: htb.PolicySummary(-1, 0, sums.astype(jnp.float32)))
        return good._replace(init=None)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _MethodShape:
    """EpsilonGreedy whose ``batch_shape`` lacks ``@property``."""

    def batch_shape(self):
        return ()

    def kernel(self, spec):
        return EpsilonGreedy().kernel(spec)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _FloatShape(_MethodShape):
    """EpsilonGreedy whose ``batch_shape`` holds a float."""

    @property
    def batch_shape(self):
        return (3.0,)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _NoSpec:
    """EpsilonGreedy whose ``kernel`` forgets its ``spec``."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self):
        return EpsilonGreedy().kernel(None)


@contextlib.contextmanager
def _backend_compilations():
    """Names of the programs compiled inside the block."""
    compiled = []

    def listener(event, duration, **kwargs):
        if event.endswith("backend_compile_duration"):
            compiled.append(kwargs.get("fun_name"))

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield compiled
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


@pytest.mark.parametrize("policy, pattern", [
    (EpsilonGreedy, r"simulate takes a policy instance .*; got policy=EpsilonGreedy \(a class\)"),
    (object(), r"simulate takes a policy instance .*; got policy=<object object .*> \(object\), which lacks kernel"),
    (_MethodShape(), r"got policy=_MethodShape\(\) \(_MethodShape\), which lacks a tuple batch_shape \(its "
                     r"batch_shape is a method: decorate it with @property\)\.$"),
    # a float or negative entry: NumPy's "'float' object cannot be interpreted as an integer", or leaves that
    # "do not broadcast to" (-1,)
    (_FloatShape(), r"got policy=_FloatShape\(\) \(_FloatShape\), which lacks a batch_shape of integers >= 0 \(its "
                    r"batch_shape is \(3\.0,\): return, say, jnp.shape\(self.c\)\)\.$"),
    # the signature before the call, whose own TypeError says "takes 1 positional argument but 2 were given"
    (_NoSpec(), r"^_NoSpec.kernel must take \(spec\), the engine's sizes; it takes \(\)\.$"),
    (_Broken("tuple"), r"_Broken.kernel\(spec\) must return an htb.PolicyKernel\(init, act, update, summary\); got tuple"),
    (_Broken("init"), r"_Broken.kernel\(spec\).init must be a function; got NoneType"),
    (_Broken("act"), r"_Broken's kernel.act must return the arm to pull as an integer scalar .*; got float64\[3\]"),
    # each half of act's check on its own: a dtype check alone passes the vector, a shape check the float
    (_Broken("act float"), r"_Broken's kernel.act must return the arm to pull as an integer scalar .*; got float32\[\]"),
    (_Broken("act vector"), r"_Broken's kernel.act must return the arm to pull as an integer scalar .*; got int32\[3\]"),
    # the signature before any call: the call's own TypeError names a lambda, not act
    (_Broken("act arity"), r"^_Broken's kernel.act must take \(state, ctx\); it takes \(sums\)\.$"),
    (_Broken("update arity"), r"^_Broken's kernel.update must take \(state, ctx, arm, reward\); it takes "
                              r"\(sums, ctx, arm\)\.$"),
    (_Broken("update"), r"_Broken's kernel.update must return a state of the structure, shapes and dtypes init "
                        r"gives, float64\[3\]; got float32\[3\]"),
    (_Broken("outcome summary"), r"_Broken's kernel.summary must return htb.PolicySummary\(committed=int32\[\], "
                                 r"exploration=int64\[\], estimates=float32\[3\]\); got Summary of .* \(htb.Summary "
                                 r"is the outcome summary of htb.summarize; a kernel returns htb.PolicySummary\)"),
    (_Broken("estimates"), r"_Broken's kernel.summary must return htb.PolicySummary.*; got PolicySummary of "
                           r"\(int32\[\], int64\[\], float64\[3\]\)\.$"),
    # -1 written for committed: the message named an int64 the user never wrote
    (_Broken("python ints"), r"_Broken's kernel.summary must return htb.PolicySummary.*; got PolicySummary of "
                             r"\(int64\[\], int64\[\], float32\[3\]\) \(a Python int such as -1 is int64 under "
                             r"htb_jax's 64-bit mode: write jnp.int32\(-1\)\)\.$"),
], ids=["class", "no kernel", "batch_shape method", "batch_shape float", "kernel arity", "tuple", "init", "act", "act float", "act vector", "act arity", "update arity",
        "update", "outcome summary", "estimates", "python ints"])
def test_a_malformed_policy_is_named_before_the_simulation_compiles(policy, pattern):
    # Each message names the function at fault and what it returned; the engine's program (and the
    # function under test, which the check only evaluates abstractly) is never compiled.
    with _backend_compilations() as compiled, pytest.raises(TypeError, match=pattern):
        htb.simulate(KEY, policy, ARMS, 100, 2)
    assert not any("engine" in str(name) for name in compiled), compiled


def test_an_arm_returned_as_a_python_int_is_pulled():
    # act may return a Python int: abstractly an int32[] scalar, as the check sees it. The engine
    # indexes with it as an array (it raised AttributeError: 'int' object has no attribute 'dtype').
    outcome = htb.simulate(KEY, _Broken("python int"), ARMS, 50, 2)
    np.testing.assert_array_equal(outcome.pulls, [[50, 0, 0], [50, 0, 0]])


def test_a_python_branch_on_a_traced_round_is_explained():
    # JAX's own message names a tracer; the notes name the function and say what to use instead.
    with pytest.raises(jax.errors.TracerBoolConversionError) as raised:
        htb.simulate(KEY, _Broken("python if"), ARMS, 100, 2)
    notes = "\n".join(raised.value.__notes__)
    assert "raised by _Broken's kernel.act" in notes
    assert "traced once" in notes and "jnp.where or jax.lax.cond" in notes


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _Stray:
    """EpsilonGreedy that plays ``arm`` in round 5 instead, in ``[0, K)`` or not."""

    arm: jax.Array = 0

    @property
    def batch_shape(self):
        return jnp.shape(self.arm)

    def kernel(self, spec):
        good = EpsilonGreedy().kernel(spec)

        def act(sums, ctx):
            return jnp.where(ctx.t == 5, self.arm, good.act(sums, ctx)).astype(jnp.int32)

        return good._replace(act=act)


def test_an_arm_outside_the_range_is_refused_after_the_run():
    # Grid point 0 plays arm 2 in round 5 (in range), 1 plays K = 3 and 2 plays -1. Unchecked, both
    # runs would return a regret short of one pull; with signed indices -1 would be counted as arm
    # K - 1 and only grid point 1's two seeds reported (2 of 6, not 4 of 6).
    with pytest.raises(ValueError, match=r"^_Stray's kernel.act must return an arm in \[0, 3\); it returned "
                                         r"another in 4 of 6 runs \(the first: grid point 1, instance 0, T=100, "
                                         r"seed 0\), whose pulls"):
        htb.simulate(KEY, _Stray(jnp.array([2, 3, -1])), ARMS, 100, 2)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _Reporting:
    """EpsilonGreedy whose summary reports ``committed`` and ``exploration`` as given."""

    committed: jax.Array = -1
    exploration: jax.Array = 0

    @property
    def batch_shape(self):
        return jnp.shape(self.committed)

    def kernel(self, spec):
        good = EpsilonGreedy().kernel(spec)

        def summary(sums, ctx):
            return good.summary(sums, ctx)._replace(committed=jnp.int32(self.committed),
                                                    exploration=jnp.int64(self.exploration))

        return good._replace(summary=summary)


@pytest.mark.parametrize("committed, exploration, message", [
    (jnp.array([2, 3]), 0, r"^_Reporting's kernel.summary must report committed in \[-1, 3\); it reported 3 in 2 of "
                           r"4 runs \(the first: grid point 1, instance 0, T=100, seed 0\)\.$"),
    (-1, 101, r"^_Reporting's kernel.summary must report exploration in \[0, T\]; it reported 101 in 2 of 2 runs"),
])
def test_a_summary_outside_its_range_is_refused_after_the_run(committed, exploration, message):
    # Before, copied into the Outcome as they were: an arm K, an exploration past T (which measure read).
    with pytest.raises(ValueError, match=message):
        htb.simulate(KEY, _Reporting(committed, exploration), ARMS, 100, 2)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _NoMeanLomax(TwoSidedLomax):
    """TwoSidedLomax whose ``mean()`` is infinite where ``shape <= 1`` (it has no mean there)."""

    def mean(self):
        return jnp.where(jnp.asarray(self.shape) > 1.0, super().mean(), jnp.inf)


@pytest.mark.parametrize("law, pattern", [
    # shape 0.8: E|X| = inf, yet mean() gives loc; its eps_sup() says so (-0.2).
    (TwoSidedLomax(loc=jnp.array([0.5, 0.0, 0.0]), scale=1.0, shape=jnp.array([1.6, 1.6, 0.8])),
     r"whose eps_sup\(\) is -0\.\d+ at index \[2\] of its arms \(shape \[3\]\): E\|X\| is infinite there\.$"),
    # loc 0.1, not a float32: the check of float32 gaps computes means first (it warned, inf - inf)
    (_NoMeanLomax(loc=jnp.array([0.1, 0.0, 0.0]), scale=1.0, shape=jnp.array([1.6, 0.8, 1.6])),
     r"whose mean\(\) is inf at index \[1\] of its arms \(shape \[3\]\)\.$"),
], ids=["eps_sup", "mean"])
def test_a_law_without_a_finite_mean_is_refused(law, pattern):
    # Before, both ran: the first with gaps from a mean that does not exist, the second to a NaN regret.
    with warnings.catch_warnings(), pytest.raises(ValueError, match=r"must have a finite mean on every arm .*" + pattern):
        warnings.simplefilter("error")  # the refusal alone, no NumPy warning before it
        htb.simulate(KEY, EpsilonGreedy(), law, 100, 2)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _ShortMeanLomax(TwoSidedLomax):
    """TwoSidedLomax whose ``mean()`` drops the first arm (K - 1 means)."""

    def mean(self):
        return super().mean()[..., 1:]


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _TypoLomax(TwoSidedLomax):
    """TwoSidedLomax whose ``mean()`` reads a misspelt field."""

    def mean(self):
        return self.locc


def test_a_mean_of_another_shape_or_that_raises_is_named():
    # K - 1 means failed deep inside ("cannot reshape array of size 2 into shape (3)", or an IndexError in the
    # trace); a mean() that raised had no note, and the command line printed its traceback.
    arms = dict(loc=jnp.array([0.5, 0.0, 0.0]), scale=1.0, shape=1.6)
    with pytest.raises(TypeError, match=r"^htb_jax needs _ShortMeanLomax\.mean\(\) to return one mean per arm, of the "
                                        r"law's batch shape \[3\]; got .*, whose mean\(\) returns shape \[2\]\.$"):
        htb.simulate(KEY, EpsilonGreedy(), _ShortMeanLomax(**arms), 100, 2)
    with pytest.raises(AttributeError, match="locc") as info:
        htb.gaps(_TypoLomax(**arms))
    assert info.value.__notes__ == ["(raised by _TypoLomax.mean)"]  # the note the command line prints


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _OneGreedy(EpsilonGreedy):
    """EpsilonGreedy of batch shape () whatever its c (jnp.shape(None) is deprecated in JAX)."""

    @property
    def batch_shape(self):
        return ()


def test_a_parameter_left_none_is_named():
    # JAX sees no leaf in None, so no check saw it: the error named only the operation (NoneType and int).
    with pytest.raises(TypeError, match="NoneType") as info:
        htb.simulate(KEY, _OneGreedy(c=None), ARMS, 100, 2)
    assert info.value.__notes__[-1] == "(_OneGreedy's c is None: give it a number or an array.)"
    with pytest.raises(ValueError, match="None is not a valid value") as info:
        htb.simulate(KEY, EpsilonGreedy(), TwoSidedLomax(loc=ARMS.loc, scale=None, shape=1.6), 100, 2)
    assert info.value.__notes__[-1] == "(TwoSidedLomax's scale is None: give it a number or an array.)"


def test_a_laws_parameters_that_do_not_broadcast_are_named():
    # A user's law has no constructor check: its batch_shape names the shapes (before, a lax error).
    law = TwoSidedLomax(loc=jnp.zeros(2), scale=1.0, shape=jnp.array([1.5, 1.8, 2.0]))
    with pytest.raises(ValueError, match=r"^the parameters of TwoSidedLomax must broadcast to one batch shape; got "
                                         r"loc of shape \(2,\), scale of shape \(\), shape of shape \(3,\)\.$"):
        htb.simulate(KEY, EpsilonGreedy(), law, 100, 2)
