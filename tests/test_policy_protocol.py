"""The policy protocol's promises beyond a kernel's shapes: what ``ctx`` holds in ``update``, and the
declaration ``anytime`` that ``htb.frontier.measure`` reads (built-ins and a user's policy).

The user's policies here are written as a user writes them: ``htb_jax`` and ``jax`` only.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src.policy_protocol import EngineSpec, RoundContext, reads_horizon
from htb_jax._src.reward_table import TableReader

ARMS = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.5), num_arms=3, gap=0.5)
BUILT_INS = {
    "UCB1": htb.UCB1(), "AdaRUCB": htb.AdaRUCB(), "RobustUCB": htb.RobustUCB(eps=1.0, u=1.0),
    "RobustUCBf": htb.RobustUCBf(), "APE2": htb.APE2(p=1.5), "ForceMoM": htb.ForceMoM(rho=0.5),
    "AnytimeAdaRETC": htb.AnytimeAdaRETC(eps=1.0, alpha=0.8, q=0.0),
    "AdaRETC": htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), "EmpiricalETC": htb.EmpiricalETC(eps=1.0, alpha=0.8, q=0.0),
    "MRUCB": htb.MRUCB(p=1.5), "MRAPE": htb.MRAPE(p=1.5),
}


@pytest.mark.parametrize("name", list(BUILT_INS))
def test_each_built_in_declares_whether_its_play_reads_the_horizon(name):
    """A built-in's ``anytime`` is the opposite of what tracing its ``init``, ``act`` and ``update``
    finds.  Catches a wrong declaration (AdaR-ETC declared anytime: measure would read one run to
    the largest T at checkpoints, whose exploration length is the largest T's) and a ``reads_horizon``
    that misses a read through a jitted helper or a loop (every ETC's schedule is one)."""
    policy = BUILT_INS[name]
    spec = EngineSpec(3, 1000, 256, 64)
    assert policy.anytime is (not reads_horizon(policy, ARMS, spec))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class CountCheck:
    """Round robin whose state counts its own pulls; ``update`` records the largest difference
    between ``ctx.pulls[arm]`` and that count, reported as ``exploration`` (0: the counts before the pull).
    It declares nothing (no ``anytime``)."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros(k, jnp.int64), jnp.zeros((), jnp.int64)

        def act(state, ctx):
            return ((ctx.t - 1) % k).astype(jnp.int32)

        def update(state, ctx, arm, reward):
            own, worst = state
            worst = jnp.maximum(worst, jnp.abs(ctx.pulls[arm] - own[arm]))
            return own.at[arm].add(1), worst

        def summary(state, ctx):
            return htb.PolicySummary(jnp.int32(-1), state[1], jnp.full(k, jnp.nan, jnp.float32))

        return htb.PolicyKernel(init, act, update, summary)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Anytime(CountCheck):
    """The same round robin, declaring that it never reads ``T``."""

    anytime = True


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class ExploreForAThird(Anytime):
    """Round robin for the first third of the horizon, then arm 0: reads ``T``, yet declares anytime."""

    def kernel(self, spec):
        inner = super().kernel(spec)
        k = spec.num_arms

        def act(state, ctx):
            return jnp.where(3 * ctx.t <= ctx.horizon, (ctx.t - 1) % k, 0).astype(jnp.int32)

        return inner._replace(act=act)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Unclear(CountCheck):
    """The same round robin, with a declaration that is not True or False."""

    anytime = "yes"


def test_update_sees_the_counts_before_its_pull_and_measure_reads_declarations():
    """``ctx.pulls`` in ``update`` are the counts before this pull (documented in docs/guides/own-code.md); measure
    reads a user's declaration, runs an undeclared policy per horizon, and refuses a policy that
    declares anytime (or is told so) but reads ``ctx.horizon``.  Catches an engine that counts the pull before
    ``update``, a measure that ignores a user's declaration (or reads a list of classes), and one that
    reads a horizon-reading policy at checkpoints."""
    out = htb.simulate(jax.random.key(0), CountCheck(), ARMS, 50, 2)
    np.testing.assert_array_equal(np.asarray(out.exploration), 0)

    horizons = htb.frontier.checkpoint_horizons(300, 100)
    family = htb.frontier.SpikeFamily(spike_probs=(1e-2, 0.5), fixed_spike=0.1)
    (declared,) = htb.frontier.measure(Anytime(), 1.0, horizons, 2, family=family)
    (undeclared,) = htb.frontier.measure(CountCheck(), 1.0, horizons, 2, family=family)
    assert declared.anytime and not undeclared.anytime
    # a round robin's regret is the same read at checkpoints of one run as run per horizon
    np.testing.assert_array_equal(undeclared.regret, declared.regret)
    with pytest.raises(TypeError, match=r"Unclear.anytime must be True \(the policy never reads T\) or False"):
        htb.frontier.measure(Unclear(), 1.0, horizons, 2, family=family)
    with pytest.raises(ValueError, match=r"\(its declaration anytime = True\), but ExploreForAThird's init, act or "
                                         r"update reads ctx.horizon \(T\)"):
        htb.frontier.measure(ExploreForAThird(), 1.0, horizons, 2, family=family)
    with pytest.raises(ValueError, match=r"\(anytime=True\), but ExploreForAThird's"):
        htb.frontier.measure(ExploreForAThird(), 1.0, horizons, 2, family=family, anytime=True)


GRIDS = {
    "ForceMoM rho": lambda g: htb.ForceMoM(rho=g(0.5, 0.6)),
    "AdaRETC alpha": lambda g: htb.AdaRETC(eps=0.5, alpha=g(0.8, 0.9), q=0.0),
    "AdaRETC eps": lambda g: htb.AdaRETC(eps=g(0.5, 1.0), alpha=0.9, q=0.0),
    "EmpiricalETC q": lambda g: htb.EmpiricalETC(eps=1.0, alpha=0.8, q=g(0.0, 0.1)),
    "AnytimeAdaRETC growth": lambda g: htb.AnytimeAdaRETC.order_free(growth=g(2.0, 3.0)),
    "RobustUCB u": lambda g: htb.RobustUCB(0.5, u=g(1.0, 2.0)),
    "RobustUCB v": lambda g: htb.RobustUCB(0.5, v=g(1.0, 2.0), estimator="mom"),
    "RobustUCBf m": lambda g: htb.RobustUCBf(m=g(2.1, 3.0)),
    "MRUCB p": lambda g: htb.MRUCB(p=g(1.5, 2.0)),
    "APE2 c": lambda g: htb.APE2(1.5, c=g(0.5, 1.0)),
    "MRAPE c": lambda g: htb.MRAPE(1.5, c=g(0.5, 1.0)),
}


@pytest.mark.parametrize("name", list(GRIDS))
def test_a_grid_given_as_a_list_is_the_array_grid(name):
    # A list was kept as a node of the tree (two leaves of shape ()): simulate then failed inside, blaming the
    # kernel ("act must return ... an integer scalar; got int32[2]") or broadcasting.  As the laws do, a list or a
    # tuple becomes a float64 array; the named forms take the class's other fields (AnytimeAdaRETC's growth).
    listed, arrayed = GRIDS[name](lambda *v: list(v)), GRIDS[name](lambda *v: np.array(v))
    assert jax.tree.structure(listed) == jax.tree.structure(arrayed) and listed.batch_shape == (2,)
    for got, want in zip(jax.tree.leaves(listed), jax.tree.leaves(arrayed), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("num", [0, -1, 2.0, True, jnp.int32(2)])
def test_round_uniforms_take_a_positive_python_int(num):
    # 0 and -1 gave empty arrays and 2.0 two uniforms; a traced count fails inside jax. The docs say a Python int.
    nu = htb.equal_gap(htb.Gaussian(0.0, 1.0), 2, 0.5)
    ctx = RoundContext(jnp.int64(1), jnp.zeros(2, jnp.int64), jnp.int64(10), TableReader.create(jax.random.key(0), nu))
    assert ctx.uniforms(np.int64(2))[0].shape == (2,)
    with pytest.raises(TypeError, match=r"^ctx.uniforms takes num, the count of uniforms, as a positive Python int; "
                                        r"got num="):
        ctx.uniforms(num)
