"""The adaptive threshold and trimmed moments against direct evaluation with Python floats."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from htb_jax._src.adaptive_threshold import EstimationList, ThresholdList, _leading

SIZE = 48  # buffer slots


def _f(samples, level):
    """``sum_j min(x_j^2 / M^2, 1)`` with Python floats (an infinite sample counts 1)."""
    return math.fsum(1.0 if math.isinf(x) else min(x * x / (level * level), 1.0) for x in samples)


def _bisect_root(samples, budget):
    """The root of ``_f(samples, M) = budget`` by bisection on ``M`` (``_f`` is non-increasing)."""
    lo, hi = 1e-150, 1e150
    for _ in range(4000):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _f(samples, mid) > budget:
            lo = mid
        else:
            hi = mid
    return hi


def _cases():
    """(name, X' samples, budgets): zeros, heavy tails, ties, infinite samples (Python floats)."""
    rng = np.random.default_rng(7)
    heavy = [float(v) for v in rng.standard_t(1.2, size=40)]  # infinite variance
    with_zeros = list(heavy)
    for j in range(0, 40, 3):
        with_zeros[j] = 0.0  # 14 zeros: m = 26 < N = 40
    ties = [0.0] * 10 + [3.0] * 20 + [-3.0] * 5 + [0.5] * 5  # repeated squares, m = 30
    infinite = heavy[:30] + [math.inf, -math.inf]
    return [
        # m = 40: small budgets (several X'^2 above M^2: an inner segment), the boundary m just
        # above b, and b = m (no root).
        ("heavy", heavy, [0.5, 3.0, 17.49, 39.0, 40 - 1e-9, 40.0]),
        # m = 26 < N = 40: the zeros count in N, not in m; b = 30 < N has no root.
        ("zeros", with_zeros, [2.0, 12.0, 25.5, 26 - 1e-9, 26.0, 30.0]),
        ("ties", ties, [1.0, 5.0, 25.0, 29.999, 30.0, 0.0]),
        # two infinite samples (count 1 at every finite M): a root while b > 2, none at b <= 2;
        # a budget <= 0 has no root either.
        ("infinite", infinite, [2.0, 2.5, 10.0, 31.0, 32.0, -1.0]),
    ]


@jax.jit
@jax.vmap
def _roots(x, n, budgets):
    """For one list: the list built by sorting and by inserting one sample at a time, and the
    roots of both at every budget."""

    def add(j, lst):
        return jax.tree.map(lambda new, old: jnp.where(j < n, new, old), lst.insert(j, x[j]), lst)

    inserted = jax.lax.fori_loop(0, SIZE, add, ThresholdList.empty(SIZE))
    by_sorting = ThresholdList.from_samples(x, n)
    at = lambda lst: jax.vmap(lst.root, (None, 0))(n, budgets)  # noqa: E731
    return by_sorting, inserted, at(by_sorting), at(inserted)


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_the_bisection_counts_every_leading_run(backend, monkeypatch):
    # _leading, looped (a CPU) and unrolled (traced as for a GPU), at every n in 0..size and every
    # run length 0..n, for sizes 1, 2, 7, 8 and 48: catches a step too few (bit_length(size) - 1
    # misses a run of size at size = 8) and a midpoint rounded down (never reaches hi), in either
    # form.
    monkeypatch.setattr(jax, "default_backend", lambda: backend)
    for size in (1, 2, 7, 8, 48):
        n, run = np.array([(n, r) for n in range(size + 1) for r in range(n + 1)]).T
        count = jax.vmap(lambda n, r, size=size: _leading(lambda k: k <= r, n, size))(n, run)
        np.testing.assert_array_equal(count, run, err_msg=f"size {size}")


def test_root_against_bisection():
    # Catches: a wrong segment (k* off by one), zeros counted in m, a guard other than m > b,
    # a wrong denominator (b - (N - k) versus b - k), infinite samples not counted as 1, and an
    # insertion that breaks the order or the prefix sums.
    cases = _cases()
    x = np.zeros((len(cases), SIZE))
    for c, (_, samples, _) in enumerate(cases):
        x[c, : len(samples)] = samples
    n = np.array([len(samples) for _, samples, _ in cases])
    budgets = np.array([b for _, _, b in cases])
    by_sorting, inserted, roots_sorted, roots_inserted = _roots(x, n, budgets)
    np.testing.assert_array_equal(by_sorting.squares, inserted.squares)
    np.testing.assert_allclose(by_sorting.prefix, inserted.prefix, rtol=1e-14, atol=0)
    for c, (name, samples, bs) in enumerate(cases):
        m = sum(1 for v in samples if v != 0.0)
        infinite = sum(1 for v in samples if math.isinf(v))
        for levels, exists in (roots_sorted, roots_inserted):
            for b, level, ok in zip(bs, np.asarray(levels[c]), np.asarray(exists[c]), strict=True):
                assert ok == (infinite < b < m and b > 0), (name, b)
                if ok:
                    level = float(level)
                    assert level == pytest.approx(_bisect_root(samples, b), rel=1e-12), (name, b)
                    assert _f(samples, level) == pytest.approx(b, rel=1e-12)
                else:
                    assert level == np.inf


def test_trimmed_moments_against_direct_evaluation():
    # Catches: |X| = M dropped (the indicator is |X| <= M), a truncated sample left out of N
    # (it counts as 0), the biased variance (N instead of N - 1), infinite samples kept.
    rng = np.random.default_rng(8)
    samples = [float(v) for v in rng.standard_t(1.5, size=30)] + [0.0, 0.0, math.inf, -2.5, 2.5]
    n = len(samples)
    x = np.zeros(SIZE)
    x[:n] = samples
    magnitudes = sorted(abs(v) for v in samples if math.isfinite(v))
    levels = [magnitudes[0] * 0.5, magnitudes[5], 2.5, magnitudes[-2], 1e300]  # some equal an |X|

    def all_moments(x):
        lst = EstimationList.from_samples(x, jnp.int64(n))
        inserted = jax.lax.fori_loop(
            0, n, lambda j, lst: lst.insert(j, x[j]), EstimationList.empty(SIZE)
        )
        at = lambda lst: jax.vmap(lst.moments, (None, 0))(jnp.int64(n), jnp.asarray(levels))  # noqa: E731
        return at(lst), at(inserted)

    for mu, var in jax.jit(all_moments)(jnp.asarray(x)):
        for level, got_mu, got_var in zip(levels, np.asarray(mu), np.asarray(var), strict=True):
            y = [v if abs(v) <= level else 0.0 for v in samples]
            want_mu = math.fsum(y) / n
            want_var = math.fsum((v - want_mu) ** 2 for v in y) / (n - 1)
            # prefix sums in float64: errors of a few units in 2^-53 times sum |Y| or sum Y^2
            assert got_mu == pytest.approx(want_mu, rel=1e-12, abs=1e-14 * math.fsum(map(abs, y)) / n)
            assert got_var == pytest.approx(want_var, rel=1e-12)


def test_jit_equals_eager():
    # The lists are built under jit; root and moments run op by op and under jit.  Equal bit for
    # bit except V, where XLA may fuse sum Y^2 - mu sum Y into one multiply-add (one rounding
    # instead of two): within 2 units in the last place.
    x = np.zeros(SIZE)
    x[:20] = np.random.default_rng(9).standard_t(2.0, size=20)
    n, budget = jnp.int64(20), jnp.float64(7.3)
    thr, est = jax.jit(lambda x: (ThresholdList.from_samples(x, n), EstimationList.from_samples(-x, n)))(x)

    def pieces(thr, est):
        level, exists = thr.root(n, budget)
        return (level, exists, *est.moments(n, level))

    eager = pieces(thr, est)
    jitted = jax.jit(pieces)(thr, est)
    assert bool(eager[1]) and float(eager[3]) > 0
    for a, b in zip(eager[:3], jitted[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(eager[3], jitted[3], rtol=4.5e-16, atol=0)
