"""Theorem 1's line and measured points on it: the panels of the frontier figures."""

from __future__ import annotations

import numpy as np

from htb_jax._src import theory
from htb_jax._src.frontier.t_frontier import TFrontierResult
from htb_jax._src.validation import check_instance_type, check_path, given


def _check_ax(ax) -> None:
    if ax is None or isinstance(ax, type) or not hasattr(ax, "errorbar"):
        raise TypeError(f"ax must be a matplotlib Axes; got {given('ax', ax)}.")


def frontier_panel(ax, eps: float, title: str, *, high: float = 1.02) -> None:
    """Theorem 1's line ``c + d (1+eps)/eps = (1+eps)/eps`` on ``ax``, with the (d, c) axes."""
    d = np.linspace(0.0, 1.0, 401)
    ax.plot(d, theory.t_frontier(d, eps), "k-", lw=1.2, label="Theorem 1 frontier")
    ax.set_xlim(0.45, high)
    ax.set_ylim(0.0, high)
    ax.set_xlabel("d (distribution-free exponent of T)")
    ax.set_ylabel("c (distribution-dependent exponent of T)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, alpha=0.3)


def plot_point(ax, row: dict, color, *, x: str = "d", y: str = "c", marker: str = "s", label=None) -> None:
    """One schedule's theory (o), finite-T prediction (x) and measurement with its intervals.

    Args:
      ax: a matplotlib Axes (for example one of :func:`frontier_panel`'s).
      row: a dict holding ``{x, y}``, ``{x, y}_low``/``_high``, ``{x, y}_theory`` and
        ``{x, y}_finite_t`` (or ``_finite_k``), as a row of :func:`fit_t_frontier`.
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
    needed = [f"{a}{suffix}" for a in (x, y) for suffix in ("", "_low", "_high", "_theory", f"_{finite}")]
    missing = [k for k in needed if k not in row]
    if missing:
        raise ValueError(f"row lacks {', '.join(missing)} (x={x!r}, y={y!r}).")
    ax.plot(row[f"{x}_theory"], row[f"{y}_theory"], "o", mfc="none", mec=color, ms=9)
    ax.plot(row[f"{x}_{finite}"], row[f"{y}_{finite}"], "x", color=color, ms=7)
    ax.errorbar(
        row[x], row[y],
        xerr=[[max(row[x] - row[f"{x}_low"], 0.0)], [max(row[f"{x}_high"] - row[x], 0.0)]],
        yerr=[[max(row[y] - row[f"{y}_low"], 0.0)], [max(row[f"{y}_high"] - row[y], 0.0)]],
        fmt=marker, color=color, ms=5, capsize=2, label=label,
    )


def plot_t_frontier(result: TFrontierResult, path) -> None:
    """Figure 1 with the measured points: one panel per ``eps``."""
    check_instance_type("result", result, TFrontierResult, "a TFrontierResult (from run_t_frontier)")
    check_path("path", path, file_object=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps_values = result.config.eps_values
    fig, axes = plt.subplots(1, len(eps_values), figsize=(4.2 * len(eps_values), 4.0), squeeze=False)
    for ax, e in zip(axes[0], eps_values, strict=True):
        frontier_panel(ax, e, f"eps = {e:g}  (o theory, x schedule at finite T, ■ measured)")
        rows = [r for r in result.rows if r["eps"] == e]
        colors = plt.cm.viridis(np.linspace(0.0, 0.85, max(len(rows), 1)))
        for r, color in zip(rows, colors, strict=False):
            plot_point(ax, r, color, label=f"alpha={r['alpha']:.3f}")
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        f"AdaR-ETC T-frontier: T in [{result.config.fit_from:.0e}, {max(result.config.horizons):.0e}], "
        f"{result.config.num_seeds} seeds",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
