"""The ``htb-jax`` command line."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import tomllib

import jax

import htb_jax  # noqa: F401  (enables x64 before anything is traced)
from htb_jax._src import distributed, resumable
from htb_jax._src import frontier as frontier_lib
from htb_jax._src import sweep as sweep_lib
from htb_jax._src.simulate.fast_path import SAMPLERS


def _number(token: str) -> float | int:
    """``"0.8"``, ``"2/3"``, ``"1e6"`` or ``"1000"`` as a number (an int where the token is one)."""
    t = token.strip()
    try:
        if "/" in t:
            num, den = t.split("/")
            den_value = float(den)
            if den_value == 0.0:
                raise argparse.ArgumentTypeError(f"division by zero in {token!r}")
            return float(num) / den_value
        try:
            return int(t)
        except ValueError:
            return float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {token!r} (e.g. 0.8, 2/3 or 1e6)") from None


def _numbers(text: str) -> tuple[float | int, ...]:
    """Comma-separated numbers, at least one; ranges are checked by the configuration's ``validate``."""
    tokens = [t for t in text.split(",") if t.strip()]
    if not tokens:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, at least one; got {text!r}")
    return tuple(_number(t) for t in tokens)


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in _numbers(text))


def _integral(x: float | int) -> float | int:
    """An integral float as an int; anything else as it is (for ``validate`` to refuse)."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def _ints(text: str) -> tuple[float | int, ...]:
    """Comma-separated integers (``1e6`` allowed); a fractional or infinite entry is kept for
    ``validate`` to refuse with the admissible range, never truncated."""
    return tuple(_integral(x) for x in _numbers(text))


def _int(text: str) -> float | int:
    values = _ints(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one integer; got {text!r}")
    return values[0]


_SWEEP_EPILOG = """\
examples:
  htb-jax sweep --seeds 400 --horizons 1e3,1e4,1e5,1e6,1e7 --out runs/pareto
  htb-jax sweep --family two-point --spike-prob 1e-3 --horizons 1e3,1e6,1e9,1e12 --out runs/spike
  htb-jax sweep --config sweep.toml            # the same keys in a TOML file

a TOML file holds any of these keys (flags given on the command line win):

  family = "student-t"          # pareto, student-t, gaussian or two-point
  num_arms = 10
  gap = 0.2
  df = 3.0                      # pareto_shape for pareto, spike_prob for two-point
  eps = 1.0
  alphas = ["2/3", 0.75, 0.9]
  qs = [0.0]
  horizons = [1e3, 1e4, 1e5, 1e6]
  num_seeds = 1000
  seed_chunk = 100
  key = 0
  memory_budget = "1GiB"
  out = "runs/student"

resuming: the output directory gets manifest.json (configuration, root key,
versions, devices, chunk layout and checksums) and one file per finished
chunk of seeds in chunks/. Run the same command again after an interruption
(Ctrl-C, a killed job, a crash) and it continues from the chunks on disk; a
damaged chunk file is recomputed. The final results do not depend on how often
the run was interrupted. A different configuration pointed at an existing
directory is refused: give a new --out.

outputs: sweep.csv (one row per alpha, q, T), sweep.npz (per-seed regrets and
committed arms, with the manifest), sweep.png, and the table on stdout.
Errors in the input print one line and exit with status 2.
"""

_SWEEP_KEYS = {
    # TOML key (the flag's destination): what its value must be
    "family": str,
    "num_arms": int,
    "gap": float,
    "pareto_shape": float,
    "df": float,
    "spike_prob": float,
    "eps": float,
    "alphas": "floats",
    "qs": "floats",
    "horizons": "ints",
    "num_seeds": int,
    "seed_chunk": int,
    "key": int,
    "memory_budget": "bytes",
    "out": str,
}


def _bytes(text) -> int:
    """``1073741824``, ``512MiB``, ``1GiB``, ``2e9`` or ``500MB`` as bytes."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        t = str(text).strip()
        units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "kb": 10**3, "mb": 10**6,
                 "gb": 10**9, "tb": 10**12, "b": 1}
        factor = 1
        for unit, size in units.items():
            if t.lower().endswith(unit):
                t, factor = t[: -len(unit)].strip(), size
                break
        try:
            value = float(t) * factor
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of bytes: {text!r} (e.g. 512MiB, 2GiB)") from None
    if not math.isfinite(value) or value != math.floor(value):
        raise argparse.ArgumentTypeError(f"not a whole number of bytes: {text!r}")
    return int(value)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (and exit status 2), like every other input error."""

    def error(self, message):
        self.exit(2, f"htb-jax: error: {message} (see '{self.prog} --help')\n")


def _sweep_parser(sub) -> None:
    d = sweep_lib.SweepConfig()
    p = sub.add_parser(
        "sweep",
        help="AdaR-ETC regret over an (alpha, q) grid and horizons; resumable",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Simulate AdaR-ETC (Algorithm 1) over a grid of (alpha, q) and horizons T on one instance\n"
            "(equal-gap Pareto, Student-t or Gaussian arms, or Theorem 1's two-point instance), print\n"
            "mean regret with standard errors, and write the results to the output directory, chunk of\n"
            "seeds by chunk of seeds, so that an interrupted run resumes where it stopped. With no flags\n"
            "it runs an embedded default."
        ),
        epilog=_SWEEP_EPILOG,
    )
    unset = argparse.SUPPRESS
    p.add_argument("--config", metavar="FILE.toml", default=None, help="read settings from a TOML file (keys below; flags win)")
    p.add_argument("--family", default=unset, help=(
        f"arm distribution: {', '.join(sweep_lib.FAMILIES)}, or MODULE:EXPRESSION, one arm's law of one's own "
        f"(e.g. 'mylaws:TwoSidedLomax(0.0, 1.0, 1.8)', MODULE from the current directory) (default {d.family})"))
    p.add_argument("--arms", dest="num_arms", type=int, default=unset, help=f"number of arms K (default {d.num_arms})")
    p.add_argument("--gap", type=float, default=unset, help=f"gap Delta (default {d.gap})")
    p.add_argument("--pareto-shape", type=float, default=unset, help=f"Pareto tail index, > 1+eps (default {d.pareto_shape})")
    p.add_argument("--df", type=float, default=unset, help=f"Student-t degrees of freedom, > 1+eps (default {d.df})")
    p.add_argument("--spike-prob", type=float, default=unset, help=f"two-point spike probability in (0, 1] (default {d.spike_prob})")
    p.add_argument("--eps", type=float, default=unset, help=f"tail exponent of the schedules, in (0, 1] (default {d.eps:g})")
    p.add_argument("--alphas", type=_floats, default=unset, help="comma-separated alphas, fractions allowed (default 2/3,0.75,0.85,0.95)")
    p.add_argument("--qs", type=_floats, default=unset, help="comma-separated qs (default 0,1/3)")
    p.add_argument("--horizons", type=_ints, default=unset, help="comma-separated horizons (default 1e3,1e4,1e5,1e6)")
    p.add_argument("--seeds", dest="num_seeds", type=int, default=unset, help=f"seeds per grid point (default {d.num_seeds})")
    p.add_argument("--seed-chunk", type=int, default=unset, help=f"seeds per chunk: progress and resume unit (default {d.seed_chunk})")
    p.add_argument("--key", type=int, default=unset, help=f"root random key (default {d.key})")
    p.add_argument("--memory-budget", type=_bytes, default=unset, help="bytes per device per call, e.g. 512MiB (default: 2GiB on CPU, half a GPU's memory)")
    p.add_argument("--out", default=unset, help="output directory (default htb-jax-sweep)")
    distributed.add_arguments(p)


def _read_toml(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ValueError(f"cannot read the configuration file {path!r}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path} is not valid TOML: {e}") from None
    settings = {}
    for name, value in data.items():
        kind = _SWEEP_KEYS.get(name)
        if kind is None:
            raise ValueError(f"unknown key {name!r} in {path} (known: {', '.join(_SWEEP_KEYS)})")
        try:
            if kind in ("floats", "ints"):
                values = value if isinstance(value, list) else [value]
                if not values or any(isinstance(v, bool) or not isinstance(v, (int, float, str)) for v in values):
                    raise TypeError
                if kind == "floats":
                    settings[name] = tuple(x for v in values for x in (_floats(v) if isinstance(v, str) else (float(v),)))
                else:
                    settings[name] = tuple(_integral(x) for v in values for x in (_ints(v) if isinstance(v, str) else (v,)))
            elif kind == "bytes":
                settings[name] = _bytes(value)
            elif kind is str:
                if not isinstance(value, str):
                    raise TypeError
                settings[name] = value
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError
                if kind is int and value != int(value):
                    raise ValueError
                settings[name] = kind(value)
        except (TypeError, ValueError, argparse.ArgumentTypeError):
            what = {"floats": "a non-empty list of numbers", "ints": "a non-empty list of integers",
                    "bytes": "a number of bytes",
                    str: "a string", int: "an integer", float: "a number"}[kind]
            raise ValueError(f"{name} in {path} must be {what}; got {value!r}") from None
    return settings


def _frontier_parser(sub) -> None:
    d = frontier_lib.TFrontierConfig()
    p = sub.add_parser(
        "frontier",
        help="measured T-frontier of AdaR-ETC next to Theorem 1 (the main job)",
        description=(
            "Measure AdaR-ETC's distribution-free exponent d (worst case over Theorem 1's two-point "
            "family of the regret normalized by U_eps) and distribution-dependent exponent c (one fixed "
            "instance) for a grid of alpha at several eps, with bootstrap intervals; print the "
            "measured-vs-theory table and write frontier.png, frontier.csv, table.md and runs.npz. "
            "With no flags it runs an embedded default (about 6 s on a 2-core CPU); raise "
            "--seeds, --horizons and --alphas-per-eps on a GPU. Every finished chunk of seeds is "
            "stored in --out with a manifest: the same command, killed and started again, resumes; "
            "another configuration needs another --out."
        ),
    )
    p.add_argument("--eps", type=_floats, default=None, help="comma-separated eps values (default 1,0.5,0.25; with --family stable 0.5,0.25)")
    p.add_argument("--alphas-per-eps", type=int, default=d.alphas_per_eps, help="alpha grid size per eps, from alpha*(eps) to --max-alpha (default %(default)s)")
    p.add_argument("--max-alpha", type=float, default=d.max_alpha, help="largest alpha (default %(default)s)")
    p.add_argument("--horizons", type=_ints, default=None, help="comma-separated horizons (default 1e3,1e4,...,1e15; with --policy the checkpoints of a run to 1e4, ten per decade)")
    p.add_argument("--fit-from", type=_int, default=None, help="smallest horizon in the fits (default 1e9; with --policy 1e3)")
    p.add_argument("--seeds", type=int, default=None, help=f"seeds (default {d.num_seeds}; with --policy {_POLICY_SEEDS})")
    p.add_argument("--seed-chunk", type=int, default=d.seed_chunk, help="seeds per compiled call (default %(default)s)")
    p.add_argument("--key", type=int, default=d.key, help="root random key (default %(default)s)")
    p.add_argument("--out", default="htb-jax-frontier", help="output directory (default %(default)s)")
    p.add_argument(
        "--family", choices=("two-point", "stable"), default="two-point",
        help="the worst-case family: Theorem 1's two-point family, or symmetric alpha-stable arms with gaps on a "
        "log grid (d theory max(beta, 1 - beta (a-1)/a), c on a fixed stable instance whose commits fail with positive "
        "probability; horizons by default 1e3..1e18) (default %(default)s)",
    )
    p.add_argument("--stable-alpha", type=float, default=None,
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
        "is on the path) and EXPRESSION evaluated in its namespace, e.g. 'mypolicies:MyUCB(c=2.0)'; "
        "writes measure.png, measure.csv and table.md",
    )
    p.add_argument(
        "--anytime", choices=("auto", "yes", "no"), default="auto",
        help="with --policy: read one run at checkpoints (yes) or run per horizon (no); auto: checkpoints for "
        "the built-ins that never read T, per horizon otherwise (default %(default)s)",
    )
    distributed.add_arguments(p)


_POLICY_SEEDS = 32
_STABLE = frontier_lib.StableFamily()
_STABLE_EPS = (0.5, 0.25)
_STABLE_HORIZONS = tuple(10**e for e in range(3, 19))
_POLICY_HORIZON = 10**4


def load_policy(spec: str):
    """The policy ``'module:expression'`` names (:func:`~htb_jax._src.user_code.load`).

    Raises:
      ValueError: one line, when the module cannot be imported, the expression fails, or its value is
        not a policy instance (an object with ``kernel(spec)`` and ``batch_shape``).
    """
    from htb_jax._src import user_code
    from htb_jax._src.validation import check_policy_instance

    policy = user_code.load(spec, "--policy", "mypolicies:MyUCB()")
    try:
        check_policy_instance("policy", policy, "--policy")
    except TypeError as e:
        raise ValueError(str(e)) from None
    return policy


def _run_policy(args) -> int:
    """``htb-jax frontier --policy``: one policy's ``(d, c)`` on Theorem 1's family, resumable in ``--out``."""
    policy = load_policy(args.policy)
    fit_from = 1000 if args.fit_from is None else args.fit_from
    horizons = (
        list(frontier_lib.checkpoint_horizons(_POLICY_HORIZON, fit_from)) if args.horizons is None
        else list(args.horizons)
    )
    seeds = _POLICY_SEEDS if args.seeds is None else args.seeds
    _check_output_dir(args.out)
    anytime = {"auto": None, "yes": True, "no": False}[args.anytime]
    name = args.policy.split(":", 1)[1].strip()
    print(
        f"{name}: d and c on Theorem 1's two-point family at eps in {list(args.eps)}; T in {horizons[0]}..{horizons[-1]} "
        f"({len(horizons)} horizons); {seeds} seeds in chunks of {args.seed_chunk}; output in {args.out}",
        file=sys.stderr,
    )
    if jax.process_index() == 0:
        _output_dir(args.out)
    measurements = frontier_lib.measure(
        policy, args.eps, [int(h) for h in horizons], seeds, key=args.key, anytime=anytime,
        seed_chunk=args.seed_chunk, store=args.out, name=name, progress=True,
    )
    resumed = measurements[0].resumed_chunks
    if resumed:
        print(f"resumed: {resumed} chunks read back from {args.out}", file=sys.stderr)
    table = frontier_lib.measurement_table(measurements)
    print(table)
    if jax.process_index() != 0:
        return 0
    paths = {n: os.path.join(args.out, n) for n in ("measure.png", "measure.csv", "table.md")}
    frontier_lib.plot_measurements(measurements, paths["measure.png"], title=f"{name} on Theorem 1's frontier")
    frontier_lib.write_csv([m.row() for m in measurements], paths["measure.csv"])
    with open(paths["table.md"], "w") as f:
        f.write(table + "\n")
    print(f"\nwrote {', '.join(paths.values())}", file=sys.stderr)
    return 0


def _check_output_dir(path: str) -> None:
    """``ValueError`` unless ``path`` is a writable directory or one that can be created; leaves nothing behind."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"the output directory must be a path; got out={path!r}.")
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise ValueError(f"cannot create the output directory {path!r}: it is a file")
        if not os.access(path, os.W_OK | os.X_OK):
            raise ValueError(f"the output directory {path!r} is not writable.")
        _try_output_dir(path)
        return
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"cannot create the output directory {path!r}: {parent!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot create the output directory {path!r}: {parent!r} is not writable")
    _try_output_dir(path)


def _try_output_dir(path: str) -> None:
    """``ValueError`` where ``path`` cannot be created or written, found by trying: the missing
    directories and one file in ``path`` are made and removed again.

    ``os.access`` answers for the permissions alone: a root user may "write" anywhere, also where
    nothing can be created (``/proc/x``) or on a read-only mount.  Under ``jax.distributed`` only
    process 0, which writes the results, tries.
    """
    if jax.process_index() != 0:
        return
    missing = []
    parent = os.path.abspath(path)
    while not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    created = []
    try:
        for directory in reversed(missing):
            os.mkdir(directory)
            created.append(directory)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".htb-jax-write-test-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        if missing and len(created) < len(missing):
            raise ValueError(f"cannot create the output directory {path!r}: {e.strerror}") from None
        raise ValueError(f"the output directory {path!r} is not writable ({e.strerror}).") from None
    finally:
        for directory in reversed(created):
            try:
                os.rmdir(directory)
            except OSError:
                pass


def _output_dir(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the output directory {path!r}: {e.strerror}") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"the output directory {path!r} is not writable.")


def _run_frontier(args) -> int:
    stable = args.family == "stable"
    if args.eps is None:
        args.eps = _STABLE_EPS if stable else frontier_lib.TFrontierConfig().eps_values
    if not stable and args.stable_alpha is not None:
        raise ValueError("--stable-alpha is for --family stable.")
    if args.policy is not None:
        if stable:
            raise ValueError("--family stable runs AdaR-ETC's schedules; --policy measures on the two-point family.")
        if args.sampler != "auto":
            raise ValueError("--sampler is for AdaR-ETC's schedules; --policy measures with simulate's default.")
        return _run_policy(args)
    d = frontier_lib.TFrontierConfig()
    family = d.family
    if stable:
        family = frontier_lib.StableFamily(index=_STABLE.index if args.stable_alpha is None else args.stable_alpha)
    config = frontier_lib.TFrontierConfig(
        eps_values=args.eps,
        alphas_per_eps=args.alphas_per_eps,
        max_alpha=args.max_alpha,
        horizons=(_STABLE_HORIZONS if stable else d.horizons) if args.horizons is None else args.horizons,
        fit_from=d.fit_from if args.fit_from is None else args.fit_from,
        num_seeds=d.num_seeds if args.seeds is None else args.seeds,
        seed_chunk=args.seed_chunk,
        key=args.key,
        family=family,
        sampler=args.sampler,
    )
    # Everything is checked before anything is printed or written (the directory first: it is quick).
    _check_output_dir(args.out)
    config.validate()
    layout = resumable.seed_chunks(config.num_seeds, config.seed_chunk)
    resumable.read_manifest(args.out, frontier_lib.frontier_identity(config), resumable.root_key_data(config.key), layout)
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
        f"{config.num_seeds} seeds in {len(layout)} chunks; output in {args.out}",
        file=sys.stderr,
    )
    if jax.process_index() == 0:  # under jax.distributed, process 0 writes
        _output_dir(args.out)
    result = frontier_lib.run_t_frontier(config, out_dir=args.out)
    if result.runs.resumed_chunks:
        print(f"resumed: {result.runs.resumed_chunks} of {len(layout)} chunks read back from {args.out}", file=sys.stderr)
    table = frontier_lib.t_frontier_table(result)
    print(table)
    paths = {name: os.path.join(args.out, name) for name in ("frontier.png", "frontier.csv", "table.md", "runs.npz")}
    if jax.process_index() != 0:
        return 0
    frontier_lib.plot_t_frontier(result, paths["frontier.png"])
    frontier_lib.write_csv(result.rows, paths["frontier.csv"])
    frontier_lib.save_runs(result.runs, paths["runs.npz"])
    with open(paths["table.md"], "w") as f:
        f.write(table + "\n")
    print(f"\n{result.runs.seconds:.1f} s (compilation included); wrote {', '.join(paths.values())}", file=sys.stderr)
    return 0


def _run_sweep(args) -> int:
    settings = _read_toml(args.config) if args.config else {}
    flags = {k: v for k, v in vars(args).items() if k not in ("command", "config", *distributed.FLAGS)}
    settings.update(flags)  # flags win over the file
    out = settings.pop("out", "htb-jax-sweep")
    config = sweep_lib.SweepConfig(**settings)
    # Everything is checked before anything is printed or written (the directory first: it is quick).
    _check_output_dir(out)
    config.validate()
    resumable.read_manifest(out, config.identity(), resumable.root_key_data(config.key), config.chunks())
    print(
        f"AdaR-ETC sweep: {config.describe()}; eps={config.eps:g}; {len(config.alphas)}x{len(config.qs)} "
        f"(alpha, q) grid; T in {list(config.horizons)}; {config.num_seeds} seeds in "
        f"{len(config.chunks())} chunks; output in {out}",
        file=sys.stderr,
    )
    if jax.process_index() == 0:  # under jax.distributed, process 0 writes
        _output_dir(out)
    result = sweep_lib.run_sweep(config, out_dir=out)
    if result.resumed_chunks:
        print(f"resumed: {result.resumed_chunks} of {len(config.chunks())} chunks read back from {out}", file=sys.stderr)
    rows = sweep_lib.table_rows(result)
    print(sweep_lib.format_table(rows))
    paths = {name: os.path.join(out, name) for name in ("sweep.csv", "sweep.npz", "sweep.png")}
    if jax.process_index() != 0:
        return 0
    with open(os.path.join(out, resumable.MANIFEST)) as f:
        manifest = json.load(f)
    sweep_lib.write_csv(rows, paths["sweep.csv"])
    sweep_lib.save_npz(result, paths["sweep.npz"], manifest)
    sweep_lib.plot(result, paths["sweep.png"])
    print(f"\n{result.seconds:.1f} s (compilation included); wrote {', '.join(paths.values())}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = _Parser(
        prog="htb-jax",
        description="htb_jax: simulate heavy-tailed bandits and the AdaR-ETC regret frontier.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _frontier_parser(sub)
    _sweep_parser(sub)
    args = parser.parse_args(argv)
    if args.command is None:  # usage errors are one line on stderr, status 2
        print("htb-jax: error: give a command: frontier (the T-frontier, the main job) or sweep "
              "(see 'htb-jax --help')", file=sys.stderr)
        return 2
    try:
        # Joining the other processes comes first: checking a configuration already uses the devices.
        if distributed.check_arguments(args.coordinator, args.num_processes, args.process_id):
            distributed.initialize(args.coordinator, args.num_processes, args.process_id)
        return _run_frontier(args) if args.command == "frontier" else _run_sweep(args)
    except (ValueError, TypeError, OSError) as e:
        message = f"{e.filename or ''}: {e.strerror or e}" if isinstance(e, OSError) else str(e)
        print(f"htb-jax: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
