"""Every device program of htb_jax lowers for CUDA, checked on a CPU-only jaxlib.

Lowering is tracing: ``jax.export.export(jitted, platforms=("cuda",))`` builds the
StableHLO a GPU would compile without a GPU, and raises where an operation has no CUDA
lowering or lowers to a host callback.  Each test exports one program at a tiny size
(the cost is tracing; the operations traced are those of any size) and scans the
module for custom calls, failing on a CPU-only one (LAPACK, ``xla_cpu_*``, the CPU
callbacks): the programs of ``simulate`` (the fast path with each sampler and every
family's per-pull draw, the engine with every policy, a family's instances side by side
as on a GPU, paired runs, the arm record), ``smoothed_regret`` and ``regret_proxy`` with
their gradients, ``tune_schedule`` and the T-frontier's searches.  A host callback
(``jax.pure_callback``) in any policy's ``act``, or in any family's draw, fails its case.

``simulate``'s program is the one it builds for one device and one execution
(``devices=jax.devices()[:1], threads=1``, as on a GPU), exported through
:func:`htb_jax._src.sharding.exporting_for`: without the CPU's compiler options, and
traced with ``jax.default_backend()`` answering ``"gpu"`` (the binomial sampler's tile
size is chosen from it).
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import htb_jax as htb
from htb_jax._src import engine, frontier
from htb_jax._src.sharding import exporting_for, seed_sharded_program
from htb_jax._src.simulate.program import prepare  # the program builder of simulate: (plan, run), run.lower()

PLATFORMS = ("cuda",)
# Custom-call targets that exist on a CPU alone: LAPACK, XLA:CPU's own, DUCC's FFT, host callbacks.
CPU_ONLY_PREFIXES = ("lapack_", "xla_cpu", "cpu_", "ducc_", "xla_python_cpu", "xla_ffi_python_cpu")
KEY = jax.random.key(0)
SEEDS = 4
T = 1000


def custom_call_targets(text: str) -> list[str]:
    """The targets of every ``stablehlo.custom_call`` in a module's text (pretty or generic form)."""
    pretty = re.findall(r"custom_call @([\w.$-]+)", text)
    generic = re.findall(r'call_target_name = "([^"]+)"', text)
    return sorted(set(pretty) | set(generic))


def cpu_only(targets: list[str]) -> list[str]:
    return [t for t in targets if t.startswith(CPU_ONLY_PREFIXES)]


def check_cuda_module(exported: jax.export.Exported) -> list[str]:
    """Asserts that ``exported`` is a CUDA module without a CPU-only custom call; returns its targets."""
    assert exported.platforms == PLATFORMS
    text = exported.mlir_module()
    targets = custom_call_targets(text)
    print(f"custom-call targets: {', '.join(targets) or 'none'}")
    assert cpu_only(targets) == []
    assert "xla_cpu" not in text  # no XLA:CPU option or call, under any name
    return targets


def export_jit(fn, *args) -> jax.export.Exported:
    return jax.export.export(jax.jit(fn), platforms=PLATFORMS)(*args)


def export_simulate(policy, instance, horizon, num_seeds: int = SEEDS, **options) -> jax.export.Exported:
    """The program ``simulate(KEY, policy, instance, horizon, num_seeds, **options)`` runs, for CUDA."""
    plan, run = prepare(KEY, policy, instance, horizon, num_seeds, devices=jax.devices()[:1], threads=1,
                         **options)
    # Every seed in one chunk, as a GPU's chunk budget (4 GiB) would take them.
    assert (plan.threads, plan.num_chunks, plan.seed_chunk) == (1, 1, num_seeds)
    with exporting_for(PLATFORMS):
        return run.lower()


@pytest.fixture(autouse=True)
def traced_as_on_a_gpu(monkeypatch):
    """``jax.default_backend()`` answers ``"gpu"`` while the programs are traced, and the engine runs
    a family's instances side by side, as on a GPU."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(engine, "instances_side_by_side", lambda device: True)


def _pareto(num_arms=3):
    return htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=num_arms, gap=0.5)


def _two_point():
    return htb.lower_bound_pair(2, 1.0, jnp.array([1e-2, 0.5]))[1]  # F = 2 members


def _gaussian():
    return htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.5)


_ADAR = htb.AdaRETC(eps=0.5, alpha=jnp.array([0.8, 0.9]), q=0.0)

SIMULATE_CASES = {
    "per_pull-pareto": lambda: (_ADAR, _pareto(), [T, 5 * T], dict(sampler="per_pull")),
    "block_sums-two_point": lambda: (_ADAR, _two_point(), [T, 10**12], dict(sampler="block_sums")),
    "block_sums-gaussian": lambda: (_ADAR, _gaussian(), [T, 10**12], dict(sampler="block_sums")),
    "order_statistic-two_point": lambda: (_ADAR, _two_point(), [T, 10**18], dict(sampler="order_statistic")),
    "order_statistic-gaussian": lambda: (_ADAR, _gaussian(), [T, 10**18], dict(sampler="order_statistic")),
    "order_statistic-stable": lambda: (_ADAR, htb.Stable(loc=jnp.array([0.0, 0.5]), alpha=jnp.array([1.5, 1.2]),
                                                         beta=-1.0), [T, 10**18], dict(sampler="order_statistic")),
    "engine-ucb1": lambda: (htb.UCB1(), _gaussian(), 200, {}),
    "engine-ape2": lambda: (htb.APE2(p=1.5), _pareto(), 200, {}),
    "engine-adar_etc": lambda: (_ADAR, _pareto(), 200, dict(engine=True)),
    "engine-ucb1-record_arms": lambda: (htb.UCB1(), _gaussian(), 200, dict(record_arms=True)),
    "engine-adar_ucb-family": lambda: (htb.AdaRUCB(), _two_point(), [100, 200], {}),
    "engine-robust_ucb-paired": lambda: (htb.RobustUCB(1.0, u=jnp.array([1.0, 30.0])), _two_point(), [100, 200],
                                         dict(paired=True)),
    # every other policy through the engine, and Empirical ETC on its fast path
    "engine-force_mom": lambda: (htb.ForceMoM(rho=0.5), _pareto(), 200, {}),
    "engine-mr_ape": lambda: (htb.MRAPE(p=1.5), _pareto(), 200, {}),
    "engine-mr_ucb": lambda: (htb.MRUCB(p=1.5), _pareto(), 200, {}),
    "engine-robust_ucb_f": lambda: (htb.RobustUCBf(), _pareto(), 200, {}),
    "engine-anytime_adar_etc": lambda: (htb.AnytimeAdaRETC(eps=0.5, alpha=0.8, q=0.0), _pareto(), 200, {}),
    "per_pull-empirical_etc": lambda: (htb.EmpiricalETC(eps=0.5, alpha=0.8, q=0.0), _pareto(), [T, 5 * T], {}),
    # every family's per-pull draw (Pareto's above; two-point and Gaussian draw block sums and order statistics)
    "per_pull-student_t": lambda: (_ADAR, htb.equal_gap(htb.StudentT(loc=0.0, df=2.5), 3, 0.5), [T, 5 * T],
                                   dict(sampler="per_pull")),
    "per_pull-frechet": lambda: (_ADAR, htb.equal_gap(htb.Frechet(loc=0.0, shape=2.5), 3, 0.5), [T, 5 * T],
                                 dict(sampler="per_pull")),
    "per_pull-log_normal": lambda: (_ADAR, htb.equal_gap(htb.LogNormal(loc=0.0, sigma=1.0), 3, 0.5), [T, 5 * T],
                                    dict(sampler="per_pull")),
    "per_pull-stable": lambda: (_ADAR, htb.equal_gap(htb.Stable(loc=0.0, alpha=1.6, beta=0.5), 3, 0.5), [T, 5 * T],
                                dict(sampler="per_pull")),
}


@pytest.mark.parametrize("case", list(SIMULATE_CASES))
def test_simulate_lowers_for_cuda(case):
    policy, instance, horizon, options = SIMULATE_CASES[case]()
    exported = export_simulate(policy, instance, horizon, **options)
    check_cuda_module(exported)
    assert exported.nr_devices == 1


@pytest.mark.parametrize("sampler, instance", [("per_pull", _pareto), ("order_statistic", _two_point)])
def test_smoothed_regret_and_its_gradient_lower_for_cuda(sampler, instance):
    def mean_regret(policy, nu):
        return htb.smoothed_regret(KEY, policy, nu, T, SEEDS, 0.01, sampler=sampler).sum()

    # The value, and the central differences in eps, alpha, q and every instance parameter.
    policy = htb.AdaRETC(eps=0.5, alpha=0.8, q=0.1)
    exported = export_jit(jax.value_and_grad(mean_regret, argnums=(0, 1)), policy, instance())
    check_cuda_module(exported)
    assert len(exported.out_avals) == 1 + 3 + len(jax.tree.leaves(instance()))


@pytest.mark.parametrize("rounding", [False, True])
def test_regret_proxy_and_its_gradient_lower_for_cuda(rounding):
    def proxy(policy, tau):
        return htb.regret_proxy(KEY, policy, _pareto(2), T, SEEDS, tau, rounding=rounding)

    exported = export_jit(jax.value_and_grad(proxy), htb.AdaRETC(eps=0.5, alpha=0.8, q=0.1), 0.05)
    check_cuda_module(exported)
    assert len(exported.out_avals) == 1 + 3  # the mean, and its derivatives in eps, alpha, q


@pytest.mark.parametrize("options", [dict(proxy="monte_carlo"), {}], ids=["monte_carlo", "smoothed"])
def test_tune_schedule_lowers_for_cuda(options):
    # The defaults are the smoothed proxy and its polish (48 points): the polish's loop over its
    # passes lowers with the descent.
    family, reference = _two_point(), htb.lower_bound_pair(2, 1.0, 0.9)[1]

    def tune(lam):
        return htb.tune_schedule(KEY, 1.0, family, reference, T, SEEDS, lam=lam, num_steps=3, **options)

    exported = export_jit(tune, jnp.array([0.0, 0.5]))  # a vector of lam: one vmapped program
    check_cuda_module(exported)


def _frontier_config() -> frontier.TFrontierConfig:
    """The T-frontier's structure at a tiny size: several eps, an alpha grid, horizons to 10^18."""
    return frontier.TFrontierConfig(
        eps_values=(1.0, 0.5), alphas_per_eps=2, horizons=(10**3, 10**9, 10**18), fit_from=10**9,
        num_seeds=SEEDS, seed_chunk=SEEDS, family=frontier.SpikeFamily(spike_probs=(1e-12, 1e-2, 0.5)),
    )


def test_the_frontier_search_lowers_for_cuda():
    # run_family's call: simulate(key, policy, family.instances(), horizons, seed_chunk, first_seed=...),
    # the default sampler (order statistics on the spike family).
    config = _frontier_config()
    config.validate()
    exported = export_simulate(frontier.t_frontier_policy(config), config.family.instances(),
                               list(config.horizons), config.chunk, first_seed=SEEDS)
    check_cuda_module(exported)
    # U_eps of every member (FamilyRuns.scale), a device computation too.
    check_cuda_module(export_jit(lambda eps: htb.intrinsic_scale(config.family.instances(), eps), 0.5))


def test_the_pareto_frontier_search_lowers_for_cuda():
    # The heavy-tailed members of the worst case (ParetoFamily): pull by pull, and U_eps by quadrature.
    family = frontier.ParetoFamily(gaps=(0.1, 1.0), shapes=(1.75, 4.0))
    policy = htb.AdaRETC(eps=jnp.array([1.0, 0.5]), alpha=jnp.array([0.75, 0.9]), q=0.0)
    check_cuda_module(export_simulate(policy, family.instances(), [T, 10 * T]))
    check_cuda_module(export_jit(lambda eps: htb.intrinsic_scale(family.instances(), eps), 0.5))


def test_exporting_for_ends_with_its_context():
    def kernel(key, policy, instance, gaps, horizons, first_seed, static):
        return [first_seed + jnp.arange(static)]

    program = seed_sharded_program(kernel, SEEDS, tuple(jax.devices()[:1]), 0)
    args = (KEY, None, None, jnp.zeros(2), jnp.ones(1), jnp.int64(0))
    with exporting_for(PLATFORMS):
        assert program.lower(*args).platforms == PLATFORMS
    assert isinstance(program.lower(*args), jax.stages.Lowered)  # for its own device again


def test_the_scan_finds_a_cpu_only_call_and_export_refuses_a_callback():
    # The same LU factorisation lowers to LAPACK for a CPU, to cuSOLVER for CUDA.
    cpu = jax.export.export(jax.jit(jnp.linalg.inv), platforms=("cpu",))(jnp.eye(3))
    assert any(t.startswith("lapack_") for t in cpu_only(custom_call_targets(cpu.mlir_module())))
    cuda = custom_call_targets(export_jit(jnp.linalg.inv, jnp.eye(3)).mlir_module())
    assert any(t.startswith("cusolver") for t in cuda) and cpu_only(cuda) == []

    def on_the_host(x):
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    # refused at lowering for a platform this jaxlib lacks (a CPU-only one: ValueError), or at
    # serialisation where a CUDA backend is present (NotImplementedError, seen on an H200)
    with pytest.raises((ValueError, NotImplementedError)):
        export_jit(on_the_host, jnp.ones(3))
