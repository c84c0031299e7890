"""The command line's argument types: numbers, lists of numbers, byte sizes, a parser whose
usage errors are one line, and errors told in the flags' names."""

from __future__ import annotations

import argparse
import contextlib
import math
import re

from htb_jax._src.chunk_store import ForeignStoreError
from htb_jax._src.user_code import UserCodeError


def number(token: str, example: str = "0.8, 2/3 or 1e6") -> float | int:
    """``"0.8"``, ``"2/3"``, ``"1e6"`` or ``"1000"`` as a number (an int where the token is one); ``example``
    is what the refusal of another token shows."""
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
        raise argparse.ArgumentTypeError(f"not a number: {token!r} (e.g. {example})") from None


def numbers(text: str, example: str = "0.8, 2/3 or 1e6") -> tuple[float | int, ...]:
    """Comma-separated numbers, at least one; ranges are checked by the configuration's ``validate``."""
    tokens = text.split(",")
    if not text.strip() or not all(t.strip() for t in tokens):  # "0.8,,0.9" or "0.8,": an item left out
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, at least one, none empty; got {text!r}")
    return tuple(number(t, example) for t in tokens)


def floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in numbers(text))


def real(text: str) -> float:
    """One number as :func:`number` reads it (``"2/3"`` included), as a float."""
    return float(number(text))


def integral(x: float | int) -> float | int:
    """An integral float as an int; anything else as it is (for ``validate`` to refuse)."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


def ints(text: str) -> tuple[float | int, ...]:
    """Comma-separated integers (``1e6`` allowed); a fractional or infinite entry is kept for
    ``validate`` to refuse with the admissible range, never truncated."""
    return tuple(integral(x) for x in numbers(text, "5000 or 1e7"))  # (no fraction as the example of a count)


def integer(text: str) -> float | int:
    values = ints(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one integer; got {text!r}")
    return values[0]


def byte_size(text) -> int:
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
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive number of bytes: {text!r} (e.g. 512MiB, 2GiB)")
    return int(value)


class Parser(argparse.ArgumentParser):
    """Usage errors as one line (and exit status 2), like every other input error."""

    def error(self, message):
        flag = re.fullmatch(r"argument (--[\w-]+)(?:/-\w)?: expected one argument", message)
        if flag:  # argparse reads "--memory-budget -1GiB" as a flag without its value
            message += f" (a value beginning with '-' is written {flag[1]}=VALUE)"
        self.exit(2, f"htb-jax: error: {message} (see '{self.prog} --help')\n")


@contextlib.contextmanager
def flag_names(names: dict[str, str], defaults: dict[str, str] | None = None):
    """Within it, a ``TypeError`` or ``ValueError`` names the command line's flags, not the library's
    arguments: where a message names an argument of ``names`` as the library's checks do
    (``num_seeds must ...``, ``got num_seeds=0``, ``... takes a law for family; got ...``, a message
    that begins ``family: ...``), its flag
    (``--seeds``) takes its place.

    Args:
      names: library argument -> flag, e.g. ``{"num_seeds": "--seeds"}``; an argument the user did
        not give as a flag (a TOML key) is left out, so that the message names what they wrote.
      defaults: library argument -> flag, for arguments left at the flag's default: named as such
        (``got the default --memory-budget=2147483648``).
    """
    try:
        yield
    except (TypeError, ValueError) as e:
        # A user's code failed: the option it was given by is named by its flag, the rest is the user's
        # code's own message (an "eps must ..." of AdaRETC(eps=1.5) is no --eps).
        option, sep, rest = str(e).partition(": ")
        if isinstance(e, UserCodeError) and option in names:
            raise UserCodeError(f"{names[option]}{sep}{rest}") from None
        # An error class of our own keeps its own message, but for a refused store's (which names the
        # settings that differ, by the library's names).
        if type(e) not in (TypeError, ValueError) and not isinstance(e, ForeignStoreError):
            raise
        # What a user wrote and the message quotes ('TruncUCB(eps=1.0, u=2.0)', a directory 'runs/eps=1')
        # is shown as written, and so is an object's repr (AdaRETC(eps=0.5, alpha=array([0.8]), q=0.0)):
        # their names are no flags.  (An apostrophe inside a word, "family's", opens no quote.)
        parts = re.split(r"((?<!\w)'[^'\n]*'(?!\w)|\b[A-Z]\w*\((?:[^()]|\([^()]*\))*\))", str(e))
        for i in range(0, len(parts), 2):
            for name, flag in (defaults or {}).items():  # the value refused, and what must hold of it
                parts[i] = re.sub(rf"\bgot {re.escape(name)}=", f"got the default {flag}=", parts[i])
                parts[i] = re.sub(rf"(?<![\w.-]){re.escape(name)}(?= must\b)", flag, parts[i])
            for name, flag in names.items():  # also a stored run's differences: "(gap: 0.1 there, 0.2 here; ...)"
                parts[i] = re.sub(rf"(?<![\w.-]){re.escape(name)}(?= must\b|=)|(?<=\bfor ){re.escape(name)}(?=;)"
                                  rf"|(?:(?<=\()|(?<=; )){re.escape(name)}(?=: )"
                                  + (rf"|^{re.escape(name)}(?=: )" if i == 0 else ""), flag, parts[i])
        message = "".join(parts)
        if message == str(e):
            raise
        raise type(e)(message) from None
