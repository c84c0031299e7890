"""A command's output files, written together into its ``--out`` (checked and made by
:mod:`htb_jax._src.output_dir`), and its ``--restart`` flag."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from htb_jax._src.resumable import moved_into_place


def write_together(directory: str, writers: Mapping[str, Callable[[str], None]]) -> dict[str, str]:
    """Writes a command's output files into ``directory`` together (:func:`moved_into_place`):
    ``write(path)`` of each ``name -> write`` makes its file. Returns ``name -> path``."""
    with moved_into_place(directory) as scratch:
        for name, write in writers.items():
            write(os.path.join(scratch, name))
    return {name: os.path.join(directory, name) for name in writers}


def write_text(text: str) -> Callable[[str], None]:
    """A writer for :func:`write_together`: ``text`` into the file at its path."""

    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(text)
    return write


def add_restart_argument(parser, stored: str) -> None:
    """``--restart``: delete the chunks stored in ``--out`` and start again (see :mod:`htb_jax._src.chunk_store`).

    Args:
      parser: the command's parser.
      stored: what the command's ``--out`` stores of its runs, as the help names it.
    """
    parser.add_argument(
        "--restart", action="store_true",
        help=f"delete {stored}, whatever run wrote them, and compute them again; nothing else is deleted. Without it "
        "a stored run of another configuration, or chunks another program computed (a policy's, a law's or "
        "htb_jax's code changed, or htb_jax's, jax's or jaxlib's version), is refused and nothing is deleted",
    )
