"""The frontier experiments: chunk-invariant runs, fits and verdicts, and the ``frontier`` command."""

import csv
import dataclasses
import math
import warnings

import jax
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import frontier
from htb_jax._src.cli import main

FAMILY = frontier.SpikeFamily(spike_probs=(1e-4, 1e-2, 0.5))
SMALL = ["frontier", "--eps", "1", "--alphas-per-eps", "2", "--horizons", "1e3,1e5,1e7",
         "--fit-from", "1e3", "--seeds", "4", "--seed-chunk", "2"]


def test_runs_do_not_depend_on_the_seed_chunk():
    # The runs of the frontier command below (SMALL): its family, schedules and horizons, so that
    # the pieces (seed_chunk=2) are its compiled program.
    family = frontier.TFrontierConfig().family
    policy = htb.AdaRETC(eps=np.array([1.0, 1.0]), alpha=np.array([2 / 3, 0.9]), q=0.0)
    horizons = (10**3, 10**5, 10**7)
    whole = frontier.run_family(policy, family, horizons, 4, seed_chunk=4, progress=False)
    pieces = frontier.run_family(policy, family, horizons, 4, seed_chunk=2, progress=False)
    assert whole.regret.shape == (2, 22, 3, 4)  # schedules, family + fixed instance, horizons, seeds
    np.testing.assert_array_equal(whole.regret, pieces.regret)
    np.testing.assert_array_equal(whole.exploration, policy.exploration_length(2, np.array([horizons]).T).T)


def _synthetic_runs(slope, exploration):
    # Member f's regret: (f + 1) T^slope (seed noise +-10%); the last member is the fixed instance.
    horizons = np.array([10**6, 10**8, 10**10, 10**12])
    rng = np.random.default_rng(0)
    noise = 1 + 0.1 * rng.standard_normal((1, 1, 1, 64))
    member = np.arange(1, len(FAMILY.spike_probs) + 2, dtype=float)[None, :, None, None]
    regret = member * horizons[None, None, :, None].astype(float) ** slope * noise
    return frontier.FamilyRuns(regret, exploration[None, :], horizons, FAMILY, math.nan)


def test_a_t_frontier_without_a_seed_chunk_takes_the_devices(monkeypatch):
    # seed_chunk=None: 16 seeds a call on a CPU, every seed up to 4096 off a CPU; one given is kept.
    # Catches a configuration that ignores the backend, or overrides a chunk it was given.
    config = frontier.TFrontierConfig(num_seeds=10**5)
    assert (config.chunk, dataclasses.replace(config, seed_chunk=32).chunk) == (16, 32)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert (config.chunk, dataclasses.replace(config, num_seeds=100).chunk) == (4096, 100)
    assert dataclasses.replace(config, seed_chunk=32).chunk == 32


def test_free_and_dependent_exponents_of_a_known_power_law():
    horizons = np.array([10**6, 10**8, 10**10, 10**12])
    blocks = np.asarray(htb.num_blocks(2, horizons), float)
    exploration = (2 * blocks + horizons ** (2 / 3)).astype(np.int64)
    runs = _synthetic_runs(0.7, exploration)
    fit, finite, hardest = frontier.free_exponent(runs, 0, 1.0, 10**6)
    assert hardest == pytest.approx(2 * blocks[-1] / exploration[-1])
    assert fit.contains(0.7) and abs(fit.slope - 0.7) < 1e-3
    implied = horizons * (2 * blocks / exploration) ** 0.5
    assert finite == pytest.approx(np.polyfit(np.log(horizons), np.log(implied), 1)[0], rel=1e-12)
    fit, finite = frontier.dependent_exponent(runs, 0, 10**8)
    assert abs(fit.slope - 0.7) < 1e-3
    assert finite == pytest.approx(np.polyfit(np.log(horizons[1:]), np.log(exploration[1:]), 1)[0], rel=1e-12)
    with pytest.raises(ValueError, match="fit_from=1000000000000 leaves fewer than two distinct horizons"):
        frontier.free_exponent(runs, 0, 1.0, 10**12)


def test_runs_and_verdicts_take_what_the_library_gives():
    # The checks of FamilyRuns and verdict admit what runs produce: an anytime run's checkpoints repeat
    # (ForceMoM's frontier), index policies explore 0 rounds, and K B_T / L_T exceeds 1 where L_T = T < K B_T.
    runs = _synthetic_runs(0.7, np.zeros(4, np.int64))
    dataclasses.replace(runs, horizons=np.array([10**6, 10**6, 10**8, 10**10]))
    fit = htb.ExponentFit(0.5, math.nan, 0.4, 0.6, 0.95, 10)  # a fit read back from a CSV: no intercept
    assert frontier.verdict(fit, 0.9, 0.95, hardest=1.85, family=FAMILY) == "disagrees"
    # Exploration 0 has no finite-T prediction: NaN, without the divide-by-zero warnings the predictions
    # raised, and eps_profile_rows says so (verdict refused "finite_t=nan", a name the caller never gave).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit, finite, hardest = frontier.free_exponent(runs, 0, 1.0, 10**6)
        assert abs(fit.slope - 0.7) < 1e-3 and math.isnan(finite) and math.isnan(hardest)
        fit, finite = frontier.dependent_exponent(runs, 0, 10**6)
        assert abs(fit.slope - 0.7) < 1e-3 and math.isnan(finite)
    with pytest.raises(ValueError, match=r"^eps_profile_rows compares AdaR-ETC-type schedules .*; entries\[0\] "
                                         r"names schedule g=0, whose exploration is 0 at a fitted horizon"):
        frontier.eps_profile_rows(runs, [("ucb", 0, 1.0, 0.5)], 10**6)


def test_the_block_share_is_taken_at_the_largest_horizon_in_any_order():
    # K B_T / L_T of the table is read at the largest T, wherever it stands among the horizons.
    # Catches B_T at the largest T over L_T at the last-listed one (and the reverse), which agree
    # only while the horizons ascend.
    horizons = np.array([10**6, 10**12, 10**8, 10**10])
    blocks = np.asarray(htb.num_blocks(2, horizons), float)
    exploration = np.asarray(htb.AdaRETC(eps=1.0, alpha=2 / 3, q=0.0).exploration_length(2, horizons))  # the config's
    shuffled = dataclasses.replace(_synthetic_runs(0.7, exploration), horizons=horizons)
    config = frontier.TFrontierConfig(eps_values=(1.0,), alphas_per_eps=1, horizons=tuple(int(t) for t in horizons),
                                      fit_from=10**6, num_seeds=64, family=FAMILY)
    (row,) = frontier.fit_t_frontier(config, shuffled).rows
    assert row["block_share"] == 2 * blocks[1] / exploration[1]


@pytest.mark.parametrize("change, differ", [
    (dict(eps_values=(0.5,)), r"the schedules \(eps_values, alphas_per_eps, max_alpha\)"),
    (dict(num_seeds=32), r"num_seeds \(runs: 64; config: 32\)"),
    (dict(horizons=(10**6, 10**12, 10**8, 10**9)), r"horizons"),
    (dict(family=frontier.SpikeFamily(spike_probs=FAMILY.spike_probs, gap=0.5)), r"family"),
])
def test_runs_are_fitted_with_the_config_that_ran_them_only(change, differ):
    # Another config's labels on these runs: the eps = 1 runs came back as eps = 0.5 rows normalised by U_0.5,
    # and a table's header named the config's horizons and seeds, not the runs'.
    horizons = np.array([10**6, 10**12, 10**8, 10**10])
    exploration = np.asarray(htb.AdaRETC(eps=1.0, alpha=2 / 3, q=0.0).exploration_length(2, horizons))
    runs = dataclasses.replace(_synthetic_runs(0.7, exploration), horizons=horizons)
    config = frontier.TFrontierConfig(eps_values=(1.0,), alphas_per_eps=1, horizons=tuple(int(t) for t in horizons),
                                      fit_from=10**6, num_seeds=64, family=FAMILY)
    with pytest.raises(ValueError, match=rf"runs must be the runs of config; they differ in {differ}.*: fit them with "
                                         r"the config that ran them\.$"):
        frontier.fit_t_frontier(dataclasses.replace(config, **change), runs)


def test_runs_load_on_their_own_family_from_the_name_they_were_saved_under(tmp_path):
    # numpy appends .npz to a name without it: load_runs("x") failed where save_runs("x") had written x.npz.
    # Another family's members were taken silently (d = 1.05 for the true 0.93 on the first two members).
    runs = _synthetic_runs(0.7, np.arange(1, 5))
    frontier.save_runs(runs, tmp_path / "runs")
    np.testing.assert_array_equal(frontier.load_runs(tmp_path / "runs", FAMILY).regret, runs.regret)
    other = frontier.SpikeFamily(spike_probs=(0.1, 0.5))
    with pytest.raises(ValueError, match=rf"family must be the family the runs in .* were run on: they hold "
                                         rf"{FAMILY.num_members} members and the fixed instance .* got a SpikeFamily of "
                                         r"2 members\."):
        frontier.load_runs(tmp_path / "runs", other)
    # As many members with other spike probabilities passed as well: the saved family is compared,
    # field by field, numbers by value (an int, a NumPy scalar or an array of the same values is the same).
    same_count = frontier.SpikeFamily(spike_probs=tuple(p * 0.5 for p in FAMILY.spike_probs))
    with pytest.raises(ValueError, match=r"family must be the family the runs in .* were run on; they differ in "
                                         r"spike_probs: \[0\.0001, 0\.01, 0\.5\] there, \[5e-05, 0\.005, 0\.25\] here\.$"):
        frontier.load_runs(tmp_path / "runs", same_count)
    as_numpy = frontier.SpikeFamily(gap=np.int64(FAMILY.gap), spike_probs=np.array(FAMILY.spike_probs))
    assert frontier.load_runs(tmp_path / "runs", as_numpy).family is as_numpy
    frontier.save_runs(dataclasses.replace(runs, family=as_numpy), tmp_path / "array")  # json took no arrays
    assert frontier.load_runs(tmp_path / "array", FAMILY).family is FAMILY
    # Runs saved before the family was (the experiments' recorded runs.npz) are checked by their count alone.
    np.savez_compressed(tmp_path / "older.npz", regret=runs.regret, exploration=runs.exploration, horizons=runs.horizons)
    assert frontier.load_runs(tmp_path / "older.npz", same_count).family == same_count


def test_pareto_family_members_and_moments():
    family = frontier.ParetoFamily(gaps=(0.01, 1.0), shapes=(1.75, 3.0), fixed_gap=0.5, fixed_shape=4.0)
    nu = family.instances()
    assert family.num_members == 4 and nu.batch_shape == (5, 2)
    # shape-major members, then the fixed instance; arm 0 is the best arm by the gap
    np.testing.assert_array_equal(np.asarray(nu.shape[:, 0]), [1.75, 1.75, 3.0, 3.0, 4.0])
    np.testing.assert_allclose(np.asarray(htb.gaps(nu)[:, 1]), [0.01, 1.0, 0.01, 1.0, 0.5])
    scale = np.asarray(htb.intrinsic_scale(nu, 1.0))  # E X^2 is infinite for tail index 1.75
    assert np.all(np.isinf(scale[:2])) and np.all(np.isfinite(scale[2:]))
    with pytest.raises(ValueError, match="shapes"):  # at construction
        frontier.ParetoFamily(shapes=(0.5,))


def test_run_family_on_pareto_members_is_simulate_pull_by_pull():
    family = frontier.ParetoFamily(gaps=(0.1, 1.0), shapes=(3.0,))
    policy = htb.AdaRETC(eps=1.0, alpha=np.array([2 / 3]), q=0.0)
    runs = frontier.run_family(policy, family, (10**3, 10**4), 3, seed_chunk=3, progress=False)
    direct = htb.simulate(jax.random.key(0), policy, family.instances(), [10**3, 10**4], 3, sampler="per_pull")
    np.testing.assert_array_equal(runs.regret, np.asarray(direct.regret))


def test_worst_case_over_joined_families():
    horizons = np.array([10**6, 10**8, 10**10, 10**12])
    exploration = (2 * np.asarray(htb.num_blocks(2, horizons), float) + horizons ** (2 / 3)).astype(np.int64)
    spikes = _synthetic_runs(0.7, exploration)  # members (f + 1) T^0.7 / U_1
    family = frontier.ParetoFamily(gaps=(1.0,), shapes=(3.0,))
    scale = float(np.asarray(htb.intrinsic_scale(family.instances(), 1.0))[0])
    # one Pareto member above every spike member from T = 10^8 on: 20 U T^0.72 / 10^8^0.02
    regret = 20 * scale * horizons[None, None, :, None].astype(float) ** 0.72 / 1e8**0.02 * np.ones((1, 2, 1, 64))
    pareto = frontier.FamilyRuns(regret, exploration[None, :], horizons, family, math.nan)
    fit, _, _ = frontier.free_exponent(spikes, 0, 1.0, 10**8, also=(pareto,))
    members = FAMILY.num_members
    assert fit.argmax == (members, members, members)  # the joined member, after the spikes
    assert abs(fit.slope - 0.72) < 1e-9
    shifted = dataclasses.replace(pareto, horizons=horizons * 10)
    with pytest.raises(ValueError, match="same horizons and seeds"):
        frontier.free_exponent(spikes, 0, 1.0, 10**8, also=(shifted,))


def test_verdicts():
    fit = htb.ExponentFit(slope=0.80, intercept=0.0, low=0.79, high=0.81, level=0.95, num_bootstrap=10)
    assert frontier.verdict(fit, 0.84, 0.9) == "agrees"  # within 0.05
    assert frontier.verdict(fit, 0.70, 0.81) == "finite T: schedule predicts 0.810"
    assert frontier.verdict(fit, 0.70, 0.60) == "disagrees"
    assert frontier.verdict(fit, 0.70, 0.60, exploration_t=0.85) == (
        "regime crossover: between the estimation term's 0.600 and the exploration term's 0.850"
    )
    assert frontier.verdict(fit, 0.70, 0.60, exploration_t=0.75) == "disagrees"  # 0.80 is outside [0.60, 0.75]
    assert frontier.verdict(fit, 0.90, 0.90, 3e-12, FAMILY) == (
        "grid too narrow: hardest spike probability K B_T / L_T = 3e-12 < 0.0001 at the largest T"
    )


def test_frontier_command_writes_table_csv_figure_and_runs(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "| eps | alpha | d theory | d finite T | d measured |" in out
    assert out.count("\n| 1 | ") == 2
    assert "4/4 seeds" in err
    rows = list(csv.DictReader(open(tmp_path / "frontier.csv")))
    assert [float(r["alpha"]) for r in rows] == pytest.approx([2 / 3, 0.9])
    assert (tmp_path / "frontier.png").stat().st_size > 10_000
    assert (tmp_path / "table.md").read_text().strip() == out.strip()
    runs = frontier.load_runs(tmp_path / "runs.npz", frontier.TFrontierConfig().family)
    assert runs.regret.shape[-2:] == (3, 4)

    # Started again after a crash that left chunk 0 truncated: chunk 1 is read back, chunk 0
    # recomputed, and everything written equals the uninterrupted run.
    chunk = tmp_path / "chunks" / "chunk-00000.npz"
    chunk.write_bytes(chunk.read_bytes()[:100])
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    again, err = capsys.readouterr()
    assert "chunk-00000.npz is damaged or incomplete; recomputing it" in err
    assert "resumed: 1 of 2 chunks read back" in err
    assert again == out
    np.testing.assert_array_equal(frontier.load_runs(tmp_path / "runs.npz", runs.family).regret, runs.regret)

    # Another --fit-from refits the stored runs: every chunk read back, only the fits' range changes.
    # 2e3 is no horizon: the header names the smallest horizon fitted (it printed 2e+03).
    refit = [*SMALL, "--out", str(tmp_path)]
    refit[refit.index("--fit-from") + 1] = "2e3"
    assert main(refit) == 0
    refitted, err = capsys.readouterr()
    assert "resumed: 2 of 2 chunks read back" in err and "/4 seeds" not in err  # nothing computed
    assert "\nevery chunk read back; wrote " in err  # it printed "0.0 s (compilation included)"
    assert "Fits over T in [1e+03, 1e+07]" in out and "Fits over T in [1e+05, 1e+07]" in refitted
    np.testing.assert_array_equal(frontier.load_runs(tmp_path / "runs.npz", runs.family).regret, runs.regret)

    # Another configuration in the same directory: one line, exit status 2, nothing run.
    assert main([*SMALL[:-4], "--seeds", "6", "--seed-chunk", "2", "--out", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "holds a run with another configuration (--seeds: 4 there, 6 here)" in err  # the flag, as typed


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--eps", "0"], "--eps must lie in (0, 1]; got --eps=0"),
        (["--max-alpha", "0.7", "--eps", "0.5", "--alphas-per-eps", "1"],
         "--max-alpha must lie in [0.75, 1) for --eps=0.5; got --max-alpha=0.7"),
        # the largest alpha*(eps) binds, whatever the order (a pre-check said (0.5, 1) for 0.5)
        (["--max-alpha", "0.7", "--eps", "1,0.5"], "--max-alpha must lie in (0.75, 1) for --eps=0.5 with "
         "--alphas-per-eps=2 > 1; got --max-alpha=0.7"),
        # max_alpha = alpha*(eps) with several alphas: the same schedule three times, simulated and shown three times
        (["--max-alpha", "5/6", "--eps", "0.25"], "--max-alpha must lie in (0.833333, 1) for --eps=0.25 with "
         "--alphas-per-eps=2 > 1; got --max-alpha=0.833333"),
        (["--fit-from", "1e8"], "--fit-from=100000000 leaves fewer than two distinct horizons"),
        (["--seeds", "1"], "--seeds must be an integer in [2, 4294967296]; got --seeds=1"),
    ],
)
def test_frontier_user_errors(tmp_path, capsys, extra, message):
    assert main([*SMALL, "--out", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_spike_family_instances_are_theorem_1_pairs_bit_for_bit():
    # SpikeFamily builds its instances in one compiled program: the same numbers as lower_bound_pair run eagerly.
    family = htb.frontier.SpikeFamily()
    betas = jax.numpy.asarray((*family.spike_probs, family.fixed_spike), jax.numpy.float64)
    eager = htb.lower_bound_pair(family.num_arms, family.gap, betas)[1]
    built = family.instances()
    for name in ("low", "high", "p"):
        a, b = np.asarray(getattr(built, name)), np.asarray(getattr(eager, name))
        assert a.dtype == b.dtype == np.float64
        np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))


def test_t_frontier_figure_holds_every_point_and_its_title(monkeypatch, tmp_path):
    # The axes stopped at 1.02: a worst-case slope of 1.014 with its interval, or a negative c on stable arms,
    # lay on or past the edge; one eps's panel cut its one-line title at both ends.
    import matplotlib.pyplot as plt

    config = frontier.TFrontierConfig(eps_values=(1.0,), alphas_per_eps=1, horizons=(10**3, 10**4), fit_from=10**3,
                                      num_seeds=4, family=FAMILY)
    row = dict(eps=1.0, alpha=0.9, d=1.014, d_low=1.009, d_high=1.035, d_theory=0.9, d_finite_t=0.998, c=0.081,
               c_low=-0.1, c_high=0.09, c_theory=0.2, c_finite_t=0.081)
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    frontier.plot_t_frontier(frontier.TFrontierResult(config, None, [row]), tmp_path / "f.png")
    (fig,) = figures
    (ax,) = fig.axes
    assert ax.get_xlim()[1] >= 1.035 + 0.03 and ax.get_ylim()[0] <= -0.1 - 0.03
    assert fig._suptitle.get_text().count("\n") == 1
    renderer = fig.canvas.get_renderer()
    box = fig._suptitle.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1


def test_a_t_frontier_figure_holds_a_point_left_of_its_usual_axis(monkeypatch, tmp_path):
    # The d axis started at 0.45 whatever the rows: a stable family of large gaps measured d = 0.114, drawn
    # outside the axes with nothing said.
    import matplotlib.pyplot as plt

    config = frontier.TFrontierConfig(eps_values=(1.0,), alphas_per_eps=1, horizons=(10**3, 10**4), fit_from=10**3,
                                      num_seeds=4, family=FAMILY)
    row = dict(eps=1.0, alpha=0.9, d=0.114, d_low=0.1, d_high=0.13, d_theory=0.9, d_finite_t=0.5, c=0.3, c_low=0.25,
               c_high=0.35, c_theory=0.2, c_finite_t=0.3)
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    frontier.plot_t_frontier(frontier.TFrontierResult(config, None, [row]), tmp_path / "f.png")
    (ax,) = figures[0].axes
    assert ax.get_xlim()[0] <= 0.1 - 0.03


def test_measurements_with_an_infinite_interval_end_are_drawn(tmp_path):
    # An ExponentFit's interval end may be infinite (bootstrap draws of regret 0): the axes' limits were
    # inf ("Axis limits cannot be NaN or Inf"), or max() of nothing finite.
    fit = htb.ExponentFit(0.6, 0.0, 0.5, np.inf, 0.95, 10)
    low = htb.ExponentFit(0.4, 0.0, -np.inf, 0.5, 0.95, 10)
    m = frontier.Measurement("p", "two-point", 1.0, np.array([100, 1000]), np.ones((3, 2, 4)), np.ones(3),
                             np.zeros(2, np.int64), fit, low, np.nan, np.nan, np.nan, False, 0.0, 0)
    frontier.plot_measurements([m], tmp_path / "m.png")
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


def test_a_constant_theory_curve_is_drawn_and_a_wrong_one_refused_before_writing(tmp_path):
    # {"A": lambda e: 0.7} failed in matplotlib after the table, CSV and runs were written.
    runs = _synthetic_runs(0.7, np.full(4, 10**5))
    rows = frontier.eps_profile_rows(runs, [("A", 0, 1.0, 0.7)], 10**6)
    frontier.write_eps_profile(rows, runs, tmp_path / "ok", "p", "note", {"A": lambda e: 0.7}, "title")
    assert (tmp_path / "ok" / "p.png").exists()
    with pytest.raises(ValueError, match=r"^curves\['A'\] must map an array of eps of shape \(200,\) to exponents "
                                         r"of that shape \(or to one number\); got shape \(2,\)\.$"):
        frontier.write_eps_profile(rows, runs, tmp_path / "bad", "p", "note", {"A": lambda e: [0.7, 0.8]}, "title")
    assert not (tmp_path / "bad").exists()


def test_fits_take_an_integral_float_schedule_and_name_a_list_eps():
    # g=1.0 passed the check and failed as a NumPy index; eps=[0.5] reached float() of a list.
    runs = _synthetic_runs(0.7, np.arange(1, 5))
    assert frontier.free_exponent(runs, 0.0, 1.0, 100)[0] == frontier.free_exponent(runs, 0, 1.0, 100)[0]
    assert frontier.dependent_exponent(runs, 0.0, 100)[0] == frontier.dependent_exponent(runs, 0, 100)[0]
    with pytest.raises(TypeError, match=r"^eps must be one number in \(0, 1\], the true tail exponent; got eps=\[0.5\] "
                                        r"\(list\)\.$"):
        frontier.free_exponent(runs, 0, [0.5], 100)


def test_load_runs_names_a_file_that_save_runs_did_not_write(tmp_path):
    # A text file gave NumPy's advice to unpickle it, an .npz of other arrays a KeyError, an .npy
    # array a TypeError from the context manager.
    (tmp_path / "notes.txt").write_text("hello")
    np.savez(tmp_path / "other.npz", a=np.ones(2))
    np.save(tmp_path / "one.npy", np.ones(2))
    (tmp_path / "empty.npz").write_bytes(b"")  # an EOFError
    for name, why in (("notes.txt", "NumPy reads no arrays from it"), ("empty.npz", "NumPy reads no arrays from it"),
                      ("other.npz", "it lacks regret, exploration, horizons"),
                      ("one.npy", r"one array of shape \(2,\)")):
        with pytest.raises(ValueError, match=rf"^path must be a file save_runs wrote \(the arrays regret, exploration "
                                             rf"and horizons\); .*{name} is not one \({why}\)$"):
            frontier.load_runs(tmp_path / name, FAMILY)


def test_load_runs_names_a_damaged_family_entry_and_keeps_the_documented_dtypes(tmp_path):
    # A family entry that is not JSON gave json's own JSONDecodeError; float32 regrets came back float32.
    runs = _synthetic_runs(0.7, np.arange(1, 5))
    frontier.save_runs(runs, tmp_path / "runs.npz")
    data = dict(np.load(tmp_path / "runs.npz"))
    np.savez(tmp_path / "f32.npz", **{**data, "regret": data["regret"].astype(np.float32),
                                       "exploration": data["exploration"].astype(float)})
    loaded = frontier.load_runs(tmp_path / "f32.npz", FAMILY)
    assert loaded.regret.dtype == np.float64 and loaded.exploration.dtype == np.int64
    np.savez(tmp_path / "damaged.npz", **{**data, "family": np.array("{not json")})
    with pytest.raises(ValueError, match=r"damaged\.npz is not one \(its family entry is not the JSON save_runs "
                                         r"writes\)$"):
        frontier.load_runs(tmp_path / "damaged.npz", FAMILY)
