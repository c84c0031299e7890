"""A user's policy or reward law that breaks the protocol is refused by name, before anything is traced.

Written as a user writes them (no ``htb_jax._src``), each class below makes one mistake a new user
makes: a class not registered as a pytree, a ``batch_shape`` its leaves do not broadcast to, a law
without a method the call needs, a ``from_bits`` that returns float64.  Each refusal is checked at
every public entry point that takes a policy (``simulate``, ``run_on_rewards``, ``measure``,
``run_family``, ``smoothed_regret``, ``htb-jax frontier --policy``) or a law (``simulate``,
``reward_table``, ``equal_gap``, ``intrinsic_scale``, ``measure``, ``smoothed_regret``,
``tune_schedule``, ``htb-jax sweep --family``) where the mistake matters: an entry point asks only
for the methods it calls (``reward_table`` needs ``from_bits``, not ``abs_moment``), and
``run_on_rewards`` and ``smoothed_regret`` take AdaR-ETC, so their policy is a subclass of it.  The
message names the argument, what it takes and what was given; nothing is compiled, and only a
``from_bits`` is traced, abstractly, to read its dtype and shape.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import re
from importlib.metadata import entry_points

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb

(CLI,) = entry_points(group="console_scripts", name="htb-jax")


# -- policies -----------------------------------------------------------------------------------------


def greedy_kernel(spec):
    """Plays every arm once, then the best running mean (the kernel the policies below share)."""
    k = spec.num_arms

    def init(ctx):
        return jnp.zeros(k, jnp.float64)

    def act(sums, ctx):
        return htb.first_argmax(jnp.where(ctx.pulls > 0, sums / jnp.maximum(ctx.pulls, 1), jnp.inf))

    def update(sums, ctx, arm, reward):
        return sums.at[arm].add(reward.astype(jnp.float64))

    def summary(sums, ctx):
        return htb.PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.full(k, jnp.nan, jnp.float32))

    return htb.PolicyKernel(init, act, update, summary)


@dataclasses.dataclass(frozen=True)
class UnregisteredGreedy:
    """A policy whose class lacks ``@jax.tree_util.register_dataclass``: JAX sees it as one leaf."""

    c: float = 1.0

    @property
    def batch_shape(self):
        return jnp.shape(self.c)

    def kernel(self, spec):
        return greedy_kernel(spec)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class FixedShapeGreedy:
    """A registered policy whose ``batch_shape`` is written as ``()`` although ``c`` may be a grid."""

    c: jax.Array = 1.0

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        return greedy_kernel(spec)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class BranchingGreedy:
    """A policy whose ``act`` branches in Python on the traced round."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        greedy = greedy_kernel(spec)
        return greedy._replace(act=lambda sums, ctx: jnp.int32(0) if ctx.t <= 1 else greedy.act(sums, ctx))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class NamedGreedy:
    """A registered policy with a string field left a leaf (not static): the engine reads leaves as numbers."""

    c: jax.Array = 1.0
    label: str = "greedy"

    @property
    def batch_shape(self):
        return jnp.shape(self.c)

    def kernel(self, spec):
        return greedy_kernel(spec)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class WeightedGreedy(UnregisteredGreedy):
    """A registered policy with one weight per arm in a static field, as the guide suggests for a
    parameter with axes of its own (the kernel ignores it: only the check is under test)."""

    weights: object = dataclasses.field(default=(1.0, 1.0, 1.0), metadata=dict(static=True))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TwoParameterGreedy:
    """A registered policy whose ``batch_shape`` broadcasts its two parameters' shapes."""

    c: jax.Array = 1.0
    d: jax.Array = 1.0

    @property
    def batch_shape(self):
        return jnp.broadcast_shapes(jnp.shape(self.c), jnp.shape(self.d))

    def kernel(self, spec):
        return greedy_kernel(spec)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class MisspeltGreedy:
    """A policy whose ``act`` reads ``ctx.pull``, a misspelling of ``ctx.pulls``."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        return greedy_kernel(spec)._replace(act=lambda sums, ctx: htb.first_argmax(ctx.pull))


@dataclasses.dataclass(frozen=True)
class LabelledETC(htb.AdaRETC):
    """A subclass of a built-in policy, made a dataclass but not registered as a pytree."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class OneETC(htb.AdaRETC):
    """A registered subclass of AdaR-ETC that declares one policy (``batch_shape`` ``()``) whatever its leaves."""

    @property
    def batch_shape(self):
        return ()


# -- reward laws -----------------------------------------------------------------------------------------


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Uniform(htb.Distribution):
    """``X`` uniform on ``[loc - width / 2, loc + width / 2]``: the correct law the mistakes below start from."""

    loc: jax.Array
    width: jax.Array

    def from_bits(self, words):
        u = htb.uniform_from_bits(words[..., 0])
        return (jnp.asarray(self.loc, jnp.float32) + jnp.asarray(self.width, jnp.float32) * (u - 0.5)).astype(
            jnp.float32)

    def mean(self):
        return jnp.broadcast_to(jnp.asarray(self.loc, jnp.float64), self.batch_shape)

    def eps_sup(self):
        return jnp.full(self.batch_shape, jnp.inf)

    def abs_moment(self, eps):  # int_a^b |x|^r dx / (b - a), r = 1 + eps
        r = 1.0 + jnp.asarray(eps, jnp.float64)
        a = jnp.asarray(self.loc, jnp.float64) - 0.5 * jnp.asarray(self.width, jnp.float64)
        b = a + jnp.asarray(self.width, jnp.float64)
        return (jnp.sign(b) * jnp.abs(b) ** (r + 1) - jnp.sign(a) * jnp.abs(a) ** (r + 1)) / ((r + 1) * (b - a))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class TwoWordUniform(Uniform):
    """The mean of two uniforms, from two words, with ``num_words`` left at 1: JAX read word 0 twice."""

    def from_bits(self, words):
        u = 0.5 * (htb.uniform_from_bits(words[..., 0]) + htb.uniform_from_bits(words[..., 1]))
        return (jnp.asarray(self.loc, jnp.float32) + jnp.asarray(self.width, jnp.float32) * (u - 0.5)).astype(
            jnp.float32)


@dataclasses.dataclass(frozen=True)
class UnregisteredUniform(Uniform):
    """A subclass of a registered law, left unregistered (registration is per class)."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class UniformWithoutMoments(htb.Distribution):
    """``from_bits`` and ``mean`` only: no ``abs_moment`` for ``U_eps``, no ``eps_sup``."""

    loc: jax.Array
    width: jax.Array

    def from_bits(self, words):
        u = htb.uniform_from_bits(words[..., 0])
        return jnp.asarray(self.loc, jnp.float32) + jnp.asarray(self.width, jnp.float32) * (u - 0.5)

    def mean(self):
        return jnp.broadcast_to(jnp.asarray(self.loc, jnp.float64), self.batch_shape)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class UniformWithoutMean(htb.Distribution):
    """``from_bits`` only: no ``mean``, from which the gaps and the regret come."""

    loc: jax.Array
    width: jax.Array

    def from_bits(self, words):
        u = htb.uniform_from_bits(words[..., 0])
        return jnp.asarray(self.loc, jnp.float32) + jnp.asarray(self.width, jnp.float32) * (u - 0.5)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class UniformWithoutBits(htb.Distribution):
    """Its moments but no ``from_bits``, the transform every reward comes from."""

    loc: jax.Array
    width: jax.Array

    def mean(self):
        return jnp.broadcast_to(jnp.asarray(self.loc, jnp.float64), self.batch_shape)

    def eps_sup(self):
        return jnp.full(self.batch_shape, jnp.inf)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class UniformAboutMu(htb.Distribution):
    """Its centre named ``mu`` while ``location_fields`` keeps the default ``("loc",)``: nothing to shift."""

    mu: jax.Array
    width: jax.Array

    def from_bits(self, words):
        u = htb.uniform_from_bits(words[..., 0])
        return jnp.asarray(self.mu, jnp.float32) + jnp.asarray(self.width, jnp.float32) * (u - 0.5)

    def mean(self):
        return jnp.broadcast_to(jnp.asarray(self.mu, jnp.float64), self.batch_shape)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Float64Uniform(Uniform):
    """``from_bits`` computed in float64 from ``htb.uniform_from_bits`` (a float64) and not cast back."""

    def from_bits(self, words):
        return jnp.asarray(self.loc, jnp.float64) + jnp.asarray(self.width, jnp.float64) * (
            htb.uniform_from_bits(words[..., 0]) - 0.5)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class WordlessUniform(Uniform):
    """``from_bits`` that forgets its words."""

    def from_bits(self):
        return jnp.asarray(self.loc, jnp.float32)


# -- arguments, built once (outside the counts) -----------------------------------------------------------

KEY = jax.random.key(0)
LOCS = np.array([0.2, 0.0, 0.0])
NU = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.2)
GOOD_FAMILY = Uniform(loc=np.array([[0.2, 0.0, 0.0], [0.5, 0.0, 0.0]]), width=1.0)
GOOD_REFERENCE = Uniform(loc=LOCS, width=1.0)
REWARDS = np.zeros((3, 500), np.float32)
SPIKES = htb.frontier.SpikeFamily(num_arms=2, gap=1.0, spike_probs=(0.1, 0.5), fixed_spike=0.9)
GRID = jnp.array([1.0, 5.0])
ALPHAS = jnp.array([0.7, 0.8])
ETC_UNREGISTERED = LabelledETC(eps=1.0, alpha=0.8, q=0.0)
ETC_ONE = OneETC(eps=1.0, alpha=ALPHAS, q=0.0)


def law(cls, locs=LOCS):
    """An instance (batch (K,), or (F + 1, K) for measure's family) of ``cls``, arrays built here."""
    return cls(loc=np.asarray(locs, np.float64), width=np.float64(1.0))


MEASURE_FAMILY = np.array([[0.2, 0.0], [0.5, 0.0], [0.3, 0.0]])

UNREGISTERED = law(UnregisteredUniform)
NO_MOMENTS = law(UniformWithoutMoments)
NO_MEAN = law(UniformWithoutMean)
NO_BITS = law(UniformWithoutBits)
FLOAT64 = law(Float64Uniform)


@contextlib.contextmanager
def _compilations():
    """What JAX traces or compiles inside the block, with every in-memory cache cleared first (as
    ``tests/test_bad_input.py`` counts)."""
    events = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/backend_compile_duration")
    seen = []

    def listener(event, duration, **kwargs):
        if event in events:
            seen.append(f"{event.rsplit('/', 1)[-1]}: {kwargs.get('fun_name')}")

    jax.clear_caches()
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


# The one trace a refusal may cost: a law's from_bits evaluated abstractly (jax.eval_shape) for its dtype.
# The abstract evaluations of a law's from_bits that the checks make (traced, nothing compiled).
ABSTRACT_FROM_BITS = ("jaxpr_trace_duration: from_bits_abstractly", "jaxpr_trace_duration: from_bits_on_checked_words")


def _refused(call, pattern):
    with _compilations() as seen, pytest.raises(TypeError) as info:
        call()
    message = str(info.value)
    assert re.search(pattern, message), message
    assert [s for s in seen if s not in ABSTRACT_FROM_BITS] == [], seen
    return message


# -- the table: (entry point, mistake) -> the call and what its message must say --------------------------

UNREGISTERED_POLICY = r"takes a policy registered as a pytree for policy; got policy={}\(.* \({}\), .*@jax.tree_util.register_dataclass"
BATCH_SHAPE = (r"takes a policy whose leaves broadcast to its batch_shape .* for policy; got policy={}\(.* \({}\), "
               r"whose batch_shape is \(\) but whose leaves do not broadcast to it: {} of shape \(2,\); all its "
               r"leaves' shapes broadcast to \(2,\)")
UNREGISTERED_LAW = (r"^{} takes a reward law \(an htb.Distribution\) registered as a pytree for {}; got {}=UnregisteredUniform"
                    r"\(.* \(UnregisteredUniform\), .*decorate UnregisteredUniform with @jax.tree_util.register_dataclass")
MISSING = r"^{} needs {}\.{}; got {}={}\(.* \({}\), whose class does not define {}\.$"
FLOAT64_BITS = (r"^{} needs Float64Uniform.from_bits\(words\) to return float32 rewards of the words' leading shape: "
                r"float32\[{}\] from words uint64\[{}\] .*; got {}=Float64Uniform\(.* \(Float64Uniform\), whose "
                r"from_bits returns float64\[{}\] \(rewards are float32")


def _missing(function, cls, method, name="instance"):
    described = {
        "mean": r"mean\(\) -> float64\[\.\.\., K\], the arms' means",
        "abs_moment": r"abs_moment\(eps\) -> float64\[\.\.\., K\], the moments E\|X\|\^\(1\+eps\)",
        "from_bits": r"from_bits\(words\) -> float32 rewards of the words' leading shape",
        "eps_sup": r"eps_sup\(\) -> float64\[\.\.\., K\], the supremum",
    }[method]
    return MISSING.format(re.escape(function), cls, described, name, cls, cls, method).replace("; got", ".*; got")


def _measure(policy, family=None):
    return lambda: htb.frontier.measure(policy, 1.0, [100, 200], 2, family=family, progress=False)


CASES = {
    # a policy whose class is not registered as a pytree
    "simulate-unregistered policy": (
        lambda: htb.simulate(KEY, UnregisteredGreedy(), NU, 100, 2),
        "^simulate " + UNREGISTERED_POLICY.format("UnregisteredGreedy", "UnregisteredGreedy")),
    "measure-unregistered policy": (
        _measure(UnregisteredGreedy()), "^measure " + UNREGISTERED_POLICY.format("UnregisteredGreedy", "UnregisteredGreedy")),
    "run_family-unregistered policy": (
        lambda: htb.frontier.run_family(UnregisteredGreedy(), SPIKES, (100, 200), 2, progress=False),
        "^run_family " + UNREGISTERED_POLICY.format("UnregisteredGreedy", "UnregisteredGreedy")),
    "run_on_rewards-unregistered policy": (
        lambda: htb.run_on_rewards(ETC_UNREGISTERED, REWARDS, LOCS, 100),
        "^run_on_rewards " + UNREGISTERED_POLICY.format("LabelledETC", "LabelledETC")),
    "simulate-a string leaf": (
        lambda: htb.simulate(KEY, NamedGreedy(), NU, 100, 2),
        r"^simulate takes a policy whose pytree leaves are numbers or arrays for policy; got policy=NamedGreedy\(.* "
        r"\(NamedGreedy\), whose leaf label is 'greedy' \(str\): make label a static field of NamedGreedy"),
    "smoothed_regret-unregistered policy": (
        lambda: htb.smoothed_regret(KEY, ETC_UNREGISTERED, NU, 100, 2),
        "^smoothed_regret " + UNREGISTERED_POLICY.format("LabelledETC", "LabelledETC")),
    # an array in a static field: the first call ran, the next failed in JAX's tree comparison, naming nothing
    "simulate-an array in a static field": (
        lambda: htb.simulate(KEY, WeightedGreedy(weights=np.ones(3)), NU, 100, 2),
        r"^simulate takes a policy whose static fields are hashable Python values \(numbers, strings, tuples\) for "
        r"policy; got policy=WeightedGreedy\(c=1.0, weights=array\(\[1., 1., 1.\]\)\) \(WeightedGreedy\), where "
        r"its static field WeightedGreedy.weights is array\(\[1., 1., 1.\]\) \(ndarray\): a static field is part "
        r"of the program's key"),
    # a batch_shape property that fails on parameters that do not broadcast: JAX's message alone
    "simulate-parameters that do not broadcast": (
        lambda: htb.simulate(KEY, TwoParameterGreedy(c=np.ones(3), d=np.ones(2)), NU, 100, 2),
        r"^simulate takes a policy whose leaves broadcast together, to its batch_shape, for policy; got "
        r"policy=TwoParameterGreedy\(.*\) \(TwoParameterGreedy\), whose leaves do not \(c of shape \(3,\), d of "
        r"shape \(2,\)\): its batch_shape raised ValueError: Incompatible shapes for broadcasting"),
    # a complex parameter: float() failed inside the engine
    "simulate-a complex parameter": (
        lambda: htb.simulate(KEY, WeightedGreedy(c=1j), NU, 100, 2),
        r"^simulate takes a policy whose pytree leaves are real numbers or arrays for policy; got "
        r"policy=WeightedGreedy\(c=1j, weights=\(1.0, 1.0, 1.0\)\) \(WeightedGreedy\), whose leaf c is 1j "
        r"\(complex\)\.$"),
    # a batch_shape the policy's leaves do not broadcast to
    "simulate-batch_shape": (
        lambda: htb.simulate(KEY, FixedShapeGreedy(c=GRID), NU, 100, 2),
        "^simulate " + BATCH_SHAPE.format("FixedShapeGreedy", "FixedShapeGreedy", "c")),
    "measure-batch_shape": (
        _measure(FixedShapeGreedy(c=GRID)), "^measure " + BATCH_SHAPE.format("FixedShapeGreedy", "FixedShapeGreedy", "c")),
    "run_family-batch_shape": (
        lambda: htb.frontier.run_family(FixedShapeGreedy(c=GRID), SPIKES, (100, 200), 2, progress=False),
        "^run_family " + BATCH_SHAPE.format("FixedShapeGreedy", "FixedShapeGreedy", "c")),
    "run_on_rewards-batch_shape": (
        lambda: htb.run_on_rewards(ETC_ONE, REWARDS, LOCS, 100),
        "^run_on_rewards " + BATCH_SHAPE.format("OneETC", "OneETC", "alpha")),
    "smoothed_regret-batch_shape": (
        lambda: htb.smoothed_regret(KEY, ETC_ONE, NU, 100, 2),
        "^smoothed_regret " + BATCH_SHAPE.format("OneETC", "OneETC", "alpha")),
    # a law whose class is not registered as a pytree
    "simulate-unregistered law": (
        lambda: htb.simulate(KEY, htb.UCB1(), UNREGISTERED, 100, 2),
        UNREGISTERED_LAW.format("htb.simulate", "instance", "instance")),
    "reward_table-unregistered law": (
        lambda: htb.reward_table(KEY, UNREGISTERED, 4),
        UNREGISTERED_LAW.format("htb.reward_table", "instance", "instance")),
    "equal_gap-unregistered law": (
        lambda: htb.equal_gap(UNREGISTERED, 3, 0.2), UNREGISTERED_LAW.format("htb.equal_gap", "base", "base")),
    "intrinsic_scale-unregistered law": (
        lambda: htb.intrinsic_scale(UNREGISTERED, 0.5),
        UNREGISTERED_LAW.format("htb.intrinsic_scale", "instance", "instance")),
    "smoothed_regret-unregistered law": (
        lambda: htb.smoothed_regret(KEY, htb.AdaRETC(1.0, 0.8, 0.0), UNREGISTERED, 100, 2),
        UNREGISTERED_LAW.format("htb.smoothed_regret", "instance", "instance")),
    "tune_schedule-unregistered law": (
        lambda: htb.tune_schedule(KEY, 1.0, GOOD_FAMILY, UNREGISTERED, 100, 2),
        UNREGISTERED_LAW.format("htb.tune_schedule", "reference", "reference")),
    "measure-unregistered law": (
        _measure(htb.UCB1(), law(UnregisteredUniform, MEASURE_FAMILY)),
        UNREGISTERED_LAW.format("htb.frontier.measure", "family", "family")),
    # a law without a method the call needs
    "simulate-no mean": (
        lambda: htb.simulate(KEY, htb.UCB1(), NO_MEAN, 100, 2), _missing("htb.simulate", "UniformWithoutMean", "mean")),
    "simulate-no from_bits": (
        lambda: htb.simulate(KEY, htb.UCB1(), NO_BITS, 100, 2),
        _missing("htb.simulate", "UniformWithoutBits", "from_bits")),
    "reward_table-no from_bits": (
        lambda: htb.reward_table(KEY, NO_BITS, 4), _missing("htb.reward_table", "UniformWithoutBits", "from_bits")),
    "equal_gap-no mean": (
        lambda: htb.equal_gap(UniformWithoutMean(0.0, 1.0), 3, 0.2),
        _missing("htb.equal_gap", "UniformWithoutMean", "mean", "base")),
    "equal_gap-location_fields": (
        lambda: htb.equal_gap(UniformAboutMu(mu=0.0, width=1.0), 3, 0.2),
        r"^htb.equal_gap shifts the fields that UniformAboutMu.location_fields names .*; got base=UniformAboutMu\("
        r"mu=0.0, width=1.0\) \(UniformAboutMu\), whose location_fields \('loc',\) name loc, not among its "
        r"fields \(mu, width\)"),
    "intrinsic_scale-no abs_moment": (
        lambda: htb.intrinsic_scale(NO_MOMENTS, 0.5),
        _missing("htb.intrinsic_scale", "UniformWithoutMoments", "abs_moment")),
    "smoothed_regret-no mean": (
        lambda: htb.smoothed_regret(KEY, htb.AdaRETC(1.0, 0.8, 0.0), NO_MEAN, 100, 2),
        _missing("htb.smoothed_regret", "UniformWithoutMean", "mean")),
    "tune_schedule-no abs_moment": (
        lambda: htb.tune_schedule(KEY, 1.0, law(UniformWithoutMoments, GOOD_FAMILY.loc), GOOD_REFERENCE, 100, 2),
        _missing("htb.tune_schedule", "UniformWithoutMoments", "abs_moment", "family")),
    "measure-no abs_moment": (
        _measure(htb.UCB1(), law(UniformWithoutMoments, MEASURE_FAMILY)),
        _missing("htb.frontier.measure", "UniformWithoutMoments", "abs_moment", "family")),
    # a from_bits that returns float64
    "simulate-float64": (
        lambda: htb.simulate(KEY, htb.UCB1(), FLOAT64, 100, 2),
        FLOAT64_BITS.format("htb.simulate", "3, 2", "3, 2, 1", "instance", "3, 2")),
    "reward_table-float64": (
        lambda: htb.reward_table(KEY, FLOAT64, 4), FLOAT64_BITS.format("htb.reward_table", "3, 2", "3, 2, 1", "instance", "3, 2")),
    "smoothed_regret-float64": (
        lambda: htb.smoothed_regret(KEY, htb.AdaRETC(1.0, 0.8, 0.0), FLOAT64, 100, 2),
        FLOAT64_BITS.format("htb.smoothed_regret", "3, 2", "3, 2, 1", "instance", "3, 2")),
    "tune_schedule-float64": (
        lambda: htb.tune_schedule(KEY, 1.0, law(Float64Uniform, GOOD_FAMILY.loc), GOOD_REFERENCE, 100, 2),
        FLOAT64_BITS.format("htb.tune_schedule", "2, 3, 2", "2, 3, 2, 1", "family", "2, 3, 2")),
    "measure-float64": (
        _measure(htb.UCB1(), law(Float64Uniform, MEASURE_FAMILY)),
        FLOAT64_BITS.format("htb.frontier.measure", "3, 2, 2", "3, 2, 2, 1", "family", "3, 2, 2")),
    # a from_bits reading a word past num_words: the rewards were silently another law's
    "reward_table-a word past num_words": (
        lambda: htb.reward_table(KEY, law(TwoWordUniform), 4),
        r"^htb.reward_table needs TwoWordUniform.from_bits to read no more than the num_words = 1 word of a reward "
        r"\(words\[..., :1\]\); got instance=TwoWordUniform\(.* \(TwoWordUniform\), whose from_bits reads past it "
        r"\(index 1 is out of bounds for axis 2 with size 1\): declare num_words = ... on the class"),
    # a from_bits without words: "<lambda>() takes 1 positional argument but 2 were given" named the library's lambda
    "simulate-from_bits arity": (
        lambda: htb.simulate(KEY, htb.UCB1(), law(WordlessUniform), 100, 2),
        r"^WordlessUniform.from_bits must take \(words\), the random words of the rewards; it takes \(\)\.$"),
    # a parameter given as a list: JAX takes its entries for leaves of batch shape () each
    "simulate-a list parameter": (
        lambda: htb.simulate(KEY, htb.UCB1(), Uniform(loc=[0.2, 0.0], width=1.0), 100, 2),
        r"^htb.simulate takes a reward law whose parameters are numbers or arrays for instance; got "
        r"instance=Uniform\(loc=\[0.2, 0.0\], width=1.0\) \(Uniform\), whose loc is a list: give "
        r"jnp.asarray\(\[0.2, 0.0\]\) \(or call self.check_parameters\(\) in Uniform.__post_init__: it converts "
        r"lists, as htb_jax's laws do\)\.$"),
    # the same for a policy: it ran as a grid of two, each point seeing the whole list
    "simulate-a list parameter of a policy": (
        lambda: htb.simulate(KEY, FixedShapeGreedy(c=[1.0, 5.0]), NU, 100, 2),
        r"^simulate takes a policy whose parameters are numbers or arrays for policy; got "
        r"policy=FixedShapeGreedy\(c=\[1.0, 5.0\]\) \(FixedShapeGreedy\), whose c is a list: give "
        r"jnp.asarray\(\[1.0, 5.0\]\)\.$"),
}


@pytest.mark.parametrize("call, pattern", list(CASES.values()), ids=list(CASES))
def test_each_protocol_mistake_is_refused_by_name_before_anything_compiles(call, pattern):
    """Catches an entry point that lets the mistake through to an unnamed error inside JAX (``float()
    argument must be ... not 'UnregisteredGreedy'``, a ``RecursionError`` in ``equal_gap``, ``Cannot
    broadcast to shape with fewer dimensions``, an empty ``NotImplementedError``), one that casts a
    float64 ``from_bits`` quietly, or one that checks only after compiling (or running) its program."""
    _refused(call, pattern)


def test_only_the_methods_a_call_needs_are_asked_for():
    """Catches a check that asks every law for the whole protocol: ``reward_table`` reads rewards alone,
    so a law without moments gives its table, and ``equal_gap`` builds an instance of a law without
    ``from_bits`` (its float64 ``from_bits`` is ``simulate``'s business, not ``equal_gap``'s)."""
    table = htb.reward_table(KEY, NO_MOMENTS, 4)
    assert table.shape == (3, 4) and table.dtype == jnp.float32
    assert htb.equal_gap(UniformWithoutBits(0.0, 1.0), 3, 0.2).batch_shape == (3,)
    assert htb.equal_gap(Float64Uniform(0.0, 1.0), 3, 0.2).batch_shape == (3,)


def test_a_protocol_method_called_directly_names_itself():
    """Catches a base class whose missing methods raise an empty ``NotImplementedError``."""
    with pytest.raises(NotImplementedError, match=r"^UniformWithoutMean does not define mean\(\) -> float64"):
        NO_MEAN.mean()
    with pytest.raises(NotImplementedError, match=r"^UniformWithoutMoments does not define eps_sup\(\)"):
        NO_MOMENTS.eps_sup()
    # abs_moment named itself, not the eps_sup it reads first; cdf raised an empty NotImplementedError
    with pytest.raises(NotImplementedError, match=r"^UniformWithoutMoments does not define abs_moment\(eps\)"):
        NO_MOMENTS.abs_moment(0.5)
    with pytest.raises(NotImplementedError, match=r"^UniformWithoutMoments does not define cdf\(x\) \(simulate, "):
        NO_MOMENTS.cdf(0.5)
    # sample gave float64 draws silently, which reward_table refuses
    with pytest.raises(TypeError, match=r"^sample needs Float64Uniform.from_bits\(words\) to return float32 rewards; "
                                        r"got float64\.$"):
        FLOAT64.sample(KEY, (4,))


# -- the commands: one line on stderr, status 2, nothing written, nothing compiled --------------------------

MODULE = "protocol_mistakes"


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """This file's policies and laws, written out as a user's module in the current directory."""
    classes = (greedy_kernel, UnregisteredGreedy, FixedShapeGreedy, BranchingGreedy, MisspeltGreedy, Uniform,
               UnregisteredUniform, UniformWithoutMoments, UniformWithoutBits, Float64Uniform)
    (tmp_path / f"{MODULE}.py").write_text(
        "import dataclasses\n\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n\nimport htb_jax as htb\n\n\n"
        + "\n\n".join(inspect.getsource(c) for c in classes)
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


SWEEP = ["--arms", "3", "--gap", "0.5", "--eps", "0.5", "--alphas", "0.8", "--qs", "0", "--horizons", "1e3",
         "--seeds", "4", "--seed-chunk", "2"]

COMMANDS = {
    "sweep-unregistered law": (
        ["sweep", "--family", f"{MODULE}:UnregisteredUniform(loc=0.0, width=1.0)", *SWEEP],
        r"htb-jax sweep takes a reward law \(an htb.Distribution\) registered as a pytree for --family; got "
        r"--family=UnregisteredUniform\(loc=0.0, width=1.0\) \(UnregisteredUniform\), .*register_dataclass"),
    "sweep-no eps_sup": (
        ["sweep", "--family", f"{MODULE}:UniformWithoutMoments(loc=0.0, width=1.0)", *SWEEP],
        _missing("htb-jax sweep", "UniformWithoutMoments", "eps_sup", "--family")[1:]),
    "sweep-no from_bits": (
        ["sweep", "--family", f"{MODULE}:UniformWithoutBits(loc=0.0, width=1.0)", *SWEEP],
        _missing("htb-jax sweep", "UniformWithoutBits", "from_bits", "--family")[1:]),
    "sweep-float64": (
        ["sweep", "--family", f"{MODULE}:Float64Uniform(loc=0.0, width=1.0)", *SWEEP],
        FLOAT64_BITS.format("htb-jax sweep", "2", "2, 1", "--family", "2")[1:]),
    "frontier-unregistered policy": (
        ["frontier", "--policy", f"{MODULE}:UnregisteredGreedy()"],
        "htb-jax frontier " + UNREGISTERED_POLICY.format("UnregisteredGreedy", "UnregisteredGreedy").replace(
            "for policy; got policy=", "for --policy; got --policy=")),
    "frontier-batch_shape": (
        ["frontier", "--policy", f"{MODULE}:FixedShapeGreedy(c=np.array([1.0, 5.0]))"],
        "htb-jax frontier " + BATCH_SHAPE.format("FixedShapeGreedy", "FixedShapeGreedy", "c").replace(
            "for policy; got policy=", "for --policy; got --policy=")),
}


@pytest.mark.parametrize("argv, pattern", list(COMMANDS.values()), ids=list(COMMANDS))
def test_the_commands_refuse_a_protocol_mistake_in_one_line(user_module, capsys, argv, pattern):
    """Catches a command that imports the user's object and passes it on unchecked, so that the
    mistake surfaces as a traceback (or a quietly cast sweep) after the banner and the output directory."""
    out = user_module / "out"
    with _compilations() as seen:
        status = CLI.load()([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("htb-jax: error: "), err
    assert re.search(pattern, err), err
    assert [s for s in seen if s not in ABSTRACT_FROM_BITS] == [], seen
    assert not out.exists()


def test_another_error_of_the_users_code_is_one_line_in_the_command(user_module, capsys):
    # An error of another class than TypeError or ValueError, raised by the user's code, printed a traceback
    # through JAX's internals and ended with status 1 (the Python API raises it with its note).
    out = user_module / "out"
    assert CLI.load()(["frontier", "--policy", f"{MODULE}:MisspeltGreedy()", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        "htb-jax: error: AttributeError: 'RoundContext' object has no attribute 'pull'. Did you mean: 'pulls'? "
        "(raised by MisspeltGreedy's kernel.act, evaluated abstractly before the simulation)\n")
    assert not out.exists()


def test_a_python_branch_is_explained_in_one_line_by_the_command(user_module, capsys):
    # JAX's message spans lines (a blank line, its filtered traceback's note): its first line, then
    # the notes naming the function and the remedy (the command printed JAX's lines alone).
    out = user_module / "out"
    assert CLI.load()(["frontier", "--policy", f"{MODULE}:BranchingGreedy()", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not out.exists(), err
    assert re.fullmatch(
        r"htb-jax: error: Attempted boolean conversion of traced array with shape bool\[\]\. \(raised by "
        r"BranchingGreedy's kernel.act, evaluated abstractly before the simulation\) BranchingGreedy's kernel "
        r"functions are traced once, .* use jnp.where or jax.lax.cond, or make the parameter a static field "
        r"\(docs/guides/own-code.md\)\.\n", err), err


def test_htb_jaxs_laws_take_lists_as_arrays():
    # The check that refuses a user's law with a list parameter must not refuse htb_jax's own: their
    # check_parameters converts lists and tuples (a user's law that calls it gets the same).
    given = htb.Pareto(loc=[0.2, 0.0], shape=(1.8, 2.0))
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in (given.loc, given.shape))
    arrays = htb.Pareto(loc=np.array([0.2, 0.0]), shape=np.array([1.8, 2.0]))
    np.testing.assert_array_equal(htb.reward_table(KEY, given, 4), htb.reward_table(KEY, arrays, 4))
