"""The suite's worst-case experiment: each policy's ``(d, c)`` on Theorem 1's two-point family.

Every contender is measured by :func:`htb_jax.frontier.measure` on
:class:`~htb_jax._src.frontier.families.SpikeFamily` (the spike probabilities of
Theorem 1's proof and a fixed member), at each true ``eps`` of :data:`EPS`: ``d``
is the slope in ``T`` of the worst normalized regret ``R_T / U_eps`` over the
family, ``c`` the slope of the regret on the fixed member.  A contender told
``eps`` and ``u`` is told the true ``eps`` and each member's own ``u``.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from htb_jax._src.bench import stats
from htb_jax._src.bench.peers import Contender
from htb_jax._src.bench.suite import KEY, SIZES
from htb_jax._src.frontier.families import SpikeFamily
from htb_jax._src.frontier.measure import checkpoint_horizons, measure
from htb_jax._src.frontier.measurement import Measurement
from htb_jax._src.resumable import atomic_write

NAME = "worst-case"
EPS = (1.0, 0.5)
DESCRIPTION = (
    "Theorem 1's two-point family (two arms, gap 1; the optimal arm's spike probability from 1e-5 to 0.5 and a "
    "fixed member at 0.9): d, the slope in T of the worst case of R_T / U_eps over the family, and c, the slope "
    "of the regret on the fixed member, at each true eps, as htb.frontier.measure fits them. The regret table "
    "shows R_T / U_eps of the worst member at the largest horizon; the frontier table the fitted d and c."
)
SCORE = (
    "the mean over eps of (d score + c score) / 2, d score = (1 - d) / (1 - 1/(1 + eps)) (1 at the minimax "
    "exponent 1/(1 + eps), 0 for linear worst-case regret) and c score = 1 - c, each clipped to [0, 1]"
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
        return contender.make(eps, float(np.max(np.asarray(member.abs_moment(eps)))))

    return told


def measure_contender(contender: Contender, size: str, out: str | None,
                      restart: bool) -> tuple[list[Measurement], float, bool]:
    """The contender's measurements, one per eps of :data:`EPS` (stored under ``out/runs/``), the seconds
    of the runs that computed them (recorded beside the store, so also when read back), and whether
    every run was read back."""
    s = SIZES[size]
    t = horizons(contender, size)
    store = None if out is None else os.path.join(out, "runs", contender.slug, NAME)
    common = dict(family=SpikeFamily(), key=KEY, name=contender.name, family_name="two-point", restart=restart)
    if not contender.told:
        calls = [(contender.make, EPS, store)]
    else:
        calls = [(_told(contender, eps), eps, None if store is None else f"{store}-eps{eps:g}") for eps in EPS]
    measured, seconds, resumed = [], 0.0, True
    for policy, eps, directory in calls:
        got = measure(policy, eps, t, s.seeds, store=directory, **common)
        measured += got
        seconds += _seconds(directory, got[0].seconds)
        resumed &= math.isnan(got[0].seconds)
    return measured, seconds, resumed


def _seconds(directory: str | None, seconds: float) -> float:
    """The seconds of a measurement's runs: recorded in ``directory/seconds.json`` when computed, read
    back from there when every chunk was read back (``seconds`` NaN)."""
    if directory is None:
        return seconds
    path = os.path.join(directory, "seconds.json")
    if math.isnan(seconds):
        with open(path) as f:
            return float(json.load(f))
    atomic_write(path, lambda f: f.write(json.dumps(seconds).encode()))  # whole or absent, as the chunks
    return seconds


def entry(field: list[Contender], measured: dict[str, list[Measurement]], size: str) -> dict:
    """The experiment's entry of results.json: a setting per eps; each cell the worst normalized regret
    at the largest horizon (its member's per-seed values summarised) and the frontier score."""
    s = SIZES[size]
    settings = [{"label": f"two-point, eps = {eps:g}", "axis_value": eps, "instance": "htb.frontier.SpikeFamily()",
                 "num_arms": SpikeFamily().num_arms, "horizon": 5 * s.horizon, "seeds": s.seeds, "uniform_regret": None}
                for eps in EPS]
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
    return {"name": NAME, "axis": "true eps", "description": DESCRIPTION, "score": SCORE, "settings": settings,
            "cells": cells, "curves": {c.name: [None] * len(EPS) for c in field}, "scores": scores,
            "ranks": ranks, "ratios": {c.name: None for c in field}}
