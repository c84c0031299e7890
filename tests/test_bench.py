"""The benchmark suite, its runner and its command, at a small size.

The suite's settings are what their descriptions say; a contender's numbers in the results are the
``simulate`` call the runner stands for (a peer told ``eps`` and ``u`` included); the user's policy
and a peer of the same code see the same rewards (paired); a second run reads every run back and
gives the same results; an interrupted run, started again, gives them too.
"""

import dataclasses
import json
import math
import os
import pathlib
import re

import jax
import numpy as np
import pytest

import htb_jax as htb
from conftest import host_fuses_multiply_add, lock_held_by_another_process
from htb_jax._src.bench import peers as peers_lib
from htb_jax._src.bench import real_data, runner, stats, suite, worst_case
from htb_jax._src.bench.report import scorecard_markdown, scorecard_rows
from htb_jax._src.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent

TINY = suite.Size("tiny", horizon=300, seeds=4, horizons=(300, 600), reach=300)
ONLY = ("misspecification", "horizon")
FIELD = ("UCB1", "Robust UCB")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two peers (told nothing; told ``eps`` and ``u``, with an ``O(t)`` round) and the user's
    UCB1 at a tiny size, on three experiments; the results of a first and a second call into one store."""
    with pytest.MonkeyPatch.context() as m:
        m.setitem(suite.SIZES, "tiny", TINY)
        m.setattr(runner, "peers", lambda: tuple(p for p in peers_lib.peers() if p.name in FIELD))
        out = tmp_path_factory.mktemp("bench")
        kwargs = dict(name="mine", size="tiny", out=str(out), only=ONLY, progress=False)
        first = runner.run(htb.UCB1(), **kwargs)
        m.setattr(runner, "write_report", lambda results, directory: None)  # once is enough (test_bench_report)
        second = runner.run(htb.UCB1(), **kwargs)
        # The worst case with the user's UCB1 and the peer UCB1 (one program; Robust UCB's per-member told
        # policies are measure's own, tested in tests/test_frontier_measure.py).
        m.setattr(runner, "peers", lambda: tuple(p for p in peers_lib.peers() if p.name == "UCB1"))
        worst = runner.run(htb.UCB1(), **{**kwargs, "only": [worst_case.NAME]})
        m.setattr(runner, "peers", lambda: tuple(p for p in peers_lib.peers() if p.name in FIELD))
        yield out, first, second, worst, kwargs


def _cells(results, experiment, policy):
    (e,) = [e for e in results["experiments"] if e["name"] == experiment]
    return e, e["cells"][policy]


def test_settings_are_what_their_descriptions_say():
    """Arm 0 is better by the stated gap, the arm count and the tail index are the label's, a told eps has a
    finite moment. Catches a gap given to the wrong arm, a K or tail index off the label, an eps beyond
    the tail."""
    for e in suite.experiments("cpu"):
        for s in e.settings:
            mu = np.asarray(s.instance.mean())
            if s.label == "WTI by weekday":
                assert np.argmax(mu) == 3 and s.num_arms == 5  # Thursday's the best
                continue
            gap = s.axis_value if e.name in ("gaps", "real-data") else suite.GAP
            # Arms of data: each float32 reward x + gap is rounded (2^-24 relative, |x| <= 41), so their
            # exact mean moves by at most 41 * 2^-24 = 2.4e-6.
            tol = 2.5e-6 if e.name == "real-data" else 1e-12
            np.testing.assert_allclose(mu - mu[1], [gap] + [0.0] * (s.num_arms - 1), atol=tol)
            assert mu[1] == 0.0 or e.name == "real-data"
            assert s.num_arms == (s.axis_value if e.name == "arms" else suite.NUM_ARMS)
            uniform = s.horizon * gap * (s.num_arms - 1) / s.num_arms
            assert s.uniform_regret() == pytest.approx(uniform, rel=tol / gap)
            assert runner._compact(s.instance).startswith(type(s.instance).__name__ + "(")  # the report's label
            tail = float(np.min(np.asarray(s.instance.eps_sup()))) + 1.0
            assert 1.0 + s.eps < tail
            if e.name == "tail" and "Stable alpha = 2" not in s.label:
                assert tail == pytest.approx(s.axis_value)
    assert tuple(e.name for e in suite.experiments("cpu")) == suite.NAMES
    two_point, stable = worst_case.CASES  # the worst case's stable arms: gaps 1e-3..1 and 0.3, index 1.75
    assert two_point.build() == htb.frontier.SpikeFamily() and two_point.eps == (1.0, 0.5)
    arms = stable.build()
    mu = np.asarray(arms.mean())
    np.testing.assert_array_equal(mu[:, 1], 0.0)
    np.testing.assert_allclose(mu[:, 0], [10 ** (k / 4) for k in range(-12, 1)] + [0.3], rtol=1e-15)
    assert np.all(np.asarray(arms.eps_sup()) == pytest.approx(0.75)) and stable.eps == (0.5,)
    named = eval(stable.instance, {"htb": htb})  # the expression results.json names
    assert jax.tree.structure(named) == jax.tree.structure(arms)
    assert all(jax.tree.leaves(jax.tree.map(np.array_equal, named, arms)))
    returns, _ = real_data.wti_returns()  # the real-data description's figures
    assert (returns.size, round(float(returns.std()), 1), round(float(htb.tail_index(returns).alpha))) == (8320, 2.5, 4)
    horizon = {e.name: e for e in suite.experiments("gpu")}["horizon"]
    assert [s.horizon for s in horizon.settings] == list(suite.SIZES["gpu"].horizons)


def test_a_peer_in_the_results_is_the_simulate_call_it_stands_for(tiny):
    """Robust UCB told each misspecified ``(eps, u)`` (a paired grid) and UCB1 on the deduplicated instance,
    at each setting, and UCB1 at each horizon, equal their own ``simulate`` calls. Catches a told value not
    multiplied by the factor, a paired grid read off its diagonal, settings mapped to the wrong row or
    horizon."""
    _, results, *_ = tiny
    e = {x.name: x for x in suite.experiments("cpu")}["misspecification"]
    key = jax.random.key(suite.KEY)
    _, robust = _cells(results, "misspecification", "Robust UCB")
    _, ucb = _cells(results, "misspecification", "UCB1")
    for s, r_cell, u_cell in zip(e.settings, robust, ucb, strict=True):
        eps, u = s.told()
        for policy, cell in ((htb.RobustUCB(eps=eps, u=u), r_cell), (htb.UCB1(), u_cell)):
            direct = np.asarray(htb.simulate(key, policy, s.instance, TINY.horizon, TINY.seeds).regret)
            assert cell["mean"] == pytest.approx(direct.mean(), rel=1e-12)
            assert cell["median"] == pytest.approx(np.median(direct), rel=1e-12)
    _, cells = _cells(results, "horizon", "UCB1")
    instance = {x.name: x for x in suite.experiments("tiny")}["horizon"].settings[0].instance
    direct = np.asarray(htb.simulate(key, htb.UCB1(), instance, list(TINY.horizons), TINY.seeds).regret)
    assert [c["mean"] for c in cells] == pytest.approx(direct.mean(-1), rel=1e-12)


def test_the_users_policy_and_the_same_peer_are_paired(tiny):
    """The user's UCB1 and the peer UCB1 read the same rewards: equal cells, scores and curves, a ratio of 1
    with an interval of width 0. Catches contenders drawing from different keys or seeds."""
    _, results, *_ = tiny
    for e in results["experiments"]:
        assert e["cells"]["mine"] == e["cells"]["UCB1"], e["name"]
        assert e["scores"]["mine"] == e["scores"]["UCB1"]
    e, _ = _cells(results, "misspecification", "mine")
    assert e["ratios"]["mine"] == {"value": 1.0, "low": 1.0, "high": 1.0, "best": "UCB1"}
    assert "mine" not in {r["best"] for r in e["ratios"].values() if r is not None}  # a user's policy is no peer


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _FixedShapeRobustUCB:
    """Robust UCB as a user may write it: a ``batch_shape`` fixed at ``()``, so that told policies do
    not stack into a grid paired with the instances."""

    eps: jax.Array
    u: jax.Array

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        return htb.RobustUCB(eps=self.eps, u=self.u).kernel(spec)


def test_told_policies_that_do_not_stack_run_one_instance_at_a_time(tiny, monkeypatch):
    """Catches a runner that stacks them anyway (refused as a grid whose leaves do not follow its
    batch_shape): one call per setting, with the numbers of the paired grid."""
    *_, kwargs = tiny
    monkeypatch.setitem(suite.SIZES, "tiny", TINY)
    results = runner.run(lambda eps, u: _FixedShapeRobustUCB(eps, u), **{
        **kwargs, "name": "fixed", "out": None, "only": ["misspecification"], "peers": False})
    _, fixed = _cells(results, "misspecification", "fixed")
    _, stacked = _cells(tiny[1], "misspecification", "Robust UCB")
    assert len(fixed) > 1 and fixed == stacked  # several settings, several calls


def test_two_users_names_never_share_a_runs_folder():
    """'my pol' and 'my_pol' shared runs/my_pol: the second was refused with the remedy to delete the
    folder, the first's runs with it; '../x' made a hidden folder. The peers' folders are as before
    (their stored runs stay where they are)."""
    def folder(name, user=True):
        return peers_lib.Contender(name, htb.UCB1(), "nothing", "O(K)", user=user).runs_folder("out")

    names = ["my pol", "my_pol", "my-pol", "../my_pol", ".my_pol", "UCB1()"]
    folders = [folder(n) for n in names]
    assert len(set(folders)) == len(names), folders
    assert all(os.path.dirname(f) == os.path.join("out", "runs") and not os.path.basename(f).startswith(".")
               for f in folders), folders
    assert folder("my_pol") == os.path.join("out", "runs", "my_pol")  # a name that is a file name stays itself
    assert folder("Robust UCB", user=False) == os.path.join("out", "runs", "Robust_UCB")
    # A 300-character name made a folder name the file system refused, after the command had started.
    long = [os.path.basename(folder(c * 300)) for c in "ab"]
    assert long[0].startswith("a" * 100 + "-") and len(long[0]) == 109 and long[0] != long[1]
    # One label (--name) given to two policies: two folders (they shared one, the second refused as a changed
    # program, and --restart replaced the first's runs with its own); the same policy and label: one folder.
    def labelled(policy):
        return runner.contenders(policy, name="mine", with_peers=False)[0].runs_folder("out")

    assert labelled(htb.UCB1()) != labelled(htb.AdaRETC.order_free())
    assert labelled(htb.UCB1()) == labelled(htb.UCB1()) != folder("mine")


def test_a_users_policy_that_reads_t_is_said_to_know_it():
    """The report's "knows" column: a user's policy that reads ctx.horizon knows T, as the peers that do are
    said to (it said "nothing" of an explore-then-commit that sizes its exploration by T)."""
    def knows(policy):
        contender = runner.contenders(policy, name="mine", with_peers=False)[0]
        return runner.knowing_horizon(contender, suite.experiments("cpu")[0].settings[0]).knows

    assert knows(htb.UCB1()) == "nothing"
    assert knows(htb.AdaRETC.order_free()) == "T"
    assert knows(lambda eps, u: htb.RobustUCB(eps, u=u)) == "eps, u (told by the suite)"
    assert knows(lambda eps, u: htb.AdaRETC.calibrated(eps)) == "eps, u (told by the suite), T"


def test_scores_ratios_and_the_worst_case_follow_their_definitions(tiny):
    """Scores from the cells' means, the ratio from the paired regrets, the worst case's score from its rows'
    d and c. Catches a score of the median, a ratio against a user's policy, a frontier score mixing d and c."""
    _, results, _, worst, _ = tiny
    e, cells = _cells(results, "misspecification", "Robust UCB")
    uniform = [s["uniform_regret"] for s in e["settings"]]
    scores = [max(0.0, 1 - c["mean"] / u) for c, u in zip(cells, uniform, strict=True)]
    assert e["scores"]["Robust UCB"] == pytest.approx(np.mean(scores), rel=1e-12)
    (w,) = worst["experiments"]
    rows = {(r["policy"], r["family"], r["eps"]): r for r in worst["frontier"]}
    assert set(rows) == {(n, *s) for n in ("mine", "UCB1") for s in worst_case.SETTINGS}
    for family, eps in worst_case.SETTINGS:  # paired: the same fits
        assert rows["mine", family, eps] == rows["UCB1", family, eps] | {"policy": "mine"}
    for name in ("mine", "UCB1"):
        expected = [worst_case.frontier_score(rows[name, *s]["d"], rows[name, *s]["c"], s[1])
                    for s in worst_case.SETTINGS]
        assert w["scores"][name] == pytest.approx(np.mean(expected), rel=1e-12)
        assert all(0.0 <= x <= 1.0 for x in expected)
    assert worst_case.frontier_score(1 / (1 + 0.5), 0.0, 0.5) == 1.0  # the minimax d, constant regret
    assert worst_case.frontier_score(1.0, 1.0, 1.0) == 0.0


def test_the_command_prints_the_scorecard_on_stdout(tiny, capsys):
    """As the other commands print their table: the report's scorecard, every run read back from the
    fixture's store (stderr keeps the banner and the progress)."""
    out, first, *_ = tiny
    argv = ["bench", "--policy", "htb_jax:UCB1()", "--name", "mine", "--size", "tiny", "--only", ",".join(ONLY),
            "--out", str(out)]
    assert main(argv) == 0
    stdout, stderr = capsys.readouterr()
    assert stdout == scorecard_markdown(first) + "\n"
    assert stdout.startswith("| policy | horizon | misspecification |\n|---|---:|---:|\n| **mine** | ")
    assert stderr.startswith("htb-jax bench: suite ht-v1, size tiny;") and "read back" in stderr


def test_an_o_t_peer_runs_to_its_reach_only(tiny):
    """Robust UCB (an ``O(t)`` round) has no cell beyond the size's reach; the others have every cell. Catches
    a reach ignored or applied to every contender."""
    _, results, *_ = tiny
    reach = TINY.reach
    _, cells = _cells(results, "horizon", "Robust UCB")
    assert [c is not None for c in cells] == [h <= reach for h in TINY.horizons]
    _, cells = _cells(results, "horizon", "UCB1")
    assert all(c is not None for c in cells)


def test_a_second_call_reads_every_run_back_with_the_same_results(tiny):
    """Catches a store that recomputes, or results (wall times included) that depend on whether a run was
    read back."""
    out, first, second, *_ = tiny
    assert json.dumps(first) == json.dumps(second)
    assert json.loads((out / "results.json").read_text())["suite"] == suite.VERSION
    assert (out / "report.html").exists() and (out / "scorecard.tex").exists()


def test_an_interrupted_run_resumes_to_the_same_results(tiny, tmp_path, monkeypatch):
    """Ctrl-C during the third run keeps the two finished ones; the same call then gives the uninterrupted
    results. Catches a half-written run read back, or a finished one lost."""
    _, first, _, _, kwargs = tiny
    original, calls = runner.simulate, []

    def simulate(*args, **kw):
        calls.append(None)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args, **kw)

    monkeypatch.setattr(runner, "simulate", simulate)
    monkeypatch.setattr(runner, "write_report", lambda results, directory: None)
    kwargs = {**kwargs, "out": str(tmp_path)}
    with pytest.raises(KeyboardInterrupt) as interrupted:
        runner.run(htb.UCB1(), **kwargs)
    assert len(list(tmp_path.glob("runs/*/*/chunks/*.npz"))) == 2
    # Said in runs of the whole bench (it said "before the first of 1 chunks was stored in <the third run>").
    assert (interrupted.value.stored, interrupted.value.unit, interrupted.value.directory) == (2, "runs", str(tmp_path))
    assert interrupted.value.total > 3
    monkeypatch.setattr(runner, "simulate", original)
    again = runner.run(htb.UCB1(), **kwargs)
    assert again["experiments"] == first["experiments"]


def test_a_group_of_several_passes_is_stored_pass_by_pass(tiny, tmp_path, monkeypatch):
    """A group whose seeds run in several passes of rounds (a GPU's ForceMoM at T = 10^6: 8) stores each
    pass once done: Ctrl-C in the second keeps the first, and the same call then gives the results of one
    pass. Catches a group stored whole (its finished passes lost) or passes joined along the wrong axis."""
    from htb_jax._src import engine

    _, first, _, _, kwargs = tiny
    monkeypatch.setattr(engine, "_CPU_SEED_CHUNK_BYTES", 1)  # one seed a pass: 4 passes of the tiny size's 4
    monkeypatch.setattr(runner, "_passes_stored", lambda: True)  # as off a CPU
    original, calls = runner.simulate, []

    def simulate(*args, **kw):
        calls.append(kw["num_seeds"])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(*args, **kw)

    monkeypatch.setattr(runner, "simulate", simulate)
    monkeypatch.setattr(runner, "write_report", lambda results, directory: None)
    kwargs = {**kwargs, "out": str(tmp_path), "only": ["horizon"], "peers": False}
    with pytest.raises(KeyboardInterrupt):
        runner.run(htb.UCB1(), **kwargs)
    assert calls == [1, 1] and len(list(tmp_path.glob("runs/*/horizon-*/chunks/*.npz"))) == 1
    monkeypatch.setattr(runner, "simulate", original)
    again = runner.run(htb.UCB1(), **kwargs)
    assert len(list(tmp_path.glob("runs/*/horizon-*/chunks/*.npz"))) == TINY.seeds
    assert _cells(again, "horizon", "mine")[1] == _cells(first, "horizon", "mine")[1]


def test_a_worst_case_stopped_before_its_seconds_are_recorded_resumes(tiny, monkeypatch):
    """Ctrl-C between a worst-case store's last chunk and its seconds.json: every later call failed on the
    missing file. It reads its runs back, the same numbers, with the wall time unknown (the report's -)."""
    out, *_, worst, kwargs = tiny
    removed = list(out.glob("runs/*/worst-case*/seconds.json"))
    assert removed
    for path in removed:
        path.unlink()
    # and a report's files left by a command killed while it moved them into place (kill -9): never removed
    (out / ".htb-jax-outputs-abc123").mkdir()
    monkeypatch.setattr(runner, "peers", lambda: tuple(p for p in peers_lib.peers() if p.name == "UCB1"))
    again = runner.run(htb.UCB1(), **{**kwargs, "only": [worst_case.NAME]})
    assert again["experiments"] == worst["experiments"]
    assert all(math.isnan(p["wall_s"]) for p in again["policies"])  # None in results.json
    assert not (out / ".htb-jax-outputs-abc123").exists()


def test_an_out_another_benchmark_writes_is_refused_before_it_runs(tiny, tmp_path):
    """Two benchmarks into one out were refused only when they met in a run's folder, named by it (or not at
    all, each writing the report over the other's)."""
    *_, kwargs = tiny
    with lock_held_by_another_process(tmp_path), pytest.raises(
            htb.ForeignStoreError, match=r"^the output directory '.*' is being written by another running command "
                                         r"\(process 4242\); wait for it to end, or give another out$"):
        runner.run(htb.UCB1(), **{**kwargs, "out": str(tmp_path)})
    assert not (tmp_path / "runs").exists()


def test_bad_arguments_are_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"only must be None or experiment names among tail, .*worst-case; got "
                                         r"only=\['tails'\]"):
        htb.bench.run(htb.UCB1(), only=["tails"], out=str(tmp_path / "x"))
    with pytest.raises(ValueError, match=r"only must not repeat a name; got only=\['tail', 'tail'\], with tail"):
        htb.bench.run(htb.UCB1(), only=["tail", "tail"], out=str(tmp_path / "x"))
    with pytest.raises(ValueError, match="peers=False needs a policy"):
        htb.bench.run(None, peers=False, out=str(tmp_path / "x"))
    assert list(tmp_path.iterdir()) == []
    assert main(["bench", "--only", "tails", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--only takes experiment names" in err
    assert main(["bench", "--only", "tail,,gaps", "--out", str(tmp_path / "y")]) == 2  # the empty name was dropped
    assert "--only takes experiment names" in capsys.readouterr().err
    assert main(["bench", "--only", "tail,tail", "--out", str(tmp_path / "y")]) == 2  # it ran tail once
    assert capsys.readouterr().err == ("htb-jax: error: --only must not repeat a name; got --only='tail,tail', "
                                       "with tail more than once\n")
    assert not (tmp_path / "y").exists()
    assert main(["bench", "--policy", "htb_jax:UCB", "--out", str(tmp_path / "y")]) == 2
    assert "--policy: 'UCB' failed in htb_jax" in capsys.readouterr().err
    # A peer's name: the one line alone, naming the flag (it came after the banner, naming name=)
    assert main(["bench", "--policy", "htb_jax:UCB1()", "--name", "UCB1", "--out", str(tmp_path / "y")]) == 2
    assert capsys.readouterr().err == ("htb-jax: error: --name must differ from every built-in peer's name; got "
                                       "--name='UCB1' (give another name)\n")
    # No --name: the expression labels the policy (it said "got --name='UCB1()'", a --name never given)
    assert main(["bench", "--policy", "htb_jax:UCB1()", "--out", str(tmp_path / "y")]) == 2
    assert capsys.readouterr().err == ("htb-jax: error: --name must be given for this policy: its label by default, "
                                       "--policy's expression 'UCB1()', reads as the built-in peer 'UCB1''s runs/UCB1 "
                                       "(give a name of its own)\n")
    with pytest.raises(ValueError, match=r"^name must be given for this policy: its label by default, its repr "
                                         r"'UCB1\(\)', reads as"):
        htb.bench.run(htb.UCB1(), out=str(tmp_path / "y"))
    assert not (tmp_path / "y").exists()
    # A grid of policies, or a function that makes something else: refused by name, nothing stored
    # (before, the grid ran and stored its first run, then failed on its regrets' shape).
    grid = htb.RobustUCB(eps=1.0, u=np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"htb.bench.run takes one policy \(batch shape \(\)\) for policy; got "
                                         r"policy=RobustUCB\(.*whose batch shape is \(2,\)"):
        htb.bench.run(grid, only=["tail"], out=str(tmp_path / "z"), progress=False)
    with pytest.raises(TypeError, match=r"htb.bench.run takes a policy instance .* for policy\(eps=1, u=.*\); got "
                                        r"policy\(eps=1, u=.*\)=5 \(int\)"):
        htb.bench.run(lambda eps, u: 5, only=["tail"], out=str(tmp_path / "z"), progress=False)
    assert not list((tmp_path / "z").glob("runs/*"))
    # A function that raises at some setting's (eps, u): one line naming it and the values, before any run
    # (before: a traceback, or the experiments before that setting computed and stored first).
    def picky(eps, u):
        if eps < 0.5:
            raise RuntimeError("eps too small for me")
        return htb.UCB1()

    with pytest.raises(ValueError, match=r"^.*picky: policy\(eps=0.075, u=0.534674\) raised RuntimeError: eps too small "
                                         r"for me$"):  # misspecification's eps told x 0.1
        htb.bench.run(picky, only=["gaps", "misspecification"], out=str(tmp_path / "z"), progress=False)
    assert not (tmp_path / "z" / "runs").exists()
    # A name that reads as a peer's in file names (runs/Robust_UCB, runs/UCB1 on a case-blind file system),
    # with the peers or without (its runs once shared the peer's folder, refused on every later run).
    with pytest.raises(ValueError, match=r"^name must differ from every built-in peer's name, also as a folder name; "
                                         r"got name='Robust_UCB', which reads as 'Robust UCB''s runs/Robust_UCB "
                                         r"\(give another name\)$"):
        htb.bench.run(htb.UCB1(), name="Robust_UCB", out=str(tmp_path / "z"))
    for name in ("UCB1", "ucb1"):
        with pytest.raises(ValueError, match=r"^name must differ from every built-in peer's name"):
            htb.bench.run(htb.UCB1(), name=name, peers=False, out=str(tmp_path / "z"))
    # A blank name showed blank in the report; a newline split the Markdown scorecard's row.
    for name in ("  ", "my\npolicy"):
        with pytest.raises(ValueError, match=r"^name must be a label of printable characters, not blank; got "
                                             rf"name={re.escape(repr(name))}\.$"):
            htb.bench.run(htb.UCB1(), name=name, peers=False, out=str(tmp_path / "z"))

    def raises_at_half(eps, u):  # a value only the worst case tells it: met after the runs at eps = 1
        if eps == 0.5:
            raise RuntimeError("no policy at eps = 0.5")
        return htb.UCB1()

    with pytest.raises(ValueError, match=r"raises_at_half: policy\(eps=0.5, u=282843\) raised RuntimeError: no policy "
                                         r"at eps = 0.5"):
        htb.bench.run(raises_at_half, peers=False, only=["worst-case"], out=str(tmp_path / "z"), progress=False)
    assert not (tmp_path / "z" / "runs").exists()
    # --name labels --policy's policy: alone it was ignored (every peer ran), empty it fell back silently
    assert main(["bench", "--name", "mine", "--out", str(tmp_path / "y")]) == 2
    assert capsys.readouterr().err == ("htb-jax: error: --name labels the policy --policy gives; without --policy it "
                                       "would be ignored\n")
    assert main(["bench", "--policy", "htb_jax:UCB1()", "--name", "", "--out", str(tmp_path / "y")]) == 2
    assert capsys.readouterr().err == "htb-jax: error: --name must be a non-empty label; got --name=''\n"
    assert not (tmp_path / "y").exists()


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _DictSummary:
    """UCB1 whose summary is a dict, not a PolicySummary: a mistake only a trace of its kernel finds."""

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        return htb.UCB1().kernel(spec)._replace(summary=lambda state, ctx: {"committed": 0})


def test_a_kernel_that_breaks_the_protocol_is_refused_before_the_banner(tmp_path, capsys, monkeypatch):
    """Its kernel traced on the first setting among the checks (before: the banner printed, an empty
    runs folder made, then the error)."""
    monkeypatch.setattr(htb, "DictSummary", _DictSummary, raising=False)
    assert main(["bench", "--policy", "htb_jax:DictSummary()", "--no-peers", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("htb-jax: error: _DictSummary's kernel.summary must return htb.PolicySummary(") and \
        err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _AnytimeReadingT:
    """UCB1 declared anytime whose act reads T: the worst case (measure at checkpoints) refuses it."""

    anytime = True

    @property
    def batch_shape(self):
        return ()

    def kernel(self, spec):
        ucb = htb.UCB1().kernel(spec)
        return ucb._replace(act=lambda state, ctx: jax.numpy.where(ctx.horizon > 10**9, 0, ucb.act(state, ctx)))


def test_what_the_worst_case_refuses_is_refused_before_the_first_run(tmp_path):
    """Before: the other experiments ran and were stored, then the worst case refused the declaration."""
    with pytest.raises(ValueError, match=r"^measure reads one run to T=10000 at checkpoints \(its declaration anytime = "
                                         r"True\), but _AnytimeReadingT's init, act or update reads ctx.horizon"):
        htb.bench.run(_AnytimeReadingT(), peers=False, only=["gaps", "worst-case"], out=str(tmp_path / "o"))
    assert not (tmp_path / "o").exists()


def test_summary_cells_are_the_statistics_of_the_stored_regrets(tiny):
    """The cells are :func:`stats.summary` of the stored per-seed regrets (catches a cell built from
    another setting's row)."""
    out, results, *_ = tiny
    stored = np.load(out / "runs" / "UCB1" / "horizon-0" / "chunks" / "chunk-00000.npz")
    _, cells = _cells(results, "horizon", "UCB1")
    for col, cell in enumerate(cells):
        expected = stats.summary(stored["regret"][0, col])
        assert {k: cell[k] for k in expected} == expected
    assert math.isfinite(results["policies"][0]["wall_s"])


REFERENCE = ROOT / "benchmarks" / "bench-ht-v1-cpu"


def test_the_guides_reference_table_is_the_stored_reports():
    """bench.md's scorecard is the stored report's, which write_report renders from the stored results, and
    the figures its prose states hold. Catches a table edited by hand or left behind a new reference run."""
    report = (REFERENCE / "report.md").read_text()
    table = re.search(r"(\| policy \| tail .*?)\n\n", report, re.S).group(1)
    assert table in (ROOT / "docs" / "guides" / "bench.md").read_text()
    results = json.loads((REFERENCE / "results.json").read_text())
    rows = scorecard_rows(results)
    assert [r["policy"] for r in rows] == [p.name for p in peers_lib.peers()]
    assert results["suite"] == suite.VERSION and results["size"] == "cpu"
    assert int(htb.num_arms(suite.experiments("cpu")[0].settings[0].instance)) * int(htb.num_blocks(4, 2000)) == 776
    beyond = {r["policy"] for r in results["frontier"] if r["family"] == "stable a = 1.75" and r["off_frontier"] < 0}
    assert {"AdaR-ETC balanced", "AdaR-ETC order-free"} <= beyond  # both settings beyond the line on stable arms
    # the stored runs the guide says a second policy reads back: one per group, one per worst-case family
    # (one per family and eps for a policy told eps)
    worst = {c.name: len(worst_case.SETTINGS) if c.told else len(worst_case.CASES) for c in peers_lib.peers()}
    stored = sum(worst.values()) + sum(len(runner.groups(e, c)) for c in peers_lib.peers()
                                       for e in suite.experiments("cpu"))
    assert f"reads the peers' {stored} stored runs back" in (ROOT / "docs" / "guides" / "bench.md").read_text()


def test_the_stored_report_is_what_write_report_renders_from_its_results():
    """report.md and scorecard.tex are what the report code renders from the stored results.json today.
    Catches a stored report left behind by a change of the report's rendering (its worst-case table named
    T = 10^4 for the O(t) peers' regrets at T = 2000)."""
    from htb_jax._src.bench import report

    results = json.loads((REFERENCE / "results.json").read_text())
    figures = {e["name"]: (f"regret-{report._file_stem(e['name'])}.png" if any(
        c is not None for curves in e["curves"].values() for c in curves) else None) for e in results["experiments"]}
    assert report._markdown(report._blocks(results, figures)) == (REFERENCE / "report.md").read_text()
    assert report._latex(results) == (REFERENCE / "scorecard.tex").read_text()


def test_a_stored_reference_run_reproduces():
    """UCB1 on the gaps experiment at the CPU size, run again, gives the stored cells: bit for bit on a CPU
    with FMA (the reference's), the means to 1e-12 relative elsewhere (a pseudo-regret is exact; the
    decisions' float32 indices may round differently without FMA, so there the means agree in law
    only: 4 standard errors). Catches a suite whose gaps experiment or seeds changed without a new
    reference."""
    results = json.loads((REFERENCE / "results.json").read_text())
    (stored,) = [e for e in results["experiments"] if e["name"] == "gaps"]
    (ucb1,) = [p for p in peers_lib.peers() if p.name == "UCB1"]
    (e,) = [x for x in suite.experiments("cpu") if x.name == "gaps"]
    (group,) = runner.groups(e, ucb1)
    arrays, _, _ = runner.run_group(ucb1, e, group, "cpu", None)
    _, cells, _ = runner._cells(e, [group], {("gaps", 0): arrays})
    for got, want in zip(cells, stored["cells"]["UCB1"], strict=True):
        if host_fuses_multiply_add():
            assert got == want
        else:
            se = (want["mean_high"] - want["mean"]) / 1.959964  # the low end may be clipped at 0
            assert abs(got["mean"] - want["mean"]) <= 4 * se


def test_a_stale_stored_run_names_its_policys_folder(tiny, tmp_path, monkeypatch):
    """A run computed by another program (here: another htb_jax version) is refused with the cheap way out
    first, the policy's own folder under runs/ (``--restart`` recomputes every peer too: 17 minutes at
    the CPU size). Catches the sweep's advice, which names --restart alone."""
    import shutil

    from htb_jax._src import version as version_module
    from htb_jax._src.chunk_store import StaleStoreError

    out, *_, kwargs = tiny
    shutil.copytree(out, tmp_path / "copy")
    monkeypatch.setitem(suite.SIZES, "tiny", TINY)
    monkeypatch.setattr(runner, "peers", lambda: tuple(p for p in peers_lib.peers() if p.name in FIELD))
    monkeypatch.setattr(version_module, "__version__", "0.1.0.dev9")
    folder = re.escape(str(tmp_path / "copy" / "runs" / "mine")) + "-[0-9a-f]{8}"  # the label and the policy it labels
    with pytest.raises(StaleStoreError, match=rf"another program \(htb_jax .* there, 0\.1\.0\.dev9 here\); delete "
                                              rf"{folder} to compute its runs again \(the other runs stored there are "
                                              r"kept\), give another --out, or --restart to compute every run of this "
                                              r"command again$"):
        runner.run(htb.UCB1(), **{**kwargs, "out": str(tmp_path / "copy")})
