"""The guides on tuning, sweeps, scaling, memory and resuming, reproducibility, GPUs and how htb_jax
works show what the code gives today.

Each page's ``python`` blocks run top to bottom in one namespace (``tests/doc_snippets.py``), and
every commented statement is an output checked at the precision shown or is listed as none.  The
console transcripts of ``sweeps.md`` and ``scaling.md`` are the tables the commands print today
(the Student-t sweep re-run at its full size), and the figures ``gpu.md`` quotes are recorded runs.
"""

from __future__ import annotations

import re

import pytest

from doc_snippets import ROOT, Page, run_page, unchecked
from htb_jax._src import resumable
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
PAGES = (PROXIES, MEMORY)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.path.split("/")[-1])
def test_every_commented_statement_is_checked(page):
    assert unchecked(page) == (set(), set())


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.path.split("/")[-1])
def test_shown_outputs_are_current(page):
    assert run_page(page) == []


def _consoles(path: str) -> list[str]:
    """The ``console`` blocks of a page."""
    return re.findall(r"```console\n(.*?)```", (ROOT / path).read_text(), flags=re.S)


def test_student_t_sweep_is_the_commands_output_started_interrupted_and_again(tmp_path, monkeypatch, capsys):
    # sweeps.md's command at its full size (400 seeds; about 10 s on 2 cores), in an empty directory so
    # that the output directory has the page's relative name: its banner, its table, the line of a
    # resumed run, and the refusal of another configuration.  Catches a page left behind by a change
    # of any number of the table, of the banner or of either line.
    page = (ROOT / "docs/guides/sweeps.md").read_text()
    toml = re.search(r"```toml\n(.*?)```", page, flags=re.S).group(1)
    assert toml == (ROOT / "experiments" / "sweep.toml").read_text()
    run, again, refusal, ctrl_c = _consoles("docs/guides/sweeps.md")
    command = "$ htb-jax sweep --config experiments/sweep.toml"
    assert run.splitlines()[0] == command and again.splitlines()[0] == command
    banner = run.splitlines()[1]
    table = page.split("<!-- sweep-table:begin -->\n")[1].split("<!-- sweep-table:end -->")[0].splitlines()
    assert len(table) == 2 + 12
    argv = ["sweep", "--config", str(ROOT / "experiments" / "sweep.toml")]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == table
    assert err.splitlines()[0] == banner
    wrote = err.strip().splitlines()[-1].split(" s (compilation included)")[1]
    assert run.strip().splitlines()[-1].endswith(wrote)
    # Started again it reads the chunks back and prints the same table.
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == table
    assert err.splitlines()[:2] == again.splitlines()[1:3]
    # With --seeds 800 it refuses, in one line, with status 2.
    assert refusal.splitlines()[0] == f"{command} --seeds 800"
    assert main([*argv, "--seeds", "800"]) == 2
    assert capsys.readouterr().err.strip() == refusal.splitlines()[1]
    # The Ctrl-C transcript: the line an interrupt after two of four chunks prints, and the resumed
    # run's line as the one above (tests/test_interrupts.py interrupts the commands themselves).
    lines = ctrl_c.splitlines()
    assert lines[1] == banner and lines[4] == "htb-jax: " + interrupted(
        resumable.Interrupted(2, 4, "htb-jax-sweep-student"))
    assert lines[5].split("#")[0].strip() == command
    assert "resumed: 2 of 4 chunks read back from htb-jax-sweep-student" in lines
    assert again.splitlines()[2] == "resumed: 4 of 4 chunks read back from htb-jax-sweep-student"
