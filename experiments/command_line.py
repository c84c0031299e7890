"""The command line every experiment script shares: ``--help`` shows its docstring and says where it
writes, ``--out`` writes elsewhere, and an unknown argument is refused (exit status 2) instead of
running the experiment; so are an ``--out`` that is a file or cannot be written, a count below its
least value, and an option that reads a recorded file from ``--out`` (``--refit``, ``--replot``)
where that file is missing. Every refusal comes before anything runs or is written."""

import argparse
import math
import pathlib
import tempfile


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
    parser.add_argument("--out", type=folder, default=out, metavar="DIR",
                        help=f"the folder to write into, made if missing (default: {recorded})")
    return parser


def require_recorded(parser: argparse.ArgumentParser, args: argparse.Namespace, flag: str, name: str) -> None:
    """Refuses ``flag`` in one line (exit status 2), before anything is made or written, when ``--out``
    lacks the file ``name`` that ``flag`` reads there, naming the folder that holds the recorded one."""
    if not (args.out / name).is_file():
        recorded = parser.get_default("out")
        parser.error(f"{flag} reads {name} from --out; {args.out} has none (the recorded one is in "
                     f"{recorded.parent.name}/{recorded.name}/, and a run without {flag} writes it)")


def folder(text: str) -> pathlib.Path:
    """``--out``: a folder that exists or can be made, and can be written, checked before the run
    (the scripts write their results at its end)."""
    path = pathlib.Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a folder; {text!r} is a file")
    nearest = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if not nearest.is_dir():
        raise argparse.ArgumentTypeError(f"must be a folder that can be made; {str(nearest)!r} is a file")
    try:  # a probe that leaves nothing behind: permissions alone say nothing of read-only file systems
        tempfile.TemporaryFile(dir=nearest).close()
    except OSError as error:
        raise argparse.ArgumentTypeError(f"must be a folder that can be written; {str(nearest)!r} cannot be "
                                         f"({error.strerror})") from None
    return path


def integer(minimum: int, maximum: int | None = None):
    """An option's type: an integer of at least ``minimum`` (and at most ``maximum``), written ``5000`` or
    ``1e7``."""
    bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"

    def parse(text: str) -> int:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (minimum <= value <= (maximum or math.inf) and value.is_integer()):
            raise argparse.ArgumentTypeError(f"must be an integer {bounds} such as 5000 or 1e7; got {text!r}")
        return int(value)

    return parse
