"""Seeds sharded over 4 forced host devices give the single-device results, bit for bit: with the
default chunking, with a memory budget that forces one seed per chunk, and with two concurrent
executions per device."""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb
from conftest import child_xla_flags, cpu_devices

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax, numpy as np
    import htb_jax as htb
    assert len(jax.devices()) == 4, jax.devices()
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    fast = htb.simulate(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 10)
    plan = htb.memory_plan(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10, threads=1)
    assert (plan.seed_chunk, plan.seeds_per_device) == (3, 3), plan  # ceil(10 / 4) seeds per device
    budget = plan.fixed_bytes + plan.bytes_per_seed + plan.output_bytes
    tight_plan = htb.memory_plan(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10,
                                 memory_budget=budget, threads=1)
    assert (tight_plan.seed_chunk, tight_plan.num_chunks) == (1, 3), tight_plan
    tight = htb.simulate(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10,
                         memory_budget=budget, threads=1)
    # Two executions per device: device d of execution t runs seeds 2 (4 t + d) .. + 1.
    threaded = htb.simulate(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10, threads=2)
    np.savez(sys.argv[1], fast=fast.regret, fast_est=fast.estimates, engine=engine.regret,
             engine_est=engine.estimates, tight=tight.regret, tight_est=tight.estimates,
             threaded=threaded.estimates)
    """
)


def test_four_devices_equal_one(tmp_path):
    out = tmp_path / "sharded.npz"
    env = dict(os.environ, XLA_FLAGS=child_xla_flags("--xla_force_host_platform_device_count=4"), JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env=env, check=True, timeout=600)
    sharded = np.load(out)
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    one = cpu_devices()[:1]  # the subprocess's platform
    fast = htb.simulate(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10, devices=one)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 10, devices=one)
    np.testing.assert_array_equal(sharded["fast"], fast.regret)
    np.testing.assert_array_equal(sharded["fast_est"], fast.estimates)
    np.testing.assert_array_equal(sharded["engine"], engine.regret)
    np.testing.assert_array_equal(sharded["engine_est"], engine.estimates)
    np.testing.assert_array_equal(sharded["tight"], fast.regret)
    np.testing.assert_array_equal(sharded["tight_est"], fast.estimates)
    np.testing.assert_array_equal(sharded["threaded"], fast.estimates)


def test_outputs_carry_the_seed_sharding():
    # The program's outputs are global arrays laid out by a NamedSharding on the one-axis seed mesh.
    from htb_jax._src.sharding import SEED_AXIS_NAME, seed_sharded_program
    from htb_jax._src.simulate.fast_path import _fast_path_kernel, _Static
    from htb_jax._src.simulate.schedule import max_blocks

    devices = tuple(jax.devices()[:1])
    static = _Static(3, 256, max_blocks(3, np.array([500])), 4, num_seeds=2, seed_chunk=1)
    program = seed_sharded_program(_fast_path_kernel, static, devices, seed_axis=0)
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    policy = jax.tree.map(lambda p: jnp.reshape(jnp.asarray(p, jnp.float64), (1,)), htb.AdaRETC(1.0, 0.8, 0.1))
    instance = jax.tree.map(lambda p: p.reshape(-1, 3), nu.broadcast())
    gaps = htb.gaps(instance)
    out = program(jax.random.key(0), policy, instance, gaps, jnp.asarray([500]), jnp.asarray(0, jnp.int64))
    sharding = out[0].sharding
    assert isinstance(sharding, jax.sharding.NamedSharding)
    assert sharding.mesh.axis_names == (SEED_AXIS_NAME,) and sharding.spec[0] == SEED_AXIS_NAME
