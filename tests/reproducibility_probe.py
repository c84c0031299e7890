"""``simulate`` calls whose outputs must not depend on the machine: run in-process and, by
``tests/test_reproducibility.py``, in subprocesses under other XLA CPU code generation.

    python tests/reproducibility_probe.py OUT.npz

Covers the fast path (per-pull Pareto rewards streamed over several chunks, a policy grid),
the Median-of-Means drawn as one order statistic (the default for two-point spikes and
Gaussian arms, horizons to 10^15), exact block sums (two-point spikes), and the round-by-round
engine (UCB1, ForceMoM, AdaR-ETC).
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb

FIELDS = ("regret", "pulls", "committed", "exploration", "estimates", "checkpoints", "regret_curve")
# Integer-valued rewards (block sums of two-point arms are binomial counts): their estimates too.
INTEGER_REWARDS = ("spikes", "spikes_block_sums")


def run() -> dict[str, np.ndarray]:
    key = jax.random.key(7)
    pareto = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=4, gap=0.2)
    gauss = htb.equal_gap(htb.Gaussian(loc=0.0, scale=1.0), num_arms=5, gap=jnp.array([0.05, 0.3]))
    spikes = htb.lower_bound_pair(2, 1.0, jnp.asarray(htb.powers_of_ten(-6.0, 0.0, 1.0)))[1]
    grid = htb.AdaRETC(eps=0.4, alpha=jnp.array([0.8, 0.9])[:, None], q=jnp.array([0.0, 0.2]))
    runs = {
        "pareto": htb.simulate(key, grid, pareto, [1000, 30000], 16, pull_chunk=256),
        "spikes": htb.simulate(key, htb.AdaRETC(1.0, jnp.array([2 / 3, 0.9]), 0.0), spikes, [10**3, 10**15], 16),
        "spikes_block_sums": htb.simulate(
            key, htb.AdaRETC(1.0, jnp.array([2 / 3, 0.9]), 0.0), spikes, [10**3, 10**12], 8, sampler="block_sums"
        ),
        "gauss": htb.simulate(key, grid, gauss, [10**6, 10**12], 16),
        "ucb1": htb.simulate(key, htb.UCB1(), pareto, 2000, 8),
        "force_mom": htb.simulate(key, htb.ForceMoM(0.6), pareto, 2000, 8),
        "adar_etc_engine": htb.simulate(key, htb.AdaRETC(0.4, 0.8, 0.0), pareto, 3000, 8, engine=True),
    }
    return {f"{name}.{field}": np.asarray(getattr(out, field)) for name, out in runs.items() for field in FIELDS}


if __name__ == "__main__":
    np.savez(sys.argv[1], **run())
