"""The built-in peers of the benchmark: the literature's policies, with what each is told.

Every peer is defined by its class, with its source (see each class's
docstring); this module fixes its parameters for the
benchmark and what it knows of each instance: nothing, the tail exponent
``eps`` (or the moment order ``p = 1 + eps``), the moment bound ``u``, or the
horizon ``T``.  A policy told ``eps`` or ``u`` receives the setting's values
(:meth:`~htb_jax._src.bench.suite.Setting.told`), misspecified only in the
misspecification experiment.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable
from typing import Any

from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.policies.adar_ucb import AdaRUCB
from htb_jax._src.policies.ape2 import APE2
from htb_jax._src.policies.force_mom import ForceMoM
from htb_jax._src.policies.mr_ape import MRAPE
from htb_jax._src.policies.mr_ucb import MRUCB
from htb_jax._src.policies.robust_ucb import RobustUCB
from htb_jax._src.policies.robust_ucb_f import RobustUCBf
from htb_jax._src.policies.ucb1 import UCB1
from htb_jax._src.protocol_checks import is_policy_factory
from htb_jax._src.theory import balanced_alpha

ROUND_COSTS = ("fast path", "O(K)", "O(t)")


_SLUG_LENGTH = 100  # characters of a name kept in its runs folder's name (a longer one is cut, its hash added)


def as_file_name(name: str) -> str:
    """``name`` with characters other than letters, digits, ``.``, ``=`` and ``-`` as ``_``."""
    return re.sub(r"[^A-Za-z0-9.=-]+", "_", name).strip("_")


@dataclasses.dataclass(frozen=True)
class Contender:
    """A policy in the benchmark: a built-in peer or a user's policy.

    Attributes:
      name: its label in tables and figures.
      make: the policy itself (told nothing), or ``(eps, u) -> policy`` for a policy told the
        setting's tail exponent and moment bound (a function of floats; policies whose parameters
        stack into one grid run as one program, others one setting at a time).
      knows: what it is told, in words (``"nothing"``, ``"eps, T"``, ...).
      round_cost: ``"fast path"`` or ``"O(K)"`` (runs to every horizon of a size) or ``"O(t)"``
        (runs to the size's ``reach``: its whole run costs ``O(T^2)``).
      user: whether it is the user's policy (not a peer: never the best peer of a ratio).
      identity: what the user's policy is, where ``name`` is a label given to it (its ``repr`` without
        addresses, or a function's module and name; empty otherwise): part of its runs folder, so that
        another policy given the same label gets runs of its own.
    """

    name: str
    make: Any
    knows: str
    round_cost: str
    user: bool = False
    identity: str = ""

    @property
    def slug(self) -> str:
        """The name as a file name, characters other than letters, digits, ``.``, ``=`` and ``-`` as ``_``.

        A user's name that this changes (or that starts with a dot) gets the start of its SHA-256 too,
        so that two names never share a folder (``my pol`` and ``my_pol``) and none is hidden or
        reaches outside ``runs/`` (``../x``); a label given to a policy (``--name``) gets that of the
        label and ``identity``; a name longer than 100 characters is cut there, with its hash."""
        slug = self.name_as_file
        labelled = bool(self.identity) and self.identity != self.name
        long = len(slug) > _SLUG_LENGTH  # a folder name the file system refuses past 255 bytes
        if not self.user or slug == self.name and not slug.startswith(".") and not labelled and not long:
            return slug
        key = f"{self.name}\n{self.identity}" if labelled else self.name
        return f"{slug[:_SLUG_LENGTH].lstrip('.') or 'policy'}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"

    @property
    def name_as_file(self) -> str:
        """The name as written in file names, characters other than letters, digits, ``.``, ``=`` and ``-``
        as ``_`` (a peer's :attr:`slug`)."""
        return as_file_name(self.name)

    def runs_folder(self, out: str) -> str:
        """Where the benchmark stores this contender's runs in the output directory ``out``."""
        return os.path.join(out, "runs", self.slug)

    @property
    def told(self) -> bool:
        """Whether the policy is built per setting from ``(eps, u)``."""
        return is_policy_factory(self.make)

    def policy(self, eps: float, u: float):
        """The policy for a setting whose told ``(eps, u)`` are given; a function that raises is named,
        with the values it was told, in one line (``ValueError``)."""
        if not self.told:
            return self.make
        try:
            return self.make(eps, u)
        except Exception as e:  # noqa: BLE001  (any failure of a user's function is one line)
            raise ValueError(f"{self.name}: policy(eps={eps:g}, u={u:g}) raised {type(e).__name__}: {e}") from None


def _balanced(eps: float, u: float) -> AdaRETC:
    return AdaRETC(eps=eps, alpha=float(balanced_alpha(eps)), q=0.0)


def _told(build: Callable[[float, float], Any], name: str) -> Callable[[float, float], Any]:
    build.__qualname__ = name
    return build


def peers() -> tuple[Contender, ...]:
    """The built-in peers of the suite, in report order.

    AdaR-ETC at its balanced setting (told ``eps`` and ``T``: ``alpha = balanced_alpha(eps)``, ``q = 0``)
    and its order-free setting (Theorem 4: told nothing but ``T``); UCB1; R-UCB (``f = 2.1``) and R-UCB-G
    (``f = (log t)^2``) of Ashutosh et al. 2021; ForceMoM (``rho = 1/2``); Robust UCB with the truncated
    mean (Bubeck et al. 2013, told ``eps`` and the true ``u``); AdaR-UCB (Genalti et al. 2024); APE2
    (Lee et al. 2020), told ``p = 1 + eps``; MR-UCB and MR-APE (Lee and Lim), told ``p = 1 + eps`` and ``T``.

    Returns:
      The :class:`Contender` of each, in that order.
    """
    return (
        Contender("AdaR-ETC balanced", _told(_balanced, "AdaR-ETC balanced"), "eps, T", "fast path"),
        Contender("AdaR-ETC order-free", AdaRETC.order_free(), "T", "fast path"),
        Contender("UCB1", UCB1(), "nothing", "O(K)"),
        Contender("R-UCB f=2.1", RobustUCBf(kind="R-UCB", m=2.1, a=0.0), "nothing", "O(K)"),
        Contender("R-UCB-G f=(log t)^2", RobustUCBf(kind="R-UCB-G", m=1.0, a=2.0), "nothing", "O(K)"),
        Contender("ForceMoM rho=1/2", ForceMoM(rho=0.5), "nothing", "O(K)"),
        Contender("Robust UCB", _told(lambda eps, u: RobustUCB(eps=eps, u=u), "Robust UCB"), "eps, u", "O(t)"),
        Contender("AdaR-UCB", AdaRUCB(), "nothing", "O(t)"),
        Contender("APE2", _told(lambda eps, u: APE2(p=1.0 + eps), "APE2"), "p = 1 + eps", "O(t)"),
        Contender("MR-UCB", _told(lambda eps, u: MRUCB(p=1.0 + eps), "MR-UCB"), "p = 1 + eps, T", "O(t)"),
        Contender("MR-APE", _told(lambda eps, u: MRAPE(p=1.0 + eps), "MR-APE"), "p = 1 + eps, T", "O(t)"),
    )
