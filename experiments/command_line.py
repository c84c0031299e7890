"""The command line every experiment script shares: ``--help`` shows its docstring and says where it
writes, ``--out`` writes elsewhere, and an unknown argument is refused (exit status 2) instead of
running the experiment; an option that reads a recorded file from ``--out`` (``--refit``, ``--replot``)
is refused the same way where that file is missing."""

import argparse
import pathlib


def parser(doc: str, out: pathlib.Path) -> argparse.ArgumentParser:
    """An argument parser for a script whose module docstring is ``doc`` and that writes into ``out``
    unless ``--out`` names another folder (``args.out``, a ``pathlib.Path``)."""
    recorded = f"{out.parent.name}/{out.name}/"
    parser = argparse.ArgumentParser(
        description=doc,
        epilog=f"writes into --out, by default {recorded}, replacing the results recorded there "
        "(experiments/README.md shows them)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=pathlib.Path, default=out, metavar="DIR",
                        help=f"the folder to write into, made if missing (default: {recorded})")
    return parser


def require_recorded(parser: argparse.ArgumentParser, args: argparse.Namespace, flag: str, name: str) -> None:
    """Refuses ``flag`` in one line (exit status 2), before anything is made or written, when ``--out``
    lacks the file ``name`` that ``flag`` reads there, naming the folder that holds the recorded one."""
    if not (args.out / name).is_file():
        recorded = parser.get_default("out")
        parser.error(f"{flag} reads {name} from --out; {args.out} has none (the recorded one is in "
                     f"{recorded.parent.name}/{recorded.name}/, and a run without {flag} writes it)")
