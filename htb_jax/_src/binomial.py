"""Binomial variates from counter-based words: the block sums of two-point arms.

The sum of ``s`` pulls of ``TwoPoint(low, high, p)`` is ``low (s - X) + high X``
with ``X ~ Binomial(s, p)``, so a Median-of-Means block costs one binomial
variate whatever its size.  Each variate is a function of one 64-bit word
(the lane's key) and of ``(s, p)`` only, so it is reproducible and does not
depend on which other variates share its batch.

Two exact methods, chosen per lane (after the symmetry ``p > 1/2 -> n - X``):

* mean ``n p < 10``: inversion by sequential search on the survival function,
  from a uniform with full relative precision down to ``2^-64``, so that
  ``P(X >= 1) = 1 - (1 - p)^n`` is honoured for spike probabilities down to
  1e-12 and below.  The survival function is updated by subtraction; its
  absolute error stays below about ``1e-15 P(X >= 1)``.
* mean ``n p >= 10``: Hormann's BTRS transformed rejection (1993), whose
  acceptance test uses the log ratio ``log(P(X = k) / P(X = m))`` written
  with ``log1p`` and Stirling tails, accurate for ``n`` up to ``2^53``
  (horizons to 10^18 and beyond; a plain ``lgamma`` difference would lose
  every digit at ``n ~ 10^15``).

Each method is a ``while_loop`` over all lanes at once: the trip count is the
largest variate among the inversion lanes (below about 40 for a million
lanes) and the largest number of rejection trials among the others (about
7).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import bits as bits_lib

_F64 = jnp.float64
INVERSION_MEAN = 10.0
_MAX_INVERSION_STEPS = 200  # P(X > 200 | n p < 10) < 1e-180
_MAX_REJECTION_TRIALS = 1000  # P(more trials) < 1e-500 (acceptance > 0.5 per trial)
# lgamma(k + 1) - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2 for k = 0..9.
_STIRLING_TAIL = np.array(
    [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ]
)


def stirling_tail(k: jax.Array) -> jax.Array:
    """``lgamma(k + 1) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]`` for integer ``k >= 0``, f64."""
    k = jnp.asarray(k, _F64)
    small = jnp.asarray(_STIRLING_TAIL)[jnp.clip(k, 0, 9).astype(jnp.int32)]
    kp1sq = (k + 1.0) ** 2
    series = 1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / 1680.0 / kp1sq) / kp1sq) / kp1sq
    large = series / (k + 1.0)
    return jnp.where(k <= 9, small, large)


def log_pmf_ratio(k: jax.Array, m: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """``log(P(X = k) / P(X = m))`` for ``X ~ Binomial(n, p)``, without cancellation.

    Args:
      k, m: f64 integers in ``[0, n]``.
      n: f64 number of trials.
      p: f64 success probability in ``(0, 1)``.

    Returns:
      f64, accurate to a few ulps of ``|k - m| (1 + |k - m| / sqrt(n p q))``.
    """
    q = 1.0 - p
    first = (m + 0.5) * jnp.log1p((m - k) / (k + 1.0))
    second = (n - m + 0.5) * jnp.log1p((k - m) / (n - k + 1.0))
    third = (k - m) * jnp.log1p(((n + 2.0) * p - (k + 1.0)) / ((k + 1.0) * q))
    tails = stirling_tail(m) - stirling_tail(k) + stirling_tail(n - m) - stirling_tail(n - k)
    return first + second + third + tails


def _uniform(a: jax.Array, b: jax.Array) -> jax.Array:
    """f64 in ``(0, 1)`` from two uint32 words, relative precision ``2^-53`` down to ``2^-64``."""
    w = bits_lib.join_words(a, b)
    return jnp.minimum(w.astype(_F64) * 2.0**-64 + 2.0**-65, 1.0 - 2.0**-53)


def _trial_uniforms(key0, key1, trial):
    """Two independent uniforms for rejection trial ``trial`` of each lane."""
    a0, a1 = bits_lib.threefry2x32(key0, key1, jnp.uint32(1), trial.astype(jnp.uint32))
    b0, b1 = bits_lib.threefry2x32(key0, key1, jnp.uint32(2), trial.astype(jnp.uint32))
    return _uniform(a0, a1), _uniform(b0, b1)


def _inversion(v, n, p, active):
    """Sequential search: ``X = min{k : v >= P(X > k)}``, lanes where ``active``."""
    log_q = jnp.log1p(-p)
    pmf = jnp.exp(n * log_q)
    survival = -jnp.expm1(n * log_q)
    odds = p / (1.0 - p)
    k = jnp.zeros_like(n)
    done = (~active) | (v >= survival)

    def cond(state):
        step, _, _, _, done = state
        return jnp.any(~done) & (step < _MAX_INVERSION_STEPS)

    def body(state):
        step, k, pmf, survival, done = state
        pmf_next = pmf * (n - k) / (k + 1.0) * odds
        survival_next = survival - pmf_next
        k_next = k + 1.0
        go = ~done
        k = jnp.where(go, k_next, k)
        pmf = jnp.where(go, pmf_next, pmf)
        survival = jnp.where(go, survival_next, survival)
        done = done | (v >= survival) | (k >= n)
        return step + 1, k, pmf, survival, done

    _, k, _, _, _ = jax.lax.while_loop(cond, body, (0, k, pmf, survival, done))
    return k


def _btrs(key0, key1, n, p, active):
    """Hormann's BTRS rejection for lanes with ``n p >= 10`` (and ``p <= 1/2``) where ``active``."""
    q = 1.0 - p
    spq = jnp.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    m = jnp.floor((n + 1.0) * p)

    def cond(state):
        trial, _, done = state
        return jnp.any(~done) & (trial < _MAX_REJECTION_TRIALS)

    def body(state):
        trial, out, done = state
        u, v = _trial_uniforms(key0, key1, jnp.full(n.shape, trial, jnp.uint32))
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2.0 * a / us + b) * u + c)
        fast = (us >= 0.07) & (v <= v_r)
        inside = (k >= 0) & (k <= n)
        k_safe = jnp.clip(k, 0.0, n)
        log_v = jnp.log(v * alpha / (a / (us * us) + b))
        accept = fast | (inside & (log_v <= log_pmf_ratio(k_safe, m, n, p)))
        take = (~done) & accept
        return trial + 1, jnp.where(take, k_safe, out), done | accept

    done = ~active
    _, out, _ = jax.lax.while_loop(cond, body, (0, jnp.zeros_like(n), done))
    return out


def _binomial_tile(words, n, p):
    """Both methods on one tile of lanes (``p <= 1/2``; trivial lanes return 0)."""
    trivial = (n <= 0) | (p <= 0)
    safe_p = jnp.where(trivial, 0.5, p)
    safe_n = jnp.where(trivial, 1.0, n)
    key0 = (words >> jnp.uint64(32)).astype(jnp.uint32)
    key1 = words.astype(jnp.uint32)
    by_inversion = (~trivial) & (safe_n * safe_p < INVERSION_MEAN)
    first = bits_lib.threefry2x32(key0, key1, jnp.uint32(0), jnp.uint32(0))
    x = jnp.where(
        by_inversion,
        _inversion(_uniform(*first), safe_n, safe_p, by_inversion),
        _btrs(key0, key1, safe_n, safe_p, (~trivial) & ~by_inversion),
    )
    return jnp.where(trivial, 0.0, x)


def default_tile() -> int:
    """Lanes per tile: 1024 on a CPU (a tile's loops stop with its own lanes), 2^18 on an
    accelerator (fewer, wider steps; a quantile tile then holds about 0.5 GiB of quadrature
    nodes).  A variate does not depend on the tile."""
    return 1024 if jax.default_backend() == "cpu" else 2**18


def partitioned(method, tile: int | None, run_tile, fills, *lanes):
    """Runs ``run_tile`` on tiles of lanes grouped by ``method`` (a stable partition).

    Args:
      method: i32[N] method index per lane, in ``[0, 3)``.
      tile: static lanes per tile, or None for :func:`default_tile`.
      run_tile: ``(*tile_lanes) -> f64[tile]``.
      fills: padding value of each lane array.
      *lanes: [N] arrays.

    Returns:
      f64[N] in the original lane order.
    """
    one_hot = method[:, None] == jnp.arange(3)
    before = jnp.cumsum(jnp.sum(one_hot, axis=0)) - jnp.sum(one_hot, axis=0)
    rank = jnp.cumsum(one_hot, axis=0) - 1
    dest = before[method] + jnp.take_along_axis(rank, method[:, None], axis=1)[:, 0]
    size = method.shape[0]
    tile = max(1, min(default_tile() if tile is None else tile, size))
    padded = tile * -(-size // tile)

    def arrange(a, fill):
        return jnp.full((padded,), fill, a.dtype).at[dest].set(a).reshape(-1, tile)

    tiles = tuple(arrange(a, fill) for a, fill in zip(lanes, fills, strict=True))
    return jax.lax.map(lambda t: run_tile(*t), tiles).reshape(-1)[dest]


@functools.cache
def lanewise(fn, tile: int | None):
    """``fn(*lanes, tile=tile)``, whose ``vmap`` is one call on the batched lanes.

    ``fn`` works lane by lane on broadcast arrays (each output element is a
    function of the inputs at its index alone) and runs its lanes in tiles
    grouped by method, each tile's loops stopping with its own lanes.  Batched
    by ``vmap`` the usual way, those loops and their ``cond`` would be batched
    too: the ``cond`` computes both branches for every lane (the quantile's
    tail quadrature, 257 nodes, for lanes that need none) and every tile runs
    until the slowest lane of the whole batch is done.  Here the batch axis
    joins the lanes instead (nested ``vmap``s join one after the other), so the
    partition by method sees all of them; every lane's result is the same.
    """

    @jax.custom_batching.custom_vmap
    def call(*lanes):
        return fn(*lanes, tile=tile)

    @call.def_vmap
    def batched(axis_size, in_batched, *lanes):
        shapes = [a.shape[1:] if b else a.shape for a, b in zip(lanes, in_batched, strict=True)]
        common = jnp.broadcast_shapes(*shapes)

        def full(a, b, shape):
            if b:  # the batch axis first, then the lane axes aligned on the right
                a = a.reshape((axis_size,) + (1,) * (len(common) - len(shape)) + shape)
            return jnp.broadcast_to(a, (axis_size, *common))

        return call(*map(full, lanes, in_batched, shapes)), True

    return call


def binomial_from_words(words: jax.Array, n: jax.Array, p: jax.Array, *, tile: int | None = None) -> jax.Array:
    """``Binomial(n, p)`` variates, one per 64-bit word.

    Lanes are grouped by method (inversion, rejection, trivial: ``n = 0`` or
    ``p`` in ``{0, 1}``) by a stable partition, then run in tiles of
    ``tile`` lanes: a tile's loops stop as soon as its own lanes are done, so
    trivial lanes (unused blocks, Dirac arms) cost almost nothing and no tile
    waits for the slowest lane of the whole batch.  Under ``vmap`` the batch
    axes join the lanes (:func:`lanewise`).

    Args:
      words: u64[...] one random word per lane (its key: the variate is a
        function of the word, ``n`` and ``p`` alone).
      n: f64[...] numbers of trials, integers in ``[0, 2^53]`` (broadcast).
      p: f64[...] success probabilities in ``[0, 1]`` (broadcast).
      tile: static number of lanes per tile (default :func:`default_tile`).

    Returns:
      f64[...] integer-valued variates in ``[0, n]``.
    """
    return lanewise(_binomial_from_words, tile)(jnp.asarray(words, jnp.uint64), jnp.asarray(n, _F64),
                                                 jnp.asarray(p, _F64))


def _binomial_from_words(words, n, p, *, tile):
    words, n, p = jnp.broadcast_arrays(words, n, p)
    shape = words.shape
    words, n, p = words.reshape(-1), jnp.maximum(n.reshape(-1), 0.0), p.reshape(-1)
    flip = p > 0.5
    small_p = jnp.where(flip, 1.0 - p, p)
    # Stable partition of the lanes: inversion, then rejection, then trivial.
    trivial = (n <= 0) | (small_p <= 0)
    method = jnp.where(trivial, 2, jnp.where(n * small_p < INVERSION_MEAN, 0, 1))
    x = partitioned(method, tile, _binomial_tile, (0, 0.0, 0.0), words, n, small_p)
    return jnp.where(flip, n - x, x).reshape(shape)
