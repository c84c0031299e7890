"""The empirical law of observed rewards: arms from data.

Each arm is the uniform law on its observations (rounded to float32, as every
reward is), so a bandit instance can be built from real data and run through
every entry point.  The observations are the tree structure (a static field),
not leaves: every leaf has the batch shape, as the engine's and the reward
table's code expect of a reward law, and the data enter a compiled program as
a constant.  A program is therefore compiled per data set (two laws built from
equal data share it), and the fingerprint of a stored run covers the data.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import pytree
from htb_jax._src.distributions.base import _F64, Distribution, _f32, _f64
from htb_jax._src.pytree import class_keyed_jit
from htb_jax._src.validation import (
    check_broadcast,
    check_float32,
    check_integer,
    check_interval,
    given,
    lists_as_arrays,
    real_array,
)

_MASK32 = np.uint64(2**32 - 1)
_THIRTY_TWO = np.uint64(32)


@dataclasses.dataclass(frozen=True, eq=False)
class Observations:
    """Every arm's observations, pooled: the static part of an :class:`Empirical` law.

    Attributes:
      pool: f32[N] each arm's observations sorted in increasing order, one arm after another
        (arms built from the same array share one run of it).
      longest: the largest number of observations of one arm.
      digest: SHA-256 of ``pool`` and ``longest``: two pools compare equal where their digests
        do, so laws built from equal data share compiled programs (``longest`` fixes the shape of
        the moments' programs, so it counts: ``[[1], [2, 3, 4]]`` and ``[[1, 2], [3, 4]]`` pool
        the same values).
    """

    pool: np.ndarray
    longest: int
    digest: str

    @classmethod
    def of(cls, runs: Sequence[np.ndarray]) -> tuple[Observations, np.ndarray, np.ndarray]:
        """The pooled runs (each f32[n_i], sorted here) and each run's start and length."""
        pool = np.concatenate([np.sort(r) for r in runs]).astype(np.float32)
        pool.setflags(write=False)
        sizes = np.array([r.size for r in runs], np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        longest = int(sizes.max())
        digest = hashlib.sha256(pool.tobytes() + longest.to_bytes(8, "little")).hexdigest()
        return cls(pool, longest, digest), starts, sizes

    def __hash__(self) -> int:
        return hash(self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Observations) and self.digest == other.digest

    def __repr__(self) -> str:
        return f"Observations({self.pool.size} values, sha256 {self.digest[:12]})"


def _observations(name: str, value: Any) -> np.ndarray:
    """One arm's observations as f32[n]: ``ValueError`` naming ``name`` for a wrong rank, an empty
    array, a value that is not finite or one beyond the float32 range of the rewards."""
    arr = real_array(name, value, "a one-dimensional array of observed rewards")
    if arr is None:
        raise TypeError(
            f"{name} must be concrete observed rewards (a NumPy or JAX array), not a traced value."
        )
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be a one-dimensional array of observed rewards; got an array of shape {arr.shape}."
        )
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one observed reward; got an empty array.")
    if arr.size >= 2**32:
        raise ValueError(f"{name} must hold fewer than 2^32 observed rewards; got {arr.size}.")
    values = arr.astype(np.float64)
    bad = ~np.isfinite(values)
    if np.any(bad):
        at = int(np.argmax(bad))
        raise ValueError(f"{name} must hold finite observed rewards; got {name}[{at}]={float(values[at])!r}.")
    check_float32(name, values)
    rounded = values.astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    subnormal = (rounded != 0) & (np.abs(rounded) < tiny)
    if np.any(subnormal):  # XLA's CPU code flushes them to 0: a draw would be no observation
        at = int(np.argmax(subnormal))
        raise ValueError(
            f"{name} must hold 0 or rewards of absolute value at least {tiny:.8g} (the least normal float32: "
            f"smaller ones are flushed to 0 when drawn); got {name}[{at}]={float(values[at])!r}; rescale the data."
        )
    return rounded


@pytree.dataclass
class Empirical(Distribution):
    """The empirical law of observed rewards: each arm draws one of its observations uniformly.

    Built with :meth:`from_samples` (one array per arm, of any lengths) or
    :meth:`from_table` (a padded table and each row's count).  Each arm's
    observations are rounded to float32 and sorted; a draw from the 64-bit word
    ``w`` that every family reads for that seed, arm and pull (common random
    numbers) takes the observation of index

        i = floor(w n / 2^64)   in {0, ..., n - 1}

    of the arm's ``n`` sorted observations, in exact integer arithmetic
    (``w = 2^32 h + l``: ``i = (h n + floor(l n / 2^32)) >> 32``, every product
    below ``2^64``), the same on every machine.  The draw is thus the empirical
    quantile ``F_n^-1(U)`` at ``U = w / 2^64``.  (Each family maps the words its
    own way: a :class:`Pareto` draw is ``F^-1(1 - U)``, and a :class:`Gaussian`'s
    no quantile of ``U`` alone, so runs on data and on a fitted law with one key
    are not paired draw by draw.)  Index ``i`` has ``floor(2^64 / n)`` or ``ceil(2^64 / n)`` of
    the ``2^64`` words: probability ``1/n`` within ``2^-64``.  ``shift`` is
    added in float32.

    Every moment of a finite sample is finite: :meth:`eps_sup` is ``inf``, as
    for :class:`Gaussian` and :class:`TwoPoint`, so it rules out no ``eps``
    (``htb-jax sweep`` checks ``eps < eps_sup``), and the normalisation
    ``U_eps`` of :func:`~htb_jax.intrinsic_scale` and ``htb.frontier.measure``
    is the data's own ``max_i (E|X_i|^(1+eps))^(1/(1+eps))`` at whatever
    ``eps`` it is given, finite for all.  The law is bounded by the largest
    observation: it follows the population's tail down to probabilities of
    about ``1/n``, no further.  Which ``eps`` describes that population is a
    question for its tail: :func:`~htb_jax.tail_index` estimates the index
    ``alpha`` and suggests ``eps = min(1, alpha - 1)``.  Only the per-pull
    sampler of :func:`~htb_jax.simulate` applies (no closed-form block sums);
    ``sampler="auto"`` chooses it, and ``"block_sums"`` or ``"order_statistic"``
    is refused.

    Attributes:
      start: f[...] offset of each arm's observations in ``data.pool``.
      size: f[...] number of observations ``n`` of each arm, in ``[1, 2^32)``.
      shift: f[...] added to every draw (the location that :func:`~htb_jax.equal_gap`
        moves).
      data: the pooled observations (static).

    Examples:
      >>> import jax, numpy as np, htb_jax as htb
      >>> nu = htb.Empirical.from_samples([[0.0, 1.0, 5.0], [2.0, -1.0]])
      >>> nu.batch_shape, nu.mean().tolist()
      ((2,), [2.0, 0.5])
      >>> htb.reward_table(jax.random.key(0), nu, 6).tolist()
      [[1.0, 0.0, 5.0, 1.0, 1.0, 1.0], [-1.0, 2.0, -1.0, -1.0, -1.0, -1.0]]
      >>> gapped = htb.equal_gap(htb.Empirical.from_samples(np.arange(10.0)), num_arms=3, gap=0.5)
      >>> gapped.mean().tolist(), gapped.eps_sup().tolist()
      ([5.0, 4.5, 4.5], [inf, inf, inf])
    """

    start: Any
    size: Any
    shift: Any
    data: Observations = pytree.static_field()

    location_fields: ClassVar[tuple[str, ...]] = ("shift",)

    def __post_init__(self):
        self.check_parameters()

    @classmethod
    def from_samples(cls, samples: Any, shift: Any = 0.0) -> Empirical:
        """The empirical law of each arm's observations.

        Args:
          samples: one arm's observations, f[n] (a law of batch shape ``()``, for
            :func:`~htb_jax.equal_gap`); or one array per arm, a sequence of K
            arrays f[n_i] of any lengths, or f[K, n] (batch shape ``(K,)``).  Every
            value finite and within the float32 range.
          shift: f[...] added to every draw; broadcast against the arms.

        Returns:
          The law, batch shape ``()`` or ``broadcast((K,), shift.shape)``.

        Raises:
          ValueError: for an arm without observations, a value that is not
            finite or beyond the float32 range, or an array of rank other than 1
            (2 for one table of arms).
        """
        if (
            isinstance(samples, (list, tuple))
            and samples
            and all(isinstance(s, (list, tuple)) or np.ndim(s) >= 1 for s in samples)
        ):
            runs = [_observations(f"samples[{i}]", s) for i, s in enumerate(samples)]
            data, starts, sizes = Observations.of(runs)
            return cls(start=starts.astype(np.float64), size=sizes.astype(np.float64), shift=shift, data=data)
        arr = real_array("samples", samples, "observed rewards: f[n] for one arm, or one array per arm")
        if arr is not None and arr.ndim == 2:
            return cls.from_samples(list(arr), shift)
        data, starts, sizes = Observations.of([_observations("samples", samples)])
        return cls(start=float(starts[0]), size=float(sizes[0]), shift=shift, data=data)

    @classmethod
    def from_table(cls, values: Any, counts: Any, shift: Any = 0.0) -> Empirical:
        """The empirical law of the first ``counts[i]`` entries of each row ``values[i]``.

        Args:
          values: f[K, n_max] observations, row ``i`` padded beyond ``counts[i]``
            (the padding is ignored).
          counts: i[K] number of observations of each arm, in ``[1, n_max]``.
          shift: f[...] added to every draw.

        Returns:
          The law, batch shape ``broadcast((K,), shift.shape)``.
        """
        table = real_array("values", values, "a table f[K, n_max] of observed rewards")
        if table is None or table.ndim != 2 or 0 in table.shape:
            shape = None if table is None else table.shape
            raise ValueError(f"values must be a table f[K, n_max] of observed rewards, K >= 1 arms of n_max >= 1; got "
                             f"shape {shape}.")
        check_integer("counts", counts, 1, maximum=table.shape[1])
        counts = np.asarray(counts)
        if counts.shape != table.shape[:1]:
            raise ValueError(
                f"counts must hold one count per row of values, shape {table.shape[:1]}; got shape {counts.shape}."
            )
        runs = [
            _observations(f"values[{i}, :{int(c)}]", row[: int(c)])
            for i, (row, c) in enumerate(zip(table, counts, strict=True))
        ]
        data, starts, sizes = Observations.of(runs)
        return cls(start=starts.astype(np.float64), size=sizes.astype(np.float64), shift=shift, data=data)

    def check_parameters(self) -> None:
        """``TypeError`` for ``data`` that is not the pooled observations that :meth:`from_samples` or
        :meth:`from_table` builds, or a parameter that is not real; ``ValueError`` for shapes that do not broadcast, runs outside the pool or a ``shift`` beyond
        the float32 range (concrete values only)."""
        if not isinstance(self.data, Observations):
            raise TypeError(
                f"Empirical data must be the pooled observations that Empirical.from_samples builds; got "
                f"{given('data', self.data)}."
            )
        lists_as_arrays(self, "Empirical")  # as Distribution.check_parameters does
        for name in ("start", "size", "shift"):
            real_array(f"Empirical {name}", getattr(self, name))
        check_broadcast("Empirical", start=self.start, size=self.size, shift=self.shift)
        total = self.data.pool.size
        check_integer("Empirical size", self.size, 1, maximum=min(total, 2**32 - 1))
        check_integer("Empirical start", self.start, 0, maximum=total - 1)
        start, size = real_array("start", self.start), real_array("size", self.size)
        if start is not None and size is not None:
            start, size = np.broadcast_arrays(np.asarray(start, np.float64), np.asarray(size, np.float64))
            past = start + size > total
            if np.any(past):
                raise ValueError(f"Empirical start + size must be at most the {total} pooled observations; got "
                                 f"start={start[past].flat[0]:g}, size={size[past].flat[0]:g}.")
        check_interval("Empirical shift", self.shift, -jnp.inf, jnp.inf, low_closed=False, high_closed=False)
        check_float32("Empirical shift", self.shift)
        shift = real_array("shift", self.shift)
        if start is not None and size is not None and shift is not None:
            self._check_shifted_range(start, size, np.asarray(shift, np.float64))

    def _check_shifted_range(self, start: np.ndarray, size: np.ndarray, shift: np.ndarray) -> None:
        """``ValueError`` where ``shift`` moves an arm's least or largest observation beyond the float32
        range of the rewards (the draws would be ``inf``)."""
        start, size, shift = np.broadcast_arrays(start, size, shift)
        first, last = start.astype(np.int64), (start + size - 1).astype(np.int64)
        pool = self.data.pool
        with np.errstate(over="ignore"):
            for ends in (first, last):
                moved = pool[ends] + shift.astype(np.float32)  # as a draw adds them: in float32
                bad = ~np.isfinite(moved)
                if np.any(bad):
                    raise ValueError(
                        f"Empirical shift moves an observation beyond the float32 range of the rewards: "
                        f"{float(pool[ends][bad].flat[0]):g} + shift {float(shift[bad].flat[0]):g} is {moved[bad].flat[0]}; "
                        f"give a smaller shift (or gap), or observations nearer 0."
                    )

    # -- shapes: every leaf has the batch shape; the observations are static --------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(jnp.broadcast_shapes(*(np.shape(p) for p in (self.start, self.size, self.shift))))

    def broadcast(self, shape: tuple[int, ...] | None = None) -> Empirical:
        shape = self.batch_shape if shape is None else tuple(shape)
        start, size, shift = (jnp.broadcast_to(_f64(p), shape) for p in (self.start, self.size, self.shift))
        return dataclasses.replace(self, start=start, size=size, shift=shift)

    # -- sampling --------------------------------------------------------------------------------
    def from_bits(self, words):
        w = words[..., 0]
        n = _f64(self.size).astype(jnp.uint64)
        high, low = w >> _THIRTY_TWO, w & _MASK32
        index = (high * n + ((low * n) >> _THIRTY_TWO)) >> _THIRTY_TWO  # floor(w n / 2^64)
        at = _f64(self.start).astype(jnp.int64) + index.astype(jnp.int64)
        return jnp.take(jnp.asarray(self.data.pool), at, mode="clip") + _f32(self.shift)

    # -- moments of the law, from every observation -----------------------------------------------
    def _average_of(self, term, argument) -> jnp.ndarray:
        """``mean_j term(x_j, a)`` over each law's draws ``x_j`` (f64), f64[broadcast(batch_shape, a.shape)].

        The laws are taken a few at a time (``lax.map``), so that no more than about
        :data:`_VALUES` draws are held at once: ``batch x longest`` of them, a family of many
        members on long data, took gigabytes.
        """
        argument = _f64(argument)
        shape = jnp.broadcast_shapes(self.batch_shape, argument.shape)
        leaves = [jnp.broadcast_to(leaf, shape).reshape(-1) for leaf in
                  (_f64(self.start).astype(jnp.int64), _f64(self.size).astype(jnp.int64), _f32(self.shift), argument)]
        pool, j = jnp.asarray(self.data.pool), jnp.arange(self.data.longest, dtype=jnp.int64)

        def one(start, size, shift, a):
            values = (jnp.take(pool, start + jnp.minimum(j, size - 1)) + shift).astype(_F64)
            return jnp.sum(jnp.where(j < size, term(values, a), 0.0)) / _f64(size)

        batch = max(1, _VALUES // self.data.longest)
        return jax.lax.map(lambda xs: one(*xs), leaves, batch_size=batch).reshape(shape)

    def mean(self):
        """The mean of each arm's draws, the average of its float32 observations (plus ``shift``), f64[batch_shape].

        Summed in float64: exact but for its rounding, a relative error of about ``n 2^-53`` of
        the average of ``|x|`` (observations of both signs near ``1e30`` that cancel lose the small
        ones beside them).
        """
        return _mean(self)

    def eps_sup(self):
        return jnp.full(self.batch_shape, jnp.inf, _F64)  # a finite sample has every moment

    def _abs_moment(self, eps):
        return self._average_of(lambda values, e: jnp.abs(values) ** (1.0 + e), eps)

    def _cdf(self, x):
        return self._average_of(lambda values, point: (values <= point).astype(_F64), x)


_VALUES = 2**22  # draws held at once by a moment's program (32 MiB of float64)
_mean = class_keyed_jit(lambda law: law._average_of(lambda values, _: values, 0.0))  # one program per data and shape
