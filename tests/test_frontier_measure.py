"""htb.frontier.measure: any policy's (d, c) from one call, a user's policy through measure and the CLI.

The user's policy here is written as a user would: ``htb_jax`` and ``jax`` only, never ``htb_jax._src``.
"""

import dataclasses
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import resumable
from htb_jax._src.cli import frontier_command

# the htb-jax command as installed (its console-script entry point), called in-process
(CLI,) = entry_points(group="console_scripts", name="htb-jax")

KEY = 3
SEEDS = 6
FAMILY = htb.frontier.SpikeFamily(spike_probs=(1e-3, 1e-2, 1e-1, 0.5), fixed_spike=0.1)

# The summary type a kernel returns: the public one, or any NamedTuple of the same three fields.
PolicySummary = getattr(htb, "PolicySummary", None) or NamedTuple(
    "PolicySummary", [("committed", jax.Array), ("exploration", jax.Array), ("estimates", jax.Array)]
)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class ExploreFirstGreedy:
    """Pull the arms in turn until each has ``m`` pulls, then the best empirical mean (``m`` traced)."""

    m: jax.Array  # f64[]  pulls of each arm before the greedy phase

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return ()

    def kernel(self, spec):
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros(k, jnp.float64)  # reward sums

        def act(sums, ctx):
            means = sums / jnp.maximum(ctx.pulls, 1)
            exploring = jnp.any(ctx.pulls < self.m)
            return jnp.where(exploring, jnp.argmin(ctx.pulls), jnp.argmax(means)).astype(jnp.int32)

        def update(sums, ctx, arm, reward):
            return sums.at[arm].add(reward.astype(jnp.float64))

        def summary(sums, ctx):
            means = (sums / jnp.maximum(ctx.pulls, 1)).astype(jnp.float32)
            explored = jnp.minimum(k * self.m.astype(jnp.int64), ctx.horizon)  # an ETC's exploration, not AdaR-ETC's
            return PolicySummary(jnp.int32(-1), explored, means)

        return htb.PolicyKernel(init, act, update, summary)


def _slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def test_checkpoint_horizons_are_the_rounds_an_anytime_run_records():
    h = htb.frontier.checkpoint_horizons(10_000, 1_000, per_decade=4)
    assert h.tolist() == [1000, 1779, 3163, 5624, 10000]
    rounds = np.ceil(10_000.0 ** (np.arange(17) / 16) - 1e-9)  # simulate's num_checkpoints=17, ceil(T^(j/16))
    assert set(h.tolist()) <= set(rounds.astype(int).tolist())


def test_checkpoints_at_huge_horizons_are_within_the_documented_distance_of_the_exact_ceiling():
    # At T = 10^18 with 10 a decade, round j is 10^(j/10) exactly: the least n with n^10 >= 10^j, in integers.
    # From 2^43 on the rounds are the float64 power rounded (up to a few dozen off at 1e17); the docstring
    # says off by at most 1 plus about 1e-14 of it (1 at 1.6e13, 96 at 1e17 measured here: 1e-15 of it; the
    # float64 power's error reaches 7.7e-15 at other horizons).
    got = htb.frontier.checkpoint_horizons(10**18, 10**13, per_decade=10)
    exact = []
    for j in range(130, 181):
        n = int(10 ** (j / 10))
        while n**10 < 10**j:
            n += 1
        while (n - 1) ** 10 >= 10**j:
            n -= 1
        exact.append(n)
    assert len(got) == len(exact) and got[-1] == exact[-1] == 10**18
    off = np.abs(got - np.array(exact, np.int64)) - 1  # beyond one unit
    assert np.all(off <= 1e-14 * np.array(exact, np.float64)), off


def test_a_builtin_policy_read_at_checkpoints_equals_simulate_per_horizon_and_numpy_fits():
    """UCB1's measurement against ``simulate`` of every seed at once and fits in NumPy.  Its 6 seeds
    run in chunks of 4 and 2: catches a measure that drops a short last chunk (4 seeds fitted), that
    reads at the wrong checkpoints, or that fits anything but the worst normalized mean and the fixed
    instance's mean."""
    horizons = htb.frontier.checkpoint_horizons(300, 100, per_decade=10)
    # horizons as a jax array, as simulate takes them (refused as "not a list" before)
    (m1, m05) = htb.frontier.measure(htb.UCB1(), (1.0, 0.5), jnp.asarray(horizons), SEEDS, family=FAMILY, key=KEY,
                                     seed_chunk=4)
    assert m1.anytime and m1.name == "UCB1" and m1.family_name == "two-point"
    instances = FAMILY.instances()
    direct = np.asarray(htb.simulate(jax.random.key(KEY), htb.UCB1(), instances, horizons.tolist(), SEEDS).regret)
    np.testing.assert_array_equal(m1.regret, direct)  # UCB1 never reads T: checkpoints are the runs
    for m, eps in ((m1, 1.0), (m05, 0.5)):
        scale = np.asarray(htb.intrinsic_scale(instances, eps))
        worst = np.max(direct[:-1].mean(-1) / scale[:-1, None], axis=0)  # [H]
        np.testing.assert_allclose(m.d.slope, _slope(horizons, worst), rtol=1e-12)
        np.testing.assert_allclose(m.c.slope, _slope(horizons, direct[-1].mean(-1)), rtol=1e-12)
        assert m.d.low <= m.d.slope <= m.d.high and m.c.low <= m.c.slope <= m.c.high
        assert np.isnan(m.d_finite_t)  # no known schedule
        assert m.off_frontier == pytest.approx(m.c.slope + m.d.slope * (1 + eps) / eps - (1 + eps) / eps)


def test_adar_etc_runs_per_horizon_with_its_schedule_prediction():
    policy = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
    horizons = [1000, 3000, 10_000]
    (m,) = htb.frontier.measure(policy, 1.0, horizons, 8, family=FAMILY, key=KEY)
    assert not m.anytime
    out = htb.simulate(jax.random.key(KEY), policy, FAMILY.instances(), horizons, 8)
    np.testing.assert_array_equal(m.regret, np.asarray(out.regret))
    length = np.asarray(out.exploration)[0, :, 0]
    np.testing.assert_array_equal(m.exploration, length)
    # L_T = K B_T + ceil(K^q T^beta), beta = 0.4 at (eps, alpha) = (1, 0.8), computed here on its own
    blocks = np.ceil(8 * np.log(2 * np.asarray(horizons, float) ** 3))
    np.testing.assert_allclose(length, 2 * blocks + np.ceil(np.asarray(horizons, float) ** 0.4), atol=1)
    share = 2 * np.asarray(htb.num_blocks(2, np.asarray(horizons)), float) / length
    t = np.asarray(horizons, float)
    assert m.d_finite_t == pytest.approx(_slope(t, t * share**0.5), rel=1e-12)
    assert m.c_finite_t == pytest.approx(_slope(t, length), rel=1e-12)
    assert m.block_share == pytest.approx(share[-1])


def _told_u(member):
    return htb.RobustUCB(1.0, u=jnp.max(member.abs_moment(1.0)))


def _told_m(member):
    return ExploreFirstGreedy(m=jnp.float64(2.0) + jnp.round(jnp.max(member.high)))


def _mixed(member):
    return htb.UCB1() if float(member.p[0, 1]) < 0.01 else _told_m(member)


@pytest.mark.parametrize("factory, anytime, programs", [(_told_u, True, 1), (_told_m, False, 5), (_mixed, False, 5)])
def test_a_policy_told_each_members_parameter_equals_each_member_run_alone(monkeypatch, factory, anytime, programs):
    # measure(member -> policy): each member's regret must be that member's run alone, bit for bit.
    # Robust UCB told each member's u stacks into one grid that runs paired with the members (one
    # simulate for the family, read at the checkpoints of one run); a user's policy whose batch_shape
    # is fixed at () (told a member-dependent m, a run per horizon) and policies of two classes
    # (UCB1 and that policy) run one member at a time.  Catches a member run with another member's policy (the u and m differ)
    # or with the product's rows in place of its pairs, and a per-member policy that does not stack
    # sent to the paired run.
    measure_lib = sys.modules["htb_jax._src.frontier.measure"]  # the module (the package exports the function)
    calls = []
    monkeypatch.setattr(measure_lib, "simulate", lambda *a, **k: calls.append(k["paired"]) or htb.simulate(*a, **k))
    instances = FAMILY.instances()
    members = instances.batch_shape[0]
    alone = lambda f: jax.tree.map(lambda p: p[f : f + 1], instances)  # noqa: E731
    horizons = htb.frontier.checkpoint_horizons(300, 100) if anytime else [100, 300]
    (m,) = htb.frontier.measure(factory, 1.0, horizons, 4, family=FAMILY, key=KEY, anytime=anytime)
    assert m.anytime == anytime and m.regret.shape == (members, len(horizons), 4)
    assert calls == [programs == 1] * programs
    for f in range(members):
        out = htb.simulate(jax.random.key(KEY), factory(alone(f)), alone(f), [int(h) for h in horizons], 4)
        np.testing.assert_array_equal(m.regret[f], np.asarray(out.regret)[0], err_msg=str(f))
    assert not np.array_equal(m.regret[1], m.regret[2])


def test_a_policy_is_told_each_member_of_a_law_whose_parameters_broadcast():
    # A law given as the family whose parameters broadcast over the members (Stable's scalar beta and scale,
    # a row of K alphas, a leading axis of 1): each member keeps them and gets its own row of the others.
    # Catches slicing every parameter (a scalar is not subscriptable; a leading axis of 1 sliced at
    # member f > 0 is empty).
    measure_lib = sys.modules["htb_jax._src.frontier.measure"]
    loc = jnp.array([[1.0, 0.0], [0.1, 0.0], [0.3, 0.0]])
    law = htb.Stable(loc=loc, alpha=jnp.array([1.75, 1.5]), beta=0.0, scale=jnp.array([[2.0, 1.0]]))
    told = []
    measure_lib.per_member_runs(lambda member: told.append(member) or htb.UCB1(), law)
    assert len(told) == 3
    for f, member in enumerate(told):
        row = htb.Stable(loc=loc[f : f + 1], alpha=jnp.array([1.75, 1.5]), beta=0.0, scale=jnp.array([[2.0, 1.0]]))
        assert member.batch_shape == (1, 2)
        for got, want in zip(jax.tree.leaves(member), jax.tree.leaves(row), strict=True):
            np.testing.assert_array_equal(np.broadcast_to(got, (1, 2)), np.broadcast_to(want, (1, 2)))


def test_a_user_policy_through_measure_resumes_from_its_store(tmp_path, monkeypatch):
    # Any pytree is a policy, one without a repr of its own too: the store's identity held its address
    # ("<Policy object at 0x7f9d...>"), another in every process, and a store never resumed.
    monkeypatch.setattr(ExploreFirstGreedy, "__repr__", object.__repr__)
    policy = ExploreFirstGreedy(m=jnp.float64(3.0))
    horizons = [100, 200, 400]
    store = tmp_path / "store"
    (m,) = htb.frontier.measure(policy, 1.0, horizons, 4, family=FAMILY, seed_chunk=2, store=str(store))
    assert not m.anytime and m.name == "ExploreFirstGreedy" and m.resumed_chunks == 0
    # It explores (L_T = 3 K), but not on AdaR-ETC's schedule: no finite-T prediction, no K B_T share (they
    # were AdaR-ETC's formulas applied to any exploration, "K B_T is 49% of L_T" for a schedule without B_T).
    assert np.all(m.exploration == 6) and np.isnan(m.d_finite_t) and np.isnan(m.c_finite_t) and np.isnan(m.block_share)
    # simulate in measure's two chunks of 2 seeds (its compiled program), joined
    direct = [htb.simulate(jax.random.key(0), policy, FAMILY.instances(), horizons, 2, first_seed=first).regret
              for first in (0, 2)]
    np.testing.assert_array_equal(m.regret, np.concatenate(direct, axis=-1))
    policy = ExploreFirstGreedy(m=jnp.float64(3.0))  # another object, at another address
    (again,) = htb.frontier.measure(policy, 1.0, horizons, 4, family=FAMILY, seed_chunk=2, store=str(store))
    assert again.resumed_chunks == 2
    np.testing.assert_array_equal(again.regret, m.regret)
    with pytest.raises(ValueError):  # another measurement in the same store
        htb.frontier.measure(policy, 1.0, [100, 300], 4, family=FAMILY, seed_chunk=2, store=str(store))
    buffer = tmp_path / "m.png"
    htb.frontier.plot_measurements([m], buffer, title="user policy")
    assert buffer.stat().st_size > 0
    assert "ExploreFirstGreedy" in htb.frontier.measurement_table([m])


def test_measure_runs_every_seed_in_one_chunk_off_a_cpu(tmp_path, monkeypatch):
    # With no seed_chunk, a CPU runs 8 seeds a chunk and any other backend every seed (up to 4096) in one,
    # a pass of rounds; the chunking changes no bit. Catches a default that ignores the backend (two
    # chunks either way), a cap other than 4096, and a CPU default other than 8.
    horizons = htb.frontier.checkpoint_horizons(300, 100, per_decade=10)

    def chunks(store):
        return json.loads((store / "manifest.json").read_text())["chunks"]

    (on_cpu,) = htb.frontier.measure(htb.UCB1(), 1.0, horizons, 16, family=FAMILY, key=KEY, store=str(tmp_path / "c"))
    assert chunks(tmp_path / "c") == [[0, 8], [8, 8]]
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert (resumable.default_seed_chunk(16), resumable.default_seed_chunk(10**5)) == (16, 4096)
    (off_cpu,) = htb.frontier.measure(htb.UCB1(), 1.0, horizons, 16, family=FAMILY, key=KEY, store=str(tmp_path / "g"))
    assert chunks(tmp_path / "g") == [[0, 16]]
    np.testing.assert_array_equal(off_cpu.regret, on_cpu.regret)


def test_measure_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match=r"horizons \[100\] are not among them \(the nearest to 100: 96 and 120\): "
                                         r"use htb.frontier.checkpoint_horizons\(150, fit_from, 10\) or anytime=False\.$"):
        htb.frontier.measure(htb.UCB1(), 1.0, [100, 150], 2, family=FAMILY)
    with pytest.raises(ValueError, match=r"batch shape \(\)"):
        htb.frontier.measure(htb.AdaRETC(eps=1.0, alpha=jnp.array([0.7, 0.8]), q=0.0), 1.0, [100, 200], 2)
    with pytest.raises(ValueError, match=r"at least two, increasing"):
        htb.frontier.measure(htb.UCB1(), 1.0, [200, 100], 2, anytime=False)
    with pytest.raises(TypeError, match=r"lacks kernel"):
        htb.frontier.measure(object(), 1.0, [100, 200], 2)
    # Pareto arms of shape 1.8 have moments of order < 1.8 only: U_eps at eps = 0.9 is infinite, and the
    # fit of d failed after the runs (a worst normalised regret of 0 to take the logarithm of).
    lomax = htb.Pareto(loc=jnp.array([[0.5, 0.0], [0.2, 0.0], [0.1, 0.0]]), shape=jnp.full((3, 2), 1.8))
    with pytest.raises(ValueError, match=r"^eps must leave every member of the family a finite U_eps, .*\(its "
                                         r"eps_sup\(\) is 0.8\); got eps=0.9, where member 0's U_eps is inf\.$"):
        htb.frontier.measure(htb.UCB1(), [0.5, 0.9], [100, 200], 2, family=lomax)
    # A Pareto family's members without the moment drop out of the worst case (U_eps = inf normalizes
    # them to 0); with none left, every run was made, then the fit failed on a worst case of 0 (the
    # eps = 0.5 measurement lost with it).
    pareto = htb.frontier.ParetoFamily(gaps=(0.1, 1.0), shapes=(1.75,))
    with pytest.raises(ValueError, match=r"^eps must leave a member of the family a finite U_eps, .*\(its eps_sup\(\) "
                                         r"is 0.75\); got eps=1, where member 0's U_eps is inf, as every member's\.$"):
        htb.frontier.measure(htb.UCB1(), [0.5, 1.0], [100, 200], 2, family=pareto, anytime=False)


USER_MODULE = '''
import dataclasses
import jax
import jax.numpy as jnp
import htb_jax as htb


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class RoundRobin:
    """Every arm in turn (linear regret): a user's policy for the command line."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        k = spec.num_arms

        def init(ctx):
            return jnp.zeros((), jnp.int32)

        def act(state, ctx):
            return ((ctx.t - 1) % k).astype(jnp.int32)

        def update(state, ctx, arm, reward):
            return state

        def summary(state, ctx):
            return htb.PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.full(k, jnp.nan, jnp.float32))

        return htb.PolicyKernel(init, act, update, summary)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class FloatArm:
    """A malformed policy: its act returns a float."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        k = spec.num_arms
        return htb.PolicyKernel(
            lambda ctx: jnp.zeros((), jnp.int32), lambda state, ctx: jnp.float32(0.0), lambda state, ctx, arm, r: state,
            lambda state, ctx: htb.PolicySummary(jnp.int32(-1), jnp.int64(0), jnp.full(k, jnp.nan, jnp.float32)))


def told_u(member):
    """Robust UCB told the member's own u = max_i E|X_i|^2 (eps = 1): a function member -> policy."""
    return htb.RobustUCB(1.0, u=jnp.max(member.abs_moment(1.0)))


def broken(member):
    return 1 / 0


def told_eps_u(eps, u):
    """htb-jax bench's form, (eps, u) -> policy: not what frontier calls."""
    return htb.RobustUCB(eps, u=u)


NOT_A_POLICY = 42
'''


@pytest.mark.skipif(not hasattr(htb, "PolicySummary"), reason="the user module returns htb.PolicySummary")
def test_a_user_policy_through_the_command_line_resumes(tmp_path, capsys, monkeypatch):
    (tmp_path / "user_policies.py").write_text(textwrap.dedent(USER_MODULE))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "htb_jax", "frontier", "--policy", "user_policies:RoundRobin()", "--eps", "1",
            "--horizons", "100,200", "--fit-from", "100", "--seeds", "4", "--seed-chunk", "2", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    root = pathlib.Path(__file__).resolve().parents[1]
    first = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "| RoundRobin() | two-point | 1 | 100..200 | 4 |" in first.stdout
    # a round robin on two arms pays Delta every other round: c = 1 exactly
    assert "| 1.000 [1.000, 1.000] | +" in first.stdout
    assert {"measure.png", "measure.csv", "table.md"} <= {p.name for p in out.iterdir()}
    # its time said as the other commands say theirs (it said nothing of it)
    assert re.search(r"\n\d+\.\d s \(compilation included\); wrote .*measure\.png", first.stderr), first.stderr
    # Started again (here, in this process: nothing is computed anew), it reads both chunks back.
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(root)
    assert CLI.load()(argv[3:]) == 0
    second = capsys.readouterr()
    assert "resumed: 2 of 2 chunks" in second.err and "\nevery chunk read back; wrote " in second.err
    assert second.out == first.stdout


def test_a_policy_told_each_members_parameter_through_the_command_line(tmp_path, capsys, monkeypatch):
    # --policy MODULE:FUNCTION, a function member -> policy: the command prints the table measure
    # gives the same function (its members' policies paired with the members), character for character.
    # Its policies declare anytime (Robust UCB never reads T), so both read one run at checkpoints.
    (tmp_path / "user_policies.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    horizons = htb.frontier.checkpoint_horizons(200, 100).tolist()
    argv = ["frontier", "--policy", "user_policies:told_u", "--eps", "1", "--horizons", ",".join(map(str, horizons)),
            "--fit-from", "100", "--seeds", "4", "--seed-chunk", "2", "--out", str(tmp_path / "out")]
    assert CLI.load()(argv) == 0
    printed = capsys.readouterr().out
    import user_policies

    (m,) = htb.frontier.measure(user_policies.told_u, 1.0, horizons, 4, seed_chunk=2, name="told_u")
    assert m.anytime  # as its policies declare
    assert printed.strip() == htb.frontier.measurement_table([m]).strip()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_such_module_xyz:P()", r"--policy: cannot import module 'no_such_module_xyz': ModuleNotFoundError"),
        ("user_policies:broken", r"--policy: 'broken', a function member -> policy, failed on the family's members: "
                                 r"ZeroDivisionError: division by zero"),
        ("user_policies:Missing()", r"--policy: 'Missing\(\)' failed in user_policies: NameError"),
        # the expression's own error is the user's: its eps is not the command's --eps (it said "--eps must")
        ("htb_jax:AdaRETC(eps=1.5, alpha=0.8, q=0.0)", r"--policy: 'AdaRETC\(eps=1.5, alpha=0.8, q=0.0\)' failed in "
                                                        r"htb_jax: ValueError: eps must lie in \(0, 1\]; got eps=1.5\.$"),
        # named by its signature (it said "told_eps_u() missing 1 required positional argument: 'u'")
        ("user_policies:told_eps_u", r"htb-jax frontier takes a policy or a function \(member\) -> policy for "
                                     r"--policy; got --policy=<function told_eps_u .*, which takes \(eps, u\)\.$"),
        ("user_policies:NOT_A_POLICY", r"htb-jax frontier takes a policy instance .* for --policy; got --policy=.* lacks kernel and batch_shape"),
        ("user_policies", r"--policy must be MODULE:EXPRESSION"),
        # a module that ends the interpreter on import ended the command silently, with its status
        ("user_exits:P()", r"--policy: cannot import module 'user_exits': SystemExit: 3$"),
        # a file named json.py is shadowed by the standard library's module
        ("json:P()", r"--policy: 'P\(\)' failed in json: NameError: .* \('json' is the standard library's module, "
                     r"imported in place of a file of yours of that name: rename your file\)$"),
        # a malformed kernel, found when the store is opened (the program traced): before the banner, before --out
        ("user_policies:FloatArm()", r"FloatArm's kernel.act must return the arm to pull as an integer scalar"),
    ],
)
def test_a_bad_policy_is_one_line_and_status_2(tmp_path, capsys, monkeypatch, spec, message):
    (tmp_path / "user_policies.py").write_text(textwrap.dedent(USER_MODULE))
    (tmp_path / "user_exits.py").write_text("import sys\n\nsys.exit(3)\n")
    (tmp_path / "json.py").write_text("P = None\n")  # shadowed by the standard library's json
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    status = CLI.load()(["frontier", "--policy", spec, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("htb-jax: error: "), err
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists()


def test_fit_from_with_policy_and_horizons_keeps_the_horizons_it_fits(tmp_path, capsys, monkeypatch):
    # --fit-from was ignored where --horizons was given (every horizon fitted, exit 0, even --fit-from 1e9);
    # without --policy the same flags fit from --fit-from on. Now the horizons below it are not run.
    given = []

    def plan(policy, eps, horizons, *args, **kwargs):
        given.append(horizons)
        raise ValueError("planned")

    monkeypatch.setattr(frontier_command, "plan_measure", plan)
    argv = ["frontier", "--policy", "htb_jax:UCB1()", "--horizons", "1e3,1e4,1e5", "--out", str(tmp_path / "out")]
    assert CLI.load()([*argv, "--fit-from", "1e4"]) == 2
    assert given == [[10000, 100000]] and "planned" in capsys.readouterr().err
    assert CLI.load()([*argv, "--fit-from", "1e5"]) == 2
    assert capsys.readouterr().err == ("htb-jax: error: --fit-from=100000 leaves fewer than two distinct horizons in "
                                       "[1000, 10000, 100000].\n")  # as without --policy


def test_notes_can_name_the_family():
    # One policy on two families at one eps: notes keyed (name, eps) gave both points one note (the peer
    # frontier's "as defined" and "best mean 0" panels collided); (name, family, eps) tells them apart.
    import dataclasses

    from htb_jax._src.frontier import measurement, plots

    fit = htb.ExponentFit(slope=1.0, intercept=0.0, low=0.9, high=1.1, level=0.95, num_bootstrap=10)
    spike = htb.frontier.Measurement("p", "two-point", 1.0, np.array([100, 1000]), np.ones((3, 2, 4)), np.ones(3),
                                     np.zeros(2, np.int64), fit, fit, np.nan, np.nan, np.nan, False, 0.0, 0)
    shifted = dataclasses.replace(spike, family_name="two-point, best mean 0")
    notes = {("p", "two-point", 1.0): "its own", ("p", 1.0): "the policy's"}
    assert measurement._check_keyed("notes", notes, [spike, shifted]) is notes
    assert (plots._note(notes, spike), plots._note(notes, shifted)) == ("its own", "the policy's")
    assert plots._note({}, spike) == spike.note()
    # A point numbered for its estimate beyond the line (d + c (eps/(1+eps)) < 1) whose intervals reach the
    # line had only "finite-T slope, T in [...]" under it: the note now says which; beyond by both, m.note()'s own.
    d, c = (htb.ExponentFit(slope, 0.0, slope - 0.01, slope + 0.02, 0.95, 10) for slope in (0.59, 0.79))
    near = dataclasses.replace(spike, d=d, c=c)  # off frontier -0.03, the far corner +0.03
    assert near.off_frontier < 0.0 < near.c.high + 2.0 * near.d.high - 2.0
    assert plots._note({}, near) == (f"{near.note()}; beyond Theorem 1's line by its estimate, on it within "
                                     "its intervals")
    far = dataclasses.replace(near, d=dataclasses.replace(d, high=d.slope), c=dataclasses.replace(c, high=c.slope))
    assert far.beyond_bound and plots._note({}, far) == far.note() and "beyond Theorem 1's line" in far.note()
    with pytest.raises(ValueError, match=r"claims must be keyed by \(policy name, eps\) of a measurement"):
        measurement._check_keyed("claims", {("p", "two-point", 1.0): (1.0, 0.5)}, [spike])


def test_measurement_repr_leaves_the_per_seed_arrays_out():
    # Its repr printed every seed's regret (F + 1 members x H horizons x S seeds).
    fit = htb.ExponentFit(0.5, 0.0, 0.4, 0.6, 0.95, 10)
    m = htb.frontier.Measurement("p", "two-point", 1.0, np.array([100, 1000]), np.full((3, 2, 400), 7.25), np.ones(3),
                                 np.zeros(2, np.int64), fit, fit, np.nan, np.nan, np.nan, False, 0.0, 0)
    assert "7.25" not in repr(m) and "regret" not in repr(m) and "horizons=array([ 100, 1000])" in repr(m)


@pytest.mark.parametrize("horizons, refused", [
    ("1000.5,1e4", "--horizons must be an integer in [1, 1000000000000000000]; got --horizons=1000.5."),
    ("1e4,1e3", "--horizons must be increasing; got --horizons=[10000, 1000]."),
    ("1e3,1e3", "--horizons must be increasing; got --horizons=[1000, 1000]."),
])
@pytest.mark.parametrize("policy", [[], ["--policy", "htb_jax:UCB1()", "--seeds", "2"]], ids=["frontier", "policy"])
def test_bad_horizons_are_named_before_anything_reads_them(capsys, tmp_path, horizons, refused, policy):
    # With --policy, 1000.5 ran as 1000 (int() before any check); without it, every bad list was blamed
    # on the default --fit-from ("has fewer than two from there: give --fit-from too").
    out = tmp_path / "out"
    assert CLI.load()(["frontier", *policy, "--horizons", horizons, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"htb-jax: error: {refused}\n"
    assert not out.exists()


def test_a_member_function_that_raises_is_named():
    # The error of a user's function member -> policy surfaced bare in Python (the command line named it).
    def broken(member):
        return 1 / 0

    with pytest.raises(ZeroDivisionError) as info:
        htb.frontier.measure(broken, 1.0, [100, 200], 2, progress=False)
    assert info.value.__notes__ == ["(raised by the function member -> policy given as policy, called on member 0)"]


def test_plot_point_draws_a_measurements_row_and_the_theory_where_given():
    # plot_point(ax, m.row()) was refused ("row lacks d_theory, c_theory"): a measurement has no theory point.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = dict(d=0.7, d_low=0.6, d_high=0.8, c=0.5, c_low=0.4, c_high=0.6)

    def markers(row):
        fig, ax = plt.subplots()
        htb.frontier.plot_point(ax, row, "C0")
        drawn = sorted(line.get_marker() for line in ax.lines if line.get_marker() not in ("None", None, "_", "|"))
        plt.close(fig)
        return drawn

    assert markers(measured) == ["s"]
    assert markers(dict(measured, d_finite_t=0.7, c_finite_t=0.5)) == ["s", "x"]
    assert markers(dict(measured, d_theory=0.7, c_theory=0.5, d_finite_t=0.7, c_finite_t=0.5)) == ["o", "s", "x"]
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"^row holds d_theory but not c_theory \(x='d', y='c'\)\.$"):
        htb.frontier.plot_point(ax, dict(measured, d_theory=0.7), "C0")
    plt.close(fig)
