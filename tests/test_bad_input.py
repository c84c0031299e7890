"""Every bad input is a TypeError or ValueError naming the argument and the value, before tracing;
the command line prints one line and exits with status 2, writing nothing."""

import contextlib
import dataclasses
import inspect
import io
import os
import re

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import htb_jax as htb
from htb_jax._src import chunk_store, resumable
from htb_jax._src.cli import main
from htb_jax._src.frontier import TFrontierConfig
from htb_jax._src.prng_key import as_threefry_key
from htb_jax._src.sweep import SweepConfig
from htb_jax._src.validation import check_broadcast, check_integer, check_interval, real_array

KEY = jax.random.key(0)
NU = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.1)
SEED_KEYS = jax.random.split(KEY, 4)  # a batch of keys, made before any refusal is timed
TWO_INSTANCES = htb.equal_gap(htb.Pareto(loc=0.0, shape=np.array([1.8, 2.5])), 3, 0.5)  # batch shape (2, 3)
READER = htb.TableReader.create(KEY, NU)  # likewise: its word keys are computed
POLICY = htb.AdaRETC.order_free()
# Arguments built once, so that a case's call is the refusal alone (test_the_refusals_run_before_anything_is_compiled).
FAR = htb.equal_gap(htb.Pareto(loc=1e8, shape=1.5), 3, 0.1)  # float32 rewards cannot resolve its gap
KEYS = jax.random.split(KEY, 4)
REWARDS_NAN = np.zeros((3, 500))
REWARDS_NAN[1, 2] = np.nan
SPIKES = htb.lower_bound_pair(2, 1.0, [0.1, 0.5])[1]
REFERENCE = htb.lower_bound_pair(2, 1.0, 0.9)[1]
REFERENCE_GAUSS = htb.Gaussian(loc=np.array([0.2, 0.0]))


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
    # Six digits would print a value just outside the range as its end ("[0.666667, 1) ...; got alpha=0.666667").
    "alpha near its end": (ValueError, r"alpha must lie in \[0\.6666666666666666, 1\) for eps=1; got alpha=0\.6666666\.$",
                           lambda: htb.AdaRETC(eps=1.0, alpha=0.6666666, q=0.0)),
    # alpha*(eps) rounds to 1: "alpha must lie in [1, 1)" whatever alpha
    "adaretc tiny eps": (ValueError, r"eps must be at least 1.6653345369377348e-16: from there on alpha\*\(eps\)",
                         lambda: htb.AdaRETC(eps=1e-17, alpha=0.99, q=0.0)),
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
    "num_arms str": (TypeError, r"num_arms must be an integer in \[2, 4294967296\]; got num_arms='3' \(str\)",
                     lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), "3", 0.1)),
    "base str": (TypeError, r"base must be a distribution of htb_jax.*got base='x' \(str\)", lambda: htb.equal_gap("x", 3, 0.1)),
    # shapes that do not broadcast
    "policy shapes": (ValueError, r"parameters of AdaRETC must broadcast.*eps of shape \(2,\), alpha of shape \(3,\)",
                      lambda: htb.AdaRETC(eps=np.ones(2), alpha=np.full(3, 0.8), q=0.0)),
    "anytime shapes": (ValueError, r"parameters of AnytimeAdaRETC must broadcast.*growth of shape \(4,\)",
                       lambda: htb.AnytimeAdaRETC(eps=1.0, alpha=np.full(3, 0.8), q=0.0, growth=np.full(4, 2.0))),
    "ucb shapes": (ValueError, r"parameters of RobustUCB must broadcast.*eps of shape \(2,\), v of shape \(3,\)",
                   lambda: htb.RobustUCB(np.ones(2), v=np.ones(3), estimator="mom")),
    "arm shapes": (ValueError, r"parameters of Pareto must broadcast.*loc of shape \(3,\), shape of shape \(2,\)",
                   lambda: htb.Pareto(loc=np.zeros(3), shape=np.full(2, 1.5))),
    "two-point shapes": (ValueError, r"parameters of TwoPoint must broadcast.*low of shape \(2,\), high of shape \(3,\)",
                         lambda: htb.TwoPoint(np.zeros(2), np.ones(3), 0.5)),
    # float32 rewards
    "loc overflow": (ValueError, r"Pareto loc must lie in \[-3.40\d*e\+38, 3.40\d*e\+38\] \(rewards are float32.*"
                     r"got Pareto loc=1e\+39", lambda: htb.Pareto(loc=1e39, shape=1.5)),
    # a scale's sign is checked first: its float32 bound is an upper one (it said "[-3.4e38, 3.4e38]")
    # a refusal of the shifted law's loc, 6e+38, which the user never wrote, without saying where it came from
    "equal_gap best arm beyond float32": (ValueError, r"^gap moves the best arm's loc beyond the float32 range of the "
                                          r"rewards: loc \+ gap = 6e\+38 > 3\.4028235e\+38; give a smaller gap, or a "
                                          r"base located nearer 0\.$",
                                          lambda: htb.equal_gap(htb.Gaussian(loc=3e38, scale=1.0), 3, 3e38)),
    "sample int key": (TypeError, r"^key must be a jax.random.key\(seed\) \(or legacy uint32\[2\] key data from "
                                  r"jax.random.PRNGKey\(seed\)\); got key=0 \(int\)\. Use jax.random.key\(0\)\.$",
                       lambda: NU.sample(0, (4,))),
    "scale above float32": (ValueError, r"^Gaussian scale must be at most 3\.4028235e\+38 \(rewards are float32, in which a "
                            r"larger value is inf\); got Gaussian scale=1e\+39\.$",
                            lambda: htb.Gaussian(loc=0.0, scale=1e39)),
    "spike overflow": (ValueError, r"spike_prob must be at least 2 gap / 3.4028235e\+38 = 5.87747e-39 for gap=1 "
                       r"\(the spike 2 gap / spike_prob is a float32 reward\); got spike_prob=1e-299",
                       lambda: htb.lower_bound_pair(2, 1.0, 1e-299)),
    "high overflow": (ValueError, r"TwoPoint high must lie in .*float32.*got TwoPoint high=2e\+299",
                      lambda: htb.TwoPoint(low=0.0, high=2e299, p=0.5)),
    "scale underflow": (ValueError, r"a positive StudentT scale must be at least 1.1754944e-38 \(rewards are float32.*"
                        r"got StudentT scale=1e-50", lambda: htb.StudentT(df=3.0, loc=0.0, scale=1e-50)),
    "gap collapse": (ValueError, r"arms 0 and 1 have means 100000000.1 and 100000000 \(gap 0.1\), but rewards are "
                     r"float32, whose spacing there is 8.*gap 0",
                     lambda: htb.simulate(KEY, POLICY, FAR, 100, 2)),
    # keys that are not keys
    "key int": (TypeError, r"key must be a jax.random.key\(seed\).*got key=0 \(int\)\. Use jax.random.key\(0\)",
                lambda: htb.simulate(0, POLICY, NU, 100, 2)),
    "key str": (TypeError, r"key must be a jax.random.key.*got key='0' \(str\)", lambda: htb.simulate("0", POLICY, NU, 100, 2)),
    "key float data": (TypeError, r"key must be .*got key data of dtype float64 and shape \(2,\)",
                       lambda: htb.simulate(np.zeros(2), POLICY, NU, 100, 2)),
    "key batch": (ValueError, r"key must be one key.*got a batch of keys of shape \(4,\)",
                  lambda: htb.simulate(KEYS, POLICY, NU, 100, 2)),
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
    "sampler": (ValueError, r"sampler must be one of auto, per_pull, block_sums, order_statistic; got sampler='exact'",
                lambda: htb.simulate(KEY, POLICY, NU, 100, 2, sampler="exact")),
    "engine": (TypeError, r"engine must be True or False; got engine='yes'",
               lambda: htb.simulate(KEY, POLICY, NU, 100, 2, engine="yes")),
    "paired shapes": (ValueError, r"paired=True runs grid point i on instance i alone: the policy's batch shape must "
                      r"equal the instances' batch shape without K; got policy batch shape \(2,\) and instance batch "
                      r"shape \(3,\) \(K = 3\)\.",
                      lambda: htb.simulate(KEY, htb.RobustUCB(1.0, u=np.ones(2)), NU, 100, 2, paired=True)),
    "paired str": (TypeError, r"paired must be True or False; got paired='yes'",
                   lambda: htb.simulate(KEY, POLICY, NU, 100, 2, paired="yes")),
    # run_on_rewards
    "rewards NaN": (ValueError, r"rewards must not hold NaN.*got NaN at rewards\[1, 2\]",
                    lambda: htb.run_on_rewards(POLICY, REWARDS_NAN, np.zeros(3), 100)),
    "means length": (ValueError, r"means must have shape \(K,\) = \(3,\).*got means of shape \(2,\)",
                     lambda: htb.run_on_rewards(POLICY, np.zeros((3, 500)), np.zeros(2), 100)),
    "means str": (TypeError, r"means must be .*got means='0'", lambda: htb.run_on_rewards(POLICY, np.zeros((3, 500)), "0", 100)),
    "rewards str": (TypeError, r"rewards must be .*got rewards='abc' \(str\)",
                    lambda: htb.run_on_rewards(POLICY, "abc", np.zeros(3), 100)),
    "ror pull_chunk": (ValueError, r"pull_chunk must be an integer in \[1, 1048576\]; got pull_chunk=0\.",
                       lambda: htb.run_on_rewards(POLICY, np.zeros((3, 500)), np.zeros(3), 100, pull_chunk=0)),
    # median_of_means
    "mom blocks > N": (ValueError, r"num_blocks must be at most the number of samples N=5.*got num_blocks=6",
                       lambda: htb.median_of_means(np.ones(5), 6)),
    "mom blocks > n": (ValueError, r"num_blocks must be at most the number of samples n=2.*got num_blocks=3",
                       lambda: htb.median_of_means(np.ones(10), 3, 2)),
    "mom no samples": (ValueError, r"x must hold at least one sample \(N >= 1\); got x of shape \(0,\)",
                       lambda: htb.median_of_means(np.ones(0), 1)),
    "mom scalar": (ValueError, r"x must have a sample axis.*got a scalar", lambda: htb.median_of_means(1.0, 1)),
    "mom str": (TypeError, r"x must be .*got x='abc'", lambda: htb.median_of_means("abc", 1)),
    "mom blocks str": (TypeError, r"num_blocks must be an integer >= 1; got num_blocks='2'",
                       lambda: htb.median_of_means(np.ones(4), "2")),
    # an empty grid: a list without a shape, or a division by zero, deep inside
    "empty policy grid": (ValueError, r"^simulate needs at least one policy; got policy=AdaRETC\(eps=array\(\[\], .*whose grid "
                          r"is empty \(batch shape \(0,\)\)\.$",
                          lambda: htb.simulate(KEY, htb.AdaRETC([], 0.8, 0.1), NU, 100, 2)),
    "no instance": (ValueError, r"^simulate needs at least one instance; .*\(batch shape \(0,\)\)\.$",
                    lambda: htb.simulate(KEY, htb.UCB1(), htb.Pareto(np.zeros((0, 3)), 1.5), 100, 2)),
    # a count given as a list: accepted, then a TypeError deep inside (or silently a grid)
    "num_arms list": (TypeError, r"^num_arms must be one integer in \[2, 4294967296\]; got num_arms=\[3\] \(list\)\.$",
                      lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), [3], 0.5)),
    "num_seeds array": (TypeError, r"^num_seeds must be one integer >= 1; got num_seeds=array\(\[4\]\) \(ndarray\)\.$",
                        lambda: htb.simulate(KEY, htb.UCB1(), NU, 100, np.array([4]))),
    # prepare's own TypeError named prepare, which the user never called
    "memory_plan keyword": (TypeError, r"^memory_plan takes simulate's keyword arguments \(first_seed, .*\); got foo, "
                            r"which simulate does not take\.$",
                            lambda: htb.memory_plan(KEY, htb.UCB1(), NU, 100, 4, foo=1)),
    # it printed "5/4 seeds" and a negative ETA
    "progress past the total": (ValueError, r"^done must be an integer in \[0, 4\]; got done=5\.$",
                                lambda: htb.progress_bar(5, 4, 0.0, io.StringIO())),
    # it printed "chunk 5/4"
    "chunks past the total": (ValueError, r"^chunk\[0\] \(chunks done\) must be an integer in \[0, 4\]; "
                              r"got chunk\[0\] \(chunks done\)=5\.$",
                              lambda: htb.progress_bar(3, 4, 0.0, io.StringIO(), chunk=(5, 4))),
    # a mesh of one device twice failed inside jax with a bare AssertionError
    "a device twice": (ValueError, r"^devices must list each device once; got \S+ more than once in devices=\[",
                       lambda: htb.simulate(KEY, htb.UCB1(), NU, 100, 4, devices=[jax.devices()[0]] * 2)),
    "gaps of one arm": (ValueError, r"^an instance needs a trailing arm axis: its batch shape is \(\)",
                        lambda: htb.gaps(htb.Pareto(loc=0.0, shape=1.5))),
    # a NaN slope was fitted as "agrees"; an array theory_value failed as "the truth value of an array is
    # ambiguous"; a negative spike probability was compared with the grid
    "fit with a NaN slope": (ValueError, r"^ExponentFit slope must be one finite number; got slope=nan\.$",
                             lambda: htb.ExponentFit(np.nan, 0.0, 0.6, 0.8, 0.95, 1000)),
    "fit interval reversed": (ValueError, r"^ExponentFit low must be at most high; got low=0\.8, high=0\.6\.$",
                              lambda: htb.ExponentFit(0.7, 0.0, 0.8, 0.6, 0.95, 1000)),
    "fit level 2": (ValueError, r"^ExponentFit level must lie in \(0, 1\); got level=2\.0\.$",
                    lambda: htb.ExponentFit(0.7, 0.0, 0.6, 0.8, 2.0, 1000)),
    "verdict theory array": (ValueError, r"^theory_value must be one number; got theory_value of shape \(2,\)\.$",
                             lambda: htb.frontier.verdict(FIT, np.array([0.7, 0.9]), 0.7)),
    "verdict hardest negative": (ValueError, r"^hardest must lie in \(0, inf\); got hardest=-1\.$",
                                 lambda: htb.frontier.verdict(FIT, 0.9, 0.95, hardest=-1.0, family=SPIKE_FAMILY)),
    # runs of the wrong shape failed in the fit with NumPy's IndexError, or named `scale`
    "runs exploration shape": (ValueError, r"^FamilyRuns exploration must be i64\[G, H\] = \(1, 2\), one L_T per "
                                           r"schedule and horizon; got shape \(1, 1\)\.$",
                               lambda: dataclasses.replace(RUNS, exploration=np.full((1, 1), 100))),
    "runs members": (ValueError, r"^FamilyRuns regret must be f64\[G, F \+ 1, H, S\] with F \+ 1 = 3 .*; got shape "
                                 r"\(1, 2, 2, 4\)\.$",
                     lambda: dataclasses.replace(RUNS, regret=np.ones((1, 2, 2, 4)))),
    "runs negative exploration": (ValueError, r"^FamilyRuns exploration must be an integer >= 0; got FamilyRuns "
                                              r"exploration=-1\.$",
                                  lambda: dataclasses.replace(RUNS, exploration=np.full((1, 2), -1))),
    # accepted (from a tampered file too): a NaN failed later in the fit at another index, no schedule left
    # nothing to fit
    "runs nan regret": (ValueError, r"^FamilyRuns regret must be finite and >= 0 \(a pseudo-regret\); got nan at "
                                    r"index \(0, 2, 1, 3\)\.$",
                        lambda: dataclasses.replace(RUNS, regret=np.ones((1, 3, 2, 4)) + np.where(
                            np.arange(24).reshape(1, 3, 2, 4) == 23, np.nan, 0.0))),
    "runs no schedule": (ValueError, r"^FamilyRuns regret must be f64\[G, F \+ 1, H, S\] .* and G, H, S >= 1; got "
                                     r"shape \(0, 3, 2, 4\)\.$",
                         lambda: dataclasses.replace(RUNS, regret=np.ones((0, 3, 2, 4)),
                                                     exploration=np.ones((0, 2), np.int64))),
    "runs seconds": (TypeError, r"^FamilyRuns seconds must be a number of seconds \(NaN where unknown\); got "
                                r"FamilyRuns seconds='x'", lambda: dataclasses.replace(RUNS, seconds="x")),
    # a list of fit_from failed in NumPy's broadcasting; runs joined with fewer schedules in an IndexError
    "free_exponent fit_from list": (TypeError, r"^fit_from must be one integer in \[1, 1000000000000000000\]; got "
                                               r"fit_from=\[1000, 10000\] \(list\)\.$",
                                    lambda: htb.frontier.free_exponent(RUNS, 0, 1.0, [10**3, 10**4])),
    "free_exponent also schedules": (ValueError, r"^also\[0\] must hold the runs of the same schedules as runs; it "
                                                 r"holds 1 schedule\(s\), runs 2\.$",
                                     lambda: htb.frontier.free_exponent(dataclasses.replace(
                                         RUNS, regret=np.ones((2, 3, 2, 4)), exploration=np.ones((2, 2), np.int64)),
                                         1, 1.0, 10**3, also=[RUNS])),
    # a NaN theory was refused by verdict as theory_value
    "eps_profile_rows theory nan": (ValueError, r"^entries\[0\] theory must lie in \(-inf, inf\); got entries\[0\] "
                                                r"theory=nan\.$",
                                    lambda: htb.frontier.eps_profile_rows(RUNS, [("s", 0, 1.0, np.nan)], 10**3)),
    # "must lie in [-3.4028235e+38, 3.4028235e+38]", for a shape whose range is (1, inf)
    "shape above float32": (ValueError, r"^Frechet shape must be at most 3\.4028235e\+38 \(rewards are float32, in "
                                        r"which a larger value is inf\); got Frechet shape=1e\+300\.$",
                            lambda: htb.Frechet(loc=0.0, shape=1e300)),
    # failed inside jnp.zeros with a pybind11 TypeError ("get(): incompatible function arguments")
    "equal_gap absurd arms": (ValueError, r"^num_arms must be an integer in \[2, 4294967296\]; got num_arms=10{30}\.$",
                              lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=2.5), 10**30, 0.1)),
    # refused inside the trace (of the jitted table), from JAX's machinery
    "reward table of one arm": (ValueError, r"^an instance needs a trailing arm axis: its batch shape is \(\)",
                                lambda: htb.reward_table(KEY, htb.Pareto(loc=0.0, shape=1.5), 4)),
    "first_argmax of nothing": (ValueError, r"^values must hold at least one index to take the first maximum of; "
                                r"got shape \(0,\)\.$", lambda: htb.first_argmax(np.zeros(0))),
    # a fractional rank was read as the rank below it; an empty axis divided by zero; an axis past x's
    "kth_smallest fraction": (ValueError, r"^k must hold integer ranks; got k=2\.5\.$",
                              lambda: htb.kth_smallest(np.array([3.0, 1.0, 2.0]), 2.5)),
    "kth_smallest empty": (ValueError, r"^x must hold at least one element along axis -1; got x of shape \(0,\)\.$",
                           lambda: htb.kth_smallest(np.zeros(0), 1)),
    "kth_smallest axis": (ValueError, r"^axis must be an axis of x, in \[-1, 1\); got axis=5 for x of shape \(3,\)\.$",
                          lambda: htb.kth_smallest(np.zeros(3), 1, axis=5)),
    # named as TwoPoint's low, a parameter the user never wrote
    "Dirac nan": (ValueError, r"^Dirac value must lie in \(-inf, inf\); got Dirac value=nan\.$",
                  lambda: htb.Dirac(float("nan"))),
    "Dirac huge": (ValueError, r"^Dirac value must lie in \[-3.4028235e\+38, 3.4028235e\+38\]",
                   lambda: htb.Dirac(1e300)),
    # refused by float32's range before their own, or as a parameter the user never wrote
    "Stable alpha huge": (ValueError, r"^Stable alpha must lie in \(1, 2\]; got Stable alpha=1e\+300\.$",
                          lambda: htb.Stable(loc=0.0, alpha=1e300)),
    # float32 rounds these to 1: Pareto and Frechet drew -inf, Stable NaN, Student-t a Cauchy law
    "tail index 1 in float32": (ValueError, r"^Pareto shape must exceed 1 \+ 2\^-24 \(about 1\.00000006\), or float32, "
                                r"in which rewards are drawn, rounds it to 1; got Pareto shape=1\.00000001\.$",
                                lambda: htb.Pareto(loc=0.0, shape=1.00000001)),
    "df 1 in float32": (ValueError, r"^StudentT df must exceed 1 \+ 2\^-24", lambda: htb.StudentT(loc=0.0, df=1.00000001)),
    "alpha 1 in float32": (ValueError, r"^Stable alpha must exceed 1 \+ 2\^-24",
                           lambda: htb.Stable(loc=0.0, alpha=[1.5, 1.00000001])),
    "Frechet 1 in float32": (ValueError, r"^Frechet shape must exceed 1 \+ 2\^-24",
                             lambda: htb.Frechet(loc=0.0, shape=1.00000001)),
    # JAX's "ge got incompatible shapes" / "sub got ..." named no argument
    "abs_moment eps shape": (ValueError, r"^eps must broadcast against the law's batch shape, \(3,\); got eps of shape "
                             r"\(2,\)\.$", lambda: NU.abs_moment(np.ones(2) / 4)),
    "cdf x shape": (ValueError, r"^x must broadcast against the law's batch shape, \(3,\); got x of shape \(2,\)\.$",
                    lambda: NU.cdf(np.zeros(2))),
    "Pareto shape inf": (ValueError, r"^Pareto shape must lie in \(1, inf\); got Pareto shape=inf\.$",
                         lambda: htb.Pareto(loc=0.0, shape=float("inf"))),
    # (its range named negative gaps, which are refused)
    "equal_gap huge gap": (ValueError, r"^gap must be at most 3\.4028235e\+38 \(rewards are float32, in which a "
                                       r"larger value is inf\); got gap=1e\+300\.$",
                           lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), 3, 1e300)),
    # a horizon list against a batch of another length (before: jnp.power's "incompatible shapes")
    "exploration_length horizons": (ValueError, r"^horizon \(T\) of shape \(2,\) does not broadcast against the "
                                                r"policy's batch shape \(3,\); .*horizon\[:, None\]",
                                    lambda: htb.AdaRETC(1.0, np.array([0.7, 0.8, 0.9]), 0.0).exploration_length(
                                        10, np.array([100, 1000]))),
    # True ran one round, NaN and -3 raised math's errors, 10.5 gave 28 epochs
    "epochs max_pulls": (ValueError, r"^max_pulls must be an integer >= 1; got max_pulls=10\.5\.$",
                         lambda: htb.AnytimeAdaRETC(1.0, 0.8, 0.0).epochs(10.5)),
    "level t bool": (TypeError, r"^t must be an integer >= 1; got t=True \(bool\)\.$", lambda: htb.RobustUCBf().level(True)),
    # a user's kernel reading the table: arm 5 of 3 read arm 2, pull -1 read pull 2^32 - 1, True read a row
    "TableReader.pull arm": (ValueError, r"^arm must be an integer in \[0, 2\]; got arm=5\.$",
                             lambda: READER.pull(5, 0)),
    "TableReader.chunk first_pull": (ValueError, r"^first_pull must be an integer in \[0, 4294967292\]; got "
                                                 r"first_pull=-2\.$",
                                     lambda: READER.chunk(-2, 4)),
    "TableReader.chunk shape": (ValueError, r"^first_pull must be one integer or one per arm, shape \(\) or \(3,\); "
                                            r"got first_pull of shape \(2,\)\.$",
                                lambda: READER.chunk(np.zeros(2, int), 4)),
    "exploration fraction": (ValueError, r"^exploration must be an integer >= 0; got exploration=10\.5\.$",
                             lambda: htb.exploration_pulls(np.array([10.5]), 3)),
    "exploration negative": (ValueError, r"^exploration must be an integer >= 0; got exploration=-3\.$",
                             lambda: htb.exploration_pulls(np.array([-3]), 3)),
    # 10^x beyond float64 rounded to inf or 0; 3e8 points ran for minutes
    "powers_of_ten past float64": (ValueError, r"^stop must be <= 308 \(10\^x within float64's normal range\); got "
                                   r"stop=320\.$", lambda: htb.powers_of_ten(300, 320, 5)),
    "powers_of_ten below float64": (ValueError, r"^start must be >= -307 .*; got start=-330\.$",
                                    lambda: htb.powers_of_ten(-330, -320, 5)),
    "powers_of_ten too many": (ValueError, r"^the grid would hold 298000000 points, more than 1000000; give a larger "
                               r"step", lambda: htb.powers_of_ten(2, 300, 1e-6)),
    # swapped ends gave an empty grid, refused later as an empty horizon list
    "powers_of_ten swapped": (ValueError, r"^stop must exceed start \(the grid runs from start up to, not including, "
                                          r"stop\); got start=3, stop=1\.$", lambda: htb.powers_of_ten(3, 1, 1)),
    # a family's axis was read as the arms by pull's index (wrong rewards), no arm axis an IndexError
    "TableReader.create family": (ValueError, r"^arms must be one instance, batch shape \(K,\); got arms of batch "
                                              r"shape \(2, 3\) \(run simulate for a batch of instances\)\.$",
                                  lambda: htb.TableReader.create(KEY, TWO_INSTANCES)),
    # alpha of shape (2,) and q of (3,) came back, not a broadcast shape
    "admissible_schedule shapes": (ValueError, r"^the parameters of admissible_schedule must broadcast to one batch "
                                   r"shape; got z_alpha of shape \(2,\), z_q of shape \(3,\)",
                                   lambda: htb.admissible_schedule(np.zeros(2), np.zeros(3), 0.5)),
    "memory budget of a string": (TypeError, r"^device must be None or a jax.Device such as jax.devices\(\)\[0\]; got "
                                  r"device='cpu' \(str\)\.$", lambda: htb.default_memory_budget("cpu")),
    # fewer static blocks than blocks: NaN, silently
    "mom max_blocks": (ValueError, r"^max_blocks must bound num_blocks; got max_blocks=2 and num_blocks=3\.$",
                       lambda: htb.median_of_means(np.arange(12.0), 3, max_blocks=2)),
    # the regret proxy
    "tau str": (TypeError, r"tau must be a real number.*got tau='0.1' \(str\)",
                lambda: htb.regret_proxy(KEY, htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), NU, 100, 4, "0.1")),
    # an array of temperatures broadcast against the seeds' regrets and gave one wrong mean
    "tau array": (ValueError, r"tau must be a scalar, one temperature for every run \(vmap over tau for several\); "
                  r"got tau of shape \(2,\)\.$",
                  lambda: htb.regret_proxy(KEY, htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), NU, 100, 4, np.array([0.0, 10.0]))),
    "proxy T str": (TypeError, r"horizon \(T\) must be an integer in \[1, 10{18}\]; got horizon \(T\)='100' \(str\)",
                    lambda: htb.regret_proxy(KEY, htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), NU, "100", 4, 0.1)),
    # the sweep and frontier configurations
    "sweep alphas str": (TypeError, r"alphas must be a real number.*got alphas=\['0.8'\]",
                         lambda: SweepConfig(alphas=("0.8",)).validate()),
    "sweep alphas empty": (ValueError, r"alphas must be a non-empty list of numbers \(or a 1-D array\); got alphas=\(\)",
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
    "frontier eps empty": (ValueError, r"eps_values must be a non-empty list of numbers \(or a 1-D array\); got eps_values=\(\)",
                           lambda: TFrontierConfig(eps_values=()).validate()),
    # grid() alone (a notebook plans with it before running): an empty grid, not one schedule or none
    "frontier grid alphas": (ValueError, r"alphas_per_eps must be an integer >= 1; got alphas_per_eps=0\.",
                             lambda: TFrontierConfig(alphas_per_eps=0).grid()),
    "frontier grid eps": (ValueError, r"eps_values must be a non-empty list of numbers \(or a 1-D array\); got "
                          r"eps_values=\(\)", lambda: TFrontierConfig(eps_values=()).grid()),
    # a Python int past int64 shown as written, not as the float 1e+19
    "frontier horizons huge": (ValueError, r"horizons must be an integer in \[1, 10{18}\]; got "
                               r"horizons=10000000000000000000\.",
                               lambda: TFrontierConfig(horizons=(10**3, 10**19)).validate()),
    "seed_chunks seeds": (ValueError, r"num_seeds must be an integer in \[1, 4294967296\]; got num_seeds=1000000000000\.",
                          lambda: resumable.seed_chunks(10**12, 1)),
    "seed_chunks chunks": (ValueError, r"seed_chunk must be at least 40000 for num_seeds=4000000000 \(at most 100000 "
                           r"chunks, one file each\); got seed_chunk=2\.", lambda: resumable.seed_chunks(4 * 10**9, 2)),
    # None, a class where an instance belongs, a policy a function does not take
    "alpha None": (TypeError, r"alpha must be a real number or an array of real numbers; got alpha=None\.",
                   lambda: htb.AdaRETC(eps=1.0, alpha=None, q=0.0)),
    "loc None": (TypeError, r"Pareto loc must be a real number or an array of real numbers; got Pareto loc=None\.",
                 lambda: htb.Pareto(loc=None, shape=1.5)),
    "gap class": (TypeError, r"gap must be a real number or an array of real numbers, not the class float itself; "
                  r"got gap=float \(a class\)\.", lambda: htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), 3, float)),
    "base class": (TypeError, r"base must be a distribution of htb_jax \(.*\), such as htb.Pareto\(loc=0.0, "
                   r"shape=1.5\), or of a subclass of htb.Distribution of yours, not the class Pareto itself; got "
                   r"base=Pareto \(a class\)\.",
                   lambda: htb.equal_gap(htb.Pareto, 3, 0.1)),
    "instance class": (TypeError, r"instance must be a distribution of htb_jax .*not the class TwoPoint itself; "
                       r"got instance=TwoPoint \(a class\)\.", lambda: htb.intrinsic_scale(htb.TwoPoint, 1.0)),
    "proxy policy": (TypeError, r"regret_proxy takes an AdaRETC for policy; got policy=ForceMoM\(rho=0.5\) \(ForceMoM\)\.",
                     lambda: htb.regret_proxy(KEY, htb.ForceMoM(0.5), NU, 100, 4, 0.1)),
    "proxy policy class": (TypeError, r"regret_proxy takes an AdaRETC instance for policy, such as htb.AdaRETC\(...\); "
                           r"got policy=AdaRETC \(a class\)\.", lambda: htb.regret_proxy(KEY, htb.AdaRETC, NU, 100, 4, 0.1)),
    "bound policy": (TypeError, r"analytic_regret_bound takes an AdaRETC for policy; got policy=EmpiricalETC\(",
                     lambda: htb.analytic_regret_bound(htb.EmpiricalETC(1.0, 0.8, 0.0), NU, 100)),
    "smoothed policy": (TypeError, r"smoothed_regret takes an AdaRETC for policy; got policy=UCB1\(\) \(UCB1\)\.",
                        lambda: htb.smoothed_regret(KEY, htb.UCB1(), NU, 100, 4)),
    "rounding None": (TypeError, r"rounding must be True or False; got rounding=None\.",
                      lambda: htb.regret_proxy(KEY, POLICY, NU, 100, 4, 0.1, rounding=None)),
    "summarize": (TypeError, r"outcome must be an Outcome of htb.simulate; got outcome=None\.", lambda: htb.summarize(None)),
    "kth_smallest x": (TypeError, r"x must be an array of real numbers; got x=None\.", lambda: htb.kth_smallest(None, 1)),
    # float16 passed the float check and failed on its order keys with a bare KeyError
    "kth_smallest float16": (TypeError, r"^x must be a float32 or float64 array \(its order keys are the floats'\); "
                             r"got x of dtype float16\.$", lambda: htb.kth_smallest(np.ones(3, np.float16), 1)),
    "powers_of_ten": (TypeError, r"step must be a finite real number; got step=None\.",
                      lambda: htb.powers_of_ten(-2.0, 0.0, None)),
    # an array sigma mixed temperatures entry by entry; a scalar log_values failed on its axis, unnamed
    "smooth_max_log sigma array": (ValueError, r"^sigma must be a scalar temperature; got sigma of shape \(2,\)\.$",
                                   lambda: htb.smooth_max_log(np.zeros(2), np.array([0.1, 0.2]))),
    "smooth_max_log scalar": (ValueError, r"^log_values must have a last axis to take the max over, f\[\.\.\., F\]; "
                              r"got log_values=1\.0, a scalar\.$", lambda: htb.smooth_max_log(1.0, 0.1)),
    # an empty last axis gave -inf and a NaN gave NaN, as if they were a max
    "smooth_max_log empty": (ValueError, r"^log_values must have at least one entry on its last axis to take the max "
                             r"over; got log_values of shape \(2, 0\)\.$", lambda: htb.smooth_max_log(np.zeros((2, 0)), 0.1)),
    "smooth_max_log nan": (ValueError, r"^log_values must not hold NaN \(-inf, the log of a zero regret, is fine\); "
                           r"got NaN at index \(1, 0\)\.$",
                           lambda: htb.smooth_max_log(np.array([[0.0, -np.inf], [np.nan, 1.0]]), 0.1)),
    # beta_alpha named only alpha and "its admissible range"
    "beta_alpha shapes": (ValueError, r"^the arguments of beta_alpha must broadcast to one shape; got alpha of shape "
                          r"\(2,\), eps of shape \(3,\)\.$", lambda: htb.theory.beta_alpha([0.7, 0.8], [1.0, 1.0, 1.0])),
    # an array pair is a pair (it was refused as "a number or a pair of numbers"), each entry checked
    "tune width array pair": (ValueError, r"^width must lie in \(0, 1\]; got width=2\.$",
                              lambda: htb.tune_schedule(KEY, 1.0, SPIKES, REFERENCE, 100, 4, width=np.array([0.05, 2.0]))),
    "tune sampler": (ValueError, r"sampler must be one of auto, per_pull, block_sums, order_statistic; got sampler=None\.",
                     lambda: htb.tune_schedule(KEY, 1.0, SPIKES, REFERENCE, 100, 4, sampler=None)),
    "theory eps": (TypeError, r"eps must be a real number or an array of real numbers; got eps=None\.",
                   lambda: htb.theory.alpha_range(None)),
    "frontier runs": (TypeError, r"runs must be a FamilyRuns \(from run_family or load_runs\); got runs=None\.",
                      lambda: htb.frontier.dependent_exponent(None, 0, 10**3)),
    "run_family restart": (TypeError, r"restart must be True or False; got restart='yes' \(str\)\.",
                           lambda: htb.frontier.run_family(ETC_GRID, SPIKE_FAMILY, (10**3,), 4, store="s", restart="yes")),
    # a store where nothing can be written, refused before a chunk is computed (before: the OS error after it)
    "run_family store a file": (ValueError, r"cannot create the directory store='.*test_bad_input\.py': it is a file",
                                lambda: htb.frontier.run_family(ETC_GRID, SPIKE_FAMILY, (10**3,), 4, store=__file__)),
    "measure store a file": (ValueError, r"cannot create the directory store='.*test_bad_input\.py': it is a file",
                             lambda: htb.frontier.measure(ETC, 1.0, (100, 126), 2, store=__file__)),
    "run_t_frontier out_dir uncreatable": (ValueError, r"cannot create the directory out_dir='/proc/htb-jax/x': No such file",
                                           lambda: htb.frontier.run_t_frontier(FRONTIER, out_dir="/proc/htb-jax/x")),
    # a horizon repeated weighed twice in the fits, silently (measure refused it already)
    "run_family repeated horizon": (ValueError, r"^horizons must be increasing; got horizons=\[1000, 1000, 10000\]\.$",
                                    lambda: htb.frontier.run_family(ETC_GRID, SPIKE_FAMILY, (10**3, 10**3, 10**4), 4)),
    "measure traced": (TypeError, r"^measure runs its own programs, chunk of seeds by chunk, and fits them on the host, so "
                                  r"it cannot be traced \(jax.jit, jax.vmap, jax.grad\); got a traced eps\.",
                       lambda: jax.grad(lambda e: htb.frontier.measure(htb.UCB1(), e, (100, 1000), 2))(1.0)),
    "measure eps 2-D": (ValueError, r"^eps must be one number or a flat list of numbers; got eps=array\(\[\[1. , 0.5\]\]\) "
                                    r"\(ndarray\) of shape \(1, 2\)\.$",
                        lambda: htb.frontier.measure(htb.UCB1(), np.array([[1.0, 0.5]]), (100, 1000), 2)),
    # NaN gave 0 for a Gaussian, inf for a Pareto, NaN for a TwoPoint; an order <= 0 was computed
    "abs_moment nan": (ValueError, r"^eps must lie in \(-1, inf\) \(the order 1 \+ eps > 0\); got eps=nan\.$",
                       lambda: htb.Gaussian(loc=0.0).abs_moment(float("nan"))),
    # a batch of base laws is a batch of instances: its shape and gap's must broadcast (before: JAX's message)
    "equal_gap shapes": (ValueError, r"^gap and base make a batch of instances, so their shapes must broadcast; got gap "
                                     r"of shape \(3,\) and base of batch shape \(2,\)\.$",
                         lambda: htb.equal_gap(htb.Pareto(loc=np.zeros(2), shape=np.full(2, 1.5)), 3,
                                               np.array([0.1, 0.2, 0.3]))),
    # claims: a value that is no pair failed inside (unpacking, isnan); a key matching no measurement was ignored
    "claims not a pair": (TypeError, r"^claims\[\('p', 1.0\)\] must be a pair \(d, c\) of numbers; got 0.5\.$",
                          lambda: htb.frontier.measurement_table([MEASUREMENT], claims={("p", 1.0): 0.5})),
    "claims unmatched": (ValueError, r"^claims must be keyed by \(policy name, eps\) of a measurement given, among "
                                     r"\('p', 1\); got the key 'p', which matches none\.$",
                         lambda: htb.frontier.measurement_table([MEASUREMENT], claims={"p": (0.5, 0.5)})),
    "notes not text": (TypeError, r"^notes\[\('p', 1.0\)\] must be a string; got note=3 \(int\)\.$",
                       lambda: htb.frontier.plot_measurements([MEASUREMENT], "m.png", notes={("p", 1.0): 3})),
    # summarize of one run: an IndexError (its seed axis taken from a shape of ())
    "summarize no seed axis": (ValueError, r"^summarize averages over the seed axis, the last of simulate's Outcome; got an "
                                          r"Outcome whose regret has no axis",
                               lambda: htb.summarize(htb.Outcome(*(np.zeros(()) for _ in range(7))))),
    # a float64 table beyond float32's range was read as inf (estimates inf, a commit on them)
    "run_on_rewards overflow": (ValueError, r"^rewards must be float32 numbers, finite ones within \+-3.4028235e\+38 \(a "
                                            r"larger one would be read as inf\); got rewards\[0, 0\]=1e\+39\.$",
                                lambda: htb.run_on_rewards(ETC, np.full((2, 200), 1e39), np.zeros(2), 300)),
    # JAX's and NumPy's messages before (a KeyError: dtype('int64'); "Incompatible shapes for broadcasting")
    "kth_smallest integers": (TypeError, r"^x must be a float32 or float64 array \(its order keys are the floats'\); got "
                                         r"x of dtype int64\.$", lambda: htb.kth_smallest(np.array([3, 1, 2]), 1)),
    "kth_smallest k shape": (ValueError, r"^k must broadcast to x's shape without axis -1, \(3,\) \(one rank per "
                                         r"selection\); got k of shape \(2,\)\.$",
                             lambda: htb.kth_smallest(np.ones((3, 4)), np.array([1, 2]))),
    "median_of_means blocks shape": (ValueError, r"^num_blocks must broadcast against x's shape without its sample axis, "
                                                 r"\(3,\); got num_blocks of shape \(2,\)\.$",
                                     lambda: htb.median_of_means(np.ones((3, 6)), np.array([1, 2]))),
    # the engine's int32 rounds: the message gave [1, 2147483647] alone, the docstring [1, 10^18]
    "engine horizon": (ValueError, r"^horizon \(T\) must be at most 2147483647 \(2\^31 - 1\) for a policy run round by round, "
                                   r"whose rounds are int32 \(AdaR-ETC and Empirical ETC on the fast path reach 10\^18\); "
                                   r"got horizon \(T\)=1000000000000\.$",
                       lambda: htb.simulate(KEY, htb.UCB1(), NU, 10**12, 2)),
    # the fast path's samplers were ignored round by round
    "engine sampler": (ValueError, r"^sampler='order_statistic' draws the fast path's estimates \(AdaR-ETC and Empirical "
                                   r"ETC, without engine or record_arms\); UCB1 runs round by round, reading the reward "
                                   r"table per pull: give sampler='auto' or 'per_pull'\.$",
                       lambda: htb.simulate(KEY, htb.UCB1(), SPIKES, 100, 2, sampler="order_statistic")),
    # tune_schedule: vectors for one-value settings failed inside; a sampler the proxy ignores
    "tune init vector": (ValueError, r"^init_alpha must be a scalar, the same for every run \(lam's grid shares it\); got "
                                     r"init_alpha of shape \(3,\)",
                         lambda: htb.tune_schedule(KEY, 1.0, SPIKES, REFERENCE, 2000, 4, proxy="monte_carlo",
                                                   init_alpha=np.array([0.7, 0.8, 0.9]))),
    "tune sampler ignored": (ValueError, r"^sampler draws the exploration rewards of proxy='smoothed'; got "
                                         r"sampler='per_pull' with proxy='monte_carlo' \(leave it out\)\.$",
                             lambda: htb.tune_schedule(KEY, 1.0, SPIKES, REFERENCE, 2000, 4, proxy="monte_carlo",
                                                       sampler="per_pull")),
    # a list of temperatures passed silently where the proxy reads none, and failed in the trace where it does
    "tune tau list": (ValueError, r"^tau must be a scalar, one temperature for every run \(vmap over tau for several\); "
                                  r"got tau of shape \(2,\)\.$",
                      lambda: htb.tune_schedule(KEY, 1.0, SPIKES, REFERENCE, 2000, 4, proxy="analytic", tau=[0.1, 0.2])),
    # NumPy fixed-width counts: two uint32 wrapped past the seed limit (seeds 0 and 1 repeated, with a
    # RuntimeWarning), an int32 wrapped the table's size below the limit (10 GiB checked as 1.9 GiB)
    "simulate uint32 seeds": (ValueError, r"^first_seed \+ num_seeds must be at most 2\^32 = 4294967296 .*got "
                                          r"first_seed \+ num_seeds=4294967294 \+ 4\.$",
                              lambda: htb.simulate(KEY, ETC, NU, 100, np.uint32(4), first_seed=np.uint32(2**32 - 2))),
    "proxy_table int32 seeds": (ValueError, r"^the regret proxy holds every seed's per-pull prefix sums: num_seeds=100000 "
                                            r"x 1 instance\(s\) x K=3 x 5001 pulls x 8 bytes = 11446 MiB",
                                lambda: htb.proxy_table(KEY, NU, 10**6, np.int32(100000), num_pulls=5000)),
    # the default length, beyond 2^32 pulls, was refused as "num_pulls must be an integer in [1, 4294967296]",
    # an argument not given, before the size's remedy could say what to lower
    "proxy_table default length": (ValueError, r"^the regret proxy holds every seed's per-pull prefix sums: num_seeds=1 "
                                               r"x 1 instance\(s\) x K=3 x 6666666668 pulls .*; lower num_seeds or "
                                               r"horizon \(T=20000000000\), or pass eps",
                                   lambda: htb.proxy_table(KEY, NU, 2 * 10**10, 1)),
    "shifted bool": (TypeError, r"^delta must be a real number or an array of real numbers; got delta=True \(bool\)\.$",
                     lambda: NU.shifted(True)),
    "shifted nan": (ValueError, r"^delta must lie in \(-inf, inf\); got delta=nan\.$", lambda: NU.shifted(np.nan)),
    "cdf nan": (ValueError, r"^x must be real points, -inf and inf included, not NaN; got x=nan \(entry \[1\]\)\.$",
                lambda: NU.cdf(np.array([0.0, np.nan, 1.0]))),
    # JAX clamps an index: arm 5 of two arms was arm 1
    "law index past the batch": (IndexError, r"^index must lie within the batch shape \(3,\) of the Pareto; got "
                                             r"index=5: index 5 is out of bounds for axis 0 with size 3$",
                                 lambda: NU[5]),
    # simulate's checkpoint limit named num_checkpoints, which the caller never gave
    "measure per_decade past the limit": (ValueError, r"^per_decade must give at most 1048576 checkpoints \(1200001 "
                                                      r"to T=1000\); got per_decade=400000\.$",
                                          lambda: htb.frontier.measure(htb.UCB1(), 1.0, [100, 1000], 2,
                                                                       per_decade=400000)),
    # a member listed twice ran twice (eps repeated was refused); refused at construction, not when run
    "spike family repeats": (ValueError, r"^spike_probs must not repeat a value; got spike_probs=\[0.1, 0.1\], with 0.1 2 "
                                         r"times\.$", lambda: htb.frontier.SpikeFamily(spike_probs=(0.1, 0.1))),
    # a family's field its members' laws refuse under their own names, when run: refused at construction
    "spike family rare spike": (ValueError, r"^spike_probs must be at least 2 gap / 3.4028235e\+38 = 5.87747e-39 for "
                                            r"gap=1 \(the spike 2 gap / p is a float32 reward\); got spike_probs=1e-40\.$",
                                lambda: htb.frontier.SpikeFamily(spike_probs=(1e-40,))),
    "pareto family shape": (ValueError, r"^shapes must be at most 3.4028235e\+38 .*; got shapes=1e\+39\.$",
                            lambda: htb.frontier.ParetoFamily(shapes=(1e39,))),
    "stable family index": (ValueError, r"^index must exceed 1 \+ 2\^-24 .*; got index=1.0000000009313226\.$",
                            lambda: htb.frontier.StableFamily(index=1 + 2**-30)),
    "stable family index near 2": (ValueError, r"^fixed_index must be 2 .* or at most 1.9999998807907104, the largest "
                                               r"float32 below 2: .*; got fixed_index=1.99999999\.$",
                                   lambda: htb.frontier.StableFamily(fixed_index=1.99999999)),
    "stable alpha near 2": (ValueError, r"^Stable alpha must be 2 \(the Gaussian N\(loc, 2 scale\^2\)\) or at most "
                                        r"1.9999998807907104, .*; got Stable alpha=1.99999999\.$",
                            lambda: htb.Stable(loc=0.0, alpha=1.99999999)),
    "stable family scale": (ValueError, r"^scale must be at most 3.4028235e\+38 .*; got scale=1e\+39\.$",
                            lambda: htb.frontier.StableFamily(scale=1e39)),
    # int() of a list deep inside; a range of [1, 2^32] for a count that must be at least 2
    "measure nested horizons": (ValueError, r"^horizons must be a flat list of integers; got horizons=\[\[100, 200\]\]\.$",
                                lambda: htb.frontier.measure(htb.UCB1(), 1.0, [[100, 200]], 2)),
    "measure ragged horizons": (ValueError, r"^horizons must be a flat list of integers; got horizons=\[\[100\], 200\]\.$",
                                lambda: htb.frontier.measure(htb.UCB1(), 1.0, [[100], 200], 2)),
    "law index of a float": (TypeError, r"^index must lie within the batch shape \(3,\) of the Pareto; got index=1\.0: "
                                        r"only integers", lambda: NU[1.0]),
    "measure huge seeds": (ValueError, r"^num_seeds must be an integer in \[2, 4294967296\]; got num_seeds=1099511627776\.$",
                           lambda: htb.frontier.measure(htb.UCB1(), 1.0, [100, 1000], 2**40)),
    # NumPy's "truth value of an array with more than one element is ambiguous"
    "simulate engine array": (TypeError, r"^engine must be True or False",
                              lambda: htb.simulate(KEY, ETC, NU, 100, 2, engine=np.array([True, False]))),
    # taken, then refused as a memory budget of 6e20 bytes
    "simulate checkpoints huge": (ValueError, r"^num_checkpoints must be an integer in \[2, 1048576\]; got "
                                              r"num_checkpoints=10000000000000000000\.$",
                                  lambda: htb.simulate(KEY, ETC, NU, 100, 2, num_checkpoints=10**19)),
    # a batch of seed keys was told to "pass the root key", which reads other numbers
    "reward_table key batch": (ValueError, r"^key must be one key, .*; got a batch of keys of shape \(4,\) "
                                           r"\(htb.reward_table reads one seed's key, htb.seed_keys\(root, S\)\[s\]: "
                                           r"index the batch, or jax.vmap over it\)\.$",
                               lambda: htb.reward_table(SEED_KEYS, NU, 10)),
    # NumPy's "zero-size array to reduction operation maximum"
    "regret_at_lengths empty": (ValueError, r"^lengths must hold at least one exploration length; got lengths of "
                                            r"shape \(0,\)\.$",
                                lambda: htb.regret_at_lengths(KEY, NU, 1000, 4, [])),
    # smoothed_regret: a list width taken for the value, then failing under jax.grad
    "smoothed width list": (ValueError, r"^width must be a scalar, one relative half-width; got width of shape \(2,\)\.$",
                            lambda: htb.smoothed_regret(KEY, ETC, NU, 1000, 4, [0.01, 0.02])),
    # a grid run_family cannot lay out as (G, F + 1, H, S) (before: an IndexError after the runs)
    "run_family one schedule": (ValueError, r"policy must be a flat batch of schedules, grid shape \(G,\); got a policy "
                                r"of grid shape \(\): give its parameters as 1-D arrays \(one schedule: arrays of one",
                                lambda: htb.frontier.run_family(ETC, SPIKE_FAMILY, (10**3,), 4)),
    "run_family grid 2-D": (ValueError, r"policy must be a flat batch of schedules, grid shape \(G,\); got a policy of "
                            r"grid shape \(1, 2\)",
                            lambda: htb.frontier.run_family(htb.AdaRETC(1.0, np.array([[0.8, 0.9]]), 0.0), SPIKE_FAMILY,
                                                            (10**3,), 4)),
    # results that could not be held at the end, refused before the runs (2^32 seeds of 3 members at
    # 100 horizons: 2 x 8 x 3 x 100 = 4800 bytes a seed, 19 TiB)
    "run_family results beyond memory": (
        ValueError, r"num_seeds=4294967296 seeds make 19200\.0 GiB of results \(4800 bytes a seed\), held in memory "
                    r"at the end of the run and written to disk, more than this machine's .* GiB of memory; run fewer "
                    r"seeds or schedules, or several run_family runs with other keys\.",
        lambda: htb.frontier.run_family(ETC_GRID, SPIKE_FAMILY, tuple(range(1000, 1100)), 2**32, seed_chunk=2**20)),
    "measure results beyond memory": (
        ValueError, r"num_seeds=4294967296 seeds make .* GiB of results \(4800 bytes a seed\),.*several measurements",
        lambda: htb.frontier.measure(ETC, 1.0, tuple(range(1000, 1100)), 2**32, family=SPIKE_FAMILY, seed_chunk=2**20)),
    "T-frontier results beyond memory": (
        ValueError, r"num_seeds=4294967296 seeds make .* GiB of results \(4800 bytes a seed\),.*several T-frontier runs",
        lambda: dataclasses.replace(FRONTIER, horizons=tuple(range(1000, 1100)), num_seeds=2**32,
                                    seed_chunk=2**20).validate()),
    "measure random key": (TypeError, r"key must be the integer seed in \[0, 4294967295\], the n of jax.random.key\(n\): "
                           r"a resumable run stores its chunks under that seed; got the random key Array\(\(\), dtype=key",
                           lambda: htb.frontier.measure(htb.UCB1(), 1.0, (100, 126), 2, key=KEY)),
    "sweep legacy key": (TypeError, r"key must be the integer seed.*got the random key Array\(\[0, 0\], dtype=uint32\)",
                         lambda: SweepConfig(key=jax.random.key_data(KEY)).validate()),
    "measure restart": (TypeError, r"restart must be True or False; got restart=1 \(int\)\.",
                        lambda: htb.frontier.measure(htb.UCB1(), 1.0, (100, 126), 2, restart=1)),
    # a policy-making function of the wrong arity, by its signature (before: the call's own TypeError)
    "measure factory": (TypeError, r"measure takes a policy or a function \(member\) -> policy for policy; got "
                                   r"policy=<function .*> \(function\), which takes \(\)\.",
                        lambda: htb.frontier.measure(lambda: htb.UCB1(), 1.0, (100, 126), 2)),
    # traced where a Python value is needed: named, not a ConcretizationTypeError from inside
    "grad simulate": (TypeError, r"simulate compiles and runs its own program, so it cannot be traced \(jax.jit, "
                                 r"jax.vmap, jax.grad\); got a traced policy\. .* use htb.smoothed_regret or "
                                 r"htb.regret_proxy\.",
                      lambda: jax.grad(lambda a: htb.simulate(KEY, htb.AdaRETC(eps=1.0, alpha=a, q=0.0), SPIKES, 100,
                                                              2).regret.mean())(0.8)),
    # one policy, not a grid (the same check as htb.bench.run's)
    "measure grid": (ValueError, r"measure takes one policy \(batch shape \(\)\) for policy; got policy=RobustUCB\(.*, "
                                 r"whose batch shape is \(2,\): measure each grid point on its own\.",
                     lambda: htb.frontier.measure(htb.RobustUCB(eps=1.0, u=np.array([1.0, 2.0])), 1.0, (100, 126), 2)),
    "admissible_schedule eps": (ValueError, r"eps must lie in \(0, 1\]; got eps=2\.",
                                lambda: htb.admissible_schedule(0.0, 0.0, 2.0)),
    "bench factory": (TypeError, r"htb.bench.run takes a policy or a function \(eps, u\) -> policy for policy; got "
                                 r"policy=<function .*> \(function\), which takes \(eps\)\.",
                      lambda: htb.bench.run(lambda eps: htb.UCB1(), out=None)),
    # The T-frontier's settings: nested or one-element lists ran the whole experiment and then failed in the
    # table or the fits; a bool in a list was read as 1 (a horizon T = 1).
    "frontier nested horizons": (ValueError, r"horizons must be a flat list of numbers; got horizons=\(\(1000,\), \(10000,\)\)\.",
                                 lambda: dataclasses.replace(FRONTIER, horizons=((1000,), (10000,))).validate()),
    "frontier fit_from list": (TypeError, r"fit_from must be one integer in \[1, 1000000000000000000\]; got fit_from=\[1000\]",
                               lambda: dataclasses.replace(FRONTIER, fit_from=[1000]).validate()),
    "frontier max_alpha list": (TypeError, r"max_alpha must be one number; got max_alpha=\[0\.9\]\.",
                                lambda: dataclasses.replace(FRONTIER, max_alpha=[0.9]).validate()),
    "bool in a list": (TypeError, r"horizons must be integers .*; got horizons=\[True, 1000, 10000\] \(list\), which holds "
                                  r"bools\.", lambda: dataclasses.replace(FRONTIER, horizons=(True, 1000, 10000)).validate()),
    "bool in theory's list": (TypeError, r"eps must be .*; got eps=\[0\.5, True\] \(list\), which holds bools\.",
                              lambda: htb.theory.alpha_range([0.5, True])),
    "checkpoint_horizons list": (TypeError, r"horizon must be one integer in \[2, 1000000000000000000\]; got horizon=\[10000\]",
                                 lambda: htb.frontier.checkpoint_horizons([10000], 1)),
    # entries and curves checked before the fits and before anything is written (a KeyError after table.md)
    "eps_profile_rows theory": (TypeError, r"entries\[0\] theory must be a real number; got entries\[0\] theory='0\.75'",
                                lambda: htb.frontier.eps_profile_rows(RUNS, [("s", 0, 1.0, "0.75")], 10**3)),
    "eps_profile_rows g": (ValueError, r"entries\[0\] g must be an integer in \[0, 0\]; got entries\[0\] g=1\.",
                           lambda: htb.frontier.eps_profile_rows(RUNS, [("s", 1, 1.0, 0.75)], 10**3)),
    "write_eps_profile curves": (ValueError, r"curves must hold a curve for every schedule of rows; it lacks \['s'\]",
                                 lambda: htb.frontier.write_eps_profile([{"schedule": "s"}], RUNS, "out", "n", "note", {},
                                                                        "t")),
    "write_eps_profile name": (ValueError, r"name must be a file name without a folder .*; got name='a/b'\.",
                               lambda: htb.frontier.write_eps_profile([{"schedule": "s"}], RUNS, "out", "a/b", "note",
                                                                      {"s": abs}, "t")),
    # a gap no spike probability makes a float32 reward (it asked for spike_prob >= 5.9e261)
    "lower_bound_pair huge gap": (ValueError, r"gap must be at most 1\.7014117e\+38 .*; got gap=1e\+300\.",
                                  lambda: htb.lower_bound_pair(2, 1e300, 0.5)),
    # a law's own methods (abs_moment(True) was abs_moment(1.0); None reached jnp.array; (-1,) drew nothing)
    "abs_moment bool": (TypeError, r"eps must be a real number or an array of real numbers; got eps=True \(bool\)\.",
                        lambda: NU.abs_moment(True)),
    "cdf None": (TypeError, r"x must be a real number or an array of real numbers; got x=None\.", lambda: NU.cdf(None)),
    "sample_shape negative": (ValueError, r"sample_shape must be a tuple of integers >= 0; got sample_shape=\(-1,\)\.",
                              lambda: NU.sample(KEY, (-1,))),
    "reward_table first_pull list": (TypeError, r"first_pull must be one integer >= 0; got first_pull=\[0, 5\] \(list\)\.",
                                     lambda: htb.reward_table(KEY, NU, 4, [0, 5])),
    # rows of other keys (before: a KeyError naming the key alone)
    "write_csv keys": (ValueError, r"rows must share the first row's keys \['a', 'b'\] \(the CSV's columns\); rows\[1\] "
                                   r"lacks \['b'\] and adds \['c'\]\.",
                       lambda: htb.frontier.write_csv([{"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 3.0}], "rows.csv")),
}


@pytest.mark.parametrize("case", list(LIBRARY))
def test_library_refuses_bad_input_before_tracing(case):
    kind, pattern, fn = LIBRARY[case]
    _raises(kind, pattern, fn)


# Refusals that need a compiled program before they can refuse: the budget's least value comes from the
# schedule's largest exploration, which memory_plan computes with a small compiled program.
COMPILES_BEFORE_REFUSING = {"sweep budget"}

_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/backend_compile_duration")


@contextlib.contextmanager
def _compilations():
    """The functions JAX traces or compiles inside the block (its tracing and backend-compile events;
    a persistent-cache hit is a backend compile event too), with every in-memory cache cleared first."""
    compiled = []

    def listener(event, duration, **kwargs):
        if event in _COMPILE_EVENTS:
            compiled.append(f"{event.rsplit('/', 1)[-1]}: {kwargs.get('fun_name')}")

    jax.clear_caches()
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield compiled
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)


def test_compilations_are_counted():
    # The counter sees a compilation (so a zero below means none happened).
    with _compilations() as compiled:
        jax.jit(lambda x: x + 1).lower(1.0).compile()
    assert any("backend_compile_duration" in c for c in compiled), compiled


@pytest.mark.parametrize("case", [c for c in LIBRARY if c not in COMPILES_BEFORE_REFUSING])
def test_the_refusals_run_before_anything_is_compiled(case):
    # Each case raises in Python before anything is traced or compiled: not simulate's program, not
    # a jnp call on the way (the arguments are built outside the count).
    kind, pattern, fn = LIBRARY[case]
    with _compilations() as compiled:
        _raises(kind, pattern, fn)
    assert compiled == [], compiled


def test_the_proxys_table_limit_offers_what_regret_proxy_can_change():
    # regret_proxy passes its policy's eps to the table: the message no longer tells it to pass eps.
    with pytest.raises(ValueError, match=r"the regret proxy holds every seed's per-pull prefix sums: .* lower "
                                         r"num_seeds or horizon \(T=1000000000000\)\.$"):
        htb.regret_proxy(KEY, htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), REFERENCE, 10**12, 8, 0.05)


@pytest.mark.parametrize("function, name, call", [
    ("tune_schedule", "eps", lambda x: htb.tune_schedule(KEY, x, SPIKES, REFERENCE, 100, 4)),
    # Before: JAX's errors from inside, naming neither the function nor the argument.
    ("reward_table", "num_pulls", lambda x: htb.reward_table(KEY, NU, x)),  # "Non-hashable static arguments"
    ("round_uniforms", "num", lambda x: htb.round_uniforms(KEY, np.arange(1, 4), x)),  # ConcretizationTypeError
    ("regret_proxy", "num_seeds", lambda x: htb.regret_proxy(KEY, ETC, NU, 100, x, 0.05)),  # TracerBoolConversion
    ("proxy_table", "num_pulls", lambda x: htb.proxy_table(KEY, NU, 100, 4, num_pulls=x)),
    ("seed_keys", "num_seeds", lambda x: htb.seed_keys(KEY, x)),  # ConcretizationTypeError
    # "horizon must be a concrete integer", a ValueError without the remedy the others give
    ("analytic_regret_bound", "horizon", lambda x: htb.analytic_regret_bound(ETC, NU, x)),
    ("smoothed_regret", "num_seeds", lambda x: htb.smoothed_regret(KEY, ETC, NU, 1000, x)),  # TracerBoolConversion
    ("regret_at_lengths", "num_pulls", lambda x: htb.regret_at_lengths(KEY, NU, 1000, 4, np.array([500, 1000]),
                                                                        sampler="per_pull", num_pulls=x)),
])
def test_a_traced_static_argument_is_named(function, name, call):
    # jit without static_argnames: the argument is traced.
    with pytest.raises(TypeError, match=rf"htb.{function} needs {name} as a Python value .*; got a traced {name}: "
                                        rf"pass '{name}' in static_argnames when you jit htb.{function}"):
        jax.jit(call)(4)


@pytest.mark.parametrize("name, call", [
    ("horizon", lambda x: htb.run_on_rewards(ETC, np.zeros((2, 100), np.float32), np.zeros(2), x)),
    ("policy", lambda x: htb.run_on_rewards(htb.AdaRETC(eps=1.0, alpha=x, q=0.0), np.zeros((2, 100), np.float32),
                                            np.zeros(2), 50)),
])
def test_run_on_rewards_refuses_a_traced_schedule_by_name(name, call):
    # Before: a ConcretizationTypeError from its schedule's sizes.
    with pytest.raises(TypeError, match=rf"run_on_rewards sizes and runs its own program .* got a traced {name}: call "
                                        r"it outside jit"):
        jax.jit(call)(0.8 if name == "policy" else 50)


def test_a_family_without_the_moment_is_refused_by_tune_schedule():
    # Pareto(1.5) has no second moment: U_1 = inf, and the descent ran on an objective of -inf (returning
    # worst_case 0 and alpha at its start) before.
    members = [htb.equal_gap(htb.Pareto(loc=0.0, shape=a), num_arms=2, gap=0.2).broadcast() for a in (2.5, 1.5)]
    family = jax.tree.map(lambda *p: jnp.stack(p), *members)  # batch shape (2, 2)
    with pytest.raises(ValueError, match=r"htb.tune_schedule normalises the family's regrets by U_eps .* for eps=1; "
                                         r"got U_eps=inf for member 1 of the family"):
        htb.tune_schedule(KEY, 1.0, family, REFERENCE, 100, 4)


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


def test_a_value_is_formatted_only_for_a_message():
    # An array's repr reads it back from its device: 0.1 s of a first frontier run and 0.5 s of a bench
    # readback went to messages never shown. Catches the message built before the checks, and a lazy
    # one that no longer names the value.
    class Counted(np.ndarray):
        reprs = 0

        def __repr__(self):
            type(self).reprs += 1
            return "Counted(...)"

    np.testing.assert_array_equal(real_array("x", np.arange(3.0).view(Counted)), [0.0, 1.0, 2.0])
    assert Counted.reprs == 0
    with pytest.raises(TypeError, match=r"x must be .*; got x=Counted\(\.\.\.\) \(Counted\), which holds complex"):
        real_array("x", np.array([1j]).view(Counted))
    assert check_broadcast("P", a=jnp.ones((2, 1)), b=jnp.ones(3)) == (2, 3)


def test_policies_still_trace_under_jit_vmap_and_grad():
    def beta(alpha):
        return htb.AdaRETC(eps=1.0, alpha=alpha, q=0.0).beta

    assert float(jax.grad(beta)(0.8)) == -2.0
    np.testing.assert_allclose(jax.vmap(beta)(jnp.array([0.7, 0.8])), [0.6, 0.4])
    assert jax.eval_shape(lambda s: htb.Pareto(loc=0.0, shape=s).mean(), 1.5).shape == ()


# -- the command line: one line on stderr, status 2, nothing written ------------------------------------

SMALL = ["sweep", "--arms", "3", "--alphas", "2/3,0.9", "--qs", "0", "--horizons", "1000,5000",
         "--seeds", "4", "--seed-chunk", "2"]

CLI = [
    # "family takes ..." named the library's argument, not the flag
    (["--family", "mylaws:"], "--family must be MODULE:EXPRESSION (e.g. 'mylaws:TwoSidedLomax("),
    # an empty --config (an unset shell variable) ran the default sweep, 200 seeds
    (["--config", ""], "--config must be the path of a TOML file; got --config=''."),
    # the sweep's instance is built before any memory check: --arms 1e19 failed inside JAX, 1e10 exhausted memory
    (["--arms", "1e19"], "--arms must be an integer in [2, 100000]; got --arms=10000000000000000000."),
    (["--horizons", "1500.7"], "--horizons must be an integer in [1, 1000000000000000000]; got --horizons=1500.7."),
    (["--horizons", "inf"], "--horizons must be an integer in [1, 1000000000000000000]; got --horizons=inf."),
    (["--horizons", ","], "argument --horizons: expected comma-separated numbers, at least one, none empty; got ','"),
    # an empty item was dropped ("0.8,,0.9" ran two alphas), and repeats ran twice, shown as two rows
    (["--alphas", "0.8,,0.9"], "argument --alphas: expected comma-separated numbers, at least one, none empty; got "
     "'0.8,,0.9'"),
    (["--alphas", "0.8,0.8"], "--alphas must not repeat a value; got --alphas=[0.8, 0.8], with 0.8 2 times."),
    (["--horizons", "1e4,1e3"], "--horizons must be increasing; got --horizons=[10000, 1000]."),
    (["--horizons", "True"], "argument --horizons: not a number: 'True'"),
    (["--alphas", "2/0"], "argument --alphas: division by zero in '2/0'"),
    (["--alphas", ""], "argument --alphas: expected comma-separated numbers, at least one, none empty; got ''"),
    (["--alphas", "abc"], "argument --alphas: not a number: 'abc'"),
    (["--key", "-1"], "--key must be an integer in [0, 4294967295]; got --key=-1."),
    (["--seeds", "1000000000000"], "--seeds must be an integer in [2, 4294967296]; got --seeds=1000000000000."),
    (["--seeds", "4000000000"], "--seed-chunk must be at least 40000 for --seeds=4000000000"),
    (["--memory-budget", "1"], "--memory-budget must be at least"),
    # a budget never given was named by the library's argument, "got memory_budget=2147483648"
    (["--arms", "1e5", "--horizons", "1e3"], "--memory-budget must be at least 2378650192 bytes for this simulation "
     "(1 concurrent execution(s) per device, each 1048576 fixed, 2372800000 for one seed per chunk and 4801616 for the "
     "results of its 2 seeds); got the default --memory-budget=2147483648."),
    (["--family", "two-point", "--spike-prob", "1e-300"], "--spike-prob must be at least 2 gap / 3.4028235e+38"),
    # one range for --gap at both ends (a huge gap named float32's symmetric range, a negative one (0, inf))
    (["--gap", "1e39"], "--gap must lie in (0, 3.40282e+38]; got --gap=1e+39."),
    (["--gap", "-1"], "--gap must lie in (0, 3.40282e+38]; got --gap=-1."),
    # the default alphas named as the default (before: "alphas must lie in [0.75, 1) ...; got alphas=0.666667")
    (["--eps", "0.5", "--alphas", "2/3,0.75,0.85,0.95"], "--alphas must lie in [0.75, 1) for --eps=0.5; got "
     "--alphas=0.666667 (entry [0])."),
    # a file's path for MODULE, and a load failure named by its flag (before: "family: ...")
    (["--family", "mylaws.py:Law()"], "--family: cannot import module 'mylaws.py': ModuleNotFoundError: No module "
     "named 'mylaws' (MODULE is a module's name, as in an import statement, found from the current directory or "
     "PYTHONPATH: 'mylaws' for ./mylaws.py)"),
]


@pytest.mark.parametrize("extra,message", CLI)
def test_sweep_refuses_before_printing_or_writing(tmp_path, capsys, extra, message):
    _assert_refused([*SMALL, "--out", str(tmp_path / "out"), *extra], tmp_path / "out", capsys, message)


def test_the_default_alphas_and_qs_are_named_as_the_default(tmp_path, capsys):
    # Before: "alphas must lie in [0.75, 1) for --eps=0.5; got alphas=0.666667", values never given.
    _assert_refused(["sweep", "--eps", "0.5", "--out", str(tmp_path / "out")], tmp_path / "out", capsys,
                    "--eps=0.5 admits alphas in [0.75, 1), and the default alphas 0.6667,0.75,0.85,0.95 (for eps = 1) "
                    "start below it: give alphas (--alphas) too.")
    # Before: "qs must lie in [0, 0.25] for --eps=0.5; got qs=0.333333 (entry [1])".
    _assert_refused(["sweep", "--eps", "0.5", "--alphas", "0.8", "--out", str(tmp_path / "out")], tmp_path / "out",
                    capsys, "--eps=0.5 admits qs in [0, 0.25], and the default qs 0,0.3333 (for eps = 1) end above "
                    "it: give qs (--qs) too.")


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
        (["--key", "-1"], "--key must be an integer in [0, 4294967295]; got --key=-1."),
        (["--horizons", "1500.7,1e9,1e10"], "--horizons must be an integer in [1, 1000000000000000000]; got --horizons=1500.7."),
        (["--seeds", "1000000000000"], "--seeds must be an integer in [2, 4294967296]; got --seeds=1000000000000."),
        (["--fit-from", "1e9.5"], "argument --fit-from: not a number: '1e9.5'"),
        # it named --fit-from=1000000000 as if given
        (["--horizons", "1e3,1e4"], "the fits start at the default --fit-from=1e+09, and --horizons=[1000, 10000] has "
         "fewer than two from there: give --fit-from too"),
        (["--eps", ","], "argument --eps: expected comma-separated numbers, at least one"),
        (["--eps", "1,1"], "--eps must not repeat a value; got --eps=[1, 1], with 1 2 times."),
        (["--stable-alpha", "1.8"], "--stable-alpha is for --family stable."),
        # single numbers read as the lists are, fractions included ("2/3" was refused as float's "invalid float value")
        (["--max-alpha", "1/2"], "--max-alpha must lie in (0.833333, 1) for --eps=0.25 with --alphas-per-eps=3 > 1; "
         "got --max-alpha=0.5."),
        (["--max-alpha", "x"], "argument --max-alpha: not a number: 'x' (e.g. 0.8, 2/3 or 1e6)"),
        # one horizon given twice: the run ran, then the fit of two equal abscissae failed
        (["--horizons", "1e9,1e9"], "--horizons must be increasing; got --horizons=[1000000000, 1000000000]."),
        # a horizon repeated among others weighed twice in the fits, silently
        (["--horizons", "1e3,1e3,1e4,1e5", "--fit-from", "1e3"], "--horizons must be increasing; got "
         "--horizons=[1000, 1000, 10000, 100000]."),
        (["--family", "stable", "--stable-alpha", "2.5"], "--stable-alpha must lie in (1, 2]; got --stable-alpha=2.5."),
        (["--family", "stable", "--eps", "1"], "--eps must lie in (0, 0.75) for a StableFamily of index 1.75"),
        (["--family", "cauchy"], "argument --family: invalid choice: 'cauchy'"),
        # --policy: measure's own checks, before its banner (an anytime run's checkpoints, seeds, chunk)
        (["--policy", "htb_jax:UCB1()", "--horizons", "100,150"], "an anytime run to T=150 records 23 checkpoints; "
         "horizons [100] are not among them (the nearest to 100: 96 and 120): give --horizons among them (without "
         "it, they are the checkpoints from --fit-from to 10000), or --anytime no."),
        (["--policy", "htb_jax:UCB1()", "--seeds", "1"], "--seeds must be an integer in [2, 4294967296]; got --seeds=1."),
        (["--policy", "htb_jax:UCB1()", "--seed-chunk", "0"], "--seed-chunk must be an integer >= 1; got --seed-chunk=0."),
        # flags of the other experiment, which it used to ignore (exit status 0)
        (["--policy", "htb_jax:UCB1()", "--max-alpha", "7"], "--max-alpha sets AdaR-ETC's grid of schedules; --policy "
         "measures the one policy it names."),
        (["--policy", "htb_jax:UCB1()", "--alphas-per-eps", "2"], "--alphas-per-eps sets AdaR-ETC's grid of schedules"),
        (["--anytime", "yes"], "--anytime is for --policy: the T-frontier runs AdaR-ETC's schedules at each horizon."),
        (["--out", ""], "the output directory must be a path; got --out=''."),  # was out=''
    ],
)
def test_frontier_refuses_before_printing_or_writing(tmp_path, capsys, extra, message):
    _assert_refused(["frontier", "--out", str(tmp_path / "out"), *extra], tmp_path / "out", capsys, message)


def test_a_frontier_chunk_past_the_memory_budget_names_the_chunk_flag(tmp_path, capsys):
    # It named memory_budget alone, which the command has no flag for (the breakdown depends on the threads).
    argv = ["frontier", "--seeds", "4096", "--seed-chunk", "4096", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("htb-jax: error: memory_budget must be at least ") and len(err.splitlines()) == 1, err
    assert err.endswith("got memory_budget=2147483648: the budget of one chunk of seeds, simulated at once; give a "
                        "smaller --seed-chunk, or fewer --horizons, --eps or --alphas-per-eps.\n"), err
    assert not (tmp_path / "out").exists()


def test_a_frontier_grid_past_memory_is_refused_before_it_is_built(tmp_path, capsys):
    # The grid of 3 x 10^9 alphas was built (7.5 GiB of np.linspace) before its results were checked: the
    # process was killed, or failed in NumPy with a traceback.  Refused now from the grid's size alone.
    argv = ["frontier", "--alphas-per-eps", "1e9", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("htb-jax: error: --seeds=256 seeds make "), err
    assert err.endswith("run fewer seeds, --eps or --alphas-per-eps, or several T-frontier runs with other keys.\n"), err
    assert not (tmp_path / "out").exists()


def test_bare_command_is_a_usage_error_on_stderr(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("htb-jax: error: give a command: frontier (the T-frontier, the main job), sweep or bench "
                            "(see 'htb-jax --help')\n")


@pytest.mark.parametrize("argv, helped", [
    (["frontier", "--config", "typo.toml"], "htb-jax frontier"),  # pointed to 'htb-jax --help', where it is not
    (["bench", "extra"], "htb-jax bench"),
    (["--bogus"], "htb-jax"),
    (["--bogus", "bench"], "htb-jax"),  # before the command: the top level's
    (["bench", "bench"], "htb-jax bench"),  # the command's name again, after it
])
def test_an_unknown_argument_points_to_its_commands_help(capsys, argv, helped):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    unknown = " ".join(argv[1:] if argv[0] in ("frontier", "bench") else argv[:1])
    assert capsys.readouterr().err == f"htb-jax: error: unrecognized arguments: {unknown} (see '{helped} --help')\n"


def test_toml_lists_are_not_truncated_or_empty(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    for text, message in [
        # a value out of its range: named as the file names it, and by the file
        ("horizons = [1500.7]\n", f"{config}: horizons must be an integer in [1, 1000000000000000000]; got "
                                  "horizons=1500.7."),
        ("alphas = []\n", f'alphas in {config} must be a non-empty list of numbers (fractions such as "2/3" allowed); '
                          'got []'),
        # the reason a fraction is not a number, as the flag's message gives it
        ('alphas = ["2/0"]\n', f'alphas in {config} must be a non-empty list of numbers (fractions such as "2/3" '
                                "allowed); got ['2/0'] (division by zero in '2/0')"),
        # a value of the list, by its index in the list (AdaRETC named the grid's [i, j] as alpha)
        ("alphas = [0.8, 1.0]\n", f"{config}: alphas must lie in [0.666667, 1) for eps=1; got alphas=1 (entry [1])."),
        ("horizons = [true]\n", f"horizons in {config} must be a non-empty list of integers; got [True]"),
        ("key = -1\n", f"{config}: key must be an integer in [0, 4294967295]; got key=-1."),
        # an infinite integer (an OverflowError's traceback, exit status 1), then without its range: with it now
        ("num_seeds = inf\n", f"{config}: num_seeds must be an integer in [2, 4294967296]; got num_seeds=inf."),
        ("seed_chunk = 2.5\n", f"{config}: seed_chunk must be an integer >= 1; got seed_chunk=2.5."),
        # a number written as a string, as on the command line (lists took "2/3", a single number refused it)
        ('eps = "3/2"\n', f"{config}: eps must lie in (0, 1]; got eps=1.5."),
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
    store = chunk_store.ChunkStore(str(out), {"a": 1}, [0, 0], [(0, 2)], {"program_sha256": "0"})
    assert not os.path.exists(out / "manifest.json")
    store.save(0, {"x": np.zeros(2)})
    assert os.path.exists(out / "manifest.json") and store.load(0) is not None


def test_tune_schedule_refuses_an_instance_without_a_suboptimal_arm():
    # Its regret is 0 at every schedule, log(R / U) = -inf and the gradient NaN: every update NaN, and the
    # middle of the admissible range came back as the tuned schedule, nothing raised. (The gaps are computed
    # with jnp: not among LIBRARY's compile-free cases.)
    family = htb.Gaussian(loc=np.array([[0.0, 0.0], [0.2, 0.0]]))
    with pytest.raises(ValueError, match=r"^family must have a suboptimal arm in every instance .*got member 0 of the "
                                         r"family with every gap 0 \(all arms' means equal\): leave it out\.$"):
        htb.tune_schedule(KEY, 1.0, family, REFERENCE_GAUSS, 2000, 4, proxy="monte_carlo")
    with pytest.raises(ValueError, match=r"^reference must have a suboptimal arm in every instance .*got it with every gap"):
        htb.tune_schedule(KEY, 1.0, htb.Gaussian(loc=np.array([[0.1, 0.0], [0.2, 0.0]])),
                          htb.Gaussian(loc=np.zeros(2)), 2000, 4, proxy="monte_carlo")


def test_a_table_too_short_for_the_exploration_is_refused():
    # smoothed_regret and regret_at_lengths read past a short table clipped: a value other than simulate's
    # (13.9 against 23.6), where regret_proxy refused the same table. (Their checks of the instance compile
    # a few small programs first, so these are not among LIBRARY's compile-free cases.)
    with pytest.raises(ValueError, match=r"^num_pulls must cover the exploration the smoothing reaches \(at alpha - width, "
                                         r"q \+ width\): \d+ pulls per arm; got num_pulls=50\.$"):
        htb.smoothed_regret(KEY, htb.AdaRETC(eps=0.5, alpha=0.75, q=0.25), NU, 1000, 4, sampler="per_pull", num_pulls=50)
    with pytest.raises(ValueError, match=r"^num_pulls must cover the longest exploration, ceil\(max\(lengths\) / K\) = "
                                         r"334 pulls per arm; got num_pulls=20\.$"):
        htb.regret_at_lengths(KEY, NU, 1000, 4, np.array([600, 1000]), sampler="per_pull", num_pulls=20)


def test_a_file_where_the_chunks_go_is_refused_before_anything_is_computed(tmp_path):
    # Before, the first chunk was computed, then saving it failed ("File exists").
    (tmp_path / "chunks").write_text("not a directory")
    with _compilations() as compiled:
        with pytest.raises(ValueError, match=re.escape(
                f"the directory store={str(tmp_path)!r} holds a file 'chunks' where its chunks go; give another store, "
                "or move the file")):
            htb.frontier.run_family(ETC_GRID, SPIKE_FAMILY, (10**3,), 4, store=str(tmp_path), progress=False)
    assert compiled == [], compiled


def test_messages_name_the_argument_and_the_value():
    # Spot check of the form: "<name> must be <form>; got <name>=<value>."
    message = _raises(ValueError, "horizon", lambda: htb.simulate(KEY, POLICY, NU, 1500.7, 2))
    assert re.fullmatch(r"horizon \(T\) must be an integer in \[1, 1000000000000000000\]; got horizon \(T\)=1500.7\.",
                        message)


# -- every parameter of the public surface: None and a class are refused by name ---------------------------
#
# One valid call per public constructor and function (by keyword), then each argument replaced in
# turn by None (where the parameter does not document None) and by a class (the class of the valid
# value: float for a number, Pareto for an instance, AdaRETC for a policy): a TypeError or ValueError
# whose message names the parameter and the value given, before anything runs.

ETC = htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0)
ETC_GRID = htb.AdaRETC(eps=1.0, alpha=np.array([0.8]), q=0.0)  # run_family's flat grid of schedules
X3 = np.array([10.0, 100.0, 1000.0])
SPIKE_FAMILY = htb.frontier.SpikeFamily(num_arms=2, gap=1.0, spike_probs=(0.1, 0.5), fixed_spike=0.9)
RUNS = htb.frontier.FamilyRuns(regret=np.ones((1, 3, 2, 4)), exploration=np.full((1, 2), 100),
                               horizons=np.array([10**3, 10**4]), family=SPIKE_FAMILY, seconds=0.0)
FRONTIER = htb.frontier.TFrontierConfig(eps_values=(1.0,), alphas_per_eps=1, horizons=(10**3, 10**4), fit_from=10**3,
                                        num_seeds=4, seed_chunk=4, family=SPIKE_FAMILY)
FRONTIER_RESULT = htb.frontier.TFrontierResult(FRONTIER, RUNS, [])
FIT = htb.ExponentFit(0.5, 0.0, 0.4, 0.6, 0.95, 10)
ROW = dict(d=0.7, d_low=0.6, d_high=0.8, d_theory=0.7, d_finite_t=0.7, c=0.5, c_low=0.4, c_high=0.6, c_theory=0.5,
           c_finite_t=0.5)
MEASUREMENT = htb.frontier.Measurement(
    "p", "two-point", 1.0, np.array([100, 1000]), np.ones((3, 2, 4)), np.ones(3), np.zeros(2, np.int64), FIT, FIT,
    np.nan, np.nan, np.nan, False, 0.0, 0,
)
OUTCOME = htb.Outcome(*(np.zeros(2) for _ in range(7)))
SIM = dict(key=KEY, policy=POLICY, instance=NU, horizon=100, num_seeds=2)


def _axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    plt.close(fig)
    return ax


def _validated(cls):
    """A configuration class constructed and validated (they check in ``validate``, as the CLI calls it)."""
    def build(**kwargs):
        cls(**kwargs).validate()
    build.__signature__ = inspect.signature(cls)
    return build


# name: (callable, valid keyword arguments, parameters whose documented default is None)
SURFACE = {
    # policies
    "AdaRETC": (htb.AdaRETC, dict(eps=1.0, alpha=0.8, q=0.0), ()),
    "AdaRETC.calibrated": (htb.AdaRETC.calibrated, dict(eps_bar=0.5), ()),
    "EmpiricalETC": (htb.EmpiricalETC, dict(eps=1.0, alpha=0.8, q=0.0), ()),
    "ExploreThenCommit": (htb.ExploreThenCommit, dict(eps=1.0, alpha=0.8, q=0.0), ()),
    "AnytimeAdaRETC": (htb.AnytimeAdaRETC, dict(eps=1.0, alpha=0.8, q=0.0, growth=2.0), ()),
    "ForceMoM": (htb.ForceMoM, dict(rho=0.5), ()),
    "ForceMoM.exploration_target": (htb.ForceMoM(rho=0.5).exploration_target, dict(num_arms=2, t=100), ()),
    "ForceMoM.num_blocks": (htb.ForceMoM(rho=0.5).num_blocks, dict(num_arms=2, forced=10), ()),
    "RobustUCB": (htb.RobustUCB, dict(eps=1.0, u=2.0, v=None, estimator="truncated"), ("u", "v")),
    "RobustUCBf": (htb.RobustUCBf, dict(kind="R-UCB", estimator="mean", m=2.1, a=0.0), ()),
    "APE2": (htb.APE2, dict(p=1.5, c=1.0, perturbation="frechet", shape=3.0, scale=1.0), ("shape", "scale")),
    "MRAPE": (htb.MRAPE, dict(p=1.5, c=1.0, perturbation="uniform"), ()),
    "MRUCB": (htb.MRUCB, dict(p=1.5, c=1.0), ()),
    # distributions and instances
    "Pareto": (htb.Pareto, dict(loc=0.0, shape=1.5), ()),
    "StudentT": (htb.StudentT, dict(loc=0.0, df=3.0, scale=1.0), ()),
    "Frechet": (htb.Frechet, dict(loc=0.0, shape=3.0, scale=1.0), ()),
    "Gaussian": (htb.Gaussian, dict(loc=0.0, scale=1.0), ()),
    "LogNormal": (htb.LogNormal, dict(loc=0.0, sigma=1.0, scale=1.0), ()),
    "Stable": (htb.Stable, dict(loc=0.0, alpha=1.5, beta=0.0, scale=1.0), ()),
    "TwoPoint": (htb.TwoPoint, dict(low=0.0, high=1.0, p=0.5), ()),
    "Dirac": (htb.Dirac, dict(value=0.5), ()),
    "equal_gap": (htb.equal_gap, dict(base=htb.Pareto(0.0, 1.5), num_arms=3, gap=0.1), ()),
    "lower_bound_pair": (htb.lower_bound_pair, dict(num_arms=2, gap=1.0, spike_prob=0.5, arm=1), ()),
    "intrinsic_scale": (htb.intrinsic_scale, dict(instance=NU, eps=0.4), ()),
    "num_arms": (htb.num_arms, dict(instance=NU), ()),
    "gaps": (htb.gaps, dict(instance=NU), ()),
    # schedules, estimators, grids, summaries
    "exploration_pulls": (htb.exploration_pulls, dict(exploration=10, num_arms=3), ()),
    "num_blocks": (htb.num_blocks, dict(num_arms=3, horizon=100), ()),
    "median_of_means": (htb.median_of_means, dict(x=np.ones(4), num_blocks=2, n=4, max_blocks=2), ("n", "max_blocks")),
    "kth_smallest": (htb.kth_smallest, dict(x=np.array([3.0, 1.0, 2.0]), k=2, axis=-1), ()),
    "powers_of_ten": (htb.powers_of_ten, dict(start=-2.0, stop=0.0, step=1.0), ()),
    "summarize": (htb.summarize, dict(outcome=OUTCOME), ()),
    "progress_bar": (htb.progress_bar, dict(done=8, total=32, started=0.0, stream=io.StringIO(), initial=0,
                                            chunk=(1, 4)), ("chunk",)),
    "fit_exponent": (htb.fit_exponent, dict(x=X3, regret=np.ones((3, 4)), key=0, num_bootstrap=10, level=0.95,
                                            statistic="mean"), ()),
    "fit_worst_case_exponent": (htb.fit_worst_case_exponent, dict(x=X3, regret=np.ones((3, 2, 4)), scale=np.ones(2),
                                                                  key=0, num_bootstrap=10, level=0.95), ()),
    "local_slopes": (htb.local_slopes, dict(x=X3, y=np.ones(3)), ()),
    # reward tables and simulation
    "seed_keys": (htb.seed_keys, dict(key=KEY, num_seeds=3, first_seed=0), ()),
    "reward_table": (htb.reward_table, dict(key=KEY, instance=NU, num_pulls=4, first_pull=0), ()),
    "round_uniforms": (htb.round_uniforms, dict(seed_key=KEY, rounds=[1, 2], num=2), ()),
    "uniform_from_bits": (htb.uniform_from_bits, dict(w=np.array([1, 2], np.uint64)), ()),
    "signed_tail": (htb.signed_tail, dict(w=np.array([1, 2], np.uint64)), ()),
    "first_argmax": (htb.first_argmax, dict(values=np.array([0.5, 1.0])), ()),
    "abs_moment_by_quadrature": (htb.abs_moment_by_quadrature, dict(
        log_density=lambda v, side: -2.0 * jnp.logaddexp(0.0, v), eps=0.5, loc=0.0, scale=1.0, tail_index=1.0 + 0.9,
        lower=0.0), ("lower",)),
    "default_memory_budget": (htb.default_memory_budget, dict(device=jax.devices()[0]), ("device",)),
    "simulate": (htb.simulate, dict(**SIM, first_seed=0, engine=False, record_arms=False, num_checkpoints=16,
                                    pull_chunk=256, seed_chunk=2, devices=jax.devices()[:1], sampler="auto",
                                    memory_budget=2**30, threads=1, paired=False),
                 ("pull_chunk", "seed_chunk", "devices", "memory_budget", "threads")),
    "memory_plan": (htb.memory_plan, dict(**SIM, measure=False), ()),
    "run_on_rewards": (htb.run_on_rewards, dict(policy=ETC, rewards=np.zeros((3, 500), np.float32), means=np.zeros(3),
                                                horizon=100, pull_chunk=256, num_checkpoints=16), ("pull_chunk",)),
    # proxies and tuning
    "proxy_table": (htb.proxy_table, dict(key=KEY, instance=NU, horizon=100, num_seeds=4, num_pulls=40, eps=1.0),
                    ("num_pulls", "eps")),
    "regret_proxy": (htb.regret_proxy, dict(key=KEY, policy=ETC, instance=NU, horizon=100, num_seeds=4, tau=0.1,
                                            rounding=False, num_pulls=40), ("num_pulls",)),
    "proxy_regrets": (htb.proxy_regrets, dict(policy=ETC, table=htb.proxy_table(KEY, NU, 100, 4, num_pulls=40),
                                              horizon=100, tau=0.1, rounding=False), ()),
    "analytic_regret_bound": (htb.analytic_regret_bound, dict(policy=ETC, instance=NU, horizon=100, eps=1.0), ("eps",)),
    "smoothed_regret": (htb.smoothed_regret, dict(key=KEY, policy=ETC, instance=NU, horizon=100, num_seeds=4,
                                                  width=0.01, instance_width=0.01, sampler="per_pull", num_pulls=40),
                        ("instance_width", "num_pulls")),
    "regret_at_lengths": (htb.regret_at_lengths, dict(key=KEY, instance=NU, horizon=100, num_seeds=4, lengths=[100],
                                                      sampler="per_pull", num_pulls=40), ("num_pulls",)),
    "smooth_max_log": (htb.smooth_max_log, dict(log_values=np.zeros(3), sigma=0.05), ()),
    "admissible_schedule": (htb.admissible_schedule, dict(z_alpha=0.0, z_q=0.0, eps=1.0), ()),
    "tune_schedule": (htb.tune_schedule, dict(key=KEY, eps=1.0, family=SPIKES, reference=REFERENCE, horizon=100,
                                              num_seeds=4, lam=0.5, tau=0.05, sigma=0.05, num_steps=5,
                                              optimizer=optax.adam(0.05), init_alpha=0.8, init_q=0.1, tune_q=True,
                                              proxy="monte_carlo", width=(0.05, 0.002), sampler="auto", polish=0),
                      ("optimizer", "init_alpha", "init_q", "polish")),
    # htb_jax.theory
    **{f"theory.{name}": (getattr(htb.theory, name), dict(eps=0.5), ())
       for name in ("alpha_range", "q_range", "oracle_exponents", "balanced_alpha", "balanced_q", "balanced_exponent",
                    "order_free_exponent", "price_of_order_freedom")},
    "theory.beta_alpha": (htb.theory.beta_alpha, dict(alpha=0.8, eps=1.0), ()),
    "theory.free_exponents": (htb.theory.free_exponents, dict(alpha=0.8, q=0.0, eps=1.0), ()),
    "theory.dependent_exponents": (htb.theory.dependent_exponents, dict(alpha=0.8, q=0.0, eps=1.0), ()),
    "theory.t_frontier": (htb.theory.t_frontier, dict(d=0.8, eps=1.0), ()),
    "theory.k_frontier": (htb.theory.k_frontier, dict(b=0.5, eps=1.0), ()),
    "theory.calibrated_profile": (htb.theory.calibrated_profile, dict(eps=0.5, eps_bar=0.5), ()),
    "theory.pairwise_lower_bound": (htb.theory.pairwise_lower_bound, dict(k=0.5, t=0.5, eps=1.0), ()),
    "theory.force_mom_exponents": (htb.theory.force_mom_exponents, dict(rho=0.5, eps=1.0), ()),
    # htb_jax.frontier
    "frontier.SpikeFamily": (_validated(htb.frontier.SpikeFamily),
                             dict(num_arms=2, gap=1.0, spike_probs=(0.1, 0.5), fixed_spike=0.9), ()),
    "frontier.ParetoFamily": (_validated(htb.frontier.ParetoFamily),
                              dict(num_arms=2, gaps=(0.1, 1.0), shapes=(2.5,), fixed_gap=0.5, fixed_shape=3.0), ()),
    "frontier.StableFamily": (_validated(htb.frontier.StableFamily), dict(
        num_arms=2, index=1.75, gaps=(0.01, 0.1), scale=1.0, fixed_index=1.05, fixed_gap=0.03), ()),
    "frontier.TFrontierConfig": (_validated(htb.frontier.TFrontierConfig),
                                 dict(eps_values=(1.0,), alphas_per_eps=1, max_alpha=0.9, horizons=(10**3, 10**4),
                                      fit_from=10**3, num_seeds=4, seed_chunk=4, key=0, family=SPIKE_FAMILY,
                                      sampler="auto"), ("seed_chunk",)),
    "frontier.run_family": (htb.frontier.run_family, dict(policy=ETC_GRID, family=SPIKE_FAMILY, horizons=(10**3, 10**4),
                                                          num_seeds=4, key=0, seed_chunk=4, progress=False,
                                                          store=None, restart=False, sampler="auto"),
                            ("seed_chunk", "store")),
    "frontier.free_exponent": (htb.frontier.free_exponent, dict(runs=RUNS, g=0, eps=1.0, fit_from=10**3, key=0,
                                                                also=()), ()),
    "frontier.dependent_exponent": (htb.frontier.dependent_exponent, dict(runs=RUNS, g=0, fit_from=10**3, key=0), ()),
    "frontier.verdict": (htb.frontier.verdict, dict(fit=FIT, theory_value=0.5, finite_t=0.5, hardest=0.1,
                                                    family=SPIKE_FAMILY, exploration_t=0.5),
                         ("hardest", "family", "exploration_t")),
    "frontier.fit_t_frontier": (htb.frontier.fit_t_frontier, dict(config=FRONTIER, runs=RUNS), ()),
    "frontier.t_frontier_table": (htb.frontier.t_frontier_table, dict(result=FRONTIER_RESULT), ()),
    "frontier.save_runs": (htb.frontier.save_runs, dict(runs=RUNS, path="runs.npz"), ()),
    "frontier.load_runs": (htb.frontier.load_runs, dict(path="runs.npz", family=SPIKE_FAMILY), ()),
    "frontier.plot_t_frontier": (htb.frontier.plot_t_frontier, dict(result=FRONTIER_RESULT, path="frontier.png"), ()),
    "frontier.run_t_frontier": (htb.frontier.run_t_frontier, dict(config=FRONTIER, progress=False, out_dir="out",
                                                                  restart=False), ("out_dir",)),
    "frontier.measure": (htb.frontier.measure, dict(
        policy=htb.UCB1(), eps=1.0, horizons=(100, 126), num_seeds=2, family=SPIKE_FAMILY, key=0, anytime=False,
        per_decade=10, seed_chunk=8, store="store", restart=False, name="p", family_name="f", progress=False),
        ("family", "anytime", "seed_chunk", "store", "name", "family_name")),
    "Empirical": (htb.Empirical, dict(start=0.0, size=3.0, shift=0.0,
                                      data=htb.Empirical.from_samples([1.0, 2.0, 3.0]).data), ()),
    "Empirical.from_samples": (htb.Empirical.from_samples, dict(samples=[1.0, 2.0], shift=0.0), ()),
    "Empirical.from_table": (htb.Empirical.from_table, dict(values=np.zeros((2, 3)), counts=[1, 2], shift=0.0), ()),
    "tail_index": (htb.tail_index, dict(samples=np.arange(1.0, 20.0), k=3), ("k",)),
    "suggested_eps": (htb.suggested_eps, dict(alpha=1.5), ()),
    "bench.run": (htb.bench.run, dict(policy=htb.UCB1(), name="mine", size="cpu", out="bench", peers=True,
                                      only=["gaps"], restart=False, progress=True, command="htb-jax bench"),
                  ("policy", "name", "out", "only", "command")),
    "bench.experiments": (htb.bench.experiments, dict(size="cpu"), ()),
    "bench.setting_score": (htb.bench.setting_score, dict(mean_regret=1.0, uniform_regret=2.0), ()),
    "bench.write_report": (htb.bench.write_report, dict(results={"suite": "ht-v1"}, directory="report"), ()),
    "bench.scorecard_markdown": (htb.bench.scorecard_markdown, dict(results={"suite": "ht-v1"}), ()),
    "frontier.checkpoint_horizons": (htb.frontier.checkpoint_horizons,
                                     dict(horizon=10**4, fit_from=10**3, per_decade=10), ()),
    "frontier.measurement_table": (htb.frontier.measurement_table, dict(measurements=[MEASUREMENT], claims={}),
                                   ("claims",)),
    "frontier.plot_measurements": (htb.frontier.plot_measurements, dict(
        measurements=[MEASUREMENT], path="m.png", title="t", claims={}, notes={}), ("title", "claims", "notes")),
    "frontier.frontier_panel": (htb.frontier.frontier_panel, dict(ax=_axes(), eps=1.0, title="t", high=1.02), ()),
    "frontier.plot_point": (htb.frontier.plot_point, dict(
        ax=_axes(), row=ROW, color="k", x="d", y="c", marker="s", label="l"), ("label",)),
    "frontier.write_csv": (htb.frontier.write_csv, dict(rows=[{"a": 1.0}], path="rows.csv"), ()),
    "frontier.eps_profile_rows": (htb.frontier.eps_profile_rows, dict(
        runs=RUNS, entries=[("s", 0, 1.0, 0.5)], fit_from=10**3), ()),
    "frontier.write_eps_profile": (htb.frontier.write_eps_profile, dict(
        rows=[{"schedule": "s"}], runs=RUNS, out="out", name="n", note="note", curves={"s": abs}, title="t"), ()),
}

# Public names that take no user parameters, or are results and protocols the library builds.
NOT_IN_SURFACE = {
    "AdaRUCB", "UCB1", "theory.table1_points", "AdaRETC.order_free",  # no parameters
    "Distribution",  # the base class of the families, not instantiated
    "EngineSpec", "PolicyKernel", "PolicySummary", "RoundContext", "TableReader",  # the policy protocol's types
    "ExponentFit", "MemoryPlan", "Outcome", "ProxyTable", "Summary", "TuningResult", "frontier.FamilyRuns",
    "frontier.TFrontierResult", "theory.CalibratedProfile", "theory.Exponents", "theory.ForceMoMExponents",
    "theory.OperatingPoint", "frontier.Measurement", "TailIndex",  # results
    "bench.peers", "bench.wti_returns",  # no parameters
    "bench.Contender", "bench.Experiment", "bench.Setting", "bench.Size",  # the suite's descriptions
    "ForeignStoreError", "StaleStoreError", "Interrupted",  # exceptions the library raises, not called by users
}

def _public_callables():
    names = {n for n in htb.__all__ if n not in ("bench", "frontier", "theory")}
    names |= {f"{module}.{n}" for module in ("bench", "frontier", "theory") for n in getattr(htb, module).__all__}
    return names


def _surface_cases():
    for label, (_, kwargs, may_be_none) in SURFACE.items():
        for name, value in kwargs.items():
            if name not in may_be_none:
                yield pytest.param(label, name, None, id=f"{label}-{name}-None")
            yield pytest.param(label, name, type(value), id=f"{label}-{name}-class")


def test_the_surface_table_covers_every_public_callable_and_parameter():
    # A new public function, or a new parameter of one, fails here until it has a row (and so a check).
    assert _public_callables() - set(SURFACE) - NOT_IN_SURFACE == set()
    for label, (fn, kwargs, may_be_none) in SURFACE.items():
        params = {p.name for p in inspect.signature(fn).parameters.values() if p.kind != p.VAR_KEYWORD}
        assert params == set(kwargs), (label, params ^ set(kwargs))
        assert set(may_be_none) <= set(kwargs)
        for name in params - set(may_be_none):
            assert inspect.signature(fn).parameters[name].default is not None, (label, name)


@pytest.mark.parametrize("label,name,bad", list(_surface_cases()))
def test_every_parameter_refuses_none_and_a_class_by_name(label, name, bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the frontier's writers are given relative paths: nothing lands in the checkout
    fn, kwargs, _ = SURFACE[label]
    with pytest.raises((TypeError, ValueError)) as info:
        fn(**{**kwargs, name: bad})
    message = str(info.value)
    shown = "None" if bad is None else bad.__name__
    assert re.search(rf"(?<![\w.]){re.escape(name)}\b", message), message
    assert re.search(rf"\b{re.escape(shown)}\b", message), message
    assert list(tmp_path.iterdir()) == []


def test_figure_and_npz_paths_take_open_files_too():
    # The plots and save_runs write with matplotlib and NumPy, which take an open file as well as
    # a path (the notebooks draw into io.BytesIO); an output directory takes paths only.
    import io

    from htb_jax._src.validation import check_path

    check_path("path", io.BytesIO(), file_object=True)
    check_path("path", "figure.png", file_object=True)
    with pytest.raises(TypeError, match=r"path must be a path \(a non-empty string or a pathlib.Path\); "):
        check_path("path", io.BytesIO())
    with pytest.raises(TypeError, match=r"or an open file; got path=None"):
        check_path("path", None, file_object=True)


def test_an_integral_float_count_is_taken_as_the_integer():
    # 3.0 passed the check (integral floats are integers) and then failed as a shape: "Shapes must be
    # 1D sequences of concrete values of integer type, got (3.0,)".
    base = htb.Pareto(loc=0.0, shape=1.5)
    assert htb.equal_gap(base, 3.0, 0.5).batch_shape == htb.equal_gap(base, 3, 0.5).batch_shape == (3,)
    assert htb.lower_bound_pair(3.0, 0.5, 0.1)[1].batch_shape == (3,)


def test_a_fraction_is_taken_as_its_float_as_lists_of_them_are():
    # Lists of Fractions were read as floats, a Fraction alone refused ("which holds objects"); a
    # dataclass keeps the float, since JAX takes no Fraction for a leaf.
    from fractions import Fraction

    assert htb.theory.alpha_range(Fraction(1, 2)) == htb.theory.alpha_range(0.5) == (0.75, 1.0)
    assert htb.theory.t_frontier(Fraction(3, 4), Fraction(1)) == 0.5
    policy = htb.AdaRETC(eps=Fraction(1), alpha=Fraction(2, 3), q=Fraction(0))
    assert (policy.eps, policy.alpha, policy.q) == (1.0, 2 / 3, 0.0) and type(policy.alpha) is float
    law = htb.Pareto(loc=Fraction(0), shape=Fraction(3, 2))
    assert (law.loc, law.shape) == (0.0, 1.5) and type(law.shape) is float


def test_a_d_within_the_checks_slack_of_one_is_one():
    # d = 1 + 1e-13 passes the check (relative slack 1e-12 at closed ends); c came out -2e-13, outside [0, 1].
    assert htb.theory.t_frontier(1 + 1e-13, 1.0) == 0.0
    assert htb.theory.t_frontier(-1e-13, 1.0) == 1.0


@pytest.mark.parametrize("name", ["first_seed", "num_checkpoints", "pull_chunk", "seed_chunk", "memory_budget",
                                  "threads", "engine"])
def test_simulate_refuses_any_traced_option_by_name(name):
    # key, policy, instance, horizon and num_seeds were named; a traced option failed inside with JAX's
    # ConcretizationTypeError or TracerBoolConversionError, naming nothing.
    value = {"memory_budget": 2**30, "first_seed": 0, "engine": True}.get(name, 2)
    with pytest.raises(TypeError, match=rf"^simulate compiles and runs its own program, so it cannot be traced "
                                        rf"\(jax.jit, jax.vmap, jax.grad\); got a traced {name}\. "):
        jax.jit(lambda x: htb.simulate(KEY, POLICY, NU, 100, 2, **{name: x}).regret)(value)
