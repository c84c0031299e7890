"""The suite's real data: daily returns of West Texas Intermediate crude oil, 1986-2019.

``data/wti.csv.gz`` holds the daily spot price (FRED series DCOILWTICO, from the
U.S. Energy Information Administration), as the ``arch`` package ships it
(``data/NOTICE.md`` gives its source and license).  A reward is a day's log
return in percent, ``100 log(P_t / P_s)`` between consecutive quoted days
``s < t``: 8320 returns, whose tail index :func:`htb_jax.tail_index` reads as
about 4 (finite variance, heavier than a Gaussian's tails).
"""

from __future__ import annotations

import csv
import datetime
import functools
import gzip
import os

import numpy as np

PATH = os.path.join(os.path.dirname(__file__), "data", "wti.csv.gz")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


@functools.cache
def wti_returns() -> tuple[np.ndarray, np.ndarray]:
    """The daily log returns in percent and each one's weekday (0 = Monday), f64[8320] and i64[8320].

    Returns:
      ``(returns, weekday)``: f64[8320] the returns ``100 log(P_t / P_s)`` in date order, and
      i64[8320] the weekday of each one's later day, ``0`` (Monday) to ``4`` (Friday).  Both are
      read-only and cached: every call returns the same arrays.

    Examples:
      >>> import numpy as np
      >>> import htb_jax as htb
      >>> returns, weekday = htb.bench.wti_returns()
      >>> returns.size, round(float(returns.mean()), 5), np.bincount(weekday).tolist()
      (8320, 0.0073, [1577, 1707, 1708, 1680, 1648])
    """
    with gzip.open(PATH, "rt", encoding="utf-8") as f:
        rows = [(r["Date"], r["DCOILWTICO"]) for r in csv.DictReader(f) if r["DCOILWTICO"].strip() != "."]
    prices = np.array([float(p) for _, p in rows])
    days = [datetime.datetime.strptime(d, "%m/%d/%Y").date() for d, _ in rows]
    returns = 100.0 * np.diff(np.log(prices))
    weekday = np.array([d.weekday() for d in days[1:]], np.int64)
    returns.setflags(write=False)
    weekday.setflags(write=False)
    return returns, weekday


def by_weekday() -> list[np.ndarray]:
    """The returns of each weekday, Monday to Friday (a return is the weekday of its later day)."""
    returns, weekday = wti_returns()
    return [returns[weekday == d] for d in range(len(WEEKDAYS))]
