"""The suite's worst-case experiment: each policy's ``(d, c)`` on Theorem 1's two-point family and on alpha-stable arms.

Every contender is measured by :func:`htb_jax.frontier.measure` on each family
of :data:`CASES` at each of its true ``eps``: Theorem 1's two-point family
(:class:`~htb_jax._src.frontier.families.SpikeFamily`, the spike probabilities
of the proof and a fixed member) at ``eps`` 1 and 1/2, and symmetric stable arms
of index 1.75 (:class:`~htb_jax._src.frontier.families.StableFamily`'s members,
gaps ``10^-3..1`` and a fixed member) at ``eps = 1/2``.  ``d`` is the slope in
``T`` of the worst normalized regret ``R_T / U_eps`` over the family, ``c`` the
slope of the regret on the fixed member.  A contender told ``eps`` and ``u`` is
told the true ``eps`` and each member's own ``u``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from htb_jax._src.bench import stats
from htb_jax._src.bench.peers import Contender
from htb_jax._src.bench.suite import KEY, SIZES, moment_bound
from htb_jax._src.chunk_store import FolderRemedy
from htb_jax._src.frontier.families import SpikeFamily, StableFamily
from htb_jax._src.frontier.measure import checkpoint_horizons, open_measure_store, plan_measure, run_measure
from htb_jax._src.frontier.measurement import Measurement
from htb_jax._src.grids import powers_of_ten
from htb_jax._src.resumable import atomic_write

NAME = "worst-case"


@dataclasses.dataclass(frozen=True)
class Case:
    """A family the worst case is measured on.

    Attributes:
      name: the family's name in the results (``Measurement.family``).
      build: ``() -> family``: what :func:`~htb_jax.frontier.measure` takes (a family, or a law of batch
        shape ``(F + 1, K)``), built when a run needs it (a law holds arrays: building it at import would
        start JAX's backend before ``jax.distributed.initialize`` may run).
      instance: the expression that builds the family with public names (``results.json``'s ``instance``).
      eps: the true tail exponents it is measured at.
      store: the name of its runs' directory under ``runs/<policy>/``.
    """

    name: str
    build: Callable[[], Any]
    instance: str
    eps: tuple[float, ...]
    store: str


def _stable_arms():
    """The stable case's members (gaps 1e-3..1, four a decade) and fixed member (gap 0.3), index 1.75."""
    return StableFamily(gaps=powers_of_ten(-3.0, 0.01, 0.25), fixed_index=1.75, fixed_gap=0.3).instances()


CASES = (
    Case("two-point", SpikeFamily, "htb.frontier.SpikeFamily()", (1.0, 0.5), NAME),
    Case("stable a = 1.75", _stable_arms,
         "htb.frontier.StableFamily(gaps=htb.powers_of_ten(-3.0, 0.01, 0.25), fixed_index=1.75, "
         "fixed_gap=0.3).instances()", (0.5,), f"{NAME}-stable"),
)
SETTINGS = tuple((case.name, eps) for case in CASES for eps in case.eps)  # (family, eps), in results order
DESCRIPTION = (
    "d, the slope in T of the worst case of R_T / U_eps over a family, and c, the slope of the regret on its "
    "fixed member, as htb.frontier.measure fits them: on Theorem 1's two-point family (two arms, gap 1; the "
    "optimal arm's spike probability from 1e-10 to 0.5 and a fixed member at 0.9) at true eps 1 and 1/2, and on "
    "symmetric alpha-stable arms of index 1.75 (two arms, scale 1; gaps from 1e-3 to 1, four a decade, where "
    "T Delta^2 goes from below one to T, and a fixed member at gap 0.3) at eps 1/2, whose moments of order "
    "1 + eps below 1.75 are all finite. The regret table shows R_T / U_eps of the worst member at the largest "
    "horizon; the frontier table the fitted d and c."
)
SCORE = (
    "the mean over the settings (family and eps) of (d score + c score) / 2, d score = (1 - d) / (1 - 1/(1 + eps)) "
    "(1 at the minimax exponent 1/(1 + eps), 0 for linear worst-case regret; the stable arms, lighter-tailed than "
    "the two-point family, allow a d below it, also scored 1) and c score = 1 - c, each clipped to [0, 1]"
)


def frontier_score(d: float, c: float, eps: float) -> float:
    """``(d score + c score) / 2``: ``d score = (1 - d) / (1 - 1/(1+eps))``, ``c score = 1 - c``, each in ``[0, 1]``.

    Examples:
      >>> round(frontier_score(0.5, 0.0, 1.0), 3)  # minimax d at eps = 1 and a constant regret
      1.0
      >>> round(frontier_score(1.0, 1.0, 0.5), 3)  # linear regret everywhere
      0.0
    """
    d_score = min(1.0, max(0.0, (1.0 - d) / (1.0 - 1.0 / (1.0 + eps))))
    c_score = min(1.0, max(0.0, 1.0 - c))
    return 0.5 * (d_score + c_score)


def horizons(contender: Contender, size: str) -> list[int]:
    """The fitted horizons: the checkpoints (ten a decade) of the last decade below the contender's
    reach (the size's ``reach`` for an ``O(t)`` round, five times its horizon otherwise)."""
    s = SIZES[size]
    top = s.reach if contender.round_cost == "O(t)" else 5 * s.horizon
    return [int(h) for h in checkpoint_horizons(top, top // 10)]


def _told(contender: Contender, eps: float):
    """``member -> policy`` told the true ``eps`` and the member's own ``u = max_i E|X_i|^(1+eps)``."""

    def told(member):
        return contender.policy(eps, moment_bound(member, eps))

    return told


def check_contender(contender: Contender, size: str) -> None:
    """The contender's measurements planned, nothing run: what :func:`~htb_jax.frontier.measure` refuses
    (a policy declared ``anytime`` that reads ``T``, a function ``(eps, u) -> policy`` that raises at a
    member's values) is refused before the benchmark's first run, not when it reaches the worst case.
    A function told ``(eps, u)`` is planned at every setting (family and ``eps``: one that raised at
    ``eps = 1/2`` alone was met after the runs at ``eps = 1``); a policy told nothing, whose plan is
    the same at each, on Theorem 1's family."""
    for case in CASES if contender.told else CASES[:1]:
        for eps in case.eps if contender.told else case.eps[:1]:
            policy = _told(contender, eps) if contender.told else contender.make
            plan_measure(policy, eps, horizons(contender, size), SIZES[size].seeds, family=case.build(), key=KEY,
                         name=contender.name, family_name=case.name)


def measure_contender(contender: Contender, size: str, out: str | None,
                      restart: bool) -> tuple[list[Measurement], float, bool]:
    """The contender's measurements, one per (family, eps) of :data:`SETTINGS` (stored under ``out/runs/``),
    the seconds of the runs that computed them (recorded beside the store, so also when read back), and
    whether every run was read back."""
    s = SIZES[size]
    t = horizons(contender, size)
    measured, seconds, resumed = [], 0.0, True
    remedy = None if out is None else FolderRemedy(folder=contender.runs_folder(out))
    for case in CASES:
        store = None if out is None else os.path.join(contender.runs_folder(out), case.store)
        common = dict(family=case.build(), key=KEY, name=contender.name, family_name=case.name, restart=restart)
        if not contender.told:
            calls = [(contender.make, case.eps, store)]
        else:
            calls = [(_told(contender, eps), eps, None if store is None else f"{store}-eps{eps:g}")
                     for eps in case.eps]
        for policy, eps, directory in calls:
            plan = plan_measure(policy, eps, t, s.seeds, store=directory, **common)
            got = run_measure(plan, None if directory is None else open_measure_store(plan, remedy))
            measured += got
            seconds += _seconds(directory, got[0].seconds)
            resumed &= math.isnan(got[0].seconds)
    return measured, seconds, resumed


def _seconds(directory: str | None, seconds: float) -> float:
    """The seconds of a measurement's runs: recorded in ``directory/seconds.json`` when computed, read
    back from there when every chunk was read back (``seconds`` NaN); NaN (the report's ``-``) where
    the run that computed the last chunks was stopped before it recorded them.  A run that resumed
    records its own chunks' seconds only: an interrupted run's are lost."""
    if directory is None:
        return seconds
    path = os.path.join(directory, "seconds.json")
    if math.isnan(seconds):
        if not os.path.exists(path):  # Ctrl-C between the last chunk and this file: every later resume failed
            return math.nan
        with open(path) as f:
            return float(json.load(f))
    atomic_write(path, lambda f: f.write(json.dumps(seconds).encode()))  # whole or absent, as the chunks
    return seconds


def entry(field: list[Contender], measured: dict[str, list[Measurement]], size: str) -> dict:
    """The experiment's entry of results.json: a setting per (family, eps); each cell the worst normalized
    regret at the largest horizon (its member's per-seed values summarised) and the frontier score."""
    s = SIZES[size]
    settings = [{"label": f"{case.name}, eps = {eps:g}", "axis_value": eps, "instance": case.instance,
                 "num_arms": _num_arms(case.build()), "horizon": 5 * s.horizon, "seeds": s.seeds,
                 "uniform_regret": None}
                for case in CASES for eps in case.eps]
    cells, scores = {}, {}
    for c in field:
        row = []
        for m in measured[c.name]:
            normalized = m.regret[:-1, -1] / m.scale[:-1, None]  # [F, S] at the largest horizon
            worst = int(np.argmax(normalized.mean(-1)))
            row.append({"horizon": int(m.horizons[-1]), **stats.summary(normalized[worst]),
                        "d": m.d.slope, "c": m.c.slope, "score": frontier_score(m.d.slope, m.c.slope, m.eps)})
        cells[c.name] = row
        scores[c.name] = float(np.mean([cell["score"] for cell in row]))
    ranks = {n: 1 + sum(v > scores[n] for v in scores.values()) for n in scores}
    return {"name": NAME, "axis": "family and true eps", "description": DESCRIPTION, "score": SCORE,
            "settings": settings, "cells": cells, "curves": {c.name: [None] * len(SETTINGS) for c in field},
            "scores": scores, "ranks": ranks, "ratios": {c.name: None for c in field}}


def _num_arms(family) -> int:
    """``K`` of a family or of a law of batch shape ``(F + 1, K)``."""
    return int(family.num_arms) if hasattr(family, "num_arms") else int(family.batch_shape[-1])
