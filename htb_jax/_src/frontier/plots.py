"""Theorem 1's line and measured points on it: the panels of the frontier figures, and the
figure of any set of measured policies (:func:`plot_measurements`)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import numpy as np

from htb_jax._src import theory
from htb_jax._src.frontier.families import StableFamily
from htb_jax._src.frontier.measurement import _ABOVE_ONE, Measurement, _check_keyed, _check_measurements
from htb_jax._src.frontier.t_frontier import TFrontierResult, fitted_horizons
from htb_jax._src.validation import check_instance_type, check_interval, check_path, given


def _check_ax(ax) -> None:
    if ax is None or isinstance(ax, type) or not hasattr(ax, "errorbar"):
        raise TypeError(f"ax must be a matplotlib Axes; got {given('ax', ax)}.")


def frontier_panel(ax, eps: float, title: str, *, high: float = 1.02) -> None:
    """Theorem 1's line ``c + d (1+eps)/eps = (1+eps)/eps`` on ``ax``, with the (d, c) axes.

    The panel every frontier figure draws its measured points on (:func:`plot_point`):
    the line for ``d`` in ``[0, 1]``, axes ``d`` (distribution-free exponent of ``T``)
    and ``c`` (distribution-dependent exponent), both shown from 0.45 and 0 to ``high``.

    Args:
      ax: a matplotlib Axes.
      eps: the true tail exponent, in ``(0, 1]``.
      title: the panel's title.
      high: the upper limit of both axes, ``> 0.45``.

    Examples:
      >>> import matplotlib; matplotlib.use("Agg")
      >>> import matplotlib.pyplot as plt, htb_jax as htb
      >>> fig, ax = plt.subplots()
      >>> htb.frontier.frontier_panel(ax, 1.0, "eps = 1")
      >>> htb.frontier.plot_point(ax, dict(d=0.7, d_low=0.68, d_high=0.72, d_theory=2 / 3, d_finite_t=0.69,
      ...                                  c=0.6, c_low=0.6, c_high=0.6, c_theory=2 / 3, c_finite_t=0.6), "C0")
      >>> plt.close(fig)
    """
    _check_ax(ax)
    check_interval("eps", eps, 0.0, 1.0, low_closed=False, high_closed=True)
    if not isinstance(title, str):
        raise TypeError(f"title must be a string; got {given('title', title)}.")
    check_interval("high", high, 0.45, np.inf, low_closed=False, high_closed=False)
    d = np.linspace(0.0, 1.0, 401)
    ax.plot(d, theory.t_frontier(d, eps), "k-", lw=1.2, label="Theorem 1 frontier")
    ax.set_xlim(0.45, high)
    ax.set_ylim(0.0, high)
    ax.set_xlabel("d (distribution-free exponent of T)")
    ax.set_ylabel("c (distribution-dependent exponent of T)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, alpha=0.3)


def plot_point(ax, row: dict, color, *, x: str = "d", y: str = "c", marker: str = "s", label=None) -> None:
    """One schedule's measurement with its intervals, and its theory (o) and finite-T prediction (x)
    where the row has them.

    Args:
      ax: a matplotlib Axes (for example one of :func:`frontier_panel`'s).
      row: a dict holding ``{x, y}`` and ``{x, y}_low``/``_high``, as
        :meth:`~htb_jax.frontier.Measurement.row` gives them, and optionally ``{x, y}_theory`` and
        ``{x, y}_finite_t`` (or ``_finite_k``), as a row of :func:`fit_t_frontier` holds them.
      color: a matplotlib color.
      x, y: the keys of the two exponents (``"d"``, ``"c"``; ``"b"``, ``"a"`` for the K-frontier).
      marker: the measured point's marker.
      label: the legend entry, or None.
    """
    _check_ax(ax)
    if not isinstance(row, dict):
        raise TypeError(f"row must be a dict (a row of fit_t_frontier); got {given('row', row)}.")
    if color is None or isinstance(color, type):
        raise TypeError(f"color must be a matplotlib color; got {given('color', color)}.")
    for name, value in (("x", x), ("y", y), ("marker", marker)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string; got {given(name, value)}.")
    if label is not None and not isinstance(label, str):
        raise TypeError(f"label must be a string or None; got {given('label', label)}.")
    finite = "finite_t" if f"{x}_finite_t" in row else "finite_k"
    needed = [f"{a}{suffix}" for a in (x, y) for suffix in ("", "_low", "_high")]
    missing = [k for k in needed if k not in row]
    if missing:
        raise ValueError(f"row lacks {', '.join(missing)} (x={x!r}, y={y!r}).")
    for suffix, style in (("_theory", dict(marker="o", mfc="none", mec=color, ms=9)),
                          (f"_{finite}", dict(marker="x", color=color, ms=7))):
        keys = [f"{a}{suffix}" for a in (x, y)]
        if sum(k in row for k in keys) == 1:  # one of the pair: a typo, not a point left out
            raise ValueError(f"row holds {' but not '.join(k for k in sorted(keys, key=lambda k: k not in row))} "
                             f"(x={x!r}, y={y!r}).")
        if keys[0] in row:
            ax.plot(row[keys[0]], row[keys[1]], linestyle="none", **style)
    ax.errorbar(
        row[x], row[y],
        xerr=[[max(row[x] - row[f"{x}_low"], 0.0)], [max(row[f"{x}_high"] - row[x], 0.0)]],
        yerr=[[max(row[y] - row[f"{y}_low"], 0.0)], [max(row[f"{y}_high"] - row[y], 0.0)]],
        fmt=marker, color=color, ms=5, capsize=2, label=label,
    )


def plot_t_frontier(result: TFrontierResult, path) -> None:
    """Figure 1 with the measured points: one panel per ``eps``.

    Each panel draws Theorem 1's line (:func:`frontier_panel`) and, per schedule of that ``eps``,
    its theory, finite-T prediction and measured ``(d, c)`` (:func:`plot_point`).

    Args:
      result: a :class:`TFrontierResult` (from :func:`run_t_frontier` or :func:`fit_t_frontier`).
      path: a PNG path or an open binary file.
    """
    check_instance_type("result", result, TFrontierResult, "a TFrontierResult (from run_t_frontier)")
    check_path("path", path, file_object=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps_values = result.config.eps_values
    family = result.config.family
    stable = isinstance(family, StableFamily)
    # Axes that hold every point and interval (a worst-case slope above 1, a negative c on stable arms).
    shown = [r[k] for r in result.rows for k in ("d", "d_high", "c", "c_high", "d_finite_t", "c_finite_t")]
    high = max(1.02, max((v for v in shown if np.isfinite(v)), default=0.0) + 0.03)
    low = min(0.0, min((r["c_low"] for r in result.rows if np.isfinite(r["c_low"])), default=0.0) - 0.03)
    # The d axis starts at 0.45 (left of every alpha*'s line), or where a point or interval lies further left
    # (a stable family of large gaps: d = 0.11 was drawn outside the axes).
    left = min(0.45, min((r[k] for r in result.rows for k in ("d_low", "d", "d_finite_t") if np.isfinite(r[k])),
                         default=0.45) - 0.03)
    # One panel is too narrow for the title on one line.
    lines = 1 if len(eps_values) > 1 else 2
    width, height = 4.2 * len(eps_values), 4.0 + 0.18 * (lines - 1)
    fig, axes = plt.subplots(1, len(eps_values), figsize=(width, height), squeeze=False)
    for ax, e in zip(axes[0], eps_values, strict=True):
        frontier_panel(ax, e, f"eps = {e:g}  (o theory, x schedule at finite T, ■ measured)", high=high)
        if low < 0.0:
            ax.set_ylim(low, high)
        if left < 0.45:
            ax.set_xlim(left, high)
        rows = [r for r in result.rows if r["eps"] == e]
        colors = plt.cm.viridis(np.linspace(0.0, 0.85, max(len(rows), 1)))
        for r, color in zip(rows, colors, strict=False):
            plot_point(ax, r, color, label=f"alpha={r['alpha']:.3f}")
        if stable:  # why a theory point lies inside the line
            ax.plot([], [], "o", mfc="none", mec="gray", label="o: this family's d, no worst case")
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        f"AdaR-ETC T-frontier over {f'symmetric {family.index:g}-stable arms' if stable else 'Theorem 1 two-point family'}"
        f":{' ' if lines == 1 else chr(10)}T in [{fitted_horizons(result.config)}], {result.config.num_seeds} seeds",
        fontsize=10,
    )
    # Margins in inches, those tight_layout finds for these labels: laying out by drawing the figure
    # once more would double the time it takes.
    top = 0.62 + 0.18 * (lines - 1)
    fig.subplots_adjust(left=0.67 / width, right=1.0 - 0.16 / width, bottom=0.59 / height, top=1.0 - top / height,
                        wspace=0.2)
    fig.savefig(path, dpi=130)
    plt.close(fig)


# The size of the notes under a frontier figure's panels (the points beyond the line, numbered).
NOTE_POINTS = 7.5


def categorical_colors(names: Sequence[str]) -> dict[str, tuple]:
    """One colour per name, in order: tab10's ten, then tab20b's darkest and second shades of its five
    hues (twenty saturated colours; tab20's light shades, faint on white and fainter under a bar's
    transparency, are not used), repeated beyond twenty."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    palette = [plt.cm.tab10(i) for i in range(10)]
    palette += [plt.cm.tab20b(i) for i in (*range(0, 20, 4), *range(1, 20, 4))]
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


def _note(notes: dict, m: Measurement) -> str:
    """The note under a numbered point: the family's own, else the policy's at its eps, else ``m.note()``,
    which says where the point lies beyond the line only when its intervals do too."""
    given = notes.get((m.name, m.family_name, m.eps), notes.get((m.name, m.eps)))
    if given is not None:
        return given
    if m.off_frontier < 0.0 and not m.beyond_bound:
        return f"{m.note()}; beyond Theorem 1's line by its estimate, on it within its intervals"
    return m.note()


def plot_measurements(
    measurements: Sequence[Measurement], path, *, title: str | None = None, claims: dict | None = None,
    notes: dict | None = None,
) -> None:
    """Measured policies against Theorem 1's line: one panel per (family, eps).

    Each point is a finite-T slope with its 95% intervals (filled marker);
    ``x`` marks the schedule's finite-T prediction where known, ``o`` the
    claimed exponents ``claims[(name, eps)] = (d, c)``.  Every point beyond the
    line is numbered in its panel and listed under it with its reason
    (:meth:`~htb_jax.frontier.Measurement.note`, or ``notes[(name, family_name, eps)]`` or
    ``notes[(name, eps)]`` where given, in that order).

    Args:
      measurements: from :func:`htb_jax.frontier.measure`.
      path: a PNG path or an open binary file.
      title: the figure's title.
      claims, notes: optional, keyed by ``(name, eps)``; ``notes`` also by ``(name, family_name, eps)``.
    """
    _check_measurements(measurements)
    check_path("path", path, file_object=True)
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a string or None; got {given('title', title)}.")
    claims = _check_keyed("claims", claims, measurements)
    notes = _check_keyed("notes", notes, measurements)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = list(dict.fromkeys(m.family_name for m in measurements))
    eps_values = list(dict.fromkeys(m.eps for m in measurements))
    names = list(dict.fromkeys(m.name for m in measurements))
    colors = categorical_colors(names)
    markers = dict(zip(names, "s^Dv<>ph*XPd8H" * 4, strict=False))
    # Axes that hold every point, interval, prediction and claim.
    shown = [v for m in measurements for v in (m.d.high, m.c.high, m.d_finite_t, m.c_finite_t,
                                               *claims.get((m.name, m.eps), ()))]
    # (An interval end may be infinite, a prediction NaN: the finite ones set the axes.)
    high = max(1.08, max((v for v in shown if np.isfinite(v)), default=0.0) + 0.05)
    low = min(-0.05, min((m.c.low for m in measurements if np.isfinite(m.c.low)), default=0.0) - 0.05)
    left = min(0.0, min((m.d.low for m in measurements if np.isfinite(m.d.low)), default=0.0) - 0.05)
    rows, cols = len(families), len(eps_values)
    beyond, texts = {}, {}
    for i, fam in enumerate(families):
        for j, e in enumerate(eps_values):
            beyond[i, j] = [m for m in measurements if m.family_name == fam and m.eps == e
                            and (m.off_frontier < 0.0 or m.d.low > _ABOVE_ONE)]
            texts[i, j] = "\n".join(
                textwrap.fill(f"{n}. {m.name}: {_note(notes, m)}", 90, subsequent_indent="    ")
                for n, m in enumerate(beyond[i, j], 1)
            )
    # Inches: a panel, the space under it (tick labels and x label, then its notes, 7.5-point lines),
    # the legend's rows and the title.
    lines = [max(texts[i, j].count("\n") + 1 if texts[i, j] else 0 for j in range(cols)) for i in range(rows)]
    under = [0.75 + 0.13 * n for n in lines]
    ncol = min(len(names) + 1, 3 * cols)
    legend = 0.25 * math.ceil((len(names) + 1) / ncol) + 0.2
    panel, top = 4.6, 0.75 if title else 0.45
    height = rows * panel + sum(under) + 0.35 * (rows - 1) + legend + top
    fig = plt.figure(figsize=(5.8 * cols, height))
    handles = {}
    y = height - top
    for i, fam in enumerate(families):
        for j, e in enumerate(eps_values):
            ax = fig.add_axes([(0.75 + 5.8 * j) / (5.8 * cols), (y - panel) / height, 4.85 / (5.8 * cols), panel / height])
            here = [m for m in measurements if m.family_name == fam and m.eps == e]
            marks = ["filled: finite-T slope"]
            if any(np.isfinite(m.d_finite_t) and np.isfinite(m.c_finite_t) for m in here):
                marks.append("x: schedule")
            if any(np.all(np.isfinite(claims.get((m.name, m.eps), (math.nan, math.nan)))) for m in here):
                marks.append("o: claim")
            frontier_panel(ax, e, f"{fam}, eps = {e:g}  ({', '.join(marks)})", high=high)
            ax.set_xlim(left, high)
            ax.set_ylim(low, high)
            for m in measurements:
                if m.family_name != fam or m.eps != e:
                    continue
                color = colors[m.name]
                dc, cc = claims.get((m.name, m.eps), (math.nan, math.nan))
                if not (np.isnan(dc) or np.isnan(cc)):
                    ax.plot(dc, cc, "o", mfc="none", mec=color, ms=9)
                if not (np.isnan(m.d_finite_t) or np.isnan(m.c_finite_t)):
                    ax.plot(m.d_finite_t, m.c_finite_t, "x", color=color, ms=7)
                handles[m.name] = ax.errorbar(
                    m.d.slope, m.c.slope,
                    xerr=[[max(m.d.slope - m.d.low, 0.0)], [max(m.d.high - m.d.slope, 0.0)]],
                    yerr=[[max(m.c.slope - m.c.low, 0.0)], [max(m.c.high - m.c.slope, 0.0)]],
                    fmt=markers[m.name], color=color, ms=6, capsize=2,
                )
                if m in beyond[i, j]:
                    ax.annotate(str(beyond[i, j].index(m) + 1), (m.d.slope, m.c.slope), textcoords="offset points",
                                xytext=(5, 5), fontsize=8, color=color, weight="bold")
            if texts[i, j]:
                ax.annotate(texts[i, j], (0.0, 0.0), xycoords="axes fraction", xytext=(0, -48),
                            textcoords="offset points", fontsize=NOTE_POINTS, va="top")
        y -= panel + under[i] + 0.35
    first = fig.axes[0]
    fig.legend([first.get_lines()[0], *handles.values()], ["Theorem 1 frontier", *handles],
               loc="lower center", bbox_to_anchor=(0.5, 0.1 / height), ncol=ncol, fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10, y=1.0 - 0.2 / height)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
