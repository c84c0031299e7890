"""Adaptive truncation from an independent sample: the robust pieces of AdaR-UCB.

Genalti, Marsigli, Gatti and Metelli (COLT 2024), Section 5, estimate a mean
without knowing ``eps`` or ``u`` from two independent lists of ``N`` samples
of one arm, ``X`` (estimation) and ``X'`` (threshold), and a budget
``b = c L > 0``:

* the **threshold** ``M`` is the positive root of
  ``f(M) = sum_j min(X'_j^2 / M^2, 1) = b``.  ``f`` is non-increasing, equal
  to ``m = #{j : X'_j != 0}`` for ``M`` below the smallest nonzero ``|X'_j|``
  and strictly decreasing (to 0) above it, so the root exists, and is unique,
  exactly when ``m > b`` (zeros count in ``N`` but never in ``f``);
* the **trimmed moments** are the mean ``mu`` and the unbiased variance ``V``
  of ``Y_j = X_j 1{|X_j| <= M}`` (a truncated sample counts as a zero).

Both are exact and cheap because the lists are kept sorted with prefix sums.
With ``s_(1) <= .. <= s_(N)`` the sorted squares ``X'^2`` and ``S_k`` the sum
of the ``k`` smallest, ``f(M) = (N - k) + S_k / M^2`` on the segment
``s_(k) < M^2 <= s_(k+1)``, and ``F_k = f(s_(k)) = (N - k + 1) + S_(k-1) /
s_(k)`` is non-increasing in ``k`` (``+inf`` for ``s_(k) = 0``).  The root
lies on the segment of ``k* = #{k : F_k > b}``:
``M^2 = S_(k*) / (b - (N - k*))``, and ``k*`` is a binary search over ``k``
(each step reads one square and one prefix sum), so a new budget costs
O(log N); for the moments, ``|X|`` sorted with prefix sums of ``X`` and ``X^2`` give
``sum Y`` and ``sum Y^2`` after one more binary search.  Inserting a sample
costs O(N) (a shift of the sorted row and of its prefix sums).

Every list is a fixed-size buffer of ``P`` slots holding ``n`` samples (the
rest are padding: ``+inf`` keys, zero values); every function works on one
list and is ``vmap``-able over arms and seeds.  Everything is float64.
Infinite samples are allowed: an infinite ``X'`` counts ``1`` in ``f`` for
every finite ``M`` (a finite root needs fewer than ``b`` of them), and an
infinite ``X`` is truncated to 0 at every finite threshold (at ``M = +inf``,
where no root exists, it is kept: the moments are then infinite or NaN, and
AdaR-UCB does not read them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

_F64 = jnp.float64


def _leading(holds: Callable[[jax.Array], jax.Array], n: jax.Array, size: int) -> jax.Array:
    """i64[]: how many of ``k = 1..n`` satisfy ``holds(k)``, for a predicate that holds up to
    some ``k`` and fails after: bisection in ``bit_length(size)`` steps, one ``holds`` (a
    gather or two) each.

    The steps are a loop on a CPU and unrolled elsewhere (the same operations, so the same
    numbers): a GPU runs a loop inside the engine's round loop as a loop of its own, every step
    waiting for the host to read the condition, while the unrolled steps can run as one kernel.
    On a 2-core CPU, unrolled, AdaR-UCB ran 1.27 times as long (12 instances, 1024 seeds,
    T = 1000: ``benchmarks/bench_engine_rounds.py``, HISTORY.md)."""

    def halve(_, bounds):  # holds(lo) (lo = 0: by convention); fails above hi
        lo, hi = bounds
        mid = (lo + hi + 1) // 2  # in lo+1..hi while lo < hi
        up = holds(jnp.maximum(mid, 1))
        return jnp.where((lo < hi) & up, mid, lo), jnp.where((lo < hi) & ~up, mid - 1, hi)

    steps = max(int(size).bit_length(), 1)
    return jax.lax.fori_loop(0, steps, halve, (jnp.int64(0), jnp.asarray(n, jnp.int64)), unroll=_unrolled())[0]


def _unrolled() -> bool:
    """Whether :func:`_leading` unrolls its steps: off a CPU (``benchmarks/bench_engine_rounds.py``
    times both forms: unrolled, AdaR-UCB ran 1.42 times as fast on an H100 and 0.79 times as fast
    on a 2-core CPU)."""
    return jax.default_backend() != "cpu"


def _insertion_point(keys: jax.Array, n: jax.Array, key: jax.Array) -> jax.Array:
    """i64[]: how many of the first ``n`` sorted ``keys`` (f64[P]) are ``<= key`` (O(log P))."""
    return _leading(lambda k: keys[k - 1] <= key, n, keys.shape[-1])


def _insert(row: jax.Array, pos: jax.Array, value: jax.Array) -> jax.Array:
    """``row`` (f64[P]) with ``value`` at ``pos`` and entries ``pos..`` moved up one (the last drops)."""
    i = jnp.arange(row.shape[-1])
    shifted = jnp.concatenate([row[:1], row[:-1]])
    return jnp.where(i < pos, row, jnp.where(i == pos, value, shifted))


def _insert_prefix(prefix: jax.Array, pos: jax.Array, value: jax.Array) -> jax.Array:
    """Prefix sums (f64[P+1], ``prefix[k]`` = sum of the first ``k`` entries) after inserting
    ``value`` at position ``pos``: ``prefix[k]`` for ``k <= pos``, ``prefix[k-1] + value`` above."""
    i = jnp.arange(prefix.shape[-1])
    shifted = jnp.concatenate([prefix[:1], prefix[:-1]]) + value
    return jnp.where(i <= pos, prefix, shifted)


class ThresholdList(NamedTuple):
    """An arm's threshold samples ``X'``, sorted by square (one list; stack for many).

    Attributes:
      squares: f64[P] ``X'^2`` ascending; ``+inf`` past the ``n`` samples.
      prefix: f64[P+1] ``prefix[k]``: sum of the ``k`` smallest squares
        (past ``n``: the sum of all ``n``).
    """

    squares: jax.Array
    prefix: jax.Array

    @classmethod
    def empty(cls, size: int) -> ThresholdList:
        """An empty list of ``size`` slots."""
        return cls(jnp.full(size, jnp.inf, _F64), jnp.zeros(size + 1, _F64))

    @classmethod
    def from_samples(cls, samples: jax.Array, n: jax.Array) -> ThresholdList:
        """The list of the first ``n`` of ``samples`` (f64[P]) by sorting: O(P log P)."""
        used = jnp.arange(samples.shape[-1]) < n
        squares = jnp.sort(jnp.where(used, jnp.square(samples.astype(_F64)), jnp.inf))
        kept = jnp.where(used, squares, 0.0)
        return cls(squares, jnp.concatenate([jnp.zeros(1, _F64), jnp.cumsum(kept)]))

    def insert(self, n: jax.Array, value: jax.Array) -> ThresholdList:
        """The list of ``n + 1`` samples after adding ``value`` to the first ``n``: O(P)."""
        square = jnp.square(jnp.asarray(value, _F64))
        pos = _insertion_point(self.squares, n, square)
        return ThresholdList(_insert(self.squares, pos, square), _insert_prefix(self.prefix, pos, square))

    def above(self, n: jax.Array, k: jax.Array, budget: jax.Array) -> jax.Array:
        """bool[]: ``F_k > budget`` for the 1-based rank ``k`` in ``1..n`` (O(1)).

        ``F_k = (n - k + 1) + S_(k-1) / s_(k)`` is ``f`` at ``M^2 = s_(k)``;
        compared without dividing: ``(n - k + 1) s_(k) + S_(k-1) > b s_(k)``
        (``+inf`` at a zero square; an infinite square counts ``n - k + 1``).
        """
        square, below = self.squares[k - 1], self.prefix[k - 1]
        count = (n - k + 1).astype(_F64)
        finite = count * square + below > budget * square
        return (square == 0.0) | jnp.where(jnp.isinf(square), count > budget, finite)

    def root(self, n: jax.Array, budget: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The threshold ``M`` solving ``sum_j min(X'_j^2 / M^2, 1) = budget``: O(log P).

        ``k* = #{k : F_k > b}`` by binary search (``F`` is non-increasing),
        then ``M^2 = S_(k*) / (b - (n - k*))``.

        Args:
          n: i64[] number of samples in the list.
          budget: f64[] ``b = c L``.

        Returns:
          ``(M, exists)``: f64[] and bool[]; ``exists`` is ``m > b > 0`` (the
          exact existence condition; with infinite samples, which count 1 for
          every finite ``M``, also fewer than ``b`` of them), ``M = +inf``
          where it is false.
        """
        budget = jnp.asarray(budget, _F64)
        n = jnp.asarray(n, jnp.int64)
        k = _leading(lambda k: self.above(n, k, budget), n, self.squares.shape[-1])
        # m > b > 0 with fewer than b infinite samples <=> the k*-th square is positive and finite
        # and b > n - k* (the root's denominator): F_(z+1) = m for z zeros, F_k <= #inf for an
        # infinite square, and F_k >= 1 for every k <= n.
        square = self.squares[jnp.maximum(k, 1) - 1]
        ones = (n - k).astype(_F64)
        exists = (k >= 1) & (square > 0.0) & (square < jnp.inf) & (budget > ones)
        level = self.prefix[k] / jnp.where(exists, budget - ones, 1.0)
        return jnp.where(exists, jnp.sqrt(level), jnp.inf), exists


class EstimationList(NamedTuple):
    """An arm's estimation samples ``X``, sorted by ``|X|`` (one list; stack for many).

    Attributes:
      magnitudes: f64[P] ``|X|`` ascending; ``+inf`` past the ``n`` samples.
      sums: f64[P+1] ``sums[k]``: sum of the ``X`` with the ``k`` smallest magnitudes.
      square_sums: f64[P+1] the same for ``X^2``.
    """

    magnitudes: jax.Array
    sums: jax.Array
    square_sums: jax.Array

    @classmethod
    def empty(cls, size: int) -> EstimationList:
        """An empty list of ``size`` slots."""
        return cls(jnp.full(size, jnp.inf, _F64), jnp.zeros(size + 1, _F64), jnp.zeros(size + 1, _F64))

    @classmethod
    def from_samples(cls, samples: jax.Array, n: jax.Array) -> EstimationList:
        """The list of the first ``n`` of ``samples`` (f64[P]) by sorting: O(P log P)."""
        x = samples.astype(_F64)
        used = jnp.arange(x.shape[-1]) < n
        keys = jnp.where(used, jnp.abs(x), jnp.inf)
        order = jnp.argsort(keys, stable=True)
        x = jnp.where(used, x, 0.0)[order]
        zero = jnp.zeros(1, _F64)
        return cls(keys[order], jnp.concatenate([zero, jnp.cumsum(x)]), jnp.concatenate([zero, jnp.cumsum(x * x)]))

    def insert(self, n: jax.Array, value: jax.Array) -> EstimationList:
        """The list of ``n + 1`` samples after adding ``value`` to the first ``n``: O(P)."""
        x = jnp.asarray(value, _F64)
        pos = _insertion_point(self.magnitudes, n, jnp.abs(x))
        return EstimationList(
            _insert(self.magnitudes, pos, jnp.abs(x)),
            _insert_prefix(self.sums, pos, x),
            _insert_prefix(self.square_sums, pos, x * x),
        )

    def moments(self, n: jax.Array, threshold: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Trimmed mean and variance of ``Y_j = X_j 1{|X_j| <= threshold}``: O(log P).

        ``mu = sum Y / n`` and ``V = (sum Y^2 - mu sum Y) / (n - 1)`` (clamped
        at 0: the subtraction loses about ``2^-53 (1 + mu^2 / V)`` relative).

        Args:
          n: i64[] number of samples, ``>= 2`` for ``V`` (NaN otherwise).
          threshold: f64[] ``M``.

        Returns:
          ``(mu, V)``, f64[] each.
        """
        count = _insertion_point(self.magnitudes, n, threshold)
        total, squares = self.sums[count], self.square_sums[count]
        size = n.astype(_F64)
        mean = jnp.where(n > 0, total / jnp.maximum(size, 1.0), jnp.nan)
        spread = jnp.maximum(squares - total * mean, 0.0)
        return mean, jnp.where(n > 1, spread / jnp.maximum(size - 1.0, 1.0), jnp.nan)
