"""The seed-chunk loop kept out of XLA:CPU's loop hoisting, with outputs unchanged bit for bit."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import simulate as simulate_lib
from htb_jax._src.loop_hoisting import unhoisted

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("first, last", [
    (-0.0, -0.0),     # equal ends: ">=" in place of ">" would zero the output
    (-0.0, 0.0),      # equal as numbers, ordered by the sort
    (0.0, -0.0),
    (NAN, NAN),
    (NAN, 1.0),
    (INF, -INF),      # first above last
    (-INF, INF),
    (2.5, 2.5),
])
def test_outputs_are_the_body_outputs_bit_for_bit(first, last):
    """Every output of the wrapped body equals the body's, signed zeros and NaNs included: catches
    a guard whose comparison holds for equal ends (``>=``: 4 of these cases fail)."""
    xs = jnp.array([[first, 0.0, -0.0, last], [last, NAN, -INF, first]], jnp.float32)

    def body(x):
        return x * 1.0, jnp.arange(3) + x.shape[0], {"neg": -x}  # the first leaf carries the guard

    plain = jax.jit(lambda xs: jax.lax.map(body, xs))(xs)
    guarded = jax.jit(lambda xs: jax.lax.map(unhoisted(body), xs))(xs)
    for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(guarded), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


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
    _, run = simulate_lib._prepare(jax.random.key(0), policy, nu, 2000, 64, seed_chunk=8, threads=1)
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
