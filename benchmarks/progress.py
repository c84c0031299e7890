"""One line per finished step of a benchmark on stderr, so that a long run stopped midway (a
device call's time limit) still shows which steps it finished and how long each took."""

from __future__ import annotations

import sys
import time

_START = time.perf_counter()


def note(message: str) -> None:
    """Prints ``[seconds since import] message`` to stderr at once."""
    print(f"    [{time.perf_counter() - _START:7.1f} s] {message}", file=sys.stderr, flush=True)
