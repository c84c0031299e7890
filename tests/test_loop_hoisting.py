"""The seed-chunk loop kept out of XLA:CPU's loop hoisting, with outputs unchanged bit for bit."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src.loop_hoisting import unhoisted
from htb_jax._src.simulate import program as simulate_program

NAN, INF = float("nan"), float("inf")


BODIES = {
    "floats": lambda x: (x * 1.0, {"neg": -x}),  # the guard selects the step's own values (NaN, -0.0)
    "ints": lambda x: (x * 1.0, jnp.arange(3) + x.shape[0]),  # the guard selects the smallest output
}


@pytest.mark.parametrize("body", BODIES, ids=str)
@pytest.mark.parametrize("first, last", [
    (-0.0, -0.0),     # equal ends: ">=" in place of ">" would zero an output
    (-0.0, 0.0),      # equal as numbers, ordered by the sort
    (0.0, -0.0),
    (NAN, NAN),
    (NAN, 1.0),
    (INF, -INF),      # first above last
    (-INF, INF),
    (2.5, 2.5),
])
def test_outputs_are_the_body_outputs_bit_for_bit(first, last, body):
    """Every output of the wrapped body equals the body's, signed zeros and NaNs included: catches
    a guard whose comparison holds for equal ends (``>=``: 4 of these 8 pairs fail, with either body)."""
    xs = jnp.array([[first, 0.0, -0.0, last], [last, NAN, -INF, first]], jnp.float32)
    plain = jax.jit(lambda xs: jax.lax.map(BODIES[body], xs))(xs)
    guarded = jax.jit(lambda xs: jax.lax.map(unhoisted(BODIES[body]), xs))(xs)
    for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(guarded), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


def test_a_fori_loop_under_vmap_sorts_one_pair():
    """The sort takes the loop index, which ``vmap`` leaves unbatched: one pair per step, not one
    per lane (the jaxpr's sort operand has shape (2,)); the results equal the unguarded loop's."""
    def run(step):
        return jax.vmap(lambda c: jax.lax.fori_loop(0, 5, step, c))(jnp.arange(6.0))

    step = lambda i, c: c * 1.5 + i  # noqa: E731
    sorts = [line for line in str(jax.make_jaxpr(lambda: run(unhoisted(step)))()).splitlines() if "= sort[" in line]
    assert sorts and all(re.search(r":\w+\[2\] = sort\[", line) for line in sorts), sorts
    np.testing.assert_array_equal(run(unhoisted(step)), run(step))


def _computations(hlo: str) -> dict[str, str]:
    """Compiled HLO text split into ``{computation name: body text}`` (the entry under ``"ENTRY"``)."""
    found = {}
    for block in re.split(r"\n(?=\S)", hlo):
        head = re.match(r"(ENTRY )?%?([\w.\-]+)", block)
        if head and "{" in block:
            found["ENTRY" if head.group(1) else head.group(2)] = block
    return found


def _reaches_sort(name: str, computations: dict[str, str], seen: set) -> bool:
    if name in seen or name not in computations:
        return False
    seen.add(name)
    text = computations[name]
    if re.search(r"\bsort\(", text):
        return True
    called = re.findall(r"(?:body|condition|to_apply|calls|branch_computations)=\{?%?([\w.\-]+)", text)
    called += re.findall(r"%([\w.\-]+)", " ".join(re.findall(r"branch_computations=\{([^}]*)\}", text)))
    return any(_reaches_sort(c, computations, seen) for c in called)


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the guard is compiled on CPU devices only")
def test_the_seed_chunk_loop_runs_in_the_runtime_with_its_sort_inside():
    """The compiled sweep (several seed chunks) keeps its loop over chunks as a ``while`` of the
    entry computation, and the guard's sort survives XLA's simplifier inside that loop: fails if
    the guard is not applied or is folded away.  (jax 0.12.0.1 hoists the unguarded loop into a
    call; jax 0.10.2 leaves it, so there only the sort's presence can fail.)"""
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=3, gap=0.5)
    policy = htb.AdaRETC(eps=1.0, alpha=jnp.array([0.7, 0.9]), q=0.0)
    _, run = simulate_program.prepare(jax.random.key(0), policy, nu, 2000, 64, seed_chunk=8, threads=1)
    computations = _computations(run.lower().compile().as_text())
    loops = re.findall(r"\bwhile\(.*?body=%?([\w.\-]+)", computations["ENTRY"])
    assert loops, "the loop over seed chunks was hoisted out of the runtime"
    assert any(_reaches_sort(body, computations, set()) for body in loops)


@pytest.mark.parametrize("platform, has_sort", [("cpu", True), ("cuda", False), ("rocm", False)])
def test_the_sort_is_lowered_for_cpus_only(platform, has_sort):
    """A GPU program gets the body as it is (no sort kernel per step); lowered for each platform
    without its device."""
    program = jax.jit(lambda xs: jax.lax.map(unhoisted(lambda x: 2 * x), xs))
    text = program.trace(jnp.arange(4.0)).lower(lowering_platforms=(platform,)).as_text()
    assert ("sort" in text) == has_sort
