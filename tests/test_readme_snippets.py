"""Every number the README shows as an output is what the code gives today.

The ``python`` code blocks of README.md are run statement by statement, in README order, in
one namespace (later blocks use the names of earlier ones).  A statement's output is shown
in its trailing comment and the comment lines right below it; ``OUTPUTS`` says which part
of that comment is the output and which expression it shows (the statement itself unless
named).  Numbers are compared at the precision printed; every commented statement is either
in ``OUTPUTS`` or in ``NOT_OUTPUTS``, so a new output line cannot go unchecked.  The
Student-t sweep table is the table the sweep prints today (re-run at its full size).
"""

from __future__ import annotations

import pathlib
import re

import pytest

from doc_snippets import Page, run_blocks, unchecked

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()

# (statement as written in the README, regex whose group 1 is the shown output within the
# statement's comment (comment lines joined by newlines), expression shown, or None for the
# statement's own value).
OUTPUTS = [
    ("nu.mean()", r"^(.*)$", None),
    ("nu.eps_sup()[0]", r"^(.*)$", None),
    ("htb.intrinsic_scale(nu, eps=0.4)", r"of Section 5: (.*)$", None),
    ("out.regret.shape", r"^(\(.*\)): grid", None),
    ("s.mean[:, 0].round(0)", r"10\^6\n(.*)$", None),
    ("s.stderr[:, 0].round(0)", r"^(.*)$", None),
    ("(out.committed == 0).mean(-1, dtype=jnp.float64)[:, 0]", r"^(.*)$", None),
    ("htb.median_of_means(jnp.array([1.0, 2.0, 100.0, 3.0, 4.0, 5.0, jnp.inf]), num_blocks=3)",
     r"^(Array\(.*?\)):", None),
    ("nu1.mean(), htb.intrinsic_scale(nu1, eps=1.0)", r"^(.*)$", None),
    ("htb.AdaRETC.order_free().exploration_length(num_arms=10, horizon=10**9)", r"^(.*)$", None),
    ("proxy(0.8), jax.grad(proxy)(0.8)", r"^(.*)$", None),
    ("proxy(0.8, tau=0.0, rounding=True)", r"^(.*)$", None),
    ('htb.simulate(key, htb.AdaRETC(eps=0.5, alpha=0.8, q=0.0), nu, T, 64, sampler="per_pull").regret.mean()',
     r"^(.*)$", None),
    ("res.alpha", r"^(.*)$", None),
    ("res.worst_case, res.reference", r"^(.*)$", None),
    ("out.regret.shape, out.regret_curve.shape", r"^(.*)$", None),
    ("out.checkpoints[0, 0]", r"^(.*)$", None),
    ("htb.summarize(out).mean", r"^(\[.*?\])", None),
    ("htb.summarize(out).mean", r"std\. err\. (.*)\)$", "htb.summarize(out).stderr"),
    ("out.exploration[:, 0]", r"D_T = (.*)$", None),
    ("htb.simulate(jax.random.key(0), htb.UCB1(), nu, 20, 1, record_arms=True).arms", r"^(.*)$", None),
    ("told.u", r"^(.*)$", None),
    ("paired.regret.mean(-1)", r"^(.*)$", None),
    ("every.regret.mean(-1)", r"^(.*)$", None),
    ("nu.eps_sup()[0], htb.intrinsic_scale(nu, eps=0.4)", r"^(.*)$", None),
    ("out.regret.mean(-1)", r"^(.*)$", None),
    ("(out.committed == 0).mean(-1)", r"^(.*)$", None),
    ("fast.regret.mean(-1), (fast.committed == 0).mean(-1)", r"^(.*)$", None),
    ("htb.simulate(jax.random.key(0), htb.UCB1(), nu, 3000, num_seeds=20).regret.mean()", r"^(.*)$", None),
    ("lomax.mean(), lomax.eps_sup()[0]", r"^(.*)$", None),
    ("htb.intrinsic_scale(lomax, eps=0.4)", r"^(.*)$", None),
    ("htb.simulate(jax.random.key(0), htb.AdaRETC(eps=0.4, alpha=0.8, q=0.0), lomax, 3000, num_seeds=20).regret.mean()",
     r"^(.*)$", None),
    ("plan.threads, plan.seed_chunk, plan.num_chunks", r"^(.*)$", None),
    # The measured peak is XLA's own count, which moves by a few hundred bytes between jax versions:
    # shown in MiB to one decimal.
    ("plan.estimated_peak, round(plan.measured_peak / 2**20, 1)", r"^(\(.*?\)):", None),
    ("plan.estimated_peak, round(plan.measured_peak / 2**20, 1)", r"\): (\S+) MiB estimated, (\S+) MiB measured",
     "(plan.estimated_peak / 2**20, plan.measured_peak / 2**20)"),
]
# Commented statements whose comment is no output, and statements that are not run.
NOT_OUTPUTS = [
    "htb.AdaRETC.calibrated(0.5)",
    "nu0, nu1 = htb.lower_bound_pair(num_arms=3, gap=0.5, spike_prob=1e-4)",
    "family = htb.lower_bound_pair(2, 1.0, 10.0 ** jnp.arange(-3.0, 0.0, 0.5))[1]",
]
NOT_RUN = [
    "htb.run_on_rewards(policy, rewards, means, horizon)",  # a signature, no data
]
# Outputs the README shows as a CPU with FMA computes them, and promises only there: the regret
# proxy reads the float32 rewards, which change in the last bit without FMA (README, "The same
# numbers on another machine"), and the tuning amplifies that (the tuned alpha at lam = 0.5 moves
# from 0.848 to 0.814 under XLA_FLAGS=--xla_cpu_max_isa=SSE4_2).  Checked where the host fuses.
FMA_ONLY = [
    "proxy(0.8), jax.grad(proxy)(0.8)",
    "res.alpha",
    "res.worst_case, res.reference",
]
# Outputs that are a device compiler's own figures, shown as XLA:CPU gives them and checked on a CPU
# backend: the measured peak of a compiled program (2.3 MiB where XLA:GPU compiles it on an H200).
CPU_ONLY = [
    "plan.estimated_peak, round(plan.measured_peak / 2**20, 1)",
]
README_PAGE = Page(
    "README.md", outputs=tuple(OUTPUTS), not_outputs=tuple(NOT_OUTPUTS), not_run=tuple(NOT_RUN),
    fma_only=tuple(FMA_ONLY), cpu_only=tuple(CPU_ONLY), skip_blocks=("jax.distributed.initialize(",),
)


def test_every_commented_statement_is_checked():
    assert unchecked(README_PAGE) == (set(), set())


@pytest.mark.parametrize("index", range(len(README_PAGE.blocks())))
def test_block_outputs_are_current(index):
    # Each block runs on its own (after the imports every block shares), so that the blocks
    # can run in different pytest-xdist workers.
    assert run_blocks(README_PAGE, [README_PAGE.blocks()[index]]) == []


def _readme_sweep_run():
    """The sweep command, its first progress line, the table it printed and the refusal shown."""
    section = README.split("$ htb-jax sweep --config experiments/sweep.toml")[1]
    command = "htb-jax sweep --config experiments/sweep.toml"
    header = section.splitlines()[1]
    table = [line for line in section.split("Started again")[0].splitlines() if line.startswith("|")]
    refusal = re.search(r"^htb-jax: error: .*$", section, flags=re.M).group(0)
    return command, header, table, refusal


def test_student_t_sweep_table_is_current(tmp_path, monkeypatch, capsys):
    # Runs the README's command at its full size (400 seeds, about 10 s on 2 cores) in an empty
    # directory, so that the output directory has the README's relative name.
    from htb_jax._src.cli import main

    command, header, table, refusal = _readme_sweep_run()
    assert len(table) == 2 + 12
    argv = command.split()[1:]
    argv[argv.index("experiments/sweep.toml")] = str(ROOT / "experiments" / "sweep.toml")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == table
    assert err.splitlines()[0] == header
    # Started again it reads the chunks back; with --seeds 800 it refuses, in one line.
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == table
    assert "resumed: 4 of 4 chunks read back from htb-jax-sweep-student" in err
    assert main([*argv, "--seeds", "800"]) == 2
    assert capsys.readouterr().err.strip() == refusal


def test_two_process_sweep_table_is_one_process_output(tmp_path, monkeypatch, capsys):
    # The README's two-process run printed the table one process prints for the same settings
    # (tests/test_distributed.py checks the two against each other on a smaller sweep).
    from htb_jax._src.cli import main

    section = README.split('$ ARGS="')[1]
    args = section.split('"')[0].split()
    shown = section.split("```")[0]
    table = [line for line in shown.splitlines() if line.startswith("|")]
    banner = next(line for line in shown.splitlines() if line.startswith("AdaR-ETC sweep:"))
    assert len(table) == 2 + 9 and args[args.index("--num-processes") + 1] == "2"
    for flag in ("--coordinator", "--num-processes"):
        i = args.index(flag)
        del args[i : i + 2]
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", *args]) == 0
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == table
    assert err.splitlines()[0] == banner
