"""The command line every experiment script shares: ``--help`` shows its docstring and says where it
writes, and an unknown argument is refused (exit status 2) instead of running the experiment."""

import argparse
import pathlib


def parser(doc: str, out: pathlib.Path) -> argparse.ArgumentParser:
    """An argument parser for a script whose module docstring is ``doc`` and that writes into ``out``."""
    return argparse.ArgumentParser(
        description=doc,
        epilog=f"writes into {out.parent.name}/{out.name}/, replacing the results recorded there "
        "(experiments/README.md shows them)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
