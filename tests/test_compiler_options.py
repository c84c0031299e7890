"""The per-program XLA options: asked for only where XLA knows them, never changing a result."""

import jax
import jax.numpy as jnp
import numpy as np

import htb_jax as htb
from conftest import cpu_devices
from htb_jax._src import compiler_options, engine
from htb_jax._src.simulate import fast_path
from htb_jax._src.simulate.program import prepare


def test_only_the_options_xla_knows_are_kept():
    # An XLA without an option refuses every program that names it ("No such compile option"),
    # so the probe must drop an unknown option and keep the known ones, in their order.
    cpu = cpu_devices()[0]
    unknown = ("xla_cpu_no_such_option_anywhere", True)
    both = (compiler_options.COPY_INSERTION, compiler_options.VECTOR_WIDTH)
    assert compiler_options.known(cpu, both) == both
    assert compiler_options.known(cpu, (unknown,)) == ()
    assert compiler_options.known(cpu, (compiler_options.VECTOR_WIDTH, unknown)) == (compiler_options.VECTOR_WIDTH,)


def test_an_option_the_user_sets_in_xla_flags_is_left_to_the_user(monkeypatch):
    # tests/test_reproducibility.py compiles at 128-bit vectors through XLA_FLAGS: a per-program
    # 512 would override it.
    cpu = cpu_devices()[0]
    both = (compiler_options.COPY_INSERTION, compiler_options.VECTOR_WIDTH)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_max_isa=AVX2 --xla_cpu_prefer_vector_width=128")
    compiler_options.known.cache_clear()
    try:
        assert compiler_options.known(cpu, both) == (compiler_options.COPY_INSERTION,)
    finally:  # the answer under this XLA_FLAGS must not reach later tests
        compiler_options.known.cache_clear()


def test_the_programs_are_compiled_with_them(monkeypatch):
    # The fast path and the engine hand their options to the seed-sharded program (built by
    # simulate's prepare, which simulate then runs: nothing is compiled here).
    seen = []
    original = fast_path.seed_sharded_program

    def spy(kernel, static, devices, seed_axis, threads=1, options=()):
        seen.append((kernel.__name__, options))
        return original(kernel, static, devices, seed_axis, threads, options)

    monkeypatch.setattr(fast_path, "seed_sharded_program", spy)
    monkeypatch.setattr(engine, "seed_sharded_program", spy)
    nu = htb.equal_gap(htb.Gaussian(loc=0.0), num_arms=3, gap=0.5)
    prepare(jax.random.key(0), htb.AdaRETC(eps=1.0, alpha=0.8, q=0.0), nu, 300, 2, sampler="per_pull")
    prepare(jax.random.key(0), htb.UCB1(), nu, 300, 2)
    if jax.default_backend() == "cpu":
        assert seen == [("_fast_path_kernel", (compiler_options.VECTOR_WIDTH,)),
                        ("_engine_kernel", (compiler_options.COPY_INSERTION, compiler_options.VECTOR_WIDTH))]
    else:  # the options are XLA:CPU's; another backend compiles with its own defaults
        assert seen == [("_fast_path_kernel", ()), ("_engine_kernel", ())]


def test_results_do_not_depend_on_the_vector_width(monkeypatch):
    # The same program compiled at XLA's default width (256 bits) and at 512 bits gives the
    # same results bit for bit: Pareto draws (log and exp), block sums, the median and the
    # engine's UCB1 indices.
    nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=4, gap=0.3)
    runs = []
    for options in ((compiler_options.VECTOR_WIDTH,), ()):
        monkeypatch.setattr(compiler_options, "known", lambda device, wanted, options=options: tuple(
            o for o in wanted if o in options or o == compiler_options.COPY_INSERTION))
        # Block sizes 11, 2 and 1 (B_T = 314 blocks at K = 4, T = 300000).
        policy = htb.AdaRETC(eps=0.5, alpha=jnp.array([0.75, 0.8, 0.85]), q=0.0)
        fast = htb.simulate(jax.random.key(3), policy, nu, 300_000, 16, sampler="per_pull")
        ucb = htb.simulate(jax.random.key(3), htb.UCB1(), nu, 3_000, 16)
        runs.append((fast.estimates, fast.regret, ucb.regret, ucb.pulls))
    for got, want in zip(*runs, strict=True):
        np.testing.assert_array_equal(got, want)
