"""``simulate`` calls whose outputs must not depend on the machine: run by
``tests/test_reproducibility.py`` in subprocesses under other XLA CPU code generation, and compared
with their recording (``RECORDED``, made on a CPU with FMA at XLA's default code generation).

    python tests/reproducibility_probe.py OUT.npz [--no-reductions]
    python tests/reproducibility_probe.py tests/reproducibility_probe.npz   # a new recording

Covers the fast path (per-pull Pareto rewards streamed over several chunks, a policy grid),
the Median-of-Means drawn as one order statistic (the default for two-point spikes and
Gaussian arms, horizons to 10^15), exact block sums (two-point spikes), and the round-by-round
engine (UCB1, ForceMoM, AdaR-ETC); and the single float64 results of long reductions the documentation
shows to 10 significant digits (``REDUCTIONS``): ``U_eps``, the regret proxy and its gradient,
and a tuned schedule.
"""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb

RECORDED = pathlib.Path(__file__).with_suffix(".npz")
FIELDS = ("regret", "pulls", "committed", "exploration", "estimates", "checkpoints", "regret_curve")
# Integer-valued rewards (block sums of two-point arms are binomial counts): their estimates too.
INTEGER_REWARDS = ("spikes", "spikes_block_sums")
# Float64 reductions whose summation order follows the vector width: promised to 10 significant digits.
REDUCTIONS = ("intrinsic_scale", "proxy", "proxy_gradient", "tuned_alpha", "tuned_worst_case")
SIGNIFICANT_DIGITS = 10


def reductions() -> dict[str, np.ndarray]:
    """The documented kinds of float64 reductions, at small sizes: its first example's ``U_eps``, the
    proxy and its derivative in ``alpha``, and a short tuning."""
    key = jax.random.key(0)
    pareto = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=2, gap=0.05)

    def proxy(alpha):
        return htb.regret_proxy(key, htb.AdaRETC(eps=0.5, alpha=alpha, q=0.0), pareto, 3000, 16, 0.05)

    family = htb.lower_bound_pair(2, 1.0, jnp.asarray(htb.powers_of_ten(-3.0, -0.5, 0.5)))[1]
    reference = htb.lower_bound_pair(2, 1.0, 0.9)[1]
    tune = jax.jit(htb.tune_schedule, static_argnames=("eps", "horizon", "num_seeds", "num_steps", "tune_q", "proxy"))
    tuned = tune(key, 1.0, family, reference, 3000, 8, lam=jnp.array([0.0, 0.5]), num_steps=10, init_q=0.0,
                 tune_q=False, proxy="monte_carlo")
    value, gradient = jax.jit(jax.value_and_grad(proxy))(0.8)
    values = {
        "intrinsic_scale": htb.intrinsic_scale(htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.2),
                                               eps=0.4),
        "proxy": value,
        "proxy_gradient": gradient,
        "tuned_alpha": tuned.alpha,
        "tuned_worst_case": tuned.worst_case,
    }
    return {name: np.asarray(v) for name, v in values.items()}


def load(path) -> tuple[dict[str, np.ndarray], str]:
    """The outputs a run of this script wrote to ``path``, and the jax version it ran."""
    with np.load(path) as data:
        outputs = {name: data[name] for name in data.files}
    return outputs, str(outputs.pop("jax_version"))


def shown(values: np.ndarray) -> list[str]:
    """``values`` as the documentation shows such numbers: to ``SIGNIFICANT_DIGITS`` significant digits."""
    return [f"{v:.{SIGNIFICANT_DIGITS}g}" for v in np.ravel(values)]


def run(with_reductions: bool = True) -> dict[str, np.ndarray]:
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
    outputs = {f"{name}.{field}": np.asarray(getattr(out, field)) for name, out in runs.items() for field in FIELDS}
    return outputs | reductions() if with_reductions else outputs


if __name__ == "__main__":
    outputs = run(with_reductions="--no-reductions" not in sys.argv[2:])
    np.savez_compressed(sys.argv[1], jax_version=np.asarray(jax.__version__), **outputs)
