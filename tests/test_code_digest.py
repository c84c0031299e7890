"""A user's class is keyed by the code it runs now: an edited helper or global value is a new program.

``jax.jit`` reads a helper function or a global value when it traces, and reuses the program after:
in a notebook whose cell redefines a helper the policy calls, ``simulate`` returned the old regrets
and a store resumed with them.  :func:`~htb_jax._src.code_digest.class_digest` is part of every
compiled program's key and every protocol check's key; these tests edit the code a class reaches
each way it can (helper, global value, closure, class constant, inherited method) and check the
digest moves, and that an edit of layout or comments leaves it.
"""

import dataclasses
import fractions
import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src.code_digest import class_digest, is_users, value_digest
from htb_jax._src.pytree import code_keyed_classes

SOURCE = '''
import dataclasses
import fractions
import jax
import jax.numpy as jnp
import numpy as np

WIDTH = {"c": 1.0}
TABLE = np.arange(3.0)
RATIO = fractions.Fraction(1, 2)


@dataclasses.dataclass(frozen=True, slots=True)
class Config:
    scale: float


CONFIG = Config(1.0)


def bonus(n, t):
    return jnp.sqrt(2.0 * jnp.log(t) / n)


def scaled(n, t):
    return WIDTH["c"] * bonus(n, t)  # a helper of a helper


def make_shift(shift):
    def shifted(x):
        return x + shift
    return shifted


SHIFT = make_shift(0.5)


class Base:
    def offset(self):
        return TABLE[1]


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Policy(Base):
    c: jax.Array = 1.0
    LIMIT = 3
    WEIGHTS = (1.0, 1.0)

    def index(self, means, n, t):
        shift = self.offset() * self.LIMIT * self.WEIGHTS[0] * CONFIG.scale * float(RATIO)
        return SHIFT(means + self.c * scaled(n, t)) + shift
'''


def _module(source=SOURCE):
    module = types.ModuleType("users_module")
    exec(compile(source, "users_module.py", "exec"), module.__dict__)
    for value in vars(module).values():
        if isinstance(value, type) or isinstance(value, types.FunctionType):
            value.__module__ = "users_module"
    return module


def test_each_edit_of_the_code_a_class_reaches_changes_its_digest():
    module = _module()
    first = class_digest(module.Policy)
    assert class_digest(module.Policy) == first  # the same code, the same digest
    edits = {
        "a helper of a helper redefined": lambda m: setattr(m, "bonus", lambda n, t: 0.0 * n),
        "a global dict's value": lambda m: m.WIDTH.__setitem__("c", 2.0),
        "a global array's entry": lambda m: m.TABLE.__setitem__(1, 7.0),
        "a closure's value": lambda m: setattr(m, "SHIFT", m.make_shift(0.25)),
        "a class constant": lambda m: setattr(m.Policy, "LIMIT", 4),
        # a tuple class attribute, a global object of a class with __slots__ and a global Fraction were
        # keyed by their type alone: simulate reused the program traced with the old values
        "a class attribute's tuple": lambda m: setattr(m.Policy, "WEIGHTS", (4.0, 1.0)),
        "a slots object's attribute": lambda m: setattr(m, "CONFIG", m.Config(2.0)),
        "a global Fraction": lambda m: setattr(m, "RATIO", fractions.Fraction(1, 3)),
        "an inherited method": lambda m: setattr(m.Base, "offset", lambda self: 0.0),
    }
    for name, edit in edits.items():
        module = _module()
        edit(module)
        assert class_digest(module.Policy) != first, name


def test_a_global_named_as_an_attribute_leaves_the_digest():
    # A notebook's loop variable c (or t, horizon, num_arms) shares a name with self.c (ctx.t, ...): the
    # attribute reads no global, so the digest stays and the program is not compiled again each iteration.
    module = _module()
    first = class_digest(module.Policy)
    for c in (0.5, 2.0):
        module.c = c
        module.n = c
        assert class_digest(module.Policy) == first


def test_a_helper_read_as_an_attribute_of_a_users_module_is_followed():
    # policy code calling helpers.bonus(...), helpers a module of the user's: an edit of bonus followed by
    # importlib.reload(helpers) resumed a store with the old regrets, in the same process.
    helpers = types.ModuleType("users_helpers")
    exec(compile("FACTOR = 2.0\n\ndef bonus(n):\n    return FACTOR * n\n", "users_helpers.py", "exec"), helpers.__dict__)
    helpers.bonus.__module__ = "users_helpers"
    module = _module(SOURCE.replace("return WIDTH[\"c\"] * bonus(n, t)", "return helpers.bonus(n) * jnp.sqrt(t)"))
    module.helpers = helpers
    first = class_digest(module.Policy)
    helpers.FACTOR = 3.0  # a global of the helper
    assert class_digest(module.Policy) != first
    helpers.FACTOR = 2.0
    assert class_digest(module.Policy) == first
    exec(compile("def bonus(n):\n    return FACTOR * n + 1.0\n", "users_helpers.py", "exec"), helpers.__dict__)
    helpers.bonus.__module__ = "users_helpers"  # the function redefined, as a reload does
    assert class_digest(module.Policy) != first
    assert is_users(helpers) and not is_users(jnp) and not is_users(np)


def test_objects_and_bound_methods_of_a_users_class_are_followed():
    # A callable object as a callback (CALLBACK = Picker()), a bound method (Picker().pick) and a helper
    # object held in a global (HELP.bonus(...)) were keyed by their type alone: a store resumed with the
    # regrets of the edited method (argmax made argmin), and simulate reused its program.
    source = SOURCE.replace("WIDTH = {\"c\": 1.0}", "WIDTH = {\"c\": 1.0}\n\n\nclass Helper:\n    def __init__(self):\n"
                                                   "        self.scale = 1.0\n\n    def bonus(self, n, t):\n"
                                                   "        return self.scale * jnp.sqrt(t / n)\n\n\nHELP = Helper()")
    source = source.replace("return WIDTH[\"c\"] * bonus(n, t)", "return WIDTH[\"c\"] * HELP.bonus(n, t)")
    module = _module(source)
    first = class_digest(module.Policy)
    module.Helper.bonus = lambda self, n, t: 0.0 * n  # the method redefined
    assert class_digest(module.Policy) != first
    module = _module(source)
    module.HELP.scale = 2.0  # an attribute of the object
    assert class_digest(module.Policy) != first
    # Callbacks as the fingerprint follows them: a callable object whose method is edited, and a bound
    # method whose object's attribute is (its function is the one it was bound with).
    obj, bound = module.HELP, module.HELP.bonus
    before = value_digest(obj), value_digest(bound)
    module.HELP.scale = 3.0
    assert value_digest(bound) != before[1]
    module.Helper.bonus = lambda self, n, t: 1.0 * n
    assert value_digest(obj) not in before
    cycle = _module(source).HELP
    cycle.me = cycle  # an object that holds itself is followed once
    assert value_digest(cycle) == value_digest(cycle)


def test_partials_decorated_helpers_and_large_arrays():
    source = SOURCE.replace("WIDTH = {\"c\": 1.0}", "import functools\nWIDTH = {\"c\": 1.0}\nBIG = np.zeros(2**18)")
    source = source.replace("return WIDTH[\"c\"] * bonus(n, t)", "return WIDTH[\"c\"] * PARTIAL(n, t) + BIG[0]")
    source = source.replace("def make_shift(", "PARTIAL = functools.partial(lambda a, n, t: a * bonus(n, t), 1.0)\n\n\n"
                                                "def make_shift(")
    module = _module(source)
    first = class_digest(module.Policy)
    module.PARTIAL = functools.partial(module.PARTIAL.func, 2.0)  # a partial's argument
    assert class_digest(module.Policy) != first
    module = _module(source)
    first = class_digest(module.Policy)
    module.BIG[0] = 1.0  # above 1 MiB: keyed by identity, not copied on every call (said in the docstring)
    assert class_digest(module.Policy) == first
    module.BIG = np.ones(2**18)
    assert class_digest(module.Policy) != first


def test_a_function_in_a_static_field_is_followed():
    # Policy(fn=helper) with fn a static field: the tree structure compares the function by identity, and
    # an edit of a global the helper reads reused the program traced before it.
    module = _module(SOURCE + "\n\nFACTOR = 1.0\n\n\ndef helper(x):\n    return FACTOR * x\n"
                              "\n\n@jax.tree_util.register_dataclass\n@dataclasses.dataclass(frozen=True)\n"
                              "class WithHelper:\n    fn: object = dataclasses.field(metadata=dict(static=True))\n")
    first = code_keyed_classes(module.WithHelper(module.helper))
    module.FACTOR = 2.0
    assert code_keyed_classes(module.WithHelper(module.helper)) != first


def test_layout_and_comments_leave_the_digest_and_library_classes_have_none():
    # Line numbers are not part of the digest: a comment above a method moves no program.
    commented = SOURCE.replace("    def index(", "    # a comment, and a blank line\n\n    def index(")
    assert class_digest(_module(commented).Policy) == class_digest(_module().Policy)
    assert not is_users(htb.UCB1) and not is_users(tuple) and not is_users(jnp.ndarray)
    keys = code_keyed_classes((htb.UCB1(), _module().Policy()))
    assert keys[1] is htb.UCB1 and keys[2][0].__name__ == "Policy" and len(keys[2][1]) == 64


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _HelperGreedy:
    """Greedy on the running means plus ``_width() sqrt(2 log t / n)``, with ``_width`` a module helper."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros(k)

        def act(sums, ctx):
            n = jnp.maximum(ctx.pulls, 1)
            index = sums / n + _width() * jnp.sqrt(2.0 * jnp.log(ctx.t) / n)
            return htb.first_argmax(jnp.where(ctx.pulls > 0, index, jnp.inf))

        def update(sums, ctx, arm, reward):
            return sums.at[arm].add(reward.astype(jnp.float64))

        def summary(sums, ctx):
            return htb.PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.full(k, jnp.nan, jnp.float32))

        return htb.PolicyKernel(init, act, update, summary)


_WIDTHS = np.ones(2**18)  # 2 MiB: keyed by its identity, so an entry edited in place leaves the digest


def _width():
    return _WIDTHS[0]


def test_simulate_and_a_store_see_an_edited_helper_in_the_same_process(tmp_path, monkeypatch):
    """The helper redefined, the class not (a notebook's cell run again): simulate runs the new code and the
    store made with the old one is refused. Catches jax.jit's trace reused for the class (regrets unchanged,
    the store resumed, and a new store's fingerprint the old program's)."""
    store = tmp_path / "store"
    (before,) = htb.frontier.measure(_HelperGreedy(), 1.0, [100, 200], 4, seed_chunk=4, store=str(store))
    monkeypatch.setitem(globals(), "_width", lambda: 0.0)  # pure greedy now
    with pytest.raises(htb.StaleStoreError):
        htb.frontier.measure(_HelperGreedy(), 1.0, [100, 200], 4, seed_chunk=4, store=str(store))
    (after,) = htb.frontier.measure(_HelperGreedy(), 1.0, [100, 200], 4, seed_chunk=4)
    assert not np.array_equal(after.regret, before.regret)


def test_a_stores_chunks_are_computed_by_the_code_its_fingerprint_traced(tmp_path, monkeypatch):
    """An edit the digest does not see (an entry of an array beyond 1 MiB, in place): the program compiled
    before it computed a new store's chunks, stored under the fingerprint of the edited code, which a new
    process then resumed. The store's chunks are the edited code's now."""
    args = (_HelperGreedy(), 1.0, [100, 200], 4)
    (before,) = htb.frontier.measure(*args, seed_chunk=4)
    widths = _WIDTHS
    try:
        widths[0] = 0.0  # pure greedy now, unseen by the digest
        (stored,) = htb.frontier.measure(*args, seed_chunk=4, store=str(tmp_path / "store"))
        monkeypatch.setitem(globals(), "_WIDTHS", widths.copy())  # a new array: the digest sees it, a new trace
        (edited,) = htb.frontier.measure(*args, seed_chunk=4)
    finally:
        widths[0] = 1.0
    assert not np.array_equal(edited.regret, before.regret)
    np.testing.assert_array_equal(stored.regret, edited.regret)


def test_registries_memos_and_long_containers_leave_the_digest_and_private_slots_are_followed():
    # A class's list of its instances or a memo dict changed the digest at every new instance (a program
    # compiled again each call); a class attribute of 10^6 floats took 0.9 s a digest; a private slot
    # (__scale, stored as _Config__scale) was read under its unmangled name, None whatever its value.
    source = SOURCE + (
        "\n\nclass Registered(Policy):\n    INSTANCES = []\n    MEMO = {}\n    TABLE = tuple(range(2**17))\n\n"
        "    def note(self):\n        Registered.INSTANCES.append(self)\n        Registered.MEMO[len(self.MEMO)] = 1\n"
        "\n\nclass Private:\n    __slots__ = ('__scale',)\n\n    def __init__(self, scale):\n"
        "        self.__scale = scale\n\n\nPRIVATE = Private(1.0)\n\n\nclass ReadsPrivate(Policy):\n"
        "    def index(self, means, n, t):\n        return PRIVATE\n")
    module = _module(source)
    first = class_digest(module.Registered)
    module.Registered().note()
    assert class_digest(module.Registered) == first
    digest = class_digest(module.ReadsPrivate)
    module.PRIVATE = module.Private(2.0)
    assert class_digest(module.ReadsPrivate) != digest


def test_a_dict_in_a_policy_is_no_static_field():
    # JAX keeps a dict node's keys as a list, which the check of static fields took for an unhashable field.
    from htb_jax._src.protocol_checks import check_policy_instance

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class WithDict(_HelperGreedy):
        params: dict = dataclasses.field(default_factory=lambda: {"c": jnp.asarray(1.0)})

    check_policy_instance("policy", WithDict(), "simulate")
    # A tuple subclass of the user's with an array as its static data is still refused (it ran once, then
    # failed in JAX's comparison of tree structures).

    class Pair(tuple):
        c = property(lambda self: self[0])
        batch_shape = property(lambda self: ())
        kernel = _HelperGreedy.kernel

    jax.tree_util.register_pytree_node(Pair, lambda p: ((p[0],), p[1]), lambda aux, kids: Pair((kids[0], aux)))
    with pytest.raises(TypeError, match=r"static fields are hashable Python values .* where the static data of its "
                                        r"Pair is array"):
        check_policy_instance("policy", Pair((jnp.asarray(1.0), np.ones(3))), "simulate")


def test_long_tuples_are_keyed_by_value_and_long_lists_by_identity():
    # A static tuple of 70,000 weights (one per arm) was keyed by its identity: an equal policy built anew
    # compiled again at every call.
    module = _module(SOURCE + "\n\nBIG = [0.0] * 70000\n\n\nclass Weighted(Policy):\n"
                              "    def index(self, means, n, t):\n        return BIG[5]\n")
    weights = tuple(float(i) for i in range(70000))
    assert value_digest(weights) == value_digest(tuple(list(weights)))
    assert value_digest(weights) != value_digest(weights[:-1] + (0.5,))
    first = class_digest(module.Weighted)
    module.BIG[5] = 1.0  # beyond 2^16 items, an entry edited in place is not seen (documented)
    assert class_digest(module.Weighted) == first
    module.BIG = [0.0] * 70000
    assert class_digest(module.Weighted) != first
