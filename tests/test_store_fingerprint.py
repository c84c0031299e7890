"""A store hands back only the results of the program that computed them.

A user's policy and reward law are written to a module of their own, as a user writes them
(``htb_jax`` and ``jax`` only), run into a store, then edited: an edit that changes what is
computed is refused by name, through the command line and through ``htb.frontier.measure``; an
edit of comments alone resumes; ``--restart`` / ``restart=True`` deletes the old chunks and starts
again.  A changed built-in parameter is refused as another configuration, a changed version of
htb_jax as another program.
"""

import dataclasses
import importlib
import json
import re
import sys

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import chunk_store
from htb_jax._src import fingerprint as fingerprint_lib
from htb_jax._src import version as version_module
from htb_jax._src.cli import main
from htb_jax._src.fingerprint import fingerprint

MODULE = '''
import dataclasses
import jax
import jax.numpy as jnp
import htb_jax as htb


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Bonus:
    """The best running mean plus c sqrt(2 log t / n)."""

    c: jax.Array = 1.0

    @property
    def batch_shape(self):
        return jnp.shape(self.c)

    def kernel(self, spec):
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros(k)  # reward sums
        {COMMENT}
        def act(sums, ctx):
            n = jnp.maximum(ctx.pulls, 1)
            index = sums / n + {BONUS}
            return htb.first_argmax(jnp.where(ctx.pulls > 0, index, jnp.inf))

        def update(sums, ctx, arm, reward):
            return sums.at[arm].add(reward.astype(jnp.float64))

        def summary(sums, ctx):
            return htb.PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.full(k, jnp.nan, jnp.float32))

        return htb.PolicyKernel(init, act, update, summary)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Lomax(htb.Distribution):
    """X = loc + scale S Y: S a fair sign, P(Y > y) = (1 + y)^-shape."""

    loc: jax.Array
    scale: jax.Array
    shape: jax.Array

    def from_bits(self, words):
        upper, p = htb.signed_tail(words[..., 0])
        a = jnp.asarray(self.shape, jnp.float32)
        y = jnp.exp(-jnp.log(2.0 * p) * (1.0 / a)) - 1.0
        side = jnp.where(upper, 1.0, -1.0).astype(jnp.float32)
        {COMMENT}
        return jnp.asarray(self.loc, jnp.float32) + {SCALE} * side * y

    def mean(self):
        return jnp.broadcast_to(jnp.asarray({MEAN}, jnp.float64), self.batch_shape)

    def eps_sup(self):
        return jnp.broadcast_to(jnp.asarray(self.shape, jnp.float64) - 1.0, self.batch_shape)

    def abs_moment(self, eps):
        a = jnp.asarray(self.shape, jnp.float64)
        log_density = lambda v, side: jnp.log(0.5 * a[..., None]) - (a[..., None] + 1.0) * jnp.logaddexp(0.0, v)
        return htb.abs_moment_by_quadrature(log_density, eps, loc=self.loc, scale=self.scale, tail_index=a)
'''

ORIGINAL = dict(BONUS="self.c * jnp.sqrt(2.0 * jnp.log(ctx.t) / n)", SCALE="jnp.asarray(self.scale, jnp.float32)",
                MEAN="self.loc", COMMENT="")
EDITS = {
    "bonus times 0": dict(BONUS="0.0 * self.c * jnp.sqrt(2.0 * jnp.log(ctx.t) / n)"),
    "draws twice as wide": dict(SCALE="2.0 * jnp.asarray(self.scale, jnp.float32)"),
    "mean twice the location": dict(MEAN="2.0 * self.loc"),  # the gaps, computed outside the program, change
    "comments only": dict(COMMENT="# a comment, and the lines below it moved\n\n        # another one\n"),
}
STALE = ("holds chunks computed by another program (the simulation program changed: the code of its policy or its "
         "reward law, a parameter's value, or htb_jax)")


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """``write(edit)`` writes the user's module with an edit of :data:`EDITS` (``None``: as first written)
    and imports it afresh, as a new process would."""
    name = f"user_code_{tmp_path.name}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def write(edit=None):
        source = MODULE
        for field, value in {**ORIGINAL, **EDITS.get(edit, {})}.items():
            source = source.replace("{" + field + "}", value)
        (tmp_path / f"{name}.py").write_text(source)
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield name, write
    sys.modules.pop(name, None)


def _chunks(directory):
    return {p.name: p.read_bytes() for p in sorted((directory / "chunks").iterdir())}


def test_an_edited_policy_is_refused_a_comment_resumes_and_restart_starts_again(tmp_path, user_module, capsys):
    """The issue's case: ``--policy 'module:Bonus(c=1.0)'``, its bonus then multiplied by 0.

    Catches a store identified by the policy's ``repr`` alone (the old chunks read back: the edited
    policy reported with the old one's numbers), a fingerprint of the source text (the comment-only
    edit refused), a refusal that prints the banner or touches a chunk, and a ``restart`` that keeps
    an old chunk."""
    name, write = user_module
    write()
    out = tmp_path / "out"
    argv = ["frontier", "--policy", f"{name}:Bonus(c=1.0)", "--eps", "1", "--horizons", "100,200", "--fit-from",
            "100", "--seeds", "4", "--seed-chunk", "2", "--out", str(out)]
    assert main(argv) == 0
    table = capsys.readouterr().out
    stored = _chunks(out)

    module = write("bonus times 0")
    assert main(argv) == 2
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err == (
        f"htb-jax: error: the output directory {str(out)!r} {STALE}; give another --out, or --restart to delete its "
        "chunks and start again\n")
    assert _chunks(out) == stored
    # measure, pointed at the command's store, refuses it the same way, naming its own arguments
    with pytest.raises(chunk_store.StaleStoreError, match=re.escape(
            f"{STALE}; give another store, or restart=True to delete its chunks and start again")):
        htb.frontier.measure(module.Bonus(c=1.0), 1.0, [100, 200], 4, seed_chunk=2, store=str(out))

    write("comments only")
    assert main(argv) == 0
    again = capsys.readouterr()
    assert "resumed: 2 of 2 chunks read back" in again.err and again.out == table

    write("bonus times 0")
    assert main([*argv, "--restart"]) == 0
    restarted = capsys.readouterr()
    assert "resumed" not in restarted.err and restarted.out != table
    assert set(_chunks(out)) == set(stored) and all(_chunks(out)[n] != stored[n] for n in stored)


def test_an_edited_law_is_refused_through_the_sweep_and_measure(tmp_path, user_module, capsys):
    """A law of one's own through ``htb-jax sweep --family`` and as ``measure``'s family, then edited.

    Catches a fingerprint that leaves out ``from_bits`` (the draws' code), the arguments (the gaps that
    ``mean()`` gives are computed outside the program), or that sees comments."""
    name, write = user_module
    write()
    out = tmp_path / "sweep"
    argv = ["sweep", "--family", f"{name}:Lomax(loc=0.0, scale=1.0, shape=1.8)", "--arms", "2", "--gap", "0.5",
            "--eps", "0.5", "--alphas", "0.8", "--qs", "0", "--horizons", "1000", "--seeds", "4", "--seed-chunk", "2",
            "--out", str(out)]
    assert main(argv) == 0
    table = capsys.readouterr().out
    for edit in ("draws twice as wide", "mean twice the location"):
        write(edit)
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == (f"htb-jax: error: the output directory {str(out)!r} {STALE}; give another --out, or "
                       "--restart to delete its chunks and start again\n"), edit
    write("comments only")
    assert main(argv) == 0
    again = capsys.readouterr()
    assert "resumed: 2 of 2 chunks read back" in again.err and again.out == table

    horizons = htb.frontier.checkpoint_horizons(200, 100)
    store = str(tmp_path / "measure")

    def measure(module):  # two members and the fixed instance, two arms each, of the module's law
        family = module.Lomax(loc=jnp.array([[0.5, 0.0], [0.1, 0.0], [0.2, 0.0]]), scale=1.0, shape=1.8)
        return htb.frontier.measure(htb.UCB1(), 0.5, horizons, 4, family=family, seed_chunk=2, store=store)[0]

    first = measure(write())
    with pytest.raises(chunk_store.StaleStoreError, match=re.escape(STALE)):
        measure(write("draws twice as wide"))
    resumed = measure(write("comments only"))
    assert resumed.resumed_chunks == 2
    np.testing.assert_array_equal(resumed.regret, first.regret)


def test_a_changed_parameter_version_or_manifest_is_refused_and_restart_keeps_other_files(tmp_path, monkeypatch):
    """A built-in's parameter is refused as another configuration (as before fingerprints); another
    htb_jax version, and a manifest that records no fingerprint (an older htb_jax), as another
    program; ``restart=True`` deletes the manifest and the chunks, and nothing else.

    Catches a refusal of versions turned back into a note, an old manifest read as current, and a
    ``restart`` that empties the whole directory."""
    family = htb.frontier.SpikeFamily(spike_probs=(1e-2, 0.5), fixed_spike=0.1)
    store = tmp_path / "store"

    def run(alpha=0.8, **kwargs):
        return htb.frontier.measure(htb.AdaRETC(eps=1.0, alpha=alpha, q=0.0), 1.0, [1000, 10**4], 4, family=family,
                                    seed_chunk=2, store=str(store), **kwargs)[0]

    first = run()
    with pytest.raises(chunk_store.ForeignStoreError, match=r"another configuration \(policy: 'AdaRETC\(.*alpha=0\.8"):
        run(alpha=0.9)
    version = re.escape(htb.__version__)
    with monkeypatch.context() as m:
        m.setattr(version_module, "__version__", "0.1.0.dev9")
        with pytest.raises(chunk_store.StaleStoreError, match=rf"another program \(htb_jax {version} there, "
                                                            r"0\.1\.0\.dev9 here\)"):
            run()
    manifest = json.loads((store / "manifest.json").read_text())
    del manifest["program"]
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(chunk_store.StaleStoreError, match=r"another program \(its manifest, written by an older htb_jax, records no fingerprint of the program\)"):
        run()
    (store / "notes.txt").write_text("mine")
    (store / "chunks" / "chunk-00007.npz").write_bytes(b"left by a run of another layout")
    again = run(restart=True)
    assert again.resumed_chunks == 0 and (store / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (store / "chunks").iterdir()) == ["chunk-00000.npz", "chunk-00001.npz"]
    np.testing.assert_array_equal(again.regret, first.regret)
    assert run().resumed_chunks == 2


def test_the_fingerprint_ignores_placement_and_sees_values():
    """The chunk, threads, devices and memory budget change no number, so no fingerprint; a parameter's
    value, the key and the sampler do.  Catches a fingerprint of the chunk's own program (a store then
    refused by a machine with more cores) and one of the program text alone (the values unseen)."""
    nu = htb.equal_gap(htb.Gaussian(loc=0.0, scale=1.0), num_arms=2, gap=0.5)
    call = dict(key=jax.random.key(0), policy=htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), instance=nu, horizon=[100, 1000])
    base = fingerprint([call])
    assert base["program_sha256"] == fingerprint([{**call, "seed_chunk": 3, "threads": 2, "memory_budget": 2**24}])[
        "program_sha256"]
    others = [
        {**call, "policy": htb.AdaRETC(eps=1.0, alpha=0.81, q=0.0)},
        {**call, "key": jax.random.key(1)},
        {**call, "sampler": "per_pull"},
    ]
    hashes = {base["program_sha256"], *(fingerprint([c])["program_sha256"] for c in others)}
    assert len(hashes) == 4
    assert {k: base[k] for k in ("htb_jax", "jax", "jaxlib")} == {
        "htb_jax": htb.__version__, "jax": jax.__version__, "jaxlib": jaxlib.__version__}


def test_the_program_hash_sees_the_code_of_a_callback():
    # A policy calling jax.pure_callback(np_bonus, ...): the jaxpr names np_bonus only, so an edit of what it
    # computes (here a global it reads, as in a module of the user's) resumed a store with the old regrets.
    module = type(sys)("users_callbacks")
    exec(compile("import numpy as np\nSCALE = 2.0\n\ndef np_bonus(x):\n    return np.asarray(SCALE * x, np.float32)\n",
                 "users_callbacks.py", "exec"), module.__dict__)
    module.np_bonus.__module__ = "users_callbacks"

    def program(x):
        y = jax.pure_callback(module.np_bonus, jax.ShapeDtypeStruct((), jnp.float32), x)
        return jax.lax.cond(x > 0, lambda: y, lambda: jax.pure_callback(module.np_bonus,
                                                                        jax.ShapeDtypeStruct((), jnp.float32), -x))

    def sha():
        return fingerprint_lib.program_sha256([jax.jit(program).trace(jnp.float32(1.0))], [])

    first = sha()
    assert sha() == first
    module.SCALE = 3.0
    assert sha() != first
    module.SCALE = 2.0
    assert sha() == first


def test_a_store_of_htb_jax_code_alone_resumes_untraced_and_traces_where_a_file_changed(tmp_path, monkeypatch):
    """A built-in policy on a built-in family: the store records the inputs' key beside the program's;
    opened again it resumes without tracing; after a file of htb_jax changed (its digest patched) it
    traces once, resumes (the same program) and records the new key; a stored program that differs is
    still refused. Catches a key that never spares the trace, one blind to htb_jax's files, and a
    differing key taken for a match."""
    family = htb.frontier.SpikeFamily(spike_probs=(1e-2, 0.5), fixed_spike=0.1)
    store = tmp_path / "store"
    traced = []
    original = fingerprint_lib.fingerprint
    monkeypatch.setattr(fingerprint_lib, "fingerprint", lambda calls, **kw: traced.append(None) or original(calls, **kw))

    def run():
        traced.clear()
        return htb.frontier.measure(htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), 1.0, [1000, 10**4], 4, family=family,
                                    seed_chunk=2, store=str(store))[0]

    def stored():
        return json.loads((store / "manifest.json").read_text())["program"]

    first = run()
    assert len(traced) == 1 and stored()["inputs_sha256"]
    again = run()
    assert (len(traced), again.resumed_chunks) == (0, 2)
    np.testing.assert_array_equal(again.regret, first.regret)

    before = stored()
    monkeypatch.setattr(fingerprint_lib, "_package_sha256", lambda: "a file of htb_jax edited")
    assert (run().resumed_chunks, len(traced)) == (2, 1)
    assert stored()["inputs_sha256"] != before["inputs_sha256"]
    assert stored()["program_sha256"] == before["program_sha256"]
    assert run().resumed_chunks == 2 and len(traced) == 0

    manifest = json.loads((store / "manifest.json").read_text())
    manifest["program"] = {**manifest["program"], "inputs_sha256": "another", "program_sha256": "another"}
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(chunk_store.StaleStoreError, match=r"another program \(the simulation program changed"):
        run()
    assert len(traced) == 1


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _Outside:
    """A pytree class of the user's (this module), standing for a policy or law htb_jax did not write."""

    c: jax.Array = 1.0


class _Unregistered(htb.UCB1):
    """A subclass not registered as a pytree: a leaf of unknown kind."""


def test_the_inputs_key_sees_values_types_and_structure_and_refuses_code_outside_htb_jax():
    """Placement changes no key; a parameter's value, the key, the sampler, a horizon, a Python
    float for an int (weakly typed), another law and another data set do; a class from outside htb_jax
    (a user's, or an unregistered subclass of a built-in) gives no key, so its program is traced.
    Catches a key of the tree structure alone, one blind to static data (the Empirical law's
    observations), and user code let through untraced."""
    nu = htb.equal_gap(htb.Gaussian(loc=0.0, scale=1.0), num_arms=2, gap=0.5)
    call = dict(key=jax.random.key(0), policy=htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), instance=nu, horizon=[100, 1000])
    base = fingerprint_lib.inputs_sha256([call])
    assert base is not None
    assert fingerprint_lib.inputs_sha256([{**call, "seed_chunk": 3, "threads": 2, "memory_budget": 2**24}]) == base
    data = htb.Empirical.from_samples([np.arange(5.0), np.arange(6.0)])
    others = [
        {**call, "policy": htb.AdaRETC(eps=1.0, alpha=0.81, q=0.0)},
        {**call, "key": jax.random.key(1)},
        {**call, "sampler": "per_pull"},
        {**call, "horizon": [100, 1001]},
        {**call, "horizon": [100.0, 1000]},
        {**call, "instance": htb.equal_gap(htb.StudentT(loc=0.0, df=3.0), num_arms=2, gap=0.5)},
        {**call, "instance": data},
        {**call, "instance": htb.Empirical.from_samples([np.arange(5.0), np.arange(6.0) + 0.5])},
    ]
    keys = {base, *(fingerprint_lib.inputs_sha256([c]) for c in others)}
    assert None not in keys and len(keys) == len(others) + 1
    assert fingerprint_lib.inputs_sha256([{**call, "policy": _Outside()}]) is None
    assert fingerprint_lib.inputs_sha256([{**call, "policy": _Unregistered()}]) is None
    assert fingerprint_lib.inputs_sha256([call, {**call, "policy": _Outside()}]) is None
