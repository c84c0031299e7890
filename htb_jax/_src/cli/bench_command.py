"""``htb-jax bench``: a policy against the built-in peers on the suite ``ht-v1``, with a report."""

from __future__ import annotations

import shlex
import sys

from htb_jax._src import user_code
from htb_jax._src.bench import runner, worst_case
from htb_jax._src.bench.report import scorecard_markdown
from htb_jax._src.bench.suite import NAMES, SIZES, VERSION
from htb_jax._src.cli.arguments import flag_names
from htb_jax._src.cli.output_files import add_restart_argument
from htb_jax._src.protocol_checks import check_policy_factory, check_policy_instance, is_policy_factory


def load_contender(spec: str):
    """The policy ``'module:expression'`` names: a policy instance (told nothing), or a function
    ``(eps, u) -> policy`` told each setting's tail exponent and moment bound."""
    policy = user_code.load(spec, "--policy", "mypolicies:MyUCB()")
    if is_policy_factory(policy):
        check_policy_factory("--policy", policy, "htb-jax bench", "eps, u")
        return policy
    check_policy_instance("--policy", policy, "htb-jax bench")
    return policy


def add_bench_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help=f"a policy against the literature's heavy-tailed bandit policies on the suite {VERSION}, with a report",
        description=(
            f"Run a policy and the built-in peers through the benchmark suite {VERSION} (its experiments: "
            f"{', '.join((*NAMES, worst_case.NAME))}), on the same reward tables, print the scorecard, and write "
            "results.json, report.md, report.html and scorecard.tex to the output directory. Every run is stored there as it "
            "finishes: the same command resumes, and a second policy benchmarked into the same directory reuses "
            "the peers' runs and rewrites the report with that command's policies alone."
        ),
    )
    p.add_argument("--policy", metavar="MODULE:EXPRESSION", default=None,
                   help="the policy to benchmark: MODULE is imported (the current directory first) and EXPRESSION "
                   "evaluated in it, a policy instance (told nothing) or a function (eps, u) -> policy told each "
                   "setting's tail exponent and moment bound; without it, the peers alone")
    p.add_argument("--name", default=None, help="the policy's label in the report (default: the expression)")
    p.add_argument("--size", choices=tuple(SIZES), default="cpu",
                   help="cpu: T = 2000, 32 seeds a setting; gpu: T = 10^4, 1024 seeds (default cpu)")
    p.add_argument("--only", default=None, metavar="NAMES",
                   help="comma-separated experiments to run (default all: "
                   + ", ".join((*NAMES, worst_case.NAME)) + ")")
    p.add_argument("--no-peers", action="store_true", help="run the policy alone, without the built-in peers")
    p.add_argument("--out", default="htb-jax-bench", help="output directory (default htb-jax-bench)")
    add_restart_argument(p, "the stored runs this command makes (its policy's and the peers', under --out/runs/; "
                            "other policies' runs are kept)")


def run_bench(args, argv: list[str]) -> int:
    """Checks the whole command, then runs it (``argv``: the command line's arguments, for the report); status 0."""
    if args.name is not None and args.policy is None:
        raise ValueError("--name labels the policy --policy gives; without --policy it would be ignored")
    if args.name is not None and not args.name.strip():
        raise ValueError(f"--name must be a non-empty label; got --name={args.name!r}")
    policy = None if args.policy is None else load_contender(args.policy)
    name = args.name or (None if args.policy is None else user_code.parts(args.policy)[1])
    if args.name is None and name is not None:  # the expression labels the policy by default: named as such
        with flag_names({"name": "--name"}):
            runner.check_label(name, "--policy's expression")
    names = [*NAMES, worst_case.NAME]
    only = None
    if args.only is not None:
        only = [s.strip() for s in args.only.split(",")]
        unknown = [s for s in only if s not in names]  # an empty name too ("tail,,gaps")
        if not only or unknown:
            raise ValueError(f"--only takes experiment names among {', '.join(names)}; got {args.only!r}")
        repeated = sorted({s for s in only if only.count(s) > 1})
        if repeated:
            raise ValueError(f"--only must not repeat a name; got --only={args.only!r}, with {', '.join(repeated)} "
                             f"more than once")
    if policy is None and args.no_peers:
        raise ValueError("--no-peers needs --policy: there would be nothing to run")
    command = shlex.join(["htb-jax", *argv])
    arguments = dict(name=name, size=args.size, out=args.out, peers=not args.no_peers, only=only, restart=args.restart,
                     progress=True, command=command)
    with flag_names({"name": "--name", "out": "--out", "policy": "--policy"}):  # everything checked before the first line
        runner.check_arguments(policy, **arguments, function="htb-jax bench")
    print(f"htb-jax bench: suite {VERSION}, size {args.size}; output in {args.out}", file=sys.stderr)
    results = runner.run(policy, **arguments)
    print(scorecard_markdown(results))  # stdout: the scorecard, as the other commands print their table
    print(f"wrote {args.out}/report.md, report.html, scorecard.tex and results.json", file=sys.stderr)
    return 0
