"""The T-frontier on alpha-stable arms: StableFamily's instances and predictions, its fits against numpy,
and ``htb-jax frontier --family stable``."""

import dataclasses
import math
import pathlib

import jax
import numpy as np
import pytest
from scipy.stats import norm

import htb_jax as htb
from htb_jax._src.cli import main

FAMILY = htb.frontier.StableFamily(index=1.75, gaps=(0.01, 0.1, 1.0), fixed_index=1.05, fixed_gap=0.03)
HORIZONS = (10**3, 10**5, 10**7, 10**9)
POLICY = htb.AdaRETC(eps=np.array([0.5, 0.5]), alpha=np.array([0.75, 0.9]), q=0.0)


def _exploration(policy, horizons):
    return np.array([int(policy.exploration_length(2, t)) for t in horizons])


def test_instances_are_stable_arms_with_the_gaps_then_the_fixed_instance():
    nu = FAMILY.instances()
    assert nu.batch_shape == (FAMILY.num_members + 1, 2) and FAMILY.num_members == 3
    np.testing.assert_array_equal(np.asarray(htb.gaps(nu))[:, 1], [0.01, 0.1, 1.0, 0.03])
    np.testing.assert_array_equal(np.asarray(nu.alpha)[:, 0], [1.75, 1.75, 1.75, 1.05])
    np.testing.assert_array_equal(np.asarray(nu.beta), 0.0)
    assert np.all(np.isfinite(np.asarray(htb.intrinsic_scale(nu, 0.5))[:3]))  # a = 1.75 > 1 + 0.5


def test_free_theory_is_max_of_beta_and_the_estimation_exponent_and_alpha_at_a_one_plus_eps():
    for eps, alpha, a in ((0.5, 0.825, 1.8), (0.25, 0.9, 1.3), (1.0, 0.9, 2.0), (0.5, 0.75, 1.75)):
        beta = (1.0 - alpha) * (1.0 + eps) / eps
        d = htb.frontier.StableFamily(index=a).free_theory(eps, alpha)
        assert d == pytest.approx(max(beta, 1.0 - beta * (a - 1.0) / a), abs=1e-12)
        assert d <= alpha + 1e-12
    # a -> 1 + eps: the two-point family's exponent alpha
    assert htb.frontier.StableFamily(index=1.5 + 1e-9).free_theory(0.5, 0.825) == pytest.approx(0.825, abs=1e-8)
    # An alpha AdaR-ETC refuses for eps is refused here too (0.1 at eps = 0.5 gave d = 2.7, above 1).
    with pytest.raises(ValueError, match=r"alpha must lie in \[0\.75, 1\) for eps=0\.5; got alpha=0\.1\."):
        htb.frontier.StableFamily().free_theory(0.5, 0.1)


def test_wrong_commit_probability_is_phi_of_the_medians_normal_approximation():
    # Two arms: Phi(-Delta s^(1-1/a) sqrt(2 B) f_a(0)), written out here with scipy's norm.
    t = np.array(HORIZONS[1:])
    length = _exploration(htb.AdaRETC(eps=0.5, alpha=0.9, q=0.0), t)
    blocks = np.ceil(8.0 * (math.log(2) + 3.0 * np.log(t.astype(float))))
    size = np.floor(np.floor(length / 2) / blocks)
    a = 1.05
    x = 0.03 * size ** (1.0 - 1.0 / a) * math.sqrt(2.0) * np.sqrt(blocks) * math.gamma(1.0 + 1.0 / a) / math.pi
    np.testing.assert_allclose(FAMILY.wrong_commit_probability(t, length), norm.sf(x), rtol=1e-9)
    regret = 0.03 * (length - length // 2 + (t - length) * norm.sf(x))
    np.testing.assert_allclose(FAMILY.dependent_regret(t, length), regret, rtol=1e-9)


def _free_slope_reference(family, horizons, length, eps):
    """The worst normalized predicted regret's slope, written out member by member: each member's
    ``P(wrong) = 1 - E Phi(x + Z)^(K-1)`` by SciPy's quadrature (the library takes Gauss-Hermite nodes),
    its regret ``Delta (L - n + (T - L) P(wrong))`` divided by its own ``U_eps``, the worst over members."""
    from scipy.integrate import quad

    t = np.asarray(horizons, float)
    k, a = family.num_arms, family.index
    blocks = np.ceil(8.0 * (math.log(k) + 3.0 * np.log(t)))
    pulls = np.floor(length / k)
    size = np.maximum(np.floor(pulls / blocks), 1.0)
    scale = np.asarray(htb.intrinsic_scale(family.instances(), eps))
    worst = np.zeros(t.size)
    for f, gap in enumerate(family.gaps):
        for h in range(t.size):
            x = gap / family.scale * size[h] ** (1 - 1 / a) * 2 * math.gamma(1 + 1 / a) / math.pi * math.sqrt(blocks[h])
            correct = quad(lambda z, x=x: norm.pdf(z) * norm.cdf(x + z) ** (k - 1), -np.inf, np.inf)[0]
            wrong = 1.0 - correct if length[h] < t[h] else 0.0
            regret = gap * (length[h] - pulls[h] + (t[h] - length[h]) * wrong)
            worst[h] = max(worst[h], regret / scale[f])
    return np.polyfit(np.log(t), np.log(worst), 1)[0]


def test_free_slope_against_a_member_by_member_reference():
    """``StableFamily.free_slope`` against :func:`_free_slope_reference` for two schedules, within
    1e-9 (the two expectations agree to 1e-12).  Catches a normalization by another member's ``U_eps``
    (member 0's for all moves the slope by about 0.1 here), a worst case taken over the fixed instance,
    and a wrong ``n`` or block size."""
    for alpha in (0.75, 0.9):
        length = _exploration(htb.AdaRETC(eps=0.5, alpha=alpha, q=0.0), HORIZONS)
        got = FAMILY.free_slope(np.array(HORIZONS), length, 0.5)
        assert got == pytest.approx(_free_slope_reference(FAMILY, HORIZONS, length, 0.5), abs=1e-9)


def _simulate(key, num_seeds):
    """simulate's outputs for POLICY on FAMILY's instances at HORIZONS, in chunks of 8 seeds: the
    program run_family compiles for the runs below (one program for every test here)."""
    chunks = [htb.simulate(jax.random.key(key), POLICY, FAMILY.instances(), list(HORIZONS), 8, first_seed=first)
              for first in range(0, num_seeds, 8)]
    return {field: np.concatenate([np.asarray(getattr(c, field)) for c in chunks], axis=-1)
            for field in ("regret", "exploration")}  # [G, F+1, H, S]


def _assert_wrong_commits_match_the_prediction(regret, length):
    """The fixed instance's fraction of seeds whose regret (f64[G, F+1, H, S]) exceeds the exploration's
    (``L_T``: i64[G, H]), against the probability the prediction uses, within 4 standard errors: both
    schedules at every horizon."""
    regret = regret[:, 3]  # the fixed instance
    seeds = regret.shape[-1]
    for g in range(2):
        wrong = (regret[g] > 0.03 * (length[g] - length[g] // 2)[:, None] + 1e-6).mean(-1)
        p = FAMILY.wrong_commit_probability(np.array(HORIZONS), length[g])
        assert np.all((p > 0.05) & (p < 0.5)), p
        assert np.all(np.abs(wrong - p) <= 4.0 * np.sqrt(p * (1 - p) / seeds)), (g, wrong, p)


def test_wrong_commits_of_the_fixed_instance_match_simulate_within_four_standard_errors():
    # p from 0.33 to 0.43 (blocks of 1 to 5500 pulls), 192 seeds.  A wrong block scale s^(1 - 1/a) or
    # tail constant moves p by far more.
    out = _simulate(3, 192)
    _assert_wrong_commits_match_the_prediction(out["regret"], out["exploration"][:, 3, :, 0])


def test_run_family_draws_the_estimates_by_the_sampler_it_is_given():
    # sampler="order_statistic": run_family's regrets are simulate's with that sampler, chunk for
    # chunk (run_family dropping it would run the block sums: other numbers), and they have the
    # prediction's law, as the block sums above (192 seeds, 4 standard errors).
    runs = htb.frontier.run_family(POLICY, FAMILY, HORIZONS, 192, key=3, seed_chunk=96, progress=False,
                                   sampler="order_statistic")
    second = htb.simulate(jax.random.key(3), POLICY, FAMILY.instances(), list(HORIZONS), 96, first_seed=96,
                          sampler="order_statistic")
    np.testing.assert_array_equal(runs.regret[..., 96:], second.regret)
    _assert_wrong_commits_match_the_prediction(runs.regret, runs.exploration)
    with pytest.raises(ValueError, match=r"sampler must be one of auto, per_pull, block_sums, order_statistic; "
                                         r"got sampler='exact' \(str\)\."):
        htb.frontier.run_family(POLICY, FAMILY, HORIZONS, 4, sampler="exact")
    with pytest.raises(ValueError, match=r"sampler must be one of .*; got sampler='exact' \(str\)\."):
        htb.frontier.TFrontierConfig(sampler="exact").validate()


@pytest.fixture(scope="module")
def runs():
    return htb.frontier.run_family(POLICY, FAMILY, HORIZONS, 16, key=5, seed_chunk=8, progress=False)


def test_fitted_d_and_c_are_the_numpy_slopes_of_simulate_outputs(runs):
    regret = _simulate(5, 16)["regret"]  # [G, F+1, H, S]
    np.testing.assert_array_equal(regret, runs.regret)
    t = np.log(np.array(HORIZONS, float))
    scale = np.asarray(htb.intrinsic_scale(FAMILY.instances(), 0.5))[:3]
    for g in range(2):
        d_fit, d_finite, _ = htb.frontier.free_exponent(runs, g, 0.5, 10**3)
        worst = np.max(regret[g, :3].mean(-1) / scale[:, None], axis=0)
        assert d_fit.slope == pytest.approx(np.polyfit(t, np.log(worst), 1)[0], abs=1e-9)
        length = runs.exploration[g]
        assert d_finite == pytest.approx(FAMILY.free_slope(np.array(HORIZONS), length, 0.5), abs=1e-12)
        c_fit, c_finite = htb.frontier.dependent_exponent(runs, g, 10**3)
        assert c_fit.slope == pytest.approx(np.polyfit(t, np.log(regret[g, 3].mean(-1)), 1)[0], abs=1e-9)
        assert c_finite == pytest.approx(np.polyfit(t, np.log(FAMILY.dependent_regret(np.array(HORIZONS), length)), 1)[0])


def test_c_has_a_bootstrap_interval_of_nonzero_width_on_the_fixed_instance(runs):
    for g in range(2):
        fit, _ = htb.frontier.dependent_exponent(runs, g, 10**3)
        assert fit.high - fit.low > 0.01, fit


def test_the_t_frontier_refuses_an_eps_without_the_moment():
    with pytest.raises(ValueError, match=r"eps_values must lie in \(0, 0.3\) for a StableFamily of index 1.3"):
        htb.frontier.TFrontierConfig(eps_values=(0.5,), family=htb.frontier.StableFamily(index=1.3)).validate()


def test_cli_family_stable_prints_the_stable_table_and_resumes(tmp_path, capsys):
    # The default index, given by its flag: U_eps of its 33 members is the README test's, computed once.
    argv = ["frontier", "--family", "stable", "--stable-alpha", "1.75", "--eps", "0.5", "--alphas-per-eps", "1",
            "--horizons", "1000,100000,10000000", "--fit-from", "1000", "--seeds", "4", "--seed-chunk", "2",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr()
    assert "Stable family: S_a arms, a = 1.75, 33 gaps" in first.out
    assert "worst case over 33 stable instances (K=2, index 1.75" in first.err
    row = [line for line in first.out.splitlines() if line.startswith("| 0.5 |")]
    assert len(row) == 1 and "| 0.750 | 0.750 |" in row[0]  # alpha*(0.5) and d theory = beta = alpha there
    assert main(argv) == 0
    second = capsys.readouterr()
    assert "resumed: 2 of 2 chunks" in second.err and second.out == first.out
    # The sampler is part of the configuration: the same directory refuses another one, before any run.
    assert main(argv + ["--sampler", "order_statistic"]) == 2
    refused = capsys.readouterr().err
    assert refused.count("\n") == 1 and "sampler" in refused, refused


def test_cli_stable_alpha_needs_family_stable(tmp_path, capsys):
    assert main(["frontier", "--stable-alpha", "1.5", "--out", str(tmp_path / "o")]) == 2
    assert "--stable-alpha is for --family stable" in capsys.readouterr().err
    assert main(["frontier", "--policy", "m:P()", "--sampler", "order_statistic", "--out", str(tmp_path / "o")]) == 2
    assert "--sampler is for AdaR-ETC's schedules" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_docs_show_the_recorded_stable_table_and_its_fits_follow_from_the_recorded_runs():
    # docs/getting-started/main-job.md: `htb-jax frontier --family stable --out experiments/frontier_stable`.
    root = pathlib.Path(__file__).resolve().parent.parent
    page = (root / "docs" / "getting-started" / "main-job.md").read_text()
    shown = page.split("$ htb-jax frontier --family stable --out experiments/frontier_stable")[1]
    shown = shown.split("```")[0].strip("\n").splitlines()
    recorded = (root / "experiments" / "frontier_stable" / "table.md").read_text()
    assert shown == recorded.rstrip("\n").splitlines()
    config = htb.frontier.TFrontierConfig(eps_values=(0.5, 0.25), horizons=tuple(10**e for e in range(3, 19)),
                                          family=htb.frontier.StableFamily())
    runs = htb.frontier.load_runs(root / "experiments" / "frontier_stable" / "runs.npz", config.family)
    assert runs.regret.shape == (6, 34, 16, config.num_seeds)
    result = htb.frontier.fit_t_frontier(config, runs)
    assert htb.frontier.t_frontier_table(result) + "\n" == recorded
    # Theorem 3 is said not to cover the fixed instance only where it lacks the moment (E|X|^p < inf iff
    # p < a): the note said so of any fixed index.
    def head(fixed_index):
        family = dataclasses.replace(config.family, fixed_index=fixed_index)
        table = htb.frontier.t_frontier_table(dataclasses.replace(result, config=dataclasses.replace(config, family=family)))
        return table.splitlines()[1]

    assert head(1.4).endswith("which needs them to vanish (Theorem 3 does not cover this instance, it has no moment "
                              "of order 1 + eps at eps = 0.5).")
    assert head(1.8).endswith("which needs them to vanish.")
