"""``htb-jax frontier``: AdaR-ETC's measured T-frontier next to Theorem 1 (two-point or
alpha-stable family), or one policy's ``(d, c)`` with ``--policy``; resumable in its output directory."""

from __future__ import annotations

import math
import sys

import jax
import numpy as np

from htb_jax._src import chunk_store, distributed, resumable, user_code
from htb_jax._src import frontier as frontier_lib
from htb_jax._src.cli.arguments import flag_names, floats, integer, ints, real
from htb_jax._src.cli.background_import import import_matplotlib_meanwhile
from htb_jax._src.cli.output_files import add_restart_argument, write_text, write_together
from htb_jax._src.frontier import t_frontier
from htb_jax._src.frontier.fits import _fit_mask
from htb_jax._src.frontier.measure import (
    open_measure_store,
    per_member_runs,
    plan_measure,
    run_measure,
)
from htb_jax._src.output_dir import check_output_dir, make_output_dir
from htb_jax._src.protocol_checks import check_policy_factory, check_policy_instance, is_policy_factory
from htb_jax._src.simulate.fast_path import SAMPLERS
from htb_jax._src.validation import check_increasing, check_integer

_POLICY_SEEDS = 32
_STABLE = frontier_lib.StableFamily()
_STABLE_EPS = (0.5, 0.25)
_STABLE_HORIZONS = tuple(10**e for e in range(3, 19))
_POLICY_HORIZON = 10**4
# The library's argument -> the flag that sets it (for error messages)
_FLAGS = {
    "eps_values": "--eps", "eps": "--eps", "alphas_per_eps": "--alphas-per-eps", "max_alpha": "--max-alpha",
    "horizons": "--horizons", "fit_from": "--fit-from", "num_seeds": "--seeds", "seed_chunk": "--seed-chunk",
    "key": "--key", "sampler": "--sampler", "index": "--stable-alpha", "out": "--out", "policy": "--policy",
    "family": "--family",
}


def load_policy(spec: str):
    """The policy ``'module:expression'`` names (:func:`~htb_jax._src.user_code.load`): a policy
    instance, or a function ``member -> policy`` (a policy told each member's own parameter, called
    here on every member of the family ``measure`` runs, so that its failures come before the run).

    Raises:
      ValueError: one line, when the module cannot be imported, the expression fails, its value is
        neither a policy instance (an object with ``kernel(spec)`` and ``batch_shape``) nor such a
        function, or the function fails on a member.
    """
    policy = user_code.load(spec, "--policy", "mypolicies:MyUCB()")
    if is_policy_factory(policy):
        try:  # a function of (eps, u), htb-jax bench's form, named by its signature before it is called
            check_policy_factory("--policy", policy, "htb-jax frontier", "member")
        except TypeError as e:
            raise ValueError(str(e)) from None
        try:
            per_member_runs(policy, frontier_lib.SpikeFamily().instances())
        except Exception as e:  # noqa: BLE001  (any failure of a user's function is one line)
            expression = user_code.parts(spec)[1]
            raise ValueError(
                f"--policy: {expression!r}, a function member -> policy, failed on the family's members: "
                f"{type(e).__name__}: {e}"
            ) from None
        return policy
    try:
        check_policy_instance("--policy", policy, "htb-jax frontier")
    except TypeError as e:
        raise ValueError(str(e)) from None
    return policy


def run_policy(args) -> int:
    """``htb-jax frontier --policy``: one policy's ``(d, c)`` on Theorem 1's family, resumable in ``--out``."""
    policy = load_policy(args.policy)
    fit_from = 1000 if args.fit_from is None else args.fit_from
    horizons = (
        list(frontier_lib.checkpoint_horizons(_POLICY_HORIZON, fit_from)) if args.horizons is None
        else list(args.horizons)
    )
    if args.horizons is not None and args.fit_from is not None:  # the fits from --fit-from on, as without --policy
        given = np.asarray(horizons)
        horizons = given[_fit_mask(given, fit_from)].tolist()
    seeds = _POLICY_SEEDS if args.seeds is None else args.seeds
    check_output_dir(args.out)
    anytime = {"auto": None, "yes": True, "no": False}[args.anytime]
    name = user_code.parts(args.policy)[1]
    plan = plan_measure(  # every argument checked before anything is printed
        policy, args.eps, [int(h) for h in horizons], seeds, key=args.key, anytime=anytime,
        seed_chunk=args.seed_chunk, store=args.out, restart=args.restart, name=name, progress=True,
        checkpoints_remedy="give --horizons among them (without it, they are the checkpoints from --fit-from to "
        f"{_POLICY_HORIZON}), or --anytime no",
    )
    # The kernel and the law checked, the program traced (nothing compiled) and the store read.
    store = open_measure_store(plan, chunk_store.CLI_REMEDY)
    chunks = -(-seeds // plan.seed_chunk)
    print(
        f"{name}: d and c on Theorem 1's two-point family at eps in {list(args.eps)}; T in {horizons[0]}..{horizons[-1]} "
        f"({len(horizons)} horizons); {seeds} seeds in {chunks} chunk{'s' * (chunks > 1)}; output in {args.out}",
        file=sys.stderr,
    )
    if jax.process_index() == 0:
        make_output_dir(args.out)
        figure_imports = import_matplotlib_meanwhile()
    measurements = run_measure(plan, store)
    resumed = measurements[0].resumed_chunks
    if resumed:
        print(f"resumed: {resumed} of {len(store.layout)} chunks read back from {args.out}", file=sys.stderr)
    table = frontier_lib.measurement_table(measurements)
    print(table)
    if jax.process_index() != 0:
        return 0
    figure_imports.join()
    paths = write_together(args.out, {
        "measure.png": lambda path: frontier_lib.plot_measurements(measurements, path,
                                                                   title=f"{name} on Theorem 1's frontier"),
        "measure.csv": lambda path: frontier_lib.write_csv([m.row() for m in measurements], path),
        "table.md": write_text(table + "\n"),
    })
    seconds = measurements[0].seconds  # NaN where every chunk was read back
    spent = "every chunk read back" if math.isnan(seconds) else f"{seconds:.1f} s (compilation included)"
    print(f"\n{spent}; wrote {', '.join(paths.values())}", file=sys.stderr)
    return 0


def add_frontier_parser(sub) -> None:
    d = frontier_lib.TFrontierConfig()
    p = sub.add_parser(
        "frontier",
        help="measured T-frontier of AdaR-ETC next to Theorem 1 (the main job)",
        description=(
            "Measure AdaR-ETC's distribution-free exponent d (worst case over Theorem 1's two-point "
            "family of the regret normalized by U_eps) and distribution-dependent exponent c (one fixed "
            "instance) for a grid of alpha at several eps, with bootstrap intervals; print the "
            "measured-vs-theory table and write frontier.png, frontier.csv, table.md and runs.npz. "
            "With no flags it runs an embedded default (docs/getting-started/main-job.md gives its time); raise "
            "--seeds, --horizons and --alphas-per-eps on a GPU. Every finished chunk of seeds is "
            "stored in --out with a manifest: the same command, interrupted (Ctrl-C, a killed job) "
            "and started again, resumes; another configuration, or chunks another program computed "
            "(a policy's or htb_jax's code, or htb_jax's, jax's or jaxlib's version, changed), needs "
            "another --out or --restart."
        ),
    )
    p.add_argument("--eps", type=floats, default=None, help="comma-separated eps values (default 1,0.5,0.25; with --family stable 0.5,0.25)")
    p.add_argument("--alphas-per-eps", type=integer, default=None, help=f"alpha grid size per eps, from alpha*(eps) to --max-alpha (default {d.alphas_per_eps}; not with --policy)")
    p.add_argument("--max-alpha", type=real, default=None, help=f"largest alpha (default {d.max_alpha}; not with --policy)")
    p.add_argument("--horizons", type=ints, default=None, help="comma-separated increasing horizons (default 1e3,1e4,...,1e15; with --policy the checkpoints of a run to 1e4, ten per decade)")
    p.add_argument("--fit-from", type=integer, default=None, help="smallest horizon in the fits (default 1e9; with --policy 1e3, where the "
                   "checkpoints start; with --policy and --horizons, the horizons below it are not run)")
    p.add_argument("--seeds", type=integer, default=None, help=f"seeds (default {d.num_seeds}; with --policy {_POLICY_SEEDS})")
    p.add_argument("--seed-chunk", type=integer, default=None, help=f"seeds per compiled call, the resume unit (default "
                   f"{t_frontier.CPU_SEED_CHUNK} on a CPU, {resumable.CPU_SEED_CHUNK} with --policy; every seed up to "
                   f"{resumable.ACCELERATOR_SEED_CHUNK} off a CPU)")
    p.add_argument("--key", type=integer, default=d.key, help="root random key (default %(default)s)")
    p.add_argument("--out", default="htb-jax-frontier", help="output directory (default %(default)s)")
    p.add_argument(
        "--family", choices=("two-point", "stable"), default="two-point",
        help="the worst-case family: Theorem 1's two-point family, or symmetric alpha-stable arms with gaps on a "
        "log grid (d theory max(beta, 1 - beta (a-1)/a), c on a fixed stable instance whose commits fail with positive "
        "probability; horizons by default 1e3..1e18) (default %(default)s)",
    )
    p.add_argument("--stable-alpha", type=real, default=None,
                   help=f"with --family stable: the arms' stability index a in (1, 2], above 1 + eps for every eps "
                   f"(default {_STABLE.index:g})")
    p.add_argument(
        "--sampler", choices=SAMPLERS, default="auto",
        help="how the schedules' estimates are drawn (simulate's sampler): with --family stable, order_statistic "
        "draws each as one order statistic, the same law as the default block sums at a cost that does not grow "
        "with T (default %(default)s)",
    )
    p.add_argument(
        "--policy", metavar="MODULE:EXPRESSION", default=None,
        help="measure this policy instead of AdaR-ETC's schedules: MODULE is imported (the current directory "
        "is on the path) and EXPRESSION evaluated in its namespace, e.g. 'mypolicies:MyUCB(c=2.0)', or a "
        "function member -> policy told each member's own parameter, e.g. 'mypolicies:told_u'; "
        "writes measure.png, measure.csv and table.md",
    )
    p.add_argument(
        "--anytime", choices=("auto", "yes", "no"), default="auto",
        help="with --policy: read one run at checkpoints (yes) or run per horizon (no); auto: as the policy "
        "declares in its class attribute anytime (True: it never reads T), per horizon where it declares "
        "nothing (default %(default)s)",
    )
    add_restart_argument(p, "the manifest and the chunks stored in --out")
    distributed.add_arguments(p)


def run_frontier(args) -> int:
    try:
        with flag_names(_FLAGS):
            return _run_frontier(args)
    except ValueError as e:  # the budget is no flag here: what the user can change is the chunk, or one seed's runs
        if type(e) is ValueError and str(e).startswith("memory_budget must be at least"):
            fewer = "--horizons" if args.policy is not None else "--horizons, --eps or --alphas-per-eps"
            raise ValueError(f"{str(e).removesuffix('.')}: the budget of one chunk of seeds, simulated at once; "
                             f"give a smaller --seed-chunk, or fewer {fewer}.") from None
        if type(e) is ValueError and "eps_values or alphas_per_eps" in str(e):  # the grid's results, by flag
            raise ValueError(str(e).replace("eps_values or alphas_per_eps", "--eps or --alphas-per-eps")) from None
        raise


def _run_frontier(args) -> int:
    stable = args.family == "stable"
    if args.eps is None:
        args.eps = _STABLE_EPS if stable else frontier_lib.TFrontierConfig().eps_values
    if not stable and args.stable_alpha is not None:
        raise ValueError("--stable-alpha is for --family stable.")
    if args.horizons is not None:  # before anything reads them: --policy's int() truncated 1000.5 to 1000, and
        # the default --fit-from's check named itself for horizons that were out of order
        check_integer("horizons", list(args.horizons), 1, maximum=10**18)
        check_increasing("horizons", list(args.horizons))
    if args.policy is not None:
        if stable:
            raise ValueError("--family stable runs AdaR-ETC's schedules; --policy measures on the two-point family.")
        if args.sampler != "auto":
            raise ValueError("--sampler is for AdaR-ETC's schedules; --policy measures with simulate's default.")
        for flag, value in (("--alphas-per-eps", args.alphas_per_eps), ("--max-alpha", args.max_alpha)):
            if value is not None:
                raise ValueError(f"{flag} sets AdaR-ETC's grid of schedules; --policy measures the one policy it names.")
        return run_policy(args)
    if args.anytime != "auto":
        raise ValueError("--anytime is for --policy: the T-frontier runs AdaR-ETC's schedules at each horizon.")
    d = frontier_lib.TFrontierConfig()
    if args.fit_from is None and args.horizons is not None and sum(t >= d.fit_from for t in args.horizons) < 2:
        raise ValueError(f"the fits start at the default --fit-from={d.fit_from:.0e}, and --horizons={list(args.horizons)} "
                         f"has fewer than two from there: give --fit-from too")
    family = d.family
    if stable:
        family = frontier_lib.StableFamily(index=_STABLE.index if args.stable_alpha is None else args.stable_alpha)
    config = frontier_lib.TFrontierConfig(
        eps_values=args.eps,
        alphas_per_eps=d.alphas_per_eps if args.alphas_per_eps is None else args.alphas_per_eps,
        max_alpha=d.max_alpha if args.max_alpha is None else args.max_alpha,
        horizons=(_STABLE_HORIZONS if stable else d.horizons) if args.horizons is None else args.horizons,
        fit_from=d.fit_from if args.fit_from is None else args.fit_from,
        num_seeds=d.num_seeds if args.seeds is None else args.seeds,
        seed_chunk=args.seed_chunk,
        key=args.key,
        family=family,
        sampler=args.sampler,
    )
    # Everything is checked before anything is printed or written (the directory first: it is quick).
    check_output_dir(args.out)
    config.validate()
    layout = resumable.seed_chunks(config.num_seeds, config.chunk)
    store = t_frontier.open_store(config, args.out, args.restart)  # its program traced, nothing compiled
    fam = config.family
    members = (
        f"{fam.num_members} stable instances (K={fam.num_arms}, index {fam.index:g}, gap "
        f"{min(fam.gaps):g}..{max(fam.gaps):g})" if stable else
        f"{len(fam.spike_probs)} two-point instances (K={fam.num_arms}, spike probability "
        f"{min(fam.spike_probs):g}..{max(fam.spike_probs):g})"
    )
    print(
        f"AdaR-ETC T-frontier: eps in {list(config.eps_values)}, {config.alphas_per_eps} alphas each; "
        f"worst case over {members}; T = {min(config.horizons):.0e}..{max(config.horizons):.0e}; "
        f"{config.num_seeds} seeds in {len(layout)} chunk{'s' * (len(layout) > 1)}; output in {args.out}",
        file=sys.stderr,
    )
    if jax.process_index() == 0:  # under jax.distributed, process 0 writes
        make_output_dir(args.out)
        figure_imports = import_matplotlib_meanwhile()
    result = t_frontier.run_with_store(config, store)
    if result.runs.resumed_chunks:
        print(f"resumed: {result.runs.resumed_chunks} of {len(layout)} chunks read back from {args.out}", file=sys.stderr)
    table = frontier_lib.t_frontier_table(result)
    print(table)
    if jax.process_index() != 0:
        return 0
    figure_imports.join()
    paths = write_together(args.out, {
        "frontier.png": lambda path: frontier_lib.plot_t_frontier(result, path),
        "frontier.csv": lambda path: frontier_lib.write_csv(result.rows, path),
        "table.md": write_text(table + "\n"),
        "runs.npz": lambda path: frontier_lib.save_runs(result.runs, path),
    })
    spent = ("every chunk read back" if result.runs.resumed_chunks == len(layout)
             else f"{result.runs.seconds:.1f} s (compilation included)")
    print(f"\n{spent}; wrote {', '.join(paths.values())}", file=sys.stderr)
    return 0
