"""The benchmark report's figures, drawn from a results dict alone (no simulation): the profile of
experiment scores, one figure of regret curves per experiment and the frontier placement against
Theorem 1's line.  Each policy keeps one colour in every figure (:func:`policy_colors`)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np

from htb_jax._src.frontier.measurement import _ABOVE_ONE
from htb_jax._src.frontier.plots import NOTE_POINTS, categorical_colors, frontier_panel

_DPI = 110


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, path: Path, *, tight: bool = False) -> None:
    """Write ``fig`` to ``path`` and close it (``tight``: crop to what is drawn, notes under the panels included)."""
    if tight:
        fig.savefig(path, dpi=_DPI, bbox_inches="tight")
    else:
        fig.set_layout_engine(None)
        fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def _ordered(results: dict) -> list[dict]:
    """The policies, the user's first (in the order of ``results["policies"]`` otherwise)."""
    return sorted(results["policies"], key=lambda p: not p["user"])


def policy_colors(results: dict) -> dict[str, tuple]:
    """One colour per policy, the user's policies first (:func:`categorical_colors`)."""
    return categorical_colors([p["name"] for p in _ordered(results)])


def _label(policy: dict) -> str:
    return f"{policy['name']} (yours)" if policy["user"] else policy["name"]


def _float(value) -> float:
    """A number of the results dict, NaN where it is null."""
    return math.nan if value is None else float(value)


def plot_profile(results: dict, path: Path) -> None:
    """Horizontal grouped bars: one group per experiment, one bar per policy, its score in [0, 1].

    The user's policies (``user: true``) are drawn opaque with a black edge and listed first in
    the legend; the peers are lighter.  A policy without a score in an experiment (no setting
    reached) reads "not reached" instead of a bar; one with a score but no rank (it reached some of
    the settings only: a mean over those, which does not compare) is hatched.
    """
    plt = _pyplot()
    policies, experiments = _ordered(results), results["experiments"]
    colors = policy_colors(results)
    n = len(policies)
    bar = 0.8 / n
    fig, ax = plt.subplots(figsize=(7.5, 1.3 + len(experiments) * (0.35 + 0.09 * n)))
    any_partial = False
    for i, p in enumerate(policies):
        y = np.arange(len(experiments)) - 0.4 + bar * (i + 0.5)
        scores = np.array([_float(e["scores"].get(p["name"])) for e in experiments])
        shown = ~np.isnan(scores)
        partial = shown & np.array([e["ranks"].get(p["name"]) is None for e in experiments])
        any_partial |= bool(partial.any())
        ax.barh(y[shown], scores[shown], height=bar, color=colors[p["name"]], alpha=1.0 if p["user"] else 0.55,
                edgecolor="black" if p["user"] else "none", linewidth=1.2, label=_label(p), zorder=3 if p["user"] else 2,
                hatch=["////" if h else None for h in partial[shown]])
        for y_absent in y[~shown]:
            ax.text(0.01, y_absent, "not reached", color=colors[p["name"]], fontsize=6, va="center")
    ax.set_yticks(np.arange(len(experiments)), [e["name"] for e in experiments])
    ax.set_ylim(len(experiments) - 0.5, -0.5)
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("score (1 = best; each experiment defines its own)"
                  + ("; hatched: over the settings reached, unranked" if any_partial else ""), fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(f"{results['suite']} profile (size {results['size']})", fontsize=10)
    fig.subplots_adjust(left=0.16, right=0.72, top=1.0 - 0.45 / fig.get_figheight(),
                        bottom=0.6 / fig.get_figheight())
    _save(plt, fig, path, tight=True)  # the legend's long names included


def _log_axes(ax, rounds: list[np.ndarray], means: list[np.ndarray]) -> None:
    """Log axes where the data span a decade or more (and are positive), linear otherwise."""
    r = np.concatenate(rounds)
    if r.min() > 0 and r.max() >= 10 * r.min():
        ax.set_xscale("log")
    m = np.concatenate(means)
    m = m[np.isfinite(m) & (m > 0)]
    if m.size and m.max() >= 10 * m.min():
        ax.set_yscale("log", nonpositive="mask")
    ax.minorticks_off()  # a log axis's minor ticks would double the time to draw a panel


def plot_curves(results: dict, experiment: dict, path: Path) -> None:
    """Regret curves of one experiment: one panel per setting, each policy's mean with its 95% band.

    Args:
      results: the results dict (its ``policies`` fix the colours and the legend).
      experiment: one of ``results["experiments"]``; a policy whose curve is null in a setting
        (horizon not reached) is absent from that panel.
      path: the PNG to write.
    """
    plt = _pyplot()
    policies, settings = _ordered(results), experiment["settings"]
    colors = policy_colors(results)
    cols = min(len(settings), 5)
    rows = math.ceil(len(settings) / cols)
    width, height = 3.1 * cols, 2.7 * rows + 0.45 + 0.2 * math.ceil(len(policies) / min(len(policies), 6))
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    handles = {}
    for j, (ax, setting) in enumerate(zip(axes.flat, settings, strict=False)):
        rounds, means, bands = [], [], []
        for p in policies:
            curve = experiment["curves"].get(p["name"], [None] * len(settings))[j]
            if curve is None:
                continue
            t = np.asarray(curve["rounds"], np.float64)
            mean = np.asarray([_float(v) for v in curve["mean"]])
            low = np.asarray([_float(v) for v in curve["low"]])
            high = np.asarray([_float(v) for v in curve["high"]])
            color = colors[p["name"]]
            bands.append((t, low, high, color))
            (handles[p["name"]],) = ax.plot(t, mean, color=color, lw=2.0 if p["user"] else 1.0,
                                            zorder=3 if p["user"] else 2)
            rounds.append(t)
            means.append(mean)
        if rounds:
            _log_axes(ax, rounds, means)
        # The bands after the axes: on a log axis a band's low end at 0 (the interval clipped there) is
        # drawn down to the axis's foot, as far as the axis shows, not dropped.
        bottom = ax.get_ylim()[0]
        for t, low, high, color in bands:
            shown_low = np.maximum(low, bottom) if ax.get_yscale() == "log" else low
            ax.fill_between(t, shown_low, high, color=color, alpha=0.15, lw=0, zorder=1)
        if bands and ax.get_yscale() == "log":
            ax.set_ylim(bottom=bottom)
        ax.set_title(f"{setting['label']}\nK = {setting['num_arms']}, T = {setting['horizon']}", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("round t", fontsize=7)
        if j % cols == 0:
            ax.set_ylabel("mean regret", fontsize=7)
    for ax in axes.flat[len(settings):]:
        ax.set_visible(False)
    shown = [p for p in policies if p["name"] in handles]
    fig.legend([handles[p["name"]] for p in shown], [_label(p) for p in shown], loc="lower center",
               ncol=min(len(shown), 6) or 1, fontsize=7, frameon=False)
    fig.suptitle(f"{experiment['name']}: regret per setting (mean, 95% band)", fontsize=10)
    legend = 0.2 * math.ceil(len(shown) / (min(len(shown), 6) or 1)) + 0.15
    fig.subplots_adjust(left=0.5 / width, right=1.0 - 0.15 / width, top=1.0 - 0.75 / height,
                        bottom=(legend + 0.45) / height, wspace=0.3, hspace=0.6)
    _save(plt, fig, path)


def _beyond(row: dict) -> bool:
    """A point beyond Theorem 1's line, or with d above one (as plot_measurements numbers them)."""
    return _float(row["off_frontier"]) < 0.0 or _float(row["d_low"]) > _ABOVE_ONE


def plot_frontier(results: dict, path: Path) -> None:
    """The frontier rows against Theorem 1's line, as :func:`~htb_jax._src.frontier.plots.plot_measurements`
    draws measurements: one panel per (family, eps), each policy's finite-T slopes ``(d, c)`` with
    their 95% intervals (filled marker), ``x`` at the schedule's finite-T prediction where the row
    has one; points beyond the line (or with ``d > 1``) numbered and listed under the panels with
    their rows' notes.
    """
    plt = _pyplot()
    rows = results["frontier"]
    colors = policy_colors(results)
    labels = {p["name"]: _label(p) for p in results["policies"]}
    markers = dict(zip(colors, "s^Dv<>ph*XPd8H" * 4, strict=False))
    panels = list(dict.fromkeys((r["family"], r["eps"]) for r in rows))
    shown = [_float(r[k]) for r in rows for k in ("d_high", "c_high", "d_finite_t", "c_finite_t")]
    high = max(1.08, max((v for v in shown if np.isfinite(v)), default=0.0) + 0.05)
    low = min(-0.05, min(_float(r["c_low"]) for r in rows) - 0.05)
    cols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.6 * nrows), squeeze=False)
    handles, notes = {}, []
    for ax, (family, eps) in zip(axes.flat, panels, strict=False):
        frontier_panel(ax, float(eps), f"{family}, eps = {eps:g}  (filled: finite-T slope, x: schedule)", high=high)
        ax.set_xlim(0.0, high)
        ax.set_ylim(low, high)
        beyond = 0
        for r in rows:
            if (r["family"], r["eps"]) != (family, eps):
                continue
            color = colors.get(r["policy"], "grey")
            if not (math.isnan(_float(r["d_finite_t"])) or math.isnan(_float(r["c_finite_t"]))):
                ax.plot(r["d_finite_t"], r["c_finite_t"], "x", color=color, ms=7)
            d, c = _float(r["d"]), _float(r["c"])
            handles[r["policy"]] = ax.errorbar(
                d, c,
                xerr=[[max(d - _float(r["d_low"]), 0.0)], [max(_float(r["d_high"]) - d, 0.0)]],
                yerr=[[max(c - _float(r["c_low"]), 0.0)], [max(_float(r["c_high"]) - c, 0.0)]],
                fmt=markers.get(r["policy"], "o"), color=color, ms=6, capsize=2,
            )
            if _beyond(r):
                beyond += 1
                ax.annotate(str(beyond), (d, c), textcoords="offset points", xytext=(5, 5), fontsize=8,
                            color=color, weight="bold")
                notes.append(textwrap.fill(f"{family}, eps = {eps:g}, {beyond}. {r['policy']}: {r['note']}", 150,
                                           subsequent_indent="    "))
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    first = axes.flat[0]
    fig.legend([first.get_lines()[0], *handles.values()], ["Theorem 1 frontier", *map(labels.get, handles)],
               loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=min(len(handles) + 1, 4), fontsize=8, frameon=False)
    if notes:
        lines = math.ceil((len(handles) + 1) / min(len(handles) + 1, 4))
        fig.text(0.01, -(0.22 * lines + 0.2) / fig.get_figheight(), "\n".join(notes), fontsize=NOTE_POINTS, va="top")
    fig.suptitle(f"{results['suite']}: worst-case exponents against Theorem 1's line", fontsize=10)
    fig.subplots_adjust(left=0.6 / fig.get_figwidth(), right=1.0 - 0.2 / fig.get_figwidth(),
                        top=1.0 - 0.6 / fig.get_figheight(), bottom=0.55 / fig.get_figheight(), wspace=0.25, hspace=0.35)
    _save(plt, fig, path, tight=True)
