"""The getting-started pages and the guides on instances, policies, your own code and ``measure``.

Every python block of each page runs, top to bottom in one namespace, and every output it shows
is what the code gives today (``doc_snippets``); every commented statement is an output or listed
as none (tests/test_readme.py checks that the blocks use public names only).  The main job's
tables are the recorded ones, their verdicts mean what the page says, and the claims the page
makes of them hold; the refusals own-code.md quotes are the code's; the ratios the pages quote are
recorded benchmark figures.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import pathlib
import re
import shlex
import tempfile

import jax
import numpy as np
import pytest
from test_store_fingerprint import STALE

import htb_jax as htb
from doc_snippets import ROOT, Page, run_page, statements, unchecked

DOCS = pathlib.Path("docs")

INSTALLATION = Page(
    str(DOCS / "getting-started" / "installation.md"),
    outputs=(
        ("jnp.array(1.0)", r"^(.*)$", None),
        ("jnp.arange(3)", r"^(.*)$", None),
    ),
)
QUICKSTART = Page(
    str(DOCS / "getting-started" / "quickstart.md"),
    outputs=(
        ("nu.mean()", r"^(.*)$", None),
        ("nu.eps_sup()[0]", r"^(.*)$", None),
        ("htb.intrinsic_scale(nu, eps=0.4)", r"of Section 5: (.*)$", None),
        ("out.regret.shape", r"^(\(.*\)): grid", None),
        ("s.mean[:, 0].round(0)", r"10\^6\n(.*)$", None),
        ("s.stderr[:, 0].round(0)", r"^(.*)$", None),
        ("(out.committed == 0).mean(-1, dtype=jnp.float64)[:, 0]", r"^(.*)$", None),
    ),
)
INSTANCES = Page(
    str(DOCS / "guides" / "instances.md"),
    outputs=(
        ("nu.eps_sup()[0], htb.intrinsic_scale(nu, eps=0.4)", r"^(.*)$", None),
        ("jax.grad(lambda eps: htb.intrinsic_scale(nu, eps))(0.4)", r"^(.*)$", None),
        ("nu1.mean(), htb.intrinsic_scale(nu1, eps=1.0)", r"^(.*)$", None),
        ("out.regret.mean(-1)", r"^(.*)$", None),
        ("(out.committed == 0).mean(-1)", r"^(.*)$", None),
        ("fast.regret.mean(-1), (fast.committed == 0).mean(-1)", r"^(.*)$", None),
        ("nu.mean()", r"^(.*)$", None),
        ("est.alpha, est.stderr, est.eps", r"^(.*)$", None),
        ("eps", r"^(.*)$", None),
        ("htb.intrinsic_scale(nu, eps=eps)", r"^(.*)$", None),
        ("gapped.mean()", r"^(.*)$", None),
        ("res.regret.mean(-1)", r"^(.*)$", None),
        ("(res.committed == 0).mean(-1)", r"^(.*)$", None),
    ),
    not_outputs=("nu0, nu1 = htb.lower_bound_pair(num_arms=3, gap=0.5, spike_prob=1e-4)",),
)
POLICIES = Page(
    str(DOCS / "guides" / "policies.md"),
    outputs=(
        ("htb.AdaRETC.order_free().exploration_length(num_arms=10, horizon=10**9)", r"^(.*)$", None),
        ("htb.median_of_means(jnp.array([1.0, 2.0, 100.0, 3.0, 4.0, 5.0, jnp.inf]), num_blocks=3)",
         r"^(Array\(.*?\)):", None),
        ("out.regret.shape, out.regret_curve.shape", r"^(.*)$", None),
        ("out.checkpoints[0, 0]", r"^(.*)$", None),
        ("htb.summarize(out).mean", r"^(\[.*?\])", None),
        ("htb.summarize(out).mean", r"std\. err\. (.*)\)$", "htb.summarize(out).stderr"),
        ("out.exploration[:, 0]", r"D_T = (.*)$", None),
        ("htb.simulate(jax.random.key(0), htb.UCB1(), nu, 20, 1, record_arms=True).arms", r"^(.*)$", None),
        ("told.u", r"^(.*)$", None),
        ("paired.regret.mean(-1)", r"^(.*)$", None),
        ("every.regret.mean(-1)", r"^(.*)$", None),
        ("htb.run_on_rewards(policy, rewards, arms.mean(), 2000).regret", r"^(.*)$", None),
        ("htb.simulate(jax.random.key(0), policy, arms, 2000, 4).regret[2]", r"^(.*)$", None),
    ),
    not_outputs=("htb.AdaRETC.calibrated(0.5)",
                 "rewards = htb.reward_table(htb.seed_keys(jax.random.key(0), 4)[2], arms, 2000)"),  # a shape
)
OWN_CODE = Page(
    str(DOCS / "guides" / "own-code.md"),
    outputs=(
        ("htb.summarize(out).mean", r"^(\[.*?\])", None),
        ("htb.summarize(out).mean", r"std\. err\. (.*)\)$", "htb.summarize(out).stderr"),
        ("htb.simulate(jax.random.key(0), htb.UCB1(), nu, 3000, num_seeds=20).regret.mean()", r"^(.*)$", None),
        ("lomax.mean(), lomax.eps_sup()[0]", r"^(.*)$", None),
        ("htb.intrinsic_scale(lomax, eps=0.4)", r"^(.*)$", None),
        ("htb.simulate(jax.random.key(0), htb.AdaRETC(eps=0.4, alpha=0.8, q=0.0), lomax, 3000, num_seeds=20)"
         ".regret.mean()", r"^(.*)$", None),
    ),
)
MEASURE = Page(
    str(DOCS / "guides" / "measure.md"),
    outputs=(
        ("m.d.slope, m.d.low, m.d.high", r"^(.*)$", None),
        ("m.c.slope, m.c.low, m.c.high", r"^(.*)$", None),
        ("m.off_frontier", r"^(.*)$", None),
        ("m.regret.shape, m.scale.shape", r"^(.*)$", None),
        ("c.slope, c.low, c.high", r"^(.*)$", None),
        ("d.slope, d.low, d.high", r"^(.*)$", None),
        ("d.argmax", r"^(.*)$", None),
        ("htb.local_slopes(m.horizons, m.regret[-1].mean(-1))", r"^(.*)$", None),
        ("htb.local_slopes(m.horizons, worst)", r"^(.*)$", None),
        ("back.regret.shape", r"^(.*)$", None),
        ("htb.fit_exponent(back.horizons, back.regret[0, -1]).slope", r"^(.*)$", None),
    ),
    not_outputs=("worst = (m.regret[:-1].mean(-1) / m.scale[:-1, None]).max(0)",
                 "folder = pathlib.Path(tempfile.mkdtemp())"),
)
MAIN_JOB = Page(str(DOCS / "getting-started" / "main-job.md"))
THEORY = Page(
    str(DOCS / "guides" / "theory.md"),
    outputs=tuple((statement, r"^(.*)$", None) for statement in (
        "[float(x) for x in t.alpha_range(0.5)], [float(x) for x in t.q_range(0.5)]",
        "round(float(t.beta_alpha(0.8, 1.0)), 6)",
        "[round(float(x), 6) for x in t.free_exponents(0.8, 0.1, 1.0)]",
        "[round(float(x), 6) for x in t.dependent_exponents(0.8, 0.1, 1.0)]",
        "round(float(t.t_frontier(0.8, 1.0)), 6), round(float(t.k_frontier(0.45, 1.0)), 6)",
        "round(float(t.balanced_alpha(1.0)), 6), round(float(t.balanced_q(1.0)), 6)",
        "[(round(p.b, 6), round(p.a, 6), round(p.q, 6)) for p in t.table1_points()]",
        "round(float(t.order_free_exponent(0.5)), 6), round(float(t.price_of_order_freedom(0.5)), 6)",
        "round(float(t.balanced_exponent(0.5)), 6)",
        "[round(float(x), 6) for x in profile.free], [round(float(x), 6) for x in profile.dep]",
        "[round(float(x), 6) for x in t.pairwise_lower_bound(1 / 3, 2 / 3, 0.5)]",
        "[round(float(x), 6) for x in t.oracle_exponents(0.5)]",
        "round(float(t.t_frontier(t.oracle_exponents(0.5).t, 0.5)), 6)",
        "round(float(claim.fixed_instance), 6), round(float(claim.worst_case), 6)",
        "round(float(t.t_frontier(claim.worst_case, 1.0)), 6)",
    )),
)
PAGES = (INSTALLATION, QUICKSTART, MAIN_JOB, INSTANCES, POLICIES, OWN_CODE, MEASURE, THEORY)


def _name(page: Page) -> str:
    return pathlib.Path(page.path).stem


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_commented_statement_is_checked(page):
    assert unchecked(page) == (set(), set())


@pytest.mark.parametrize("page", [p for p in PAGES if p.blocks()], ids=_name)
def test_page_outputs_are_current(page, tmp_path, monkeypatch):
    # The files a page writes to a temporary folder of its own (measure.md's saved runs and figure) go to
    # pytest's, which it cleans, not to /tmp at every run (TMPDIR for a page run in a child process).
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert run_page(page) == []


def test_measure_shell_example_prints_its_table(tmp_path, capsys):
    # measure.md's `htb-jax frontier --policy ...` and the table it printed (stdout), run in this
    # process: the same programs as the page's Python example, compiled once when both run here.
    from htb_jax._src.cli import main

    block = (ROOT / MEASURE.path).read_text().split("```console\n$ htb-jax frontier --policy")[1].split("```")[0]
    command, *shown = ("htb-jax frontier --policy" + block).rstrip("\n").splitlines()
    argv = shlex.split(command)[1:]
    argv[argv.index("--out") + 1] = str(tmp_path / "ucb1")
    assert len(shown) == 3 and main(argv) == 0
    assert capsys.readouterr().out.strip().splitlines() == shown


def _table(text: str, after: str = "") -> list[str]:
    """The first Markdown table of ``text`` after ``after``: its lines."""
    lines = text.split(after, 1)[1].splitlines() if after else text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| eps |"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


MAIN_JOB_TEXT = (ROOT / MAIN_JOB.path).read_text()
STABLE_COMMAND = "$ htb-jax frontier --family stable --out experiments/frontier_stable"


def test_main_job_table_is_the_recorded_one():
    # The default table as its command wrote it (the README's test recomputes its fits from the
    # recorded runs); the stable family's is checked, and its fits recomputed, by
    # tests/test_stable_frontier.py.
    recorded = (ROOT / "experiments" / "frontier_default" / "table.md").read_text().splitlines()
    shown = _table(MAIN_JOB_TEXT)
    assert len(shown) == 2 + 9 and all(line in recorded for line in shown)
    readme = (ROOT / "README.md").read_text()
    assert _table(readme) == shown


def _rows(table: list[str]) -> list[dict[str, str]]:
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    return [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
            for line in table[2:]]


def _fit(cell: str) -> tuple[float, float, float]:
    slope, low, high = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", cell).groups()
    return float(slope), float(low), float(high)


def _within(target: float, fit: tuple[float, float, float], tol: float = 0.05) -> bool:
    """What `agrees` means on the page: ``target`` within ``tol`` of the slope or of its interval."""
    slope, low, high = fit
    return abs(slope - target) <= tol + 1e-9 or low - tol - 1e-9 <= target <= high + tol + 1e-9


def test_verdicts_mean_what_the_page_says():
    # "`agrees` means the theory lies within 0.05 of the measured slope or of its interval.
    # Otherwise `finite T: schedule predicts ...` means the finite-T slope does."  A verdict the
    # tables print against that reading (a looser tolerance, a finite-T value not the column's) fails.
    stable = MAIN_JOB_TEXT.split(STABLE_COMMAND)[1]
    rows = _rows(_table(MAIN_JOB_TEXT)) + _rows(_table(stable))
    assert len(rows) == 9 + 6
    verdicts = 0
    for row in rows:
        for fit in ("d", "c"):
            measured, theory, finite = _fit(row[f"{fit} measured"]), float(row[f"{fit} theory"]), row[f"{fit} finite T"]
            if row[fit] == "agrees":
                assert _within(theory, measured), row
            else:
                assert row[fit] == f"finite T: schedule predicts {finite}", row
                assert not _within(theory, measured) and _within(float(finite), measured), row
            verdicts += 1
    assert verdicts == 30
    # Every slope shown lies in its interval.
    assert all(low <= slope <= high for row in rows for fit in ("d", "c")
               for slope, low, high in [_fit(row[f"{fit} measured"])])


def test_main_job_quotes_its_table():
    # "measured c = 0.065 (theory 0.2) and d = 1.000 (theory 0.9)", "still 63% of L_T", "measured
    # 0.226, theory 0.3": the rows they come from; "about 1700 rounds" is K ceil(8 log(K T^3)), K = 2.
    rows = {(r["eps"], r["alpha"]): r for r in _rows(_table(MAIN_JOB_TEXT))}
    row = rows["1", "0.900"]
    assert (row["c measured"].split()[0], row["c theory"], row["d measured"].split()[0], row["d theory"]) == (
        "0.065", "0.200", "1.000", "0.900")
    assert row["K B_T / L_T"] == "0.63" and "still 63% of `L_T`" in MAIN_JOB_TEXT
    assert (rows["0.5", "0.900"]["c measured"].split()[0], rows["0.5", "0.900"]["c theory"]) == ("0.226", "0.300")
    assert round(2 * math.ceil(8 * math.log(2 * 1e45)), -2) == 1700


def test_fixed_instance_regret_is_the_same_on_every_seed():
    # "On the fixed instance every seed's regret is the same at every horizon": the recorded runs.
    config = htb.frontier.TFrontierConfig()
    runs = htb.frontier.load_runs(ROOT / "experiments" / "frontier_default" / "runs.npz", config.family)
    fixed = runs.regret[:, -1]  # (schedules, horizons, seeds): the last member is the fixed instance
    assert fixed.shape == (9, 13, config.num_seeds)
    assert np.ptp(fixed, axis=-1).max() == 0.0


OWN_CODE_TEXT = (ROOT / OWN_CODE.path).read_text()


def test_own_code_shows_the_refusals_the_code_gives():
    # The page's epsilon-greedy class (its definition alone, nothing simulated) with a summary that
    # returns htb.Summary: the TypeError the page quotes, "(...)" standing for the shapes it lists.
    namespace = {}
    for node, _, _ in statements(OWN_CODE.blocks()[0]):
        if isinstance(node, ast.Import | ast.ClassDef):
            exec(compile(ast.Module([node], []), OWN_CODE.path, "exec"), namespace)
    base = namespace["EpsilonGreedy"]

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class EpsilonGreedy(base):
        def kernel(self, spec):
            summary = lambda state, ctx: htb.Summary(mean=ctx.t * 1.0, stderr=ctx.t * 0.0, num_seeds=1)
            return base.kernel(self, spec)._replace(summary=summary)

    nu = htb.equal_gap(htb.StudentT(loc=0.0, df=3.0), num_arms=5, gap=0.2)
    with pytest.raises(TypeError) as refused:
        htb.simulate(jax.random.key(0), EpsilonGreedy(), nu, 10, 1)
    shown = re.search(r"^TypeError: (.*)$", OWN_CODE_TEXT, flags=re.M).group(1)
    assert re.fullmatch(re.escape(shown).replace(re.escape("(...)"), r"\(.*?\)"), str(refused.value))
    # The refusal of a store another program computed, as tests/test_store_fingerprint.py gets it.
    assert re.search(r"^htb-jax: error: .*$", OWN_CODE_TEXT, flags=re.M).group(0) == (
        f"htb-jax: error: the output directory 'DIR' {STALE}; give another --out, or --restart to delete its "
        "chunks and start again")


def test_quoted_ratios_are_recorded_benchmark_figures():
    # A ratio a page quotes ("0.95x", "3.74x") is a figure of BENCHMARKS.md or its history.
    recorded = (ROOT / "BENCHMARKS.md").read_text() + (ROOT / "benchmarks" / "HISTORY.md").read_text()
    quoted = {p.path: re.findall(r"(?<![\w.])\d+(?:\.\d+)?x(?!\w)", (ROOT / p.path).read_text()) for p in PAGES}
    assert quoted[INSTANCES.path] == ["0.95x", "3.74x"]
    assert [(path, x) for path, found in quoted.items() for x in found if x not in recorded] == []

