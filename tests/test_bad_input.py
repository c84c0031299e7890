"""Every bad input is a TypeError or ValueError naming the argument and the value, before tracing;
the command line prints one line and exits with status 2, writing nothing."""

import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import resumable
from htb_jax._src.cli import main
from htb_jax._src.frontier import TFrontierConfig
from htb_jax._src.reward_table import as_threefry_key
from htb_jax._src.sweep import SweepConfig
from htb_jax._src.validation import check_broadcast, check_integer, check_interval, real_array

KEY = jax.random.key(0)
NU = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.1)
POLICY = htb.AdaRETC.order_free()


def _raises(kind, pattern, fn):
    with pytest.raises(kind, match=pattern) as info:
        fn()
    return str(info.value)


# -- library: every case names the argument and the value given -------------------------------------------

LIBRARY = {
    # strings, bools and complex numbers where numbers belong
    "alpha str": (TypeError, r"alpha must be a real number.*got alpha='0.8' \(str\)",
                  lambda: htb.AdaRETC(eps=1.0, alpha="0.8", q=0.0)),
    "alpha str list": (TypeError, r"alpha must be.*got alpha=\['0.8'\].*strings",
                       lambda: htb.AdaRETC(eps=1.0, alpha=["0.8"], q=0.0)),
    "eps bool": (TypeError, r"eps must be a real number.*got eps=True \(bool\)",
                 lambda: htb.AdaRETC(eps=True, alpha=0.8, q=0.0)),
    "q complex": (TypeError, r"q must be a real number.*got q=0j.*complex",
                  lambda: htb.AdaRETC(eps=1.0, alpha=0.8, q=0j)),
    "alpha ragged": (ValueError, r"alpha must be .*equal lengths.*got alpha=\[\[0.8\], \[0.8, 0.9\]\]",
                     lambda: htb.AdaRETC(eps=1.0, alpha=[[0.8], [0.8, 0.9]], q=0.0)),
    "shape str": (TypeError, r"Pareto shape must be a real number.*got Pareto shape='1.5' \(str\)",
                  lambda: htb.Pareto(loc=0.0, shape="1.5")),
    "growth str": (TypeError, r"growth must be a real number.*got growth='2' \(str\)",
                   lambda: htb.AnytimeAdaRETC(eps=1.0, alpha=0.8, q=0.0, growth="2")),
    "rho bool": (TypeError, r"rho must be a real number.*got rho=True", lambda: htb.ForceMoM(rho=True)),
    "u str": (TypeError, r"u must be a real number.*got u='1'", lambda: htb.RobustUCB(1.0, u="1")),
    "gap str": (TypeError, r"gap must be a real number.*got gap='0.1'",
                lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), 3, "0.1")),
    "num_arms str": (TypeError, r"num_arms must be an integer >= 2; got num_arms='3' \(str\)",
                     lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), "3", 0.1)),
    "base str": (TypeError, r"base must be a distribution of htb_jax.*got base='x' \(str\)", lambda: htb.equal_gap("x", 3, 0.1)),
    # shapes that do not broadcast
    "policy shapes": (ValueError, r"parameters of AdaRETC must broadcast.*eps of shape \(2,\), alpha of shape \(3,\)",
                      lambda: htb.AdaRETC(eps=jnp.ones(2), alpha=jnp.full(3, 0.8), q=0.0)),
    "anytime shapes": (ValueError, r"parameters of AnytimeAdaRETC must broadcast.*growth of shape \(4,\)",
                       lambda: htb.AnytimeAdaRETC(eps=1.0, alpha=jnp.full(3, 0.8), q=0.0, growth=jnp.full(4, 2.0))),
    "ucb shapes": (ValueError, r"parameters of RobustUCB must broadcast.*eps of shape \(2,\), v of shape \(3,\)",
                   lambda: htb.RobustUCB(jnp.ones(2), v=jnp.ones(3), estimator="mom")),
    "arm shapes": (ValueError, r"parameters of Pareto must broadcast.*loc of shape \(3,\), shape of shape \(2,\)",
                   lambda: htb.Pareto(loc=jnp.zeros(3), shape=jnp.full(2, 1.5))),
    "two-point shapes": (ValueError, r"parameters of TwoPoint must broadcast.*low of shape \(2,\), high of shape \(3,\)",
                         lambda: htb.TwoPoint(jnp.zeros(2), jnp.ones(3), 0.5)),
    # float32 rewards
    "loc overflow": (ValueError, r"Pareto loc must lie in \[-3.40\d*e\+38, 3.40\d*e\+38\] \(rewards are float32.*"
                     r"got Pareto loc=1e\+39", lambda: htb.Pareto(loc=1e39, shape=1.5)),
    "spike overflow": (ValueError, r"spike_prob must be at least 2 gap / 3.4028235e\+38 = 5.87747e-39 for gap=1 "
                       r"\(the spike 2 gap / spike_prob is a float32 reward\); got spike_prob=1e-299",
                       lambda: htb.lower_bound_pair(2, 1.0, 1e-299)),
    "high overflow": (ValueError, r"TwoPoint high must lie in .*float32.*got TwoPoint high=2e\+299",
                      lambda: htb.TwoPoint(low=0.0, high=2e299, p=0.5)),
    "scale underflow": (ValueError, r"a positive StudentT scale must be at least 1.1754944e-38 \(rewards are float32.*"
                        r"got StudentT scale=1e-50", lambda: htb.StudentT(df=3.0, loc=0.0, scale=1e-50)),
    "gap collapse": (ValueError, r"arms 0 and 1 have means 100000000.1 and 100000000 \(gap 0.1\), but rewards are "
                     r"float32, whose spacing there is 8.*gap 0",
                     lambda: htb.simulate(KEY, POLICY, htb.equal_gap(htb.Pareto(loc=1e8, shape=1.5), 3, 0.1), 100, 2)),
    # keys that are not keys
    "key int": (TypeError, r"key must be a jax.random.key\(seed\).*got key=0 \(int\)\. Use jax.random.key\(0\)",
                lambda: htb.simulate(0, POLICY, NU, 100, 2)),
    "key str": (TypeError, r"key must be a jax.random.key.*got key='0' \(str\)", lambda: htb.simulate("0", POLICY, NU, 100, 2)),
    "key float data": (TypeError, r"key must be .*got key data of dtype float64 and shape \(2,\)",
                       lambda: htb.simulate(np.zeros(2), POLICY, NU, 100, 2)),
    "key batch": (ValueError, r"key must be one key.*got a batch of keys of shape \(4,\)",
                  lambda: htb.simulate(jax.random.split(KEY, 4), POLICY, NU, 100, 2)),
    "key length": (ValueError, r"key must be .*got uint32 key data of shape \(3,\), not \(2,\)",
                   lambda: htb.reward_table(np.zeros(3, np.uint32), NU, 4)),
    # horizons
    "T empty": (ValueError, r"horizon \(T\) must be an integer in \[1, 10{18}\] or a non-empty sequence.*got horizon \(T\)=\[\]",
                lambda: htb.simulate(KEY, POLICY, NU, [], 2)),
    "T True": (TypeError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)=True \(bool\)",
               lambda: htb.simulate(KEY, POLICY, NU, True, 2)),
    "T inf": (ValueError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)=inf\.",
              lambda: htb.simulate(KEY, POLICY, NU, float("inf"), 2)),
    "T fraction": (ValueError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)=1500.7\.",
                   lambda: htb.simulate(KEY, POLICY, NU, 1500.7, 2)),
    "T in a list": (ValueError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)=1500.7\.",
                    lambda: htb.simulate(KEY, POLICY, NU, [1000, 1500.7], 2)),
    "T str": (TypeError, r"horizon \(T\) must be an integer.*got horizon \(T\)='1000' \(str\)",
              lambda: htb.simulate(KEY, POLICY, NU, "1000", 2)),
    "T huge": (ValueError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)=1180591620717411303424\.",
               lambda: htb.simulate(KEY, POLICY, NU, 2**70, 2)),
    # simulate's other arguments
    "pull_chunk 0": (ValueError, r"pull_chunk must be an integer in \[1, 1048576\]; got pull_chunk=0\.",
                     lambda: htb.simulate(KEY, POLICY, NU, 100, 2, pull_chunk=0)),
    "pull_chunk -1": (ValueError, r"pull_chunk must be an integer in \[1, 1048576\]; got pull_chunk=-1\.",
                      lambda: htb.simulate(KEY, POLICY, NU, 100, 2, pull_chunk=-1)),
    "pull_chunk 1.5": (ValueError, r"pull_chunk must be an integer in \[1, 1048576\]; got pull_chunk=1.5\.",
                       lambda: htb.simulate(KEY, POLICY, NU, 100, 2, pull_chunk=1.5)),
    "first_seed": (ValueError, r"first_seed \+ num_seeds must be at most 2\^32.*got first_seed \+ num_seeds=4294967295 \+ 2",
                   lambda: htb.simulate(KEY, POLICY, NU, 100, 2, first_seed=2**32 - 1)),
    "first_seed 2^32": (ValueError, r"first_seed must be an integer in \[0, 4294967295\]; got first_seed=4294967296",
                        lambda: htb.simulate(KEY, POLICY, NU, 100, 2, first_seed=2**32)),
    "seed_keys first_seed": (ValueError, r"first_seed must be an integer in \[0, 4294967293\]; got first_seed=4294967294",
                             lambda: htb.seed_keys(KEY, 3, 2**32 - 2)),
    "num_seeds str": (TypeError, r"num_seeds must be an integer.*got num_seeds='2' \(str\)",
                      lambda: htb.simulate(KEY, POLICY, NU, 100, "2")),
    "memory_budget str": (TypeError, r"memory_budget must be an integer number of bytes.*got memory_budget='1GiB' \(str\)",
                          lambda: htb.simulate(KEY, POLICY, NU, 100, 2, memory_budget="1GiB")),
    "instance": (TypeError, r"instance must be a distribution of htb_jax.*got instance='x' \(str\)", lambda: htb.simulate(KEY, POLICY, "x", 100, 2)),
    "sampler": (ValueError, r"sampler must be one of auto, per_pull, block_sums, order_statistic; got 'exact'",
                lambda: htb.simulate(KEY, POLICY, NU, 100, 2, sampler="exact")),
    "engine": (TypeError, r"engine must be True or False; got engine='yes'",
               lambda: htb.simulate(KEY, POLICY, NU, 100, 2, engine="yes")),
    # run_on_rewards
    "rewards NaN": (ValueError, r"rewards must not hold NaN.*got NaN at rewards\[1, 2\]",
                    lambda: htb.run_on_rewards(POLICY, jnp.zeros((3, 500)).at[1, 2].set(jnp.nan), jnp.zeros(3), 100)),
    "means length": (ValueError, r"means must have shape \(K,\) = \(3,\).*got means of shape \(2,\)",
                     lambda: htb.run_on_rewards(POLICY, jnp.zeros((3, 500)), jnp.zeros(2), 100)),
    "means str": (TypeError, r"means must be .*got means='0'", lambda: htb.run_on_rewards(POLICY, jnp.zeros((3, 500)), "0", 100)),
    "rewards str": (TypeError, r"rewards must be .*got rewards='abc' \(str\)",
                    lambda: htb.run_on_rewards(POLICY, "abc", jnp.zeros(3), 100)),
    "ror pull_chunk": (ValueError, r"pull_chunk must be an integer in \[1, 1048576\]; got pull_chunk=0\.",
                       lambda: htb.run_on_rewards(POLICY, jnp.zeros((3, 500)), jnp.zeros(3), 100, pull_chunk=0)),
    # median_of_means
    "mom blocks > N": (ValueError, r"num_blocks must be at most the number of samples N=5.*got num_blocks=6",
                       lambda: htb.median_of_means(jnp.ones(5), 6)),
    "mom blocks > n": (ValueError, r"num_blocks must be at most the number of samples n=2.*got num_blocks=3",
                       lambda: htb.median_of_means(jnp.ones(10), 3, 2)),
    "mom no samples": (ValueError, r"x must hold at least one sample \(N >= 1\); got x of shape \(0,\)",
                       lambda: htb.median_of_means(jnp.ones(0), 1)),
    "mom scalar": (ValueError, r"x must have a sample axis.*got a scalar", lambda: htb.median_of_means(1.0, 1)),
    "mom str": (TypeError, r"x must be .*got x='abc'", lambda: htb.median_of_means("abc", 1)),
    "mom blocks str": (TypeError, r"num_blocks must be an integer >= 1; got num_blocks='2'",
                       lambda: htb.median_of_means(jnp.ones(4), "2")),
    # the regret proxy
    "tau str": (TypeError, r"tau must be a real number.*got tau='0.1' \(str\)",
                lambda: htb.regret_proxy(KEY, htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), NU, 100, 4, "0.1")),
    "proxy T str": (TypeError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)='100' \(str\)",
                    lambda: htb.regret_proxy(KEY, htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), NU, "100", 4, 0.1)),
    # the sweep and frontier configurations
    "sweep alphas str": (TypeError, r"alphas must be a real number.*got alphas=\['0.8'\]",
                         lambda: SweepConfig(alphas=("0.8",)).validate()),
    "sweep alphas empty": (ValueError, r"alphas must be a non-empty list of numbers; got alphas=\(\)",
                           lambda: SweepConfig(alphas=()).validate()),
    "sweep horizons": (ValueError, r"horizons must be an integer in \[1, 10{18}\]; got horizons=1500.7",
                       lambda: SweepConfig(horizons=(1500.7,)).validate()),
    "sweep key": (ValueError, r"key must be an integer in \[0, 4294967295\]; got key=-1", lambda: SweepConfig(key=-1).validate()),
    "sweep seeds": (ValueError, r"num_seeds must be an integer in \[2, 4294967296\]; got num_seeds=1000000000000",
                    lambda: SweepConfig(num_seeds=10**12).validate()),
    "sweep chunks": (ValueError, r"seed_chunk must be at least 40000 for num_seeds=4000000000 \(at most 100000 chunks",
                     lambda: SweepConfig(num_seeds=4 * 10**9, seed_chunk=2).validate()),
    "sweep budget": (ValueError, r"memory_budget must be at least \d+ bytes.*got memory_budget=1\.",
                     lambda: SweepConfig(memory_budget=1).validate()),
    "sweep budget str": (TypeError, r"memory_budget must be an integer number of bytes.*got memory_budget='1GiB'",
                         lambda: SweepConfig(memory_budget="1GiB").validate()),
    "frontier key": (ValueError, r"key must be an integer in \[0, 4294967295\]; got key=-1",
                     lambda: TFrontierConfig(key=-1).validate()),
    "frontier fit_from": (ValueError, r"fit_from must be an integer in \[1, 10{18}\]; got fit_from=1500.5",
                          lambda: TFrontierConfig(fit_from=1500.5).validate()),
    "frontier eps empty": (ValueError, r"eps_values must be a non-empty list of numbers; got eps_values=\(\)",
                           lambda: TFrontierConfig(eps_values=()).validate()),
    "seed_chunks": (ValueError, r"seed_chunk must be at least 10000000 for num_seeds=1000000000000|num_seeds must be",
                    lambda: resumable.seed_chunks(10**12, 1)),
}


@pytest.mark.parametrize("case", list(LIBRARY))
def test_library_refuses_bad_input_before_tracing(case):
    kind, pattern, fn = LIBRARY[case]
    _raises(kind, pattern, fn)


def test_the_refusals_run_before_anything_is_compiled():
    # Each case raises before tracing: no cache entry of simulate's program appears.
    jax.clear_caches()
    with jax.log_compiles(True):
        for case in ("T fraction", "pull_chunk 0", "key batch", "gap collapse", "rewards NaN", "mom blocks > N"):
            kind, pattern, fn = LIBRARY[case]
            _raises(kind, pattern, fn)


def test_a_near_but_resolvable_location_is_accepted():
    # Near 1e6 float32 spacing is 1/16: a gap of 0.1 becomes 0.125 in the rewards, within half of it.
    htb.memory_plan(KEY, POLICY, htb.equal_gap(htb.Pareto(loc=1e6, shape=1.5), 3, 0.1), 100, 2)


def test_good_keys_pass():
    assert as_threefry_key(jax.random.key(3)).shape == ()
    np.testing.assert_array_equal(jax.random.key_data(as_threefry_key(jax.random.PRNGKey(3))),
                                  jax.random.key_data(jax.random.key(3)))


def test_helpers_let_tracers_and_integral_floats_through():
    check_integer("horizon (T)", [1e3, 1e18], 1, maximum=10**18)
    check_integer("horizon (T)", 2**62, 1)
    with pytest.raises(ValueError, match=r"n must be an integer >= 0; got n=-1"):
        check_integer("n", np.array([3, -1]), 0)

    def traced(x):
        assert real_array("x", x) is None
        check_interval("x", x, 0.0, 1.0, low_closed=True, high_closed=True)
        check_integer("x", x, 1)
        return htb.AdaRETC(eps=1.0, alpha=x, q=0.0).beta

    jax.eval_shape(traced, 0.8)
    assert check_broadcast("P", a=jnp.ones((2, 1)), b=jnp.ones(3)) == (2, 3)


def test_policies_still_trace_under_jit_vmap_and_grad():
    def beta(alpha):
        return htb.AdaRETC(eps=1.0, alpha=alpha, q=0.0).beta

    assert float(jax.grad(beta)(0.8)) == -2.0
    np.testing.assert_allclose(jax.vmap(beta)(jnp.array([0.7, 0.8])), [0.6, 0.4])
    assert jax.eval_shape(lambda s: htb.Pareto(loc=0.0, shape=s).mean(), 1.5).shape == ()


# -- the command line: one line on stderr, status 2, nothing written ------------------------------------

SMALL = ["sweep", "--arms", "3", "--alphas", "2/3,0.9", "--qs", "0", "--horizons", "1000,5000",
         "--seeds", "4", "--seed-chunk", "2", "--pareto-shape", "3"]

CLI = [
    (["--horizons", "1500.7"], "horizons must be an integer in [1, 1000000000000000000]; got horizons=1500.7."),
    (["--horizons", "inf"], "horizons must be an integer in [1, 1000000000000000000]; got horizons=inf."),
    (["--horizons", ","], "argument --horizons: expected comma-separated numbers, at least one; got ','"),
    (["--horizons", "True"], "argument --horizons: not a number: 'True'"),
    (["--alphas", "2/0"], "argument --alphas: division by zero in '2/0'"),
    (["--alphas", ""], "argument --alphas: expected comma-separated numbers, at least one; got ''"),
    (["--alphas", "abc"], "argument --alphas: not a number: 'abc'"),
    (["--key", "-1"], "key must be an integer in [0, 4294967295]; got key=-1."),
    (["--seeds", "1000000000000"], "num_seeds must be an integer in [2, 4294967296]; got num_seeds=1000000000000."),
    (["--seeds", "4000000000"], "seed_chunk must be at least 40000 for num_seeds=4000000000"),
    (["--memory-budget", "1"], "memory_budget must be at least"),
    (["--family", "two-point", "--spike-prob", "1e-300"], "spike_prob must be at least 2 gap / 3.4028235e+38"),
]


@pytest.mark.parametrize("extra,message", CLI)
def test_sweep_refuses_before_printing_or_writing(tmp_path, capsys, extra, message):
    _assert_refused([*SMALL, "--out", str(tmp_path / "out"), *extra], tmp_path / "out", capsys, message)


def _assert_refused(argv, out, capsys, message):
    """One line on stderr, nothing on stdout, status 2, and no output directory."""
    try:
        status = main(argv)
    except SystemExit as e:  # argparse's usage errors
        status = e.code
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.startswith(f"htb-jax: error: {message}"), captured.err
    assert len(captured.err.strip().splitlines()) == 1 and captured.out == ""
    assert not out.exists()


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--key", "-1"], "key must be an integer in [0, 4294967295]; got key=-1."),
        (["--horizons", "1500.7,1e9,1e10"], "horizons must be an integer in [1, 1000000000000000000]; got horizons=1500.7."),
        (["--seeds", "1000000000000"], "num_seeds must be an integer in [2, 4294967296]; got num_seeds=1000000000000."),
        (["--fit-from", "1e9.5"], "argument --fit-from: not a number: '1e9.5'"),
        (["--eps", ","], "argument --eps: expected comma-separated numbers, at least one"),
    ],
)
def test_frontier_refuses_before_printing_or_writing(tmp_path, capsys, extra, message):
    _assert_refused(["frontier", "--out", str(tmp_path / "out"), *extra], tmp_path / "out", capsys, message)


def test_bare_command_is_a_usage_error_on_stderr(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("htb-jax: error: give a command: frontier (the T-frontier, the main job) or sweep "
                            "(see 'htb-jax --help')\n")


def test_toml_lists_are_not_truncated_or_empty(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    for text, message in [
        ("horizons = [1500.7]\n", "horizons must be an integer in [1, 1000000000000000000]; got horizons=1500.7."),
        ("alphas = []\n", f"alphas in {config} must be a non-empty list of numbers; got []"),
        ("horizons = [true]\n", f"horizons in {config} must be a non-empty list of integers; got [True]"),
        ("key = -1\n", "key must be an integer in [0, 4294967295]; got key=-1."),
    ]:
        config.write_text(text + f'out = "{tmp_path / "out"}"\n')
        assert main(["sweep", "--config", str(config)]) == 2
        err = capsys.readouterr().err
        assert err == f"htb-jax: error: {message}\n", err
        assert not (tmp_path / "out").exists()


def test_no_manifest_is_left_by_a_run_that_computed_nothing(tmp_path, monkeypatch, capsys):
    # A failure after the banner (here: inside the first chunk) leaves no manifest, so the
    # corrected command in the same --out is not refused as another configuration.
    from htb_jax._src import sweep as sweep_lib

    def fail(*args, **kwargs):
        raise ValueError("simulated failure")

    monkeypatch.setattr(sweep_lib, "run_chunk", fail)
    out = tmp_path / "out"
    assert main([*SMALL, "--out", str(out)]) == 2
    assert "simulated failure" in capsys.readouterr().err
    assert not os.path.exists(out / "manifest.json")
    store = resumable.ChunkStore(str(out), {"a": 1}, [0, 0], [(0, 2)])
    assert not os.path.exists(out / "manifest.json")
    store.save(0, {"x": np.zeros(2)})
    assert os.path.exists(out / "manifest.json") and store.load(0) is not None


def test_messages_name_the_argument_and_the_value():
    # Spot check of the form: "<name> must be <form>; got <name>=<value>."
    message = _raises(ValueError, "horizon", lambda: htb.simulate(KEY, POLICY, NU, 1500.7, 2))
    assert re.fullmatch(r"horizon \(T\) must be an integer in \[1, 1000000000000000000\]; got horizon \(T\)=1500.7\.",
                        message)
