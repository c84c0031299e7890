"""The command line every experiment script shares: ``--help`` shows its docstring and says where it
writes, ``--out`` writes elsewhere, and an unknown argument is refused (exit status 2) instead of
running the experiment."""

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
