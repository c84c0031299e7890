"""The guides on tuning, sweeps, scaling, memory and resuming, reproducibility, GPUs and how htb_jax
works show what the code gives today.

Each page's ``python`` blocks run top to bottom in one namespace (``tests/doc_snippets.py``), and
every commented statement is an output checked at the precision shown or is listed as none.  The
console transcripts of ``sweeps.md`` and ``scaling.md`` are the tables the commands print today
(the Student-t sweep re-run at its full size), the refusals and interruptions they show are the lines
the code forms, and the figures ``gpu.md``, ``scaling.md`` and ``how-it-works.md`` quote are recorded
runs of benchmarks/HISTORY.md.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tomllib

import jax
import numpy as np
import pytest
import reproducibility_probe as probe

from doc_snippets import ROOT, Page, run_page, statements, unchecked
from htb_jax._src import chunk_store, resumable
from htb_jax._src.cli import interrupted, main

PROXIES = Page(
    "docs/guides/proxies-tuning.md",
    outputs=(
        ("proxy(0.8), jax.grad(proxy)(0.8)", r"^(.*)$", None),
        ("proxy(0.8, tau=0.0, rounding=True)", r"^(.*)$", None),
        ('htb.simulate(key, htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0), nu, T, 64, sampler="per_pull").regret.mean()',
         r"^(.*)$", None),
        ("res.alpha", r"^(.*)$", None),
        ("res.worst_case, res.reference", r"^(.*)$", None),
    ),
    not_outputs=("family = htb.lower_bound_pair(2, 1.0, 10.0 ** jnp.arange(-3.0, 0.0, 0.5))[1]",),
    # The regret proxy reads the float32 rewards, which change in the last bit without FMA, and the
    # tuning amplifies that (the page says so): checked where the host fuses multiply-adds.
    fma_only=("proxy(0.8), jax.grad(proxy)(0.8)", "res.alpha", "res.worst_case, res.reference"),
)
MEMORY = Page(
    "docs/guides/memory-resuming.md",
    outputs=(
        ("plan.threads, plan.seed_chunk, plan.num_chunks", r"^(.*)$", None),
        # The measured peak is XLA's own count, which moves by a few hundred bytes between jax
        # versions: shown in MiB to one decimal.
        ("plan.estimated_peak, round(plan.measured_peak / 2**20, 1)", r"^(\(.*?\)):", None),
        ("plan.estimated_peak, round(plan.measured_peak / 2**20, 1)", r"\): (\S+) MiB estimated, (\S+) MiB measured",
         "(plan.estimated_peak / 2**20, plan.measured_peak / 2**20)"),
    ),
    # A compiled program's measured peak is XLA:CPU's figure (2.3 MiB where XLA:GPU compiles it on an H200).
    cpu_only=("plan.estimated_peak, round(plan.measured_peak / 2**20, 1)",),
)
# The multi-host block needs jax.distributed and a cluster (tests/test_distributed.py runs simulate in
# two processes; test_the_multi_host_block_is_python_for_the_public_api checks the block's call).
SCALING = Page("docs/guides/scaling.md", skip_blocks=("jax.distributed.initialize(",))
REPRODUCIBILITY = Page(
    "docs/guides/reproducibility.md",
    outputs=(("htb.intrinsic_scale(nu, eps=0.4)", r"^(.*)$", None),),
    # A float64 quadrature: its last digits follow the vector width; 10 digits are promised with FMA.
    fma_only=("htb.intrinsic_scale(nu, eps=0.4)",),
)
# Pages without python blocks: a commented statement added to one must be listed here.
SWEEPS = Page("docs/guides/sweeps.md")
GPU = Page("docs/guides/gpu.md")
# bench.md's two lists of names are compared whole by test_bench_lists_are_the_codes (the runner compares numbers).
BENCH_LISTS = ('[(e.name, len(e.settings)) for e in htb.bench.experiments("cpu")]',
               "[(p.name, p.knows) for p in htb.bench.peers()][:4]")
BENCH = Page(
    "docs/guides/bench.md",
    outputs=(("htb.bench.setting_score(250.0, 1000.0)", r"^(.*)$", None),),
    not_outputs=BENCH_LISTS,
)
HOW_IT_WORKS = Page(
    "docs/guides/how-it-works.md",
    outputs=(
        ("u", r"^(\[.*?\]):", None),
        ("u[0] ** (-1 / 1.5)", r"^(\S+):", None),
    ),
)
PAGES = (PROXIES, SWEEPS, SCALING, MEMORY, REPRODUCIBILITY, GPU, HOW_IT_WORKS, BENCH)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.path.split("/")[-1])
def test_every_commented_statement_is_checked(page):
    assert unchecked(page) == (set(), set())


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.path.split("/")[-1])
def test_shown_outputs_are_current(page):
    assert run_page(page) == []


def _consoles(path: str) -> list[str]:
    """The ``console`` blocks of a page."""
    return re.findall(r"```console\n(.*?)```", (ROOT / path).read_text(), flags=re.S)


@pytest.fixture(scope="module")
def student_t_sweep(tmp_path_factory):
    """sweeps.md's command at its full size (400 seeds; 9 to 15 s on a 2-core AMD EPYC at load 2 to 5) in
    an empty directory, so that the output directory has the page's relative name: run, started again,
    then with --seeds 800.  ``[(status, stdout, stderr)]`` of the three."""
    argv = ["sweep", "--config", str(ROOT / "experiments" / "sweep.toml")]
    runs, cwd = [], os.getcwd()
    os.chdir(tmp_path_factory.mktemp("sweep"))
    try:
        for extra in ([], [], ["--seeds", "800"]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main([*argv, *extra])
            runs.append((status, out.getvalue(), err.getvalue()))
    finally:
        os.chdir(cwd)
    return runs


def test_student_t_sweep_is_the_commands_output_started_interrupted_and_again(student_t_sweep):
    # The page's banner, table, the line of a resumed run and the refusal of another configuration are
    # what the command prints today.  Catches a page left behind by a change of any number of the table,
    # of the banner or of either line.
    page = (ROOT / "docs/guides/sweeps.md").read_text()
    toml = re.search(r"```toml\n(.*?)```", page, flags=re.S).group(1)
    assert toml == (ROOT / "experiments" / "sweep.toml").read_text()
    run, again, refusal, ctrl_c = _consoles("docs/guides/sweeps.md")
    command = "$ htb-jax sweep --config experiments/sweep.toml"
    assert run.splitlines()[0] == command and again.splitlines()[0] == command
    banner = run.splitlines()[1]
    table = page.split("<!-- sweep-table:begin -->\n")[1].split("<!-- sweep-table:end -->")[0].splitlines()
    assert len(table) == 2 + 12
    (status, out, err), (status_again, out_again, err_again), (status_800, _, err_800) = student_t_sweep
    assert status == 0 and out.strip().splitlines() == table
    assert err.splitlines()[0] == banner
    wrote = err.strip().splitlines()[-1].split(" s (compilation included)")[1]
    assert run.strip().splitlines()[-1].endswith(wrote)
    # Started again it reads the chunks back and prints the same table.
    assert status_again == 0 and out_again.strip().splitlines() == table
    assert err_again.splitlines()[:2] == again.splitlines()[1:3]
    # ... and says it simulated nothing (it printed "0.0 s (compilation included)")
    assert err_again.strip().splitlines()[-1] == "every chunk read back" + wrote
    assert again.strip().splitlines()[-1] == "every chunk read back" + wrote
    # With --seeds 800 it refuses, in one line, with status 2.
    assert refusal.splitlines()[0] == f"{command} --seeds 800"
    assert status_800 == 2 and err_800.strip() == refusal.splitlines()[1]
    # The Ctrl-C transcript: the line an interrupt after two of four chunks prints, and the resumed
    # run's line as the one above (tests/test_interrupts.py interrupts the commands themselves).
    lines = ctrl_c.splitlines()
    assert lines[1] == banner and lines[4] == "htb-jax: " + interrupted(
        resumable.Interrupted(2, 4, "htb-jax-sweep-student"))
    assert lines[5].split("#")[0].strip() == command
    assert "resumed: 2 of 4 chunks read back from htb-jax-sweep-student" in lines
    assert again.splitlines()[2] == "resumed: 4 of 4 chunks read back from htb-jax-sweep-student"


def test_two_process_sweep_table_is_one_process_output(student_t_sweep):
    # scaling.md's two-process run printed the table one process prints for the same settings
    # (tests/test_distributed.py checks two processes against one on a smaller sweep).  Its settings are
    # sweep.toml's but the horizons (the first three) and the output directory; seed s of a grid point
    # reads the same rewards whatever other horizons run (the reward table), so one process prints the
    # Student-t sweep's rows at those horizons, which the sweep above printed.
    (shown,) = [block for block in _consoles("docs/guides/scaling.md") if block.startswith('$ ARGS="')]
    args = shown.split('"')[1].split()
    flags = dict(zip(args[::2], args[1::2], strict=True))
    config = tomllib.loads((ROOT / "experiments" / "sweep.toml").read_text())
    assert flags == {
        "--family": config["family"], "--df": f"{config['df']:g}", "--arms": str(config["num_arms"]),
        "--gap": str(config["gap"]), "--alphas": ",".join(f"{a:g}" if a != "2/3" else a for a in config["alphas"]),
        "--qs": "0", "--horizons": "1e3,1e4,1e5", "--seeds": str(config["num_seeds"]),
        "--seed-chunk": str(config["seed_chunk"]), "--out": "runs/two-process",
        "--coordinator": "127.0.0.1:23456", "--num-processes": "2",
    }
    assert config["qs"] == [0.0] and config["horizons"][:3] == [1e3, 1e4, 1e5] and config["key"] == 0
    (_, out, err), *_ = student_t_sweep
    one_process = out.strip().splitlines()[:2] + [r for r in out.strip().splitlines()[2:] if "| 1e+06 |" not in r]
    table = [line for line in shown.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 9 and table == one_process
    banner = next(line for line in shown.splitlines() if line.startswith("AdaR-ETC sweep:"))
    assert banner == err.splitlines()[0].replace(", 1000000]", "]").replace("htb-jax-sweep-student", "runs/two-process")


def test_the_full_length_u_eps_shown_is_the_recorded_one():
    # reproducibility.md gives U_eps in full as tests/reproducibility_probe.npz recorded it (the probe's
    # "intrinsic_scale", the same instance and eps), next to the 10 digits the snippet check compares.
    page = (ROOT / "docs/guides/reproducibility.md").read_text()
    recorded, _ = probe.load(probe.RECORDED)
    full = repr(float(np.asarray(recorded["intrinsic_scale"])))
    assert f"is `{full}` in full where it was recorded" in page
    assert "htb.intrinsic_scale(nu, eps=0.4)   # " + probe.shown(recorded["intrinsic_scale"])[0] in page


HISTORY = (ROOT / "benchmarks" / "HISTORY.md").read_text()
# The pages' sections that quote recorded runs, and none of their own transcripts.
RECORDED = {
    "docs/guides/gpu.md": ("## Sizes off a CPU", "## Checked on every machine"),
    "docs/guides/scaling.md": ("## Threads on a CPU", "## Several hosts"),
    "docs/guides/how-it-works.md": ("On a CPU the selection", "## Exact moments"),
}


def _figures(text: str) -> list[str]:
    """The times, rates, ratios and counts of ``text``: numbers with a unit, a power of ten or a 'passed'."""
    figures = re.findall(r"(?<![\w^.])\d[\d,]*(?:\.\d+)?(?:e\d+|x\b| m?s\b| ns\b)", text)
    return figures + re.findall(r"\b\d+(?= passed)", text)


@pytest.mark.parametrize("path", RECORDED, ids=lambda path: path.split("/")[-1])
def test_quoted_figures_are_recorded_runs(path):
    # Every time, rate, ratio and count these sections quote is in benchmarks/HISTORY.md, whose runs
    # name their machine, date and command (a figure of no recorded run, or one left behind when a run
    # is recorded anew, fails).  The sampler table's rows are checked against the history's rows, below.
    start, end = RECORDED[path]
    page = (ROOT / path).read_text()
    text = "\n".join(line for line in page[page.index(start):page.index(end)].splitlines() if not line.startswith("| `10^"))
    figures = _figures(text)
    assert len(figures) >= 5, figures
    assert [f for f in figures if f not in HISTORY] == []


def test_sampler_costs_are_the_recorded_rows():
    # how-it-works.md's table of one configuration's cost against the horizon: each row is a row of
    # bench_order_statistic.py's recorded output (T, B_T, block sums, order statistic).
    page = (ROOT / "docs/guides/how-it-works.md").read_text()
    rows = re.findall(r"^\| `10\^(\d+)` \| (\d+) \| (\S+) s \| (\S+) s \|$", page, flags=re.M)
    assert len(rows) == 2
    for power, blocks, block_sums, order_statistic in rows:
        assert re.search(rf"^ +1e{power} +{blocks} +{re.escape(block_sums)} +{re.escape(order_statistic)} ", HISTORY,
                         flags=re.M), power


def test_stated_defaults_are_the_codes():
    # The defaults the pages state in words: proxies-tuning.md (the smoothed proxy, its widths, a
    # polish of 48, per-pull tables of at most 1 GiB), memory-resuming.md (2 GiB per CPU device, half
    # an accelerator's memory), gpu.md (up to 4096 seeds a chunk off a CPU), how-it-works.md (blocks
    # of up to 32 samples summed sample after sample).
    import inspect

    import htb_jax as htb
    from htb_jax._src import memory, mom, proxy, tuning

    defaults = {k: p.default for k, p in inspect.signature(htb.tune_schedule).parameters.items()}
    assert defaults["proxy"] == "smoothed" and defaults["width"] == (0.05, 0.002)
    assert defaults["polish"] is None and tuning.DEFAULT_POLISH == 48
    assert proxy.MAX_TABLE_BYTES == 2**30
    assert memory.default_memory_budget(jax.devices("cpu")[0]) == 2 * 2**30
    assert memory.ACCELERATOR_MEMORY_FRACTION == 0.5
    assert resumable.default_seed_chunk(10**5) == (8 if jax.default_backend() == "cpu" else 4096)
    assert resumable.ACCELERATOR_SEED_CHUNK == 4096 and mom.STATIC_BLOCK_SIZES == 32


def test_times_in_words_are_the_transcripts():
    # The printed times the prose of sweeps.md and scaling.md explains are those of their transcripts.
    sweeps, scaling = (" ".join((ROOT / f"docs/guides/{name}.md").read_text().split()) for name in ("sweeps", "scaling"))
    run = _consoles("docs/guides/sweeps.md")[0].strip().splitlines()[-1]
    assert f"The line the command prints, {run.split(' (')[0]}," in sweeps
    two = next(b for b in _consoles("docs/guides/scaling.md") if b.startswith('$ ARGS="')).strip().splitlines()[-1]
    assert f"they took {two.split(' (')[0]} as printed" in scaling
    assert f"in one process took {run.split(' (')[0]} as printed" in scaling


def test_the_multi_host_block_is_python_for_the_public_api():
    # scaling.md's block for several hosts is not run here (it needs jax.distributed and a cluster):
    # it parses, and calls simulate, with the keywords simulate takes.
    import ast
    import inspect

    import htb_jax as htb

    (block,) = [b for b in re.findall(r"```python\n(.*?)```", SCALING.text, flags=re.S) if "jax.distributed" in b]
    calls = [n for n in ast.walk(ast.parse(block)) if isinstance(n, ast.Call) and ast.unparse(n.func) == "htb.simulate"]
    assert len(calls) == 1
    assert {k.arg for k in calls[0].keywords} <= set(inspect.signature(htb.simulate).parameters)


def test_fingerprint_refusals_are_the_lines_the_code_forms():
    # memory-resuming.md's refusal of a store another program computed, and its example of another
    # version (tests/test_store_fingerprint.py makes the commands print them).
    page = " ".join((ROOT / "docs/guides/memory-resuming.md").read_text().split())
    old = {"program": {"htb_jax": "0.1.0", "jax": "0.10.1", "jaxlib": "0.10.1", "program_sha256": "a"}, "backend": "cpu"}
    stale = chunk_store._program_change(old, {**old["program"], "program_sha256": "b"})
    line = f"htb-jax: error: the output directory 'DIR' holds chunks computed by another program ({stale}); "
    assert line + str(chunk_store.CLI_REMEDY) in page
    assert f"(`{chunk_store._program_change(old, {**old['program'], 'jax': '0.10.2'})}`)" in page


def test_pathwise_gradient_ratios_are_the_experiments():
    # proxies-tuning.md: the pathwise gradient is "1700 to 3500 times" the central difference, the three
    # points experiments/README.md records (their ratios, to two significant digits).
    page = " ".join((ROOT / "docs/guides/proxies-tuning.md").read_text().split())
    low, high = map(float, re.search(r"it is (\d+) to (\d+) times the central difference", page).groups())
    recorded = (ROOT / "experiments" / "README.md").read_text()
    numbers = [float(x) for x in re.search(r"Student-t\(2\.4\), K = 7,\s+`T = 2e5`: (.*?)\)", recorded, flags=re.S)
               .group(1).replace("against", ",").split(",")]
    ratios = [a / b for a, b in zip(numbers[:3], numbers[3:], strict=True)]
    assert float(f"{min(ratios):.2g}") == low and float(f"{max(ratios):.2g}") == high


def test_bench_sizes_table_is_the_suites():
    # The sizes bench.md states are the suite's (catches a size changed in the code but not on the page).
    from htb_jax._src.bench.suite import SIZES

    def shown(n):
        return f"10^{len(str(n)) - 1}" if n >= 10**4 and str(n).strip("0") == "1" else str(n)

    from htb_jax._src.bench import worst_case
    from htb_jax._src.bench.peers import peers

    linear = next(p for p in peers() if p.round_cost == "O(t)")
    other = next(p for p in peers() if p.round_cost != "O(t)")
    text = BENCH.text
    for s in SIZES.values():
        (first, *_, last), (first_t, *_, last_t) = (worst_case.horizons(c, s.name) for c in (other, linear))
        row = (f"| `{s.name}` | {shown(s.horizon)} | {s.seeds} | {', '.join(shown(h) for h in s.horizons)} "
               f"| {shown(s.reach)} | {shown(first)} to {shown(last)} (`O(t)`: {shown(first_t)} to {shown(last_t)}) |")
        assert row in text, row


def test_bench_lists_are_the_codes():
    # The experiments and peers bench.md shows, names included, are what htb.bench returns.
    import ast

    import htb_jax as htb

    shown = {source: comment for block in BENCH.blocks() for _, source, comment in statements(block) if comment}
    for source in BENCH_LISTS:
        assert ast.literal_eval(shown[source]) == eval(source, {"htb": htb}), source


def test_bench_gpu_size_note_is_forcemoms_plan():
    # bench.md's note on the gpu size: ForceMoM's state at the horizon experiment's horizons, its chunks under
    # the accelerator's chunk cap, the rounds of one chunk, and the hours at the recorded round latency.
    import math

    import htb_jax as htb
    from htb_jax._src import engine
    from htb_jax._src.bench.suite import NUM_ARMS, SIZES

    size = SIZES["gpu"]
    nu = htb.equal_gap(htb.Gaussian(loc=0.0, scale=1.0), num_arms=NUM_ARMS, gap=0.5)
    plan = htb.memory_plan(jax.random.key(0), htb.ForceMoM(rho=0.5), nu, list(size.horizons), size.seeds)
    chunks = math.ceil(size.seeds * plan.bytes_per_seed / engine._ACCELERATOR_SEED_CHUNK_BYTES)
    rounds = sum(size.horizons)
    hours = [chunks * rounds * latency / 3600 for latency in (0.6e-3, 0.8e-3)]
    text = " ".join(BENCH.text.split())
    assert (f"whose state is then {plan.bytes_per_seed / 2**20:.0f} MiB a seed, so that its {size.seeds} seeds run "
            f"in {chunks} chunks (a chunk holds at most {engine._ACCELERATOR_SEED_CHUNK_BYTES // 2**30} GiB) of "
            f"`{rounds / 1e6:.1f} x 10^6` rounds each") in text
    assert f"would take {hours[0]:.1f} to {hours[1]:.0f} hours" in text
