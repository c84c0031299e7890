"""``htb-jax sweep``: AdaR-ETC over an ``(alpha, q)`` grid and horizons, from flags or a TOML file,
resumable in its output directory."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import sys
import tomllib

import jax

from htb_jax._src import chunk_store, distributed, resumable, theory, user_code
from htb_jax._src import sweep as sweep_lib
from htb_jax._src.cli.arguments import byte_size, flag_names, floats, integer, integral, ints, real
from htb_jax._src.cli.background_import import import_matplotlib_meanwhile
from htb_jax._src.cli.output_files import add_restart_argument, write_together
from htb_jax._src.output_dir import check_output_dir, make_output_dir

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
directory is refused, and so are chunks another program computed (the code of
a law of one's own or htb_jax's changed, or htb_jax's, jax's or jaxlib's
version): give a new --out, or --restart to delete them and start again.

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


def add_sweep_parser(sub) -> None:
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
    p.add_argument("--config", metavar="FILE.toml", default=None,
                   help="read settings from a TOML file (keys below; flags win, and --family takes the file's "
                        "parameters of another family out)")
    p.add_argument("--family", default=unset, help=(
        f"arm distribution: {', '.join(sweep_lib.FAMILIES)}, or MODULE:EXPRESSION, one arm's law of one's own "
        f"(e.g. 'mylaws:TwoSidedLomax(loc=0.0, scale=1.0, shape=1.8)' with --eps 0.5 --alphas 0.8 --qs 0, MODULE "
        f"from the current directory) (default {d.family})"))
    p.add_argument("--arms", dest="num_arms", type=integer, default=unset, help=f"number of arms K (default {d.num_arms})")
    p.add_argument("--gap", type=real, default=unset, help=f"gap Delta (default {d.gap})")
    p.add_argument("--pareto-shape", type=real, default=unset, help=f"Pareto tail index, > 1+eps (default {d.pareto_shape})")
    p.add_argument("--df", type=real, default=unset, help=f"Student-t degrees of freedom, > 1+eps (default {d.df})")
    p.add_argument("--spike-prob", type=real, default=unset, help=f"two-point spike probability in (0, 1] (default {d.spike_prob})")
    p.add_argument("--eps", type=real, default=unset, help=f"tail exponent of the schedules, in (0, 1] (default {d.eps:g})")
    p.add_argument("--alphas", type=floats, default=unset, help="comma-separated alphas, fractions allowed (default 2/3,0.75,0.85,0.95)")
    p.add_argument("--qs", type=floats, default=unset, help="comma-separated qs (default 0,1/3)")
    p.add_argument("--horizons", type=ints, default=unset, help="comma-separated increasing horizons (default 1e3,1e4,1e5,1e6)")
    p.add_argument("--seeds", dest="num_seeds", type=integer, default=unset, help=f"seeds per grid point (default {d.num_seeds})")
    p.add_argument("--seed-chunk", type=integer, default=unset, help=(
        f"seeds per chunk: progress and resume unit (default {d.seed_chunk} on a CPU, every seed up to "
        f"{resumable.ACCELERATOR_SEED_CHUNK} off a CPU)"))
    p.add_argument("--key", type=integer, default=unset, help=f"root random key (default {d.key})")
    p.add_argument("--memory-budget", type=byte_size, default=unset, help="bytes per device per call, e.g. 512MiB (default: 2GiB on CPU, half a GPU's memory)")
    p.add_argument("--out", default=unset, help="output directory (default htb-jax-sweep)")
    add_restart_argument(p, "the manifest and the chunks stored in --out")
    distributed.add_arguments(p)


def _read_toml(path: str) -> dict:
    if not path:  # an unset shell variable (--config "$CFG") would have run the default sweep
        raise ValueError(f"--config must be the path of a TOML file; got --config={path!r}.")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ValueError(f"cannot read the configuration file {path!r}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path} is not valid TOML: {e}") from None
    except UnicodeDecodeError as e:  # TOML is UTF-8: the codec's message named neither the file nor the flag
        raise ValueError(f"{path} is not valid TOML: it must be UTF-8 text; byte {e.start} is "
                         f"{e.object[e.start:e.start + 1]!r}") from None
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
                    settings[name] = tuple(x for v in values for x in (floats(v) if isinstance(v, str) else (float(v),)))
                else:
                    settings[name] = tuple(integral(x) for v in values for x in (ints(v) if isinstance(v, str) else (v,)))
            elif kind == "bytes":
                settings[name] = byte_size(value)
            elif kind is str:
                if not isinstance(value, str):
                    raise TypeError
                settings[name] = value
            else:
                number = value
                if isinstance(value, str):  # as on the command line: "2/3", "1e3"
                    number = real(value) if kind is float else integer(value)
                if isinstance(number, bool) or not isinstance(number, (int, float)):
                    raise TypeError
                # A count that is not a whole number (1.5, inf) goes on as given, to be refused by name with
                # its range by the configuration's checks, as the same value of its flag is.
                whole = math.isfinite(number) and number == int(number)
                settings[name] = kind(number) if kind is float or whole else number
        except (TypeError, ValueError, argparse.ArgumentTypeError) as e:
            what = {"floats": "a non-empty list of numbers (fractions such as \"2/3\" allowed)",
                    "ints": "a non-empty list of integers", "bytes": "a number of bytes",
                    str: "a string", int: "an integer", float: "a number (\"2/3\" allowed)"}[kind]
            why = f" ({e})" if isinstance(e, argparse.ArgumentTypeError) else ""
            raise ValueError(f"{name} in {path} must be {what}; got {value!r}{why}") from None
    return settings


# The parameters of one built-in family each: given with another family, they would be ignored.
_FAMILY_PARAMETERS = {"pareto_shape": "pareto", "df": "student-t", "spike_prob": "two-point"}


def _check_family_parameters(settings: dict) -> None:
    """``ValueError`` for a family's parameter given (flag or file) with another family."""
    family = settings.get("family", sweep_lib.SweepConfig().family)
    if family not in sweep_lib.FAMILIES and not user_code.is_spec(family):
        return  # an unknown family: SweepConfig.validate names it
    for name, owner in _FAMILY_PARAMETERS.items():
        if name in settings and family != owner:
            raise ValueError(
                f"{name}={settings[name]:g} is for the {owner} family only; with "
                f"{'' if 'family' in settings else 'the default '}family={family!r} it would be ignored."
            )


def _check_default_grid(settings: dict) -> None:
    """``ValueError`` where the default alphas or qs (AdaR-ETC's ranges for ``eps = 1``) leave the
    range of the ``eps`` given, named as the default rather than as values the user gave."""
    if "eps" not in settings:
        return
    try:
        alphas, qs = theory.alpha_range(settings["eps"]), theory.q_range(settings["eps"])
    except (TypeError, ValueError):
        return  # SweepConfig.validate names eps
    d = sweep_lib.SweepConfig()
    if "alphas" not in settings and min(d.alphas) < alphas[0]:
        raise ValueError(
            f"eps={settings['eps']:g} admits alphas in [{alphas[0]:g}, 1), and the default alphas "
            f"{','.join(f'{a:.4g}' for a in d.alphas)} (for eps = 1) start below it: give alphas (--alphas) too."
        )
    if "qs" not in settings and max(d.qs) > qs[1]:
        raise ValueError(
            f"eps={settings['eps']:g} admits qs in [0, {qs[1]:g}], and the default qs "
            f"{','.join(f'{q:.4g}' for q in d.qs)} (for eps = 1) end above it: give qs (--qs) too."
        )


def _flag(key: str) -> str:
    """The flag that sets a TOML key (``num_seeds`` -> ``--seeds``)."""
    return {"num_arms": "--arms", "num_seeds": "--seeds"}.get(key, "--" + key.replace("_", "-"))


def run_sweep(args) -> int:
    flags = {k: v for k, v in vars(args).items() if k not in ("command", "config", "restart", *distributed.FLAGS)}
    # Errors name the flags the user gave (and, for values read from --config, the file's keys).
    names = {key: _flag(key) for key in flags}
    if "family" in flags:  # the law is simulate's instance
        names["instance"] = "--family"
    with flag_names(names):
        return _run_sweep(args, flags)


def _run_sweep(args, flags: dict) -> int:
    settings = _read_toml(args.config) if args.config is not None else {}
    from_file = [key for key in settings if key not in flags]
    try:
        return _run_settings(args, flags, settings)
    except (TypeError, ValueError) as e:
        # A range the file's value leaves (num_seeds = 1) is named as the file names it, and by the file:
        # where a key of the file is what is refused ("num_seeds must ...", "df=2 is ...", "family: ...",
        # "got num_seeds=1"), not where a message about a flag mentions one ("--alphas must ... for eps=1").
        named = any(re.match(rf"{key}(?=[ =:])", str(e)) or re.search(rf"\bgot {key}=", str(e))
                    for key in from_file)
        if type(e) in (TypeError, ValueError) and named:
            refused = type(e)(f"{args.config}: {e}")
            for note in getattr(e, "__notes__", ()):
                refused.add_note(note)
            raise refused from None
        raise


def _run_settings(args, flags: dict, settings: dict) -> int:
    file_family = settings.get("family", sweep_lib.SweepConfig().family)  # the default where the file names none
    note = None
    if "family" in flags and args.config and file_family != flags["family"]:
        # --family wins over the file's family, and the file's parameters of its family go with it (said
        # once everything is checked: a refusal is the only line printed)
        left = [f"{name} = {settings.pop(name):g}" for name, owner in _FAMILY_PARAMETERS.items()
                if name in settings and owner != flags["family"]]
        if left:
            note = (f"--family {flags['family']} overrides family = {file_family!r} of {args.config}: its "
                    f"{', '.join(left)} left out")
    settings.update(flags)  # flags win over the file
    out = settings.pop("out", "htb-jax-sweep")
    d = sweep_lib.SweepConfig()
    seeds = settings.get("num_seeds", d.num_seeds)
    whole = isinstance(seeds, (int, float)) and not isinstance(seeds, bool) and math.isfinite(seeds)
    if "seed_chunk" not in settings and whole and seeds == int(seeds) and seeds >= 1:
        # Off a CPU, every seed up to 4096 a chunk: a call costs about its latency.  Other seeds
        # (1.5, inf, NaN) are refused by name by config.validate() below.
        settings["seed_chunk"] = resumable.default_seed_chunk(int(seeds), d.seed_chunk)
    _check_family_parameters(settings)
    _check_default_grid(settings)
    # A setting neither a flag nor the file gives is named as the flag's default.
    fields = (f.name for f in dataclasses.fields(sweep_lib.SweepConfig))
    with flag_names({}, defaults={key: _flag(key) for key in fields if key not in settings}):
        return _run_config(args, settings, out, note)


def _run_config(args, settings: dict, out: str, note: str | None) -> int:
    config = sweep_lib.SweepConfig(**settings)
    # Everything is checked before anything is printed or written (the directory first: it is quick).
    check_output_dir(out)
    config.validate()
    store = sweep_lib.open_store(config, out, restart=args.restart)  # its program traced, nothing compiled
    if note is not None:
        print(note, file=sys.stderr)
    print(
        f"AdaR-ETC sweep: {config.describe()}; eps={config.eps:g}; {len(config.alphas)}x{len(config.qs)} "
        f"(alpha, q) grid; T in {list(config.horizons)}; {config.num_seeds} seeds in "
        f"{len(config.chunks())} chunk{'s' * (len(config.chunks()) > 1)}; output in {out}",
        file=sys.stderr,
    )
    if jax.process_index() == 0:  # under jax.distributed, process 0 writes
        make_output_dir(out)
        figure_imports = import_matplotlib_meanwhile()
    result = sweep_lib.run_sweep(config, store=store)
    if result.resumed_chunks:
        print(f"resumed: {result.resumed_chunks} of {len(config.chunks())} chunks read back from {out}", file=sys.stderr)
    rows = sweep_lib.table_rows(result)
    print(sweep_lib.format_table(rows))
    if jax.process_index() != 0:
        return 0
    with open(os.path.join(out, chunk_store.MANIFEST)) as f:
        manifest = json.load(f)
    figure_imports.join()
    paths = write_together(out, {
        "sweep.csv": lambda path: sweep_lib.write_csv(rows, path),
        "sweep.npz": lambda path: sweep_lib.save_npz(result, path, manifest),
        "sweep.png": lambda path: sweep_lib.plot(result, path),
    })
    spent = ("every chunk read back" if result.resumed_chunks == len(config.chunks())
             else f"{result.seconds:.1f} s (compilation included)")
    print(f"\n{spent}; wrote {', '.join(paths.values())}", file=sys.stderr)
    return 0
