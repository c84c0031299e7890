"""One policy's measured ``(d, c)``: :class:`Measurement` (what :func:`htb_jax.frontier.measure`
returns), its notes on finite-T slopes, and its table."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence

import numpy as np

from htb_jax._src.exponents import ExponentFit
from htb_jax._src.validation import check_instance_type, given

_ABOVE_ONE = 1.005  # a worst-case slope this far above 1 is read as one that the hardest member's change makes


@dataclasses.dataclass(frozen=True)
class Measurement:
    """One policy's measured ``(d, c)`` at one true ``eps``.

    Attributes:
      name: the policy's label.
      family_name: the family's label (a panel of :func:`htb_jax.frontier.plot_measurements`).
      eps: the true tail exponent (normalization by ``U_eps``).
      horizons: i64[H] the fitted horizons.
      regret: f64[F + 1, H, S] per-seed regrets (member ``F`` is the fixed instance).
      scale: f64[F + 1] ``U_eps`` of each member.
      exploration: i64[H] ``L_T`` on member 0, or for a ``member -> policy`` function on the fixed
        instance, whose schedule ``c`` is fitted on (0 where the policy reports none; -1 for anytime
        runs, read at checkpoints).
      d: the worst-case fit (``d.argmax``: the hardest member at each horizon, ``row()``'s ``worst_member`` the last).
      c: the fixed-instance fit.
      d_finite_t: the slope the schedule implies for ``d`` over the same horizons (NaN: no known schedule).
      c_finite_t: the slope of ``L_T`` (NaN: no known schedule).
      block_share: ``K B_T / L_T`` at the largest horizon (NaN: no known schedule).
      anytime: whether one run was read at checkpoints.
      seconds: wall time of this call's runs, compilation included: chunks read back from a store
        took none of it (after a resume it is the remaining chunks' time; NaN where every chunk was read back).
      resumed_chunks: seed chunks read back from the store.
    """

    name: str
    family_name: str
    eps: float
    horizons: np.ndarray
    regret: np.ndarray = dataclasses.field(repr=False)  # its repr printed every seed's regret
    scale: np.ndarray = dataclasses.field(repr=False)
    exploration: np.ndarray = dataclasses.field(repr=False)
    d: ExponentFit
    c: ExponentFit
    d_finite_t: float
    c_finite_t: float
    block_share: float
    anytime: bool
    seconds: float
    resumed_chunks: int

    @property
    def off_frontier(self) -> float:
        """The distance ``c + d (1+eps)/eps - (1+eps)/eps``, 0 on Theorem 1's line and negative beyond it."""
        r = (1.0 + self.eps) / self.eps
        return self.c.slope + self.d.slope * r - r

    @property
    def beyond_bound(self) -> bool:
        """Whether even the intervals' far corner lies beyond Theorem 1's line (a finite-T slope)."""
        r = (1.0 + self.eps) / self.eps
        return self.c.high + self.d.high * r - r < 0.0

    def note(self) -> str:
        """Why a slope may differ from an exponent: the finite range of ``T``, and the schedule's share."""
        parts = [f"finite-T slope, T in [{_t(self.horizons[0])}, {_t(self.horizons[-1])}]"]
        if self.beyond_bound:
            parts.append("beyond Theorem 1's line, which bounds exponents (T -> inf)")
        if not np.isnan(self.block_share) and self.block_share > 0.2:
            parts.append(f"K B_T is {self.block_share:.0%} of L_T")
        if self.c.high < 0.0:
            parts.append("c < 0: the fixed instance's regret falls over the range")
        if self.d.low > _ABOVE_ONE:
            parts.append("d > 1: the hardest member changes with T")
        return "; ".join(parts)

    def row(self) -> dict:
        """The flat row of a table or CSV (``measure.csv``'s columns, in this order).

        Returns:
          ``policy`` and ``family`` (the labels), ``eps``; ``horizons`` (how many were fitted),
          ``t_min``, ``t_max``, ``seeds``, ``anytime``; ``d``, ``d_low``, ``d_high``, ``d_finite_t``
          and ``c``, ``c_low``, ``c_high``, ``c_finite_t`` (the fits and their 95% intervals, the
          schedule's finite-T slopes or NaN); ``block_share``, ``off_frontier``;
          ``worst_normalized`` and ``worst_member`` (the largest mean ``R_T / U_eps`` over the
          family at the largest horizon, and its member), ``fixed_regret`` (the mean regret on the
          fixed instance there); ``seconds``; ``note`` (:meth:`note`).
        """
        return dict(
            policy=self.name, family=self.family_name, eps=self.eps,
            horizons=len(self.horizons), t_min=int(self.horizons[0]), t_max=int(self.horizons[-1]),
            seeds=int(self.regret.shape[-1]), anytime=self.anytime,
            d=self.d.slope, d_low=self.d.low, d_high=self.d.high, d_finite_t=self.d_finite_t,
            c=self.c.slope, c_low=self.c.low, c_high=self.c.high, c_finite_t=self.c_finite_t,
            block_share=self.block_share, off_frontier=self.off_frontier,
            worst_normalized=float(np.max(self.regret[:-1, -1].mean(-1) / self.scale[:-1])),
            worst_member=int(np.argmax(self.regret[:-1, -1].mean(-1) / self.scale[:-1])),
            fixed_regret=float(self.regret[-1, -1].mean()), seconds=self.seconds, note=self.note(),
        )


def _t(horizon) -> str:
    """A horizon as printed: exact below 10^5, else ``1e+07``-style."""
    return str(int(horizon)) if horizon < 10**5 else f"{float(horizon):.3g}"


def _check_measurements(measurements) -> None:
    if not isinstance(measurements, (list, tuple)) or not measurements:
        raise TypeError(
            f"measurements must be a non-empty list or tuple of Measurement (from measure); "
            f"got {given('measurements', measurements)}."
        )
    for i, m in enumerate(measurements):
        check_instance_type(f"measurements[{i}]", m, Measurement, "a Measurement (from measure)")


def _check_keyed(name: str, value, measurements: Sequence[Measurement]) -> dict:
    """``claims`` (values: a pair ``(d, c)`` of real numbers) or ``notes`` (values: strings), keyed by
    ``(policy name, eps)`` of one of ``measurements`` (``notes`` also by ``(policy name, family name, eps)``,
    for one policy measured on several families): a key that matches none would be ignored."""
    if value is None:
        return {}
    keys = "(policy name, eps)" + (" or (policy name, family name, eps)" if name == "notes" else "")
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be None or a dict keyed by {keys}; got {given(name, value)}.")
    known = {(m.name, m.eps) for m in measurements}
    if name == "notes":
        known |= {(m.name, m.family_name, m.eps) for m in measurements}
    for key, item in value.items():
        if key not in known:
            listed = ", ".join(f"({n!r}, {e:g})" for n, e in sorted({(m.name, m.eps) for m in measurements}, key=str))
            raise ValueError(f"{name} must be keyed by {keys} of a measurement given, among {listed}; "
                             f"got the key {key!r}, which matches none.")
        if name == "claims":
            pair = item if isinstance(item, (tuple, list)) else None
            if pair is None or len(pair) != 2 or not all(
                    isinstance(v, numbers.Real) and not isinstance(v, bool) for v in pair):
                raise TypeError(f"claims[{key!r}] must be a pair (d, c) of numbers; got {item!r}.")
        elif not isinstance(item, str):
            raise TypeError(f"notes[{key!r}] must be a string; got {given('note', item)}.")
    return value


def measurement_table(measurements: Sequence[Measurement], claims: dict | None = None) -> str:
    """Markdown: one row per measurement, with the claimed exponents where ``claims[(name, eps)] = (d, c)``.

    Args:
      measurements: a non-empty list or tuple of :class:`Measurement` (from
        :func:`htb_jax.frontier.measure`).
      claims: optional, a dict keyed by ``(policy name, eps)`` of a measurement given, whose values
        are the claimed exponents ``(d, c)``; a measurement without a claim shows ``-``.

    Returns:
      A Markdown table: per measurement its policy, family, ``eps``, range of ``T``, seeds, ``d``
      and ``c`` (claimed, finite-T prediction, measured with the 95% interval), the distance off
      Theorem 1's line (:attr:`Measurement.off_frontier`) and :meth:`Measurement.note`.
    """
    _check_measurements(measurements)
    claims = _check_keyed("claims", claims, measurements)
    fmt = lambda v: "-" if v is None or np.isnan(v) else f"{v:.3f}"  # noqa: E731
    head = (
        "| policy | family | eps | T | seeds | d claim | d finite T | d measured | c claim | c finite T "
        "| c measured | off frontier | note |\n|---|---|---:|---|---:|---:|---:|---|---:|---:|---|---:|---|\n"
    )
    lines = []
    for m in measurements:
        dc, cc = claims.get((m.name, m.eps), (math.nan, math.nan))
        r = m.row()
        lines.append(
            f"| {m.name} | {m.family_name} | {m.eps:g} | {_t(r['t_min'])}..{_t(r['t_max'])} | {r['seeds']} "
            f"| {fmt(dc)} | {fmt(m.d_finite_t)} | {m.d.slope:.3f} [{m.d.low:.3f}, {m.d.high:.3f}] | {fmt(cc)} "
            f"| {fmt(m.c_finite_t)} | {m.c.slope:.3f} [{m.c.low:.3f}, {m.c.high:.3f}] | {m.off_frontier:+.3f} "
            f"| {r['note']} |"
        )
    return head + "\n".join(lines)
