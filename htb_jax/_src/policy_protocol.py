"""The policy protocol, checked: what the engine needs from any policy, built-in or a user's.

A policy is a pytree (a frozen dataclass registered with
``jax.tree_util.register_dataclass`` or ``htb_jax._src.pytree.dataclass``)
with a ``batch_shape`` property (``()`` for one policy, ``G`` for a grid of
them along its leaves' leading axes) and a method ``kernel(spec)`` that
returns a :class:`PolicyKernel` of four pure functions:

* ``init(ctx) -> state``: any pytree of arrays;
* ``act(state, ctx) -> arm``: an integer scalar in ``[0, K)``;
* ``update(state, ctx, arm, reward) -> state``: the same structure, shapes
  and dtypes as ``init``'s (``reward`` is f32[]);
* ``summary(state, ctx) -> PolicySummary(committed i32[], exploration i64[],
  estimates f32[K])``.

``ctx`` is a :class:`RoundContext`: the round ``t`` (from 1), the pulls of each
arm before this round (in ``update``, the counts before this pull; in
``summary``, ``t = T + 1`` and the final counts) and the horizon ``T``.  A
policy that never reads ``T`` (``ctx.horizon``, or ``spec.max_pulls`` as a
horizon) declares it in its class, ``anytime = True``; one that declares
nothing is taken to read it.  ``htb.frontier.measure`` reads one run of an
anytime policy at checkpoints, and :func:`reads_horizon` checks the
declaration by tracing.

:func:`check_kernel` evaluates the four functions abstractly
(``jax.eval_shape``: nothing is compiled or run) before the engine's program is
built, so a malformed policy gets a message that names the function and what
it returned instead of an error from inside ``fori_loop``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Var

from htb_jax._src import round_stream
from htb_jax._src.distributions import Distribution
from htb_jax._src.outcome import Summary as OutcomeSummary
from htb_jax._src.protocol_checks import USER_CODE_NOTE, note_none_parameters, refusing_signature
from htb_jax._src.pytree import abstract_signature
from htb_jax._src.reward_table import TableReader
from htb_jax._src.validation import given, real_array

_FUNCTIONS = ("init", "act", "update", "summary")


@dataclasses.dataclass(frozen=True)
class EngineSpec:
    """Static sizes a kernel may shape its state with.

    Attributes:
      num_arms: ``K``.
      max_pulls: the largest horizon: no arm is pulled more often.
      pull_chunk: streaming step for estimates computed from the reward table.
      max_blocks: static bound on Median-of-Means block counts from ``B_T``.
      max_block_size: static bound on the block sizes of an ETC commit's
        Median-of-Means (the largest it will see rounded up to 4, 8, 16 or 32), so that
        the commit compiles only the block-sum routes it can take; ``None``:
        any size (beyond 32).
      min_block_size: static lower bound on the nonzero block sizes of such a
        commit: 1, or 33 where every nonzero block is longer than 32 (above the
        static routes' sizes, where none of them is compiled).
    """

    num_arms: int
    max_pulls: int
    pull_chunk: int
    max_blocks: int
    max_block_size: int | None = None
    min_block_size: int = 1


class RoundContext(NamedTuple):
    """What a policy may look at in round ``t``.

    Attributes:
      t: i64[] the round, 1-based.
      pulls: i64[K] pulls of each arm before this round.
      horizon: i64[] ``T`` (policies that are anytime ignore it).
      table: the seed's :class:`TableReader`; ETC policies recompute their
        estimates from it (the same numbers they observed).
    """

    t: jax.Array
    pulls: jax.Array
    horizon: jax.Array
    table: TableReader

    def uniforms(self, num: int) -> tuple[jax.Array, jax.Array]:
        """Round ``t``'s own uniforms ``(U, 1 - U)``, f64[num] each (as :func:`round_uniforms` gives them).

        A function of the seed's key and ``t`` alone: independent of the
        reward table and of the arms played, the same for every policy.
        ``num``: a positive Python int (the arrays' static size).
        """
        if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 1:
            raise TypeError(f"ctx.uniforms takes num, the count of uniforms, as a positive Python int; got "
                            f"{given('num', num)}.")
        return round_stream.uniforms(self.table.keys[0], self.t, num)


class PolicySummary(NamedTuple):
    """What a kernel reports after the last round.

    Attributes:
      committed: i32[] committed arm (ETC-type policies), else -1.
      exploration: i64[] exploration rounds in ``[0, T]`` (the engine refuses others; ETC:
        ``L_T``; ForceMoM: forced pulls; AdaR-UCB: its ``+inf``-index rounds), else 0.
      estimates: f32[K] the policy's final mean estimates (NaN where none).
    """

    committed: jax.Array
    exploration: jax.Array
    estimates: jax.Array


class PolicyKernel(NamedTuple):
    """A policy for the engine: pure functions of an explicit state.

    ``scratch_bytes`` is the transient memory per seed beyond the state (for
    example an ETC commit's block sums); the engine sizes its seed chunks with
    it and the state's own size.

    **Randomness.**  Rewards come only from ``ctx.table`` (the reward table,
    common to every policy).  A randomised policy draws its own numbers in
    ``act`` from ``ctx.uniforms(num)``: a counter-based stream indexed by the
    seed and the round ``t`` alone (:func:`round_uniforms` gives it for a reference loop), so it
    never shifts the reward table and a plain-Python loop can reproduce the
    draws by evaluating the same stream.  Within a round, use word ``j`` for
    one purpose only (e.g. ``j = arm``).

    Attributes:
      init: ``init(ctx) -> state``, the state before round 0 (any pytree of arrays).
      act: ``act(state, ctx) -> arm``, i32[] the arm to pull in round ``ctx.t``.
      update: ``update(state, ctx, arm, reward) -> state``, after the pull of ``arm`` (i32[]) gave
        ``reward`` (f32[]).
      summary: ``summary(state, ctx) -> PolicySummary``, after the last round.
      scratch_bytes: transient bytes per seed beyond the state (see above), a Python int.
    """

    init: Callable[[RoundContext], Any]
    act: Callable[[Any, RoundContext], jax.Array]
    update: Callable[[Any, RoundContext, jax.Array, jax.Array], Any]
    summary: Callable[[Any, RoundContext], PolicySummary]
    scratch_bytes: int = 0


def no_summary(num_arms: int) -> Callable[[Any, RoundContext], PolicySummary]:
    """The summary of a policy without a commit, exploration count or estimates."""

    def summary(state, ctx):
        del state, ctx
        return PolicySummary(
            jnp.int32(-1), jnp.int64(0), jnp.full(num_arms, jnp.nan, jnp.float32)
        )

    return summary


def first_argmax(values: jax.Array) -> jax.Array:
    """Index of the first maximum of an index vector, the arm an index policy's ``act`` returns.

    Ties go to the lowest index and ``+inf`` counts as a maximum (an unpulled
    arm's index), so a reference loop's ``np.argmax`` picks the same arm.

    Args:
      values: f[K] (or any shape: the index into the flattened array).

    Returns:
      i32[].

    Examples:
      >>> import jax.numpy as jnp, htb_jax as htb
      >>> int(htb.first_argmax(jnp.array([0.5, jnp.inf, 0.2, jnp.inf])))
      1
    """
    real_array("values", values)
    if np.size(values) == 0:
        raise ValueError(
            f"values must hold at least one index to take the first maximum of; got shape {np.shape(values)}."
        )
    return jnp.argmax(jnp.asarray(values)).astype(jnp.int32)  # a list too, as NumPy's argmax takes it


def _abstract(tree: Any) -> str:
    """``f32[3]``-style description of a pytree of shape-dtype structures."""
    def one(leaf):
        if not hasattr(leaf, "shape"):
            return type(leaf).__name__
        return f"{np.dtype(leaf.dtype).name}{list(leaf.shape)}"

    leaves, treedef = jax.tree_util.tree_flatten(tree)
    if treedef.num_nodes == 1 and len(leaves) == 1:
        return one(leaves[0])
    return f"{type(tree).__name__} of ({', '.join(one(leaf) for leaf in leaves)})"


# The arguments each kernel function is called with, as the messages name them.
_ARGUMENTS = {"init": "ctx", "act": "state, ctx", "update": "state, ctx, arm, reward", "summary": "state, ctx"}


def _check_arity(name: str, function: str, value: Callable) -> None:
    """``TypeError`` unless the kernel function ``value`` accepts its arguments, positionally."""
    signature = refusing_signature(value, _ARGUMENTS[function])
    if signature is not None:
        raise TypeError(f"{name}'s kernel.{function} must take ({_ARGUMENTS[function]}); it takes {signature}.")


def _evaluated(name: str, function: str, call) -> Any:
    """``jax.eval_shape(call)``, an error raised inside it noted with the function's name."""
    try:
        return jax.eval_shape(call)
    except Exception as error:
        error.add_note(f"{USER_CODE_NOTE}{name}'s kernel.{function}, evaluated abstractly before the simulation)")
        if isinstance(error, _TRACER_ERRORS):
            error.add_note(
                f"{name}'s kernel functions are traced once, with abstract values for every round and parameter: "
                f"a Python if, while, bool() or int() on ctx, the state or a parameter cannot decide; use "
                f"jnp.where or jax.lax.cond, or make the parameter a static field (docs/guides/own-code.md)."
            )
        raise


# A Python value asked of a traced one: a decision, an int() or float(), a NumPy conversion
_TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                  jax.errors.TracerIntegerConversionError)
# What a Python decision on a policy's parameter meets: they are traced (a grid of them is one program)
_TRACED_PARAMETERS = (
    "{name}'s parameters (its fields that are leaves) are traced too: one that sets a size or a Python branch "
    "(an int() of it, an if on it) must be a static field, dataclasses.field(metadata=dict(static=True)), part "
    "of the class's structure (docs/guides/own-code.md)."
)


# Checked kernels by abstract signature: simulate calls the engine once per chunk of seeds (measure,
# resumable runs), and the abstract evaluation costs 0.03 s (UCB1) to 0.3 s (AdaR-ETC's commit) a call.
_CHECKED: dict = {}
_MAX_CHECKED = 1024


def check_kernel(policy: Any, arms: Distribution, spec: EngineSpec) -> tuple[Any, int]:
    """Checks one policy's kernel against the protocol, abstractly (once per abstract signature).

    Args:
      policy: one member of the policy grid (batch shape ``()``).
      arms: one instance, parameters [K].
      spec: the engine's static sizes.

    Returns:
      ``(state, scratch_bytes)``: the state's shape-dtype structures (as
      ``init`` returns them) and the kernel's ``scratch_bytes``.

    Raises:
      TypeError: ``kernel(spec)`` is not a :class:`PolicyKernel` of callables
        with a non-negative integer ``scratch_bytes``, a function does not take
        its arguments (``init(ctx)``, ``act(state, ctx)``, ``update(state,
        ctx, arm, reward)``, ``summary(state, ctx)``), ``act`` does not return
        an integer scalar, ``update`` changes the state's structure, shapes or
        dtypes, or ``summary`` does not return a :class:`PolicySummary` of
        i32[], i64[] and f32[K].
      jax.errors.ConcretizationTypeError: and the other errors of a Python value
        asked of a traced one, raised by ``kernel`` or its functions (the policy's
        parameters are traced, as in the program), with a note saying what to do.
    """
    key = (abstract_signature(policy), abstract_signature(arms), spec)
    if key not in _CHECKED:
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED[key] = _check_traced(policy, arms, spec)
    return _CHECKED[key]


def _check_traced(policy: Any, arms: Distribution, spec: EngineSpec) -> tuple[Any, int]:
    """:func:`_check_kernel` with the policy's parameters traced, as the engine's program has them: a Python
    decision on one in ``kernel`` (``int(self.window)``, ``if self.c > 1``) fails here, named, not inside the
    program's trace.  A refusal is raised outside the trace, without JAX's note on its filtered frames."""
    outcome = []

    def check(traced):
        try:
            outcome.append(_check_kernel(traced, arms, spec))
        except Exception as error:  # re-raised below, outside the trace
            outcome.append(error)

    jax.eval_shape(check, policy)
    if isinstance(outcome[0], Exception):
        note_none_parameters(outcome[0], policy)
        raise outcome[0]
    return outcome[0]


def _check_kernel(policy: Any, arms: Distribution, spec: EngineSpec) -> tuple[Any, int]:
    """:func:`check_kernel`, evaluated."""
    name = type(policy).__name__
    signature = refusing_signature(policy.kernel, "spec")
    if signature is not None:  # the call's own TypeError would name a function, not the protocol
        raise TypeError(f"{name}.kernel must take (spec), the engine's sizes; it takes {signature}.")
    try:
        kernel = policy.kernel(spec)
    except Exception as error:
        error.add_note(f"{USER_CODE_NOTE}{name}.kernel(spec), called before the simulation)")
        if isinstance(error, _TRACER_ERRORS):
            error.add_note(_TRACED_PARAMETERS.format(name=name))
        raise
    if not isinstance(kernel, PolicyKernel):
        raise TypeError(
            f"{name}.kernel(spec) must return an htb.PolicyKernel(init, act, update, summary); "
            f"got {type(kernel).__name__}."
        )
    for function in _FUNCTIONS:
        value = getattr(kernel, function)
        if not callable(value):
            raise TypeError(
                f"{name}.kernel(spec).{function} must be a function; got {type(value).__name__}."
            )
        _check_arity(name, function, value)
    scratch = kernel.scratch_bytes
    if isinstance(scratch, bool) or not isinstance(scratch, (int, np.integer)) or scratch < 0:
        raise TypeError(
            f"{name}.kernel(spec).scratch_bytes must be a non-negative int; got {scratch!r}."
        )
    k = spec.num_arms

    def context(t):
        return _context(arms, spec, t, jnp.int64(spec.max_pulls))

    state = _evaluated(name, "init", lambda: kernel.init(context(1)))
    arm = _evaluated(name, "act", lambda: kernel.act(_zeros(state), context(1)))
    if not (hasattr(arm, "dtype") and arm.shape == () and jnp.issubdtype(arm.dtype, jnp.integer)):
        raise TypeError(
            f"{name}'s kernel.act must return the arm to pull as an integer scalar (shape (), any integer dtype: "
            f"i32[], i64[], ...); "
            f"got {_abstract(arm)}."
        )
    updated = _evaluated(
        name, "update",
        lambda: kernel.update(_zeros(state), context(1), jnp.zeros((), arm.dtype), jnp.zeros((), jnp.float32)),
    )
    if jax.tree_util.tree_structure(updated) != jax.tree_util.tree_structure(state) or any(
        (a.shape, a.dtype) != (b.shape, b.dtype)
        for a, b in zip(jax.tree.leaves(updated), jax.tree.leaves(state), strict=True)
    ):
        raise TypeError(
            f"{name}'s kernel.update must return a state of the structure, shapes and dtypes init gives, "
            f"{_abstract(state)}; got {_abstract(updated)}."
        )
    summary = _evaluated(name, "summary", lambda: kernel.summary(_zeros(state), context(spec.max_pulls + 1)))
    expected = (((), jnp.int32), ((), jnp.int64), ((k,), jnp.float32))
    if not isinstance(summary, PolicySummary) or any(
        not hasattr(leaf, "shape") or (leaf.shape, leaf.dtype) != (shape, dtype)
        for leaf, (shape, dtype) in zip(summary, expected, strict=True)
    ):
        hint = (
            " (htb.Summary is the outcome summary of htb.summarize; a kernel returns htb.PolicySummary)"
            if isinstance(summary, OutcomeSummary) else ""
        )
        if isinstance(summary, PolicySummary) and getattr(summary.committed, "dtype", None) == jnp.int64:
            hint = " (a Python int such as -1 is int64 under htb_jax's 64-bit mode: write jnp.int32(-1))"
        raise TypeError(
            f"{name}'s kernel.summary must return htb.PolicySummary(committed=int32[], exploration=int64[], "
            f"estimates=float32[{k}]); got {_abstract(summary)}{hint}."
        )
    return state, int(scratch)


def reads_horizon(policy: Any, arms: Distribution, spec: EngineSpec) -> bool:
    """Whether a policy's play reads ``ctx.horizon``: ``T``, which an anytime policy never reads.

    The arms played come from ``init``, ``act`` and ``update`` (``summary``
    reports after the last round, where ``ctx.t`` is ``T + 1`` anyway, and
    may read ``T``).  Each is traced with the horizon as its one input
    (``jax.make_jaxpr``: nothing is compiled), and the horizon is followed
    through the equations: a function reads it if one of its outputs is
    computed from it (an equation holding a nested program, a loop or a
    branch, counts each of its outputs as computed from each of its inputs).
    A kernel could still read ``T`` in Python as ``spec.max_pulls`` (the
    largest horizon of the run, the size of its buffers), which no trace
    shows: the protocol asks that an anytime policy does not.

    Args:
      policy: one policy (batch shape ``()``) whose kernel :func:`check_kernel` accepts.
      arms: one instance, parameters [K].
      spec: the engine's static sizes.

    Returns:
      ``True`` if any of ``init``, ``act``, ``update`` depends on ``ctx.horizon``.
    """
    state, _ = check_kernel(policy, arms, spec)
    kernel = policy.kernel(spec)

    def context(horizon):
        return _context(arms, spec, 1, horizon)

    arm = jax.eval_shape(lambda: kernel.act(_zeros(state), context(jnp.int64(spec.max_pulls))))
    functions = (
        lambda h: kernel.init(context(h)),
        lambda h: kernel.act(_zeros(state), context(h)),
        lambda h: kernel.update(_zeros(state), context(h), jnp.zeros((), arm.dtype), jnp.zeros((), jnp.float32)),
    )
    return any(_output_depends_on_input(jax.make_jaxpr(f)(jnp.int64(spec.max_pulls)).jaxpr) for f in functions)


def _output_depends_on_input(jaxpr) -> bool:
    """Whether an output of ``jaxpr`` is computed from one of its inputs (followed equation by equation)."""
    return any(_reached(jaxpr, [True] * len(jaxpr.invars)))


def _reached(jaxpr, inputs: list[bool]) -> list[bool]:
    """Which outputs of ``jaxpr`` are computed from the inputs flagged in ``inputs``.  A call of a
    nested jaxpr with the equation's own inputs (``jit``, custom derivatives) is followed inside;
    any other nested program (a loop, a branch) counts each output as computed from each input."""
    reached = {v for v, flag in zip(jaxpr.invars, inputs, strict=True) if flag}
    for eqn in jaxpr.eqns:
        flags = [isinstance(v, Var) and v in reached for v in eqn.invars]
        if not any(flags):
            continue
        inner = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
        inner = getattr(inner, "jaxpr", inner)
        if eqn.primitive.name in _CALLS and inner is not None and len(inner.invars) == len(flags):
            outputs = _reached(inner, flags)
            reached.update(v for v, flag in zip(eqn.outvars, outputs, strict=True) if flag)
        else:
            reached.update(eqn.outvars)
    return [isinstance(v, Var) and v in reached for v in jaxpr.outvars]


# Primitives that call a nested jaxpr on their own inputs, in order.
_CALLS = ("pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr")


def _context(arms: Distribution, spec: EngineSpec, t, horizon) -> RoundContext:
    """The round context of round ``t`` with no pull yet, as the abstract evaluations see it."""
    table = TableReader.create(jax.random.key(0), arms)
    return RoundContext(jnp.int64(t), jnp.zeros(spec.num_arms, jnp.int64), horizon, table)


def _zeros(shapes: Any) -> Any:
    """Zeros of the given shape-dtype structures (inside an abstract evaluation)."""
    return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
