"""Seeds sharded over 4 forced host devices give the single-device results, bit for bit."""

import os
import subprocess
import sys
import textwrap

import jax
import numpy as np

import htb_jax as htb

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax, numpy as np
    import htb_jax as htb
    assert len(jax.devices()) == 4, jax.devices()
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    fast = htb.simulate(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 10)
    np.savez(sys.argv[1], fast=fast.regret, fast_est=fast.estimates, engine=engine.regret,
             engine_est=engine.estimates)
    """
)


def test_four_devices_equal_one(tmp_path):
    out = tmp_path / "sharded.npz"
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env=env, check=True, timeout=600)
    sharded = np.load(out)
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=2.2), num_arms=3, gap=0.3)
    one = jax.devices()[:1]
    fast = htb.simulate(jax.random.key(3), htb.AdaRETC(1.0, 0.8, 0.1), nu, [500, 2000], 10, devices=one)
    engine = htb.simulate(jax.random.key(3), htb.ForceMoM(0.6), nu, 800, 10, devices=one)
    np.testing.assert_array_equal(sharded["fast"], fast.regret)
    np.testing.assert_array_equal(sharded["fast_est"], fast.estimates)
    np.testing.assert_array_equal(sharded["engine"], engine.regret)
    np.testing.assert_array_equal(sharded["engine_est"], engine.estimates)
