"""Distribution-free exponents across true ``eps`` from one run (Figure 2, Theorem 6)."""

from __future__ import annotations

import math
import pathlib
from collections.abc import Sequence

import numpy as np

from htb_jax._src.frontier.fits import _fit_mask, _slope, free_exponent, verdict
from htb_jax._src.frontier.runs import FamilyRuns, _check_runs, save_runs, write_csv
from htb_jax._src.validation import check_integer, check_interval, check_path, check_real, given


def _check_entries(entries) -> None:
    ok = isinstance(entries, (list, tuple)) and entries and all(
        isinstance(e, tuple) and len(e) == 4 and isinstance(e[0], str) for e in entries
    )
    if not ok:
        raise TypeError(
            f"entries must be a non-empty list of (label, g, true_eps, theory) tuples; got {given('entries', entries)}."
        )


def _check_rows(rows) -> None:
    if not isinstance(rows, (list, tuple)) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"rows must be a non-empty list of dicts (from eps_profile_rows); got {given('rows', rows)}.")


def _check_text(name: str, value) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {given(name, value)}.")


def eps_profile_rows(runs: FamilyRuns, entries: Sequence[tuple[str, int, float, float]], fit_from: int) -> list:
    """Distribution-free exponents of several schedules at several true ``eps``, from one run.

    Args:
      runs: the family runs (regret does not depend on ``eps``; only ``U_eps`` does).
      entries: ``(label, g, true_eps, theory)`` per measurement: schedule ``g``
        normalized by ``U_true_eps``, against the theory exponent.
      fit_from: smallest horizon in the fits.

    Returns:
      One dict per entry: schedule (the entry's label), eps, theory, finite_t (the slope of the estimation term
      ``T (K B_T / L_T)^(eps/(1+eps))`` over the fitted horizons, as :func:`free_exponent`
      gives it), measured slope and interval, verdict.
    """
    _check_runs("runs", runs)
    _check_entries(entries)
    check_integer("fit_from", fit_from, 1, maximum=10**18, one=True)
    for i, (_, g, eps, theory_value) in enumerate(entries):
        check_integer(f"entries[{i}] g", g, 0, maximum=runs.regret.shape[0] - 1, one=True)
        check_interval(f"entries[{i}] true_eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
        check_real(f"entries[{i}] theory", theory_value, "a real number")
        if np.ndim(theory_value) != 0:
            raise TypeError(f"entries[{i}] theory must be one real number; got {given('theory', theory_value)}.")
        check_interval(f"entries[{i}] theory", theory_value, -np.inf, np.inf, low_closed=False, high_closed=False)
    rows = []
    mask = _fit_mask(runs.horizons, fit_from)
    for i, (_, g, _, _) in enumerate(entries):
        if not np.all(runs.exploration[int(g), mask] > 0):  # verdict then refused finite_t=nan, a name not given
            raise ValueError(
                f"eps_profile_rows compares AdaR-ETC-type schedules with their finite-T predictions; entries[{i}] "
                f"names schedule g={int(g)}, whose exploration is 0 at a fitted horizon (an index policy's runs "
                f"have no such prediction): fit it with free_exponent or fit_worst_case_exponent."
            )
    for label, g, eps, theory_value in entries:
        g = int(g)
        fit, finite, hardest = free_exponent(runs, g, eps, fit_from)
        exploration = _slope(runs.horizons[mask].astype(float), runs.exploration[g, mask].astype(float))
        rows.append(
            dict(
                schedule=label, eps=float(eps), theory=float(theory_value), finite_t=finite,
                measured=fit.slope, low=fit.low, high=fit.high,
                verdict=verdict(fit, float(theory_value), finite, hardest, runs.family, exploration),
            )
        )
    return rows


def eps_profile_table(rows: Sequence[dict], note: str) -> str:
    """Markdown of :func:`eps_profile_rows`."""
    _check_rows(rows)
    _check_text("note", note)
    head = (
        f"{note}\n\n| schedule | true eps | d theory | d finite T | d measured | verdict |\n"
        "|---|---:|---:|---:|---|---|\n"
    )
    lines = [
        f"| {r['schedule']} | {r['eps']:g} | {r['theory']:.3f} | {r['finite_t']:.3f} "
        f"| {r['measured']:.3f} [{r['low']:.3f}, {r['high']:.3f}] | {r['verdict']} |"
        for r in rows
    ]
    return head + "\n".join(lines)


def write_eps_profile(rows: Sequence[dict], runs: FamilyRuns, out, name: str, note: str, curves: dict,
                      title: str) -> None:
    """Prints the table and writes ``out/{table.md, name.csv, runs.npz, name.png}``.

    Args:
      rows: from :func:`eps_profile_rows`.
      runs: the runs they were fitted on (saved as ``runs.npz``).
      out: the output directory (a ``pathlib.Path`` or string; created if missing).
      name: the stem of the CSV and PNG.
      note: the paragraph above the table.
      curves: ``label -> (eps -> theory exponent)`` for the figure, one per schedule label.
      title: the figure's title.
    """
    _check_rows(rows)
    _check_runs("runs", runs)
    check_path("out", out)
    for label, value in (("name", name), ("note", note), ("title", title)):
        _check_text(label, value)
    if not isinstance(curves, dict) or not all(callable(c) for c in curves.values()):
        raise TypeError(f"curves must be a dict of label -> callable; got {given('curves', curves)}.")
    missing = sorted({str(r.get("schedule")) for r in rows} - set(curves))
    if missing:
        raise ValueError(f"curves must hold a curve for every schedule of rows; it lacks {missing} (has {sorted(curves)}).")
    if not name or name != pathlib.Path(name).name or name in (".", ".."):
        raise ValueError(f"name must be a file name without a folder (the stem of {{name}}.csv and {{name}}.png); "
                         f"got name={name!r}.")
    _curve_values(curves)  # a curve that cannot be drawn is refused before anything is written
    out = pathlib.Path(out)
    table = eps_profile_table(rows, note)
    print(table)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(table + "\n")
    write_csv(rows, out / f"{name}.csv")
    save_runs(runs, out / "runs.npz")
    plot_eps_profile(rows, curves, out / f"{name}.png", title)
    took = "re-fitted the recorded runs" if math.isnan(runs.seconds) else f"{runs.seconds:.0f} s"
    print(f"{took}; wrote {out}")


# The eps at which the figure draws each theory curve.
_CURVE_GRID = np.linspace(0.02, 1.0, 200)


def _curve_values(curves: dict) -> dict[str, np.ndarray]:
    """Each curve on :data:`_CURVE_GRID`, f64[200]: a curve may return one number for every eps (a theory
    that does not depend on it); ``ValueError`` naming a curve whose values have another shape."""
    values = {}
    for label, curve in curves.items():
        value = np.asarray(curve(_CURVE_GRID), np.float64)
        if value.shape not in ((), _CURVE_GRID.shape):
            raise ValueError(f"curves[{label!r}] must map an array of eps of shape {_CURVE_GRID.shape} to exponents "
                             f"of that shape (or to one number); got shape {value.shape}.")
        values[label] = np.broadcast_to(value, _CURVE_GRID.shape)
    return values


def plot_eps_profile(rows: Sequence[dict], curves: dict, path, title: str) -> None:
    """Theory curves ``label -> (eps -> exponent)`` with the measured points and intervals."""
    _check_rows(rows)
    if not isinstance(curves, dict) or not all(callable(c) for c in curves.values()):
        raise TypeError(f"curves must be a dict of label -> callable; got {given('curves', curves)}.")
    check_path("path", path, file_object=True)
    _check_text("title", title)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = _curve_values(curves)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    colors = dict(zip(curves, plt.cm.tab10(np.arange(len(curves))), strict=True))
    for label, curve in values.items():
        ax.plot(_CURVE_GRID, curve, "-", color=colors[label], lw=1.2, label=f"{label}: theory")
    for r in rows:
        color = colors[r["schedule"]]
        ax.errorbar(
            r["eps"], r["measured"],
            yerr=[[max(r["measured"] - r["low"], 0.0)], [max(r["high"] - r["measured"], 0.0)]],
            fmt="s", color=color, ms=5, capsize=2,
        )
        ax.plot(r["eps"], r["finite_t"], "x", color=color, ms=7)
    ax.set_xlabel("true tail exponent eps")
    ax.set_ylabel("distribution-free exponent of T")
    ax.set_title(title + "\n(lines theory, ■ measured with 95% interval,\n"
                 "x the estimation term T (K B_T / L_T)^(eps/(1+eps)) at finite T)", fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
