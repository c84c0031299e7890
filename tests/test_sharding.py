"""Seeds sharded over 4 forced host devices give the single-device results, bit for bit: with the
default chunking, with a memory budget that forces one seed per chunk, and with two concurrent
executions per device."""

import functools
import os
import subprocess
import sys
import textwrap
from unittest import mock

import jax
import numpy as np

import htb_jax as htb
from conftest import child_xla_flags, cpu_devices
from htb_jax._src.simulate import fast_path

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax, numpy as np
    import htb_jax as htb
    assert len(jax.devices()) == 4, jax.devices()
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    grid = htb.AdaRETC(1.0, np.array([0.7, 0.9]), 0.1)
    fast = htb.simulate(jax.random.key(3), grid, nu, [500, 2000], 9)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 9)
    plan = htb.memory_plan(jax.random.key(3), grid, nu, [500, 2000], 9, threads=1)
    assert (plan.seed_chunk, plan.seeds_per_device) == (3, 3), plan  # ceil(9 / 4) seeds per device
    budget = plan.fixed_bytes + plan.bytes_per_seed + plan.output_bytes
    tight_plan = htb.memory_plan(jax.random.key(3), grid, nu, [500, 2000], 9, memory_budget=budget, threads=1)
    assert (tight_plan.seed_chunk, tight_plan.num_chunks) == (1, 3), tight_plan
    tight = htb.simulate(jax.random.key(3), grid, nu, [500, 2000], 9, memory_budget=budget, threads=1)
    # Two executions per device: device d of execution t runs seeds 2 (4 t + d) .. + 1.
    threaded = htb.simulate(jax.random.key(3), grid, nu, [500, 2000], 9, threads=2)
    np.savez(sys.argv[1], fast=fast.regret, fast_est=fast.estimates, engine=engine.regret,
             engine_est=engine.estimates, tight=tight.regret, tight_est=tight.estimates,
             threaded=threaded.estimates)
    """
)


@functools.cache
def _one_device():
    """simulate's results on one CPU device (the subprocess's platform), and the fast path's
    program outputs as the program returned them, before they are gathered and arranged.

    The same calls as tests/test_distributed.py's one-process results (one program for both)."""
    one = cpu_devices()[:1]
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    grid = htb.AdaRETC(1.0, np.array([0.7, 0.9]), 0.1)
    returned = []

    original = fast_path.gather

    def spy(outputs):
        returned.append(outputs)
        return original(outputs)

    with mock.patch.object(fast_path, "gather", spy):
        fast = htb.simulate(jax.random.key(3), grid, nu, [500, 2000], 9, devices=one)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 9, devices=one)
    (outputs,) = returned
    return fast, engine, outputs


def test_four_devices_equal_one(tmp_path):
    out = tmp_path / "sharded.npz"
    env = dict(os.environ, XLA_FLAGS=child_xla_flags("--xla_force_host_platform_device_count=4"), JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env=env, check=True, timeout=600)
    sharded = np.load(out)
    fast, engine, _ = _one_device()
    np.testing.assert_array_equal(sharded["fast"], fast.regret)
    np.testing.assert_array_equal(sharded["fast_est"], fast.estimates)
    np.testing.assert_array_equal(sharded["engine"], engine.regret)
    np.testing.assert_array_equal(sharded["engine_est"], engine.estimates)
    np.testing.assert_array_equal(sharded["tight"], fast.regret)
    np.testing.assert_array_equal(sharded["tight_est"], fast.estimates)
    np.testing.assert_array_equal(sharded["threaded"], fast.estimates)


def test_outputs_carry_the_seed_sharding():
    # The program's outputs are global arrays laid out by a NamedSharding on the one-axis seed mesh
    # (those of the one-device run above: no program of its own).
    from htb_jax._src.sharding import SEED_AXIS_NAME

    _, _, outputs = _one_device()
    for out in jax.tree.leaves(outputs):
        assert isinstance(out.sharding, jax.sharding.NamedSharding), out.sharding
        assert out.sharding.mesh.axis_names == (SEED_AXIS_NAME,) and out.sharding.spec[0] == SEED_AXIS_NAME
