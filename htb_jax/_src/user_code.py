"""A user's own policy or reward law named on the command line as ``MODULE:EXPRESSION``.

``htb-jax frontier --policy 'mypolicies:EpsilonGreedy(c=5.0)'`` and
``htb-jax sweep --family 'mylaws:TwoSidedLomax(loc=0.0, scale=1.0, shape=1.8)' --eps 0.5 --alphas 0.8 --qs 0`` import
``MODULE`` (the current directory is put on the path first) and evaluate
``EXPRESSION`` in its namespace, so a user's code runs where a built-in name
would.  Every failure is one line naming the option, the module or the
expression and the error.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from htb_jax._src.distributions import Distribution
from htb_jax._src.instances import check_instance


class UserCodeError(ValueError):
    """A user's module or expression failed: its message is the user's code's, which the command line
    does not rewrite into flag names (an ``eps must ...`` raised by ``AdaRETC(eps=1.5)`` is no ``--eps``)."""


def is_spec(value: Any) -> bool:
    """Whether ``value`` names user code: a string with a ``:`` between a module and an expression."""
    return isinstance(value, str) and ":" in value


def parts(spec: str) -> tuple[str, str]:
    """``spec``'s module and expression, stripped: ``'m : E(1)'`` gives ``('m', 'E(1)')``; the
    expression keeps any further ``:``."""
    module_name, expression = spec.split(":", 1)
    return module_name.strip(), expression.strip()


def load(spec: str, option: str, example: str) -> Any:
    """The value ``MODULE:EXPRESSION`` names.

    Args:
      spec: ``'module:expression'``.
      option: the option (or setting) that took it, for messages (``"--policy"``).
      example: a valid spec, for the message of a malformed one.

    Raises:
      ValueError: one line, when ``spec`` is not of the form, the module cannot be
        imported, or the expression fails.
    """
    if not is_spec(spec) or not all(parts(spec)):
        raise ValueError(f"{option} must be MODULE:EXPRESSION (e.g. {example!r}); got {spec!r}")
    module_name, expression = parts(spec)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as e:  # noqa: BLE001  (any failure of a user's module is one line, sys.exit too)
        hint = ""
        if isinstance(e, ModuleNotFoundError) and ("/" in module_name or module_name.endswith(".py")):
            hint = (" (MODULE is a module's name, as in an import statement, found from the current directory or "
                    "PYTHONPATH: 'mylaws' for ./mylaws.py)")
        raise UserCodeError(f"{option}: cannot import module {module_name!r}: {type(e).__name__}: {e}{hint}") from None
    try:
        return eval(expression, vars(module))  # noqa: S307  (the user's own expression)
    except (Exception, SystemExit) as e:  # noqa: BLE001
        hint = ""
        first = module_name.split(".")[0]
        if first in sys.stdlib_module_names and (os.path.exists(f"{first}.py") or os.path.isdir(first)):
            hint = (f" ({module_name!r} is the standard library's module, imported in place of a file of yours of that "
                    f"name: rename your file)")
        raise UserCodeError(f"{option}: {expression!r} failed in {module_name}: {type(e).__name__}: {e}{hint}") from None


def load_arm_law(
    spec: str, option: str, command: str = "htb-jax sweep", needs: tuple[str, ...] = ("from_bits", "mean", "eps_sup")
) -> Distribution:
    """One arm's law ``MODULE:EXPRESSION`` names: a distribution of batch shape ``()`` (a built-in
    family or a user's subclass of ``htb.Distribution``) that ``command`` can use
    (:func:`~htb_jax._src.instances.check_instance`: a registered pytree defining the methods of
    ``needs``, its ``from_bits`` float32).

    Raises:
      ValueError: one line, as :func:`load`, or when the value is not such a distribution.
      TypeError: one line, for a law ``command`` cannot use.
    """
    law = load(spec, option, "mylaws:TwoSidedLomax(loc=0.0, scale=1.0, shape=1.8)")
    if isinstance(law, type) or not isinstance(law, Distribution):
        shown = f"the class {law.__name__}" if isinstance(law, type) else f"{law!r} ({type(law).__name__})"
        raise ValueError(f"{option}: {spec!r} must give one arm's law, an htb.Distribution instance; got {shown}")
    if law.batch_shape != ():
        raise ValueError(
            f"{option}: {spec!r} must give one arm's law (batch shape ()); got batch shape {law.batch_shape}"
        )
    check_instance(law, option, command, needs)
    return law
