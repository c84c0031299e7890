"""APE2, MR-UCB and MR-APE in the engine against plain-Python loops on the same rewards and draws.

Every engine run here is one compiled program (a grid over ``p`` and ``c``
where a test needs several values), so the file compiles five programs in
all.  Instance: three Pareto(2.5) arms with gap 0.3 (finite variance, so
``p = 2`` is a valid assumption; heavy enough that the estimates move),
``T = 300``, so ``T / K = 100``.  Branches reached in every run (counted by
the reference loop and asserted): the forced rounds ``t <= K``; index rounds
with every arm below ``T / K`` pulls; and index rounds with an arm past
``T / K`` pulls (``n > T / K`` is reached: the leader's
``log(max(T / (K n), 1))`` is capped at 0), where in MR-UCB and MR-APE the
cap decides rounds (the uncapped, negative logarithm would have chosen
another arm).  In APE2 and MR-APE the drawn perturbations decide rounds
(another arm than with every ``G_a`` at the law's median).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_lee_lim import lee_lim

import htb_jax as htb
from conftest import assert_grid_equals_reversed, engine_arms
from htb_jax._src import round_stream
from htb_jax._src.policies.ape2 import APE2
from htb_jax._src.policies.mr_ape import MRAPE
from htb_jax._src.policies.mr_ucb import MRUCB

K, T, SEEDS = 3, 300, 2
NU = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.5), num_arms=K, gap=0.3)


# (U, 1 - U) of rounds 1..T for every seed: f64[S, T, K] each (one compilation for the file).
_draw = jax.jit(jax.vmap(jax.vmap(round_stream.uniforms, in_axes=(None, 0, None)), in_axes=(0, None, None)),
                static_argnums=2)


def _levels(key):
    """Per seed, per round ``t``: the engine's ``(U, 1 - U)`` of round ``t`` as lists of Python floats."""
    u, v = (np.asarray(a).tolist() for a in _draw(htb.seed_keys(key, SEEDS), jnp.arange(1, T + 1), K))
    return [list(zip(u[s], v[s], strict=True)) for s in range(SEEDS)]


def _check(policy, grid, kind, key, law=None, **law_params):
    """Engine arms == reference arms for every grid point (p, c) and seed; returns the reference's stats."""
    out, arms, tables = engine_arms(policy, NU, T, SEEDS, key)
    levels = _levels(key) if kind != "mr_ucb" else [None] * SEEDS
    arms = arms.reshape(len(grid), SEEDS, T)
    stats = []
    for g, (p, c) in enumerate(grid):
        for s in range(SEEDS):
            ref, st = lee_lim(tables[s], T, kind, p, c, law, levels[s], **law_params)
            np.testing.assert_array_equal(arms[g, s], ref, err_msg=f"{kind} p={p} c={c} seed {s}")
            stats.append(st)
    total = {name: sum(st[name] for st in stats) for name in stats[0]}
    # Both regimes of the round are reached: rounds with every arm below T/K pulls, and rounds with
    # an arm past it; in MR-UCB and MR-APE the cap then decides rounds (the uncapped log(T/(K n)) < 0
    # would have pulled the leader back and chosen another arm).
    assert all(st["uncapped"] > 0 and st["capped"] > 0 for st in stats), stats
    if kind != "ape2":
        assert total["cap_decisive"] > 0, total
    return out, arms, total


def test_ape2_frechet_p_and_c_grid():
    # Frechet(p^2/(p-1)) at p = 2 (shape 4, b_2 = 1/2) and p = 1.3 (shape 5.6, b_p from the general
    # formula), two scales c: one program.  Catches: b_p or psi_p wrong (the estimates move), c_e
    # not c, the exponent 1 - 1/p of n swapped for 1/p, the arm-to-word layout (arm j reads word j),
    # F^-1(1 - U) in place of F^-1(U) (same law, other draws), a draw reused across arms, and an
    # estimate updated incrementally with a stale n^(1/p).
    grid = [(2.0, 0.5), (2.0, 1.0), (1.3, 0.5), (1.3, 1.0)]
    p, c = (jnp.array(x) for x in zip(*grid, strict=True))
    *_, stats = _check(APE2(p, c), grid, "ape2", jax.random.key(11), "frechet")
    # The drawn perturbations decide rounds (another arm than with every G at the law's median).
    assert stats["decisive"] > 50, stats


def test_ape2_pareto_law():
    # Pareto(minimum 0.5, index 3) at p = 1.5.  Catches a shape/scale mix-up and a quantile computed
    # from U instead of 1 - U (F^-1 = s (1 - U)^(-1/a)).  (The Gamma law's Newton quantile is tested
    # on its own in test_perturbations.py; in the engine it is one more law through the same code.)
    *_, stats = _check(APE2(1.5, 1.0, perturbation="pareto", shape=3.0, scale=0.5), [(1.5, 1.0)], "ape2",
                      jax.random.key(12), "pareto", shape=3.0, scale=0.5)
    assert stats["decisive"] > 10, stats


def test_mr_ucb_grid_equals_reference_and_reversed_grid():
    # p = 2 and p = 1.4, c = 0.5 and 2: c_e = 0.1 whatever c (a c_e = c slip changes the arms).
    # Catches a missing cap (log of T / (K n) < 1 is negative past n = T / K) and K left out of it.
    grid = [(2.0, 0.5), (2.0, 2.0), (1.4, 0.5), (1.4, 2.0)]
    p = jnp.array([2.0, 1.4])[:, None]
    c = jnp.array([0.5, 2.0])
    key = jax.random.key(13)
    grid_out, arms, _ = _check(MRUCB(p, c), grid, "mr_ucb", key)
    assert len({tuple(a.ravel()) for a in arms}) == 4  # every (p, c) plays its own arms
    # The grid is one program; the same grid in reverse order (p and c reversed: the same program)
    # gives every point the same outputs bit for bit wherever it sits (a point reading another
    # point's parameters, or its position, fails).
    assert grid_out.regret.shape == (2, 2, SEEDS)
    assert_grid_equals_reversed(grid_out, key, MRUCB(p, c), NU, T, SEEDS)


def test_mr_ape_uniform():
    # U[0, 1] at p = 2 and p = 1.2.  Catches the factor 2 of the bonus, G from 1 - U, c_e = 0.1.
    grid = [(2.0, 1.0), (1.2, 1.0)]
    *_, stats = _check(MRAPE(jnp.array([2.0, 1.2]), 1.0), grid, "mr_ape", jax.random.key(14), "uniform")
    assert stats["decisive"] > 20, stats


def test_mr_ape_rademacher():
    # A signed law: G = -1 turns the bonus into a malus.  Catches the sign convention (+1 iff U > 1/2).
    *_, stats = _check(MRAPE(1.5, 0.7, perturbation="rademacher"), [(1.5, 0.7)], "mr_ape",
                      jax.random.key(15), "rademacher")
    assert stats["decisive"] > 20, stats


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: APE2(1.0), r"p must lie in \(1, 2\] \(p = 1 \+ eps, the moment order\); got p=1"),
        (lambda: APE2(jnp.array([1.5, 2.5])), r"p must lie in \(1, 2\].*got p=2.5 \(entry \[1\]\)"),
        (lambda: MRUCB(1.5, c=0.0), r"c must lie in \(0, inf\); got c=0"),
        (lambda: MRAPE(1.5, c=-1.0), r"c must lie in \(0, inf\); got c=-1"),
        (lambda: APE2(1.5, perturbation="cauchy"), r"APE2: perturbation must be one of .*'frechet'.*got perturbation='cauchy'"),
        (lambda: MRAPE(1.5, perturbation="frechet"), r"MRAPE: perturbation must be one of .*'uniform'"),
        (lambda: APE2(1.5, perturbation="pareto"), r'APE2\(perturbation="pareto"\) needs shape='),
        (lambda: APE2(1.5, perturbation="gumbel", shape=2.0), r'APE2\(perturbation="gumbel"\) takes no shape'),
        (lambda: APE2(1.5, perturbation="gamma", shape=0.05), r'shape must lie in \[0.1, 1000\] \(perturbation="gamma"\); got shape=0.05'),
        (lambda: APE2(1.5, shape=-1.0), r'shape must lie in \(0, inf\) \(perturbation="frechet"\); got shape=-1'),
        (lambda: APE2(1.5, perturbation="weibull", shape=1.0, scale=0.0), r"scale must lie in \(0, inf\)"),
        (lambda: APE2(1.5, shape=0.01), r"largest draw \(at 1 - U = 2\^-65\) must be a finite float64; got shape=0.01, scale=1"),
        (lambda: APE2(jnp.array([1.5, 2.0]), c=jnp.array([1.0, 2.0, 3.0])), "must broadcast to one batch shape"),
    ],
)
def test_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()
