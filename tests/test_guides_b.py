"""The guides on tuning, sweeps, scaling, memory and resuming, reproducibility, GPUs and how htb_jax
works show what the code gives today.

Each page's ``python`` blocks run top to bottom in one namespace (``tests/doc_snippets.py``), and
every commented statement is an output checked at the precision shown or is listed as none.  The
console transcripts of ``sweeps.md`` and ``scaling.md`` are the tables the commands print today
(the Student-t sweep re-run at its full size), and the figures ``gpu.md`` quotes are recorded runs.
"""

from __future__ import annotations

import pytest

from doc_snippets import Page, run_page, unchecked

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
