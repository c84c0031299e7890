"""The frontier experiments: chunk-invariant runs, fits and verdicts, and the ``frontier`` command."""

import csv
import math

import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import frontier
from htb_jax._src.cli import main

FAMILY = frontier.SpikeFamily(spike_probs=(1e-4, 1e-2, 0.5))
SMALL = ["frontier", "--eps", "1", "--alphas-per-eps", "2", "--horizons", "1e3,1e5,1e7",
         "--fit-from", "1e3", "--seeds", "4", "--seed-chunk", "2"]


def test_runs_do_not_depend_on_the_seed_chunk():
    policy = htb.AdaRETC(eps=1.0, alpha=np.array([2 / 3, 0.9]), q=0.0)
    whole = frontier.run_family(policy, FAMILY, (10**3, 10**9), 4, seed_chunk=4, progress=False)
    pieces = frontier.run_family(policy, FAMILY, (10**3, 10**9), 4, seed_chunk=3, progress=False)
    assert whole.regret.shape == (2, 4, 2, 4)  # schedules, family + fixed instance, horizons, seeds
    np.testing.assert_array_equal(whole.regret, pieces.regret)
    np.testing.assert_array_equal(whole.exploration, policy.exploration_length(2, np.array([[10**3, 10**9]]).T).T)


def _synthetic_runs(slope, exploration):
    # Member f's regret: (f + 1) T^slope (seed noise +-10%); the last member is the fixed instance.
    horizons = np.array([10**6, 10**8, 10**10, 10**12])
    rng = np.random.default_rng(0)
    noise = 1 + 0.1 * rng.standard_normal((1, 1, 1, 64))
    member = np.arange(1, len(FAMILY.spike_probs) + 2, dtype=float)[None, :, None, None]
    regret = member * horizons[None, None, :, None].astype(float) ** slope * noise
    return frontier.FamilyRuns(regret, exploration[None, :], horizons, FAMILY, math.nan)


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
    with pytest.raises(ValueError, match="fit_from=1000000000000 leaves fewer than two horizons"):
        frontier.free_exponent(runs, 0, 1.0, 10**12)


def test_verdicts():
    fit = htb.ExponentFit(slope=0.80, intercept=0.0, low=0.79, high=0.81, level=0.95, num_bootstrap=10)
    assert frontier.verdict(fit, 0.84, 0.9) == "agrees"  # within 0.05
    assert frontier.verdict(fit, 0.70, 0.81) == "finite T: schedule predicts 0.810"
    assert frontier.verdict(fit, 0.70, 0.60) == "disagrees"
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


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--eps", "0"], "eps_values must lie in (0, 1]; got eps_values=0"),
        (["--max-alpha", "0.7", "--eps", "0.5"], "max_alpha must lie in [0.75, 1) for eps=0.5; got max_alpha=0.7"),
        (["--fit-from", "1e8"], "fit_from=100000000 leaves fewer than two horizons"),
        (["--seeds", "1"], "num_seeds must be an integer >= 2; got num_seeds=1"),
    ],
)
def test_frontier_user_errors(tmp_path, capsys, extra, message):
    assert main([*SMALL, "--out", str(tmp_path), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
