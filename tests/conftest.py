"""Shared test helpers: plain-Python references, independent of the code under test."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

# Compiled programs kept on disk for the whole run, shared by its pytest-xdist workers and the
# processes tests start (the command line, notebooks, two-process runs), which inherit the directory
# the first process (the controller) names: a program compiled by one is loaded by the others.  JAX's persistent cache keys an entry on the program, the compile
# options, XLA_FLAGS, the device and the jax version, so no test reads another's program; a
# directory set in the environment is kept (an empty one turns the cache off); the run's own is
# removed when it ends.
_OWN_CACHE = "JAX_COMPILATION_CACHE_DIR" not in os.environ
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"htb_jax-tests-{os.getpid()}"))
_OWN_THRESHOLD = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")

# The suite compiles with XLA's older CPU emitters.  Its time is mostly compilation (3442 programs,
# each compiled once: 793 s of the 1600 s of a whole run's workers, 2026-11-29), and the older
# emitters compile about a third faster and give the same bits on every output the documentation
# records (the whole suite: 10:01 and 11:47 against 13:39 to 15:11, AMD EPYC, 2 cores).  XLA's default
# emitters, which users run, are checked by tests/test_reproducibility.py's probes and by the
# compiler's own figures of the guides, each in a process of its own at XLA's defaults
# (``default_code_generation_env``).  An ``XLA_FLAGS`` that already names the option is left alone
# (``--xla_cpu_use_fusion_emitters=true`` runs the whole suite at the defaults), and an XLA that no
# longer knows the option (it refuses an unknown flag by ending the process) keeps its defaults:
# the first process of a run (the controller) asks a child process, and the processes it starts
# (pytest-xdist's workers, the tests' own) inherit its answer in ``XLA_FLAGS``.
OLDER_EMITTERS = "--xla_cpu_use_fusion_emitters=false"


def _with_older_emitters() -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_use_fusion_emitters" in flags:
        return
    flags = f"{flags} {OLDER_EMITTERS}".strip()
    known = subprocess.run([sys.executable, "-c", "import jax; jax.devices('cpu')"], capture_output=True,
                           env=dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu"), timeout=120)
    if known.returncode == 0:
        os.environ["XLA_FLAGS"] = flags


_with_older_emitters()

import jax  # noqa: E402

import htb_jax  # noqa: E402, F401  (enables x64 for every test)

# This process (a pytest worker) writes to the cache only the programs that took 0.5 s or more to
# compile: the thousands of small ones its tests compile are rarely compiled again by another process,
# and writing each one cost 5-15% of a file's time (test_simulate.py alone: 89 and 96 s writing every
# program, 83 s with this threshold, 81 s without the cache; test_engine.py: 70 and 67 s, 64 and 67 s).
# The processes the tests start write every program.  A threshold set in the environment is kept.
if _OWN_THRESHOLD:
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)

# One execution per simulation: the suite's two xdist workers already keep both cores busy
# (simulate's threads are tested explicitly, in test_memory and test_sharding).
os.environ.setdefault("HTB_JAX_THREADS", "1")

getcontext().prec = 60

# The files, slowest first (seconds of one worker in a whole run of the suite on 2 cores, 2026-11-30:
# 11:12 in all; test_distributions.py and test_proxy.py with that day's added tests); the others
# follow in collection order.  pytest-xdist (``--dist loadfile --no-loadscope-reorder``; without
# the latter it hands out the files with the most tests first,
# whatever this order) hands out whole files in the order of their first items, two to each worker at
# the start and then one to whichever finishes first: the long files start first, the short ones fill
# the end, and the two workers finish together.  A file's tests run in one worker, so that the
# programs and the cached runs they share are compiled and computed once.
SLOWEST_FIRST = (
    "tests/test_notebooks.py::",  # 111
    "tests/test_simulate.py::",  # 98
    "tests/test_tuning.py::",  # 97
    "tests/test_reproducibility.py::",  # 73
    "tests/test_engine.py::",  # 70
    "tests/test_guides_a.py::",  # 59
    "tests/test_cuda_export.py::",  # 52
    "tests/test_distributions.py::",  # 47
    "tests/test_gpu_suite.py::",  # 43
    "tests/test_stable.py::",  # 42
    "tests/test_mom.py::",  # 41
    "tests/test_proxy.py::",  # 36
    "tests/test_own_code.py::",  # 34
    "tests/test_distributed.py::",  # 32
    "tests/test_guides_b.py::",  # 30
    "tests/test_docs_build.py::",  # 28
    "tests/test_frontier_measure.py::",  # 26
    "tests/test_bench.py::",  # 26
    "tests/test_binomial.py::",  # 23
    "tests/test_resumable.py::",  # 22
    "tests/test_stable_frontier.py::",  # 21
    "tests/test_smoothing.py::",  # 20
    "tests/test_anytime_adar_etc.py::",  # 20
    "tests/test_memory.py::",  # 18
    "tests/test_store_fingerprint.py::",  # 17
    "tests/test_stable_quantile.py::",  # 12
    "tests/test_lee_lim.py::",  # 11
    "tests/test_frontier.py::",  # 11
    "tests/test_compiler_options.py::",  # 10
    "tests/test_robust_ucb_f.py::",  # 9
    "tests/test_robust_ucb.py::",  # 9
    "tests/test_protocol_errors.py::",  # 9
    "tests/test_empirical.py::",  # 9
)


def pytest_unconfigure(config):
    if _OWN_CACHE and not hasattr(config, "workerinput"):  # the controller, once the workers are done
        shutil.rmtree(os.environ["JAX_COMPILATION_CACHE_DIR"], ignore_errors=True)


def pytest_collection_modifyitems(session, config, items):
    """Moves the SLOWEST_FIRST items to the front, in that order; the rest keep theirs."""
    def rank(item):
        for i, prefix in enumerate(SLOWEST_FIRST):
            if item.nodeid.startswith(prefix):
                return i
        return len(SLOWEST_FIRST)

    items[:] = sorted(items, key=rank)  # stable: the same order on every worker


def cpu_devices():
    """JAX's CPU devices, or a skip where ``JAX_PLATFORMS`` leaves the CPU backend out (for example
    ``JAX_PLATFORMS=cuda``): for tests about CPU compilation, or that compare with a CPU subprocess."""
    import jax

    try:
        return jax.devices("cpu")
    except RuntimeError:
        pytest.skip("needs JAX's CPU backend, which JAX_PLATFORMS leaves out here")


def cpu_bits_only(what: str) -> None:
    """Skips on a non-CPU default backend a test of bits the documentation promises on CPUs alone.

    Measured on an NVIDIA H200 (jax 0.11.2): ``what`` differs there between two programs by a few
    float32 units in the last place (docs/guides/reproducibility.md)."""
    import jax

    if jax.default_backend() != "cpu":
        pytest.skip(f"on a {jax.default_backend()} {what}: bit for bit on CPUs only")


def mom_reference(samples, num_blocks: int) -> float:
    """Median-of-Means by the paper's definition: sort the block means, take the ceil(B/2)-th."""
    x = np.asarray(samples, np.float64)
    s = len(x) // num_blocks
    if s == 0:
        return math.nan
    with np.errstate(invalid="ignore"):
        means = x[: num_blocks * s].reshape(num_blocks, s).sum(axis=1) / s
    return float(np.sort(means)[(num_blocks + 1) // 2 - 1])


def _ceil_exact(value: Decimal) -> int:
    nearest = value.to_integral_value()
    if abs(value - nearest) <= Decimal(10) ** -40 * max(1, abs(value)):
        return int(nearest)
    return int(math.ceil(value))


def schedule_reference(num_arms: int, horizon: int, eps, alpha, q) -> tuple[int, int]:
    """``(B_T, L_T)`` of Algorithm 1 in exact rational arithmetic (60-digit decimals).

    ``eps``, ``alpha``, ``q`` are read as the nearest fractions with denominators
    below 10^6 (so 2/3 given as a float means the rational 2/3).
    """
    eps, alpha, q = (Fraction(v).limit_denominator(10**6) for v in (eps, alpha, q))
    beta = (1 - alpha) * (1 + eps) / eps
    k, t = Decimal(num_arms), Decimal(horizon)
    blocks = _ceil_exact(8 * (k * t**3).ln())
    power = k ** (Decimal(q.numerator) / q.denominator) * t ** (Decimal(beta.numerator) / beta.denominator)
    return blocks, min(horizon, num_arms * blocks + _ceil_exact(power))


def adar_etc_loop(rewards, means, horizon: int, exploration: int, num_blocks: int):
    """Algorithm 1 round by round on a reward table (``rewards[i, j]``: j-th pull of arm i).

    Returns:
      ``(regret, pulls, committed)`` with the pseudo-regret summed round by round.
    """
    rewards = np.asarray(rewards)
    means = np.asarray(means, np.float64)
    k = len(means)
    best = means.max()
    pulls = [0] * k
    seen = [[] for _ in range(k)]
    committed = -1
    regret = 0.0
    for t in range(1, horizon + 1):
        if t <= exploration:
            arm = (t - 1) % k
            seen[arm].append(rewards[arm, pulls[arm]])
        else:
            if committed < 0:
                estimates = [mom_reference(seen[i], num_blocks) for i in range(k)]
                committed = int(np.argmax(estimates))  # first maximum
            arm = committed
        pulls[arm] += 1
        regret += best - means[arm]
    return regret, pulls, committed


@contextlib.contextmanager
def lock_held_by_another_process(directory):
    """Another process holds ``flock`` on ``directory/.htb-jax.lock`` inside the block, as a running command
    writing there would, with the process number 4242 written in the file."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX); "
         "f.write('4242\\n'); f.flush(); print('held', flush=True); time.sleep(60)", os.path.join(directory, ".htb-jax.lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def host_fuses_multiply_add() -> bool:
    """Whether XLA computes ``a * b + c`` with one rounding on this host (a CPU with FMA, and no
    ``XLA_FLAGS=--xla_cpu_max_isa`` below AVX2).  The documentation promises every output bit for bit
    only between hosts that do."""
    import jax

    a = b = 1.0 + 2.0**-30
    c = -(1.0 + 2.0**-29)  # a * b + c = 2^-60 exactly; rounding a * b first gives 0
    return float(jax.jit(lambda a, b, c: a * b + c)(a, b, c)) != 0.0


def default_code_generation_env(**extra: str) -> dict[str, str]:
    """This process's environment with XLA's default CPU emitters (``XLA_FLAGS`` without
    :data:`OLDER_EMITTERS`) and ``extra``: for a process that checks what XLA's defaults compile."""
    flags = os.environ.get("XLA_FLAGS", "").split()
    if OLDER_EMITTERS in flags:  # named "true" so that the child's conftest, if it loads one, adds nothing
        flags = [f if f != OLDER_EMITTERS else "--xla_cpu_use_fusion_emitters=true" for f in flags]
    return dict(os.environ, XLA_FLAGS=" ".join(flags), **extra)


def compiles_with_default_emitters() -> bool:
    """Whether this process compiles with XLA's default CPU emitters (not the suite's older ones)."""
    return OLDER_EMITTERS not in os.environ.get("XLA_FLAGS", "").split()


def count_calls(monkeypatch, module, name: str) -> list[None]:
    """Replaces ``module.name`` by a wrapper that appends to the returned list at each call (for the
    length of the test): how many times a program's tracing reached a function."""
    calls, function = [], getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(None)
        return function(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def child_xla_flags(*flags: str) -> str:
    """This process's ``XLA_FLAGS`` (the code generation it compares against) without a forced
    device count, plus ``flags``: for subprocesses whose results must equal this process's."""
    own = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    return " ".join([*own, *flags])


@pytest.fixture
def key():
    import jax

    return jax.random.key(20261122)


def engine_arms(policy, instance, horizon, num_seeds, key):
    """Arms played by the engine (i32[S, T]) and the reward tables (f32[S, K, T]) they read."""
    import jax

    out = htb_jax.simulate(key, policy, instance, horizon, num_seeds, record_arms=True)
    keys = htb_jax.seed_keys(key, num_seeds)
    tables = np.stack([np.asarray(htb_jax.reward_table(keys[s], instance, horizon)) for s in range(num_seeds)])
    del jax
    return out, np.asarray(out.arms), tables


def assert_grid_equals_reversed(grid, key, policy, instance, horizon, num_seeds):
    """Asserts that a grid of policies run as one program equals the same grid reversed, bit for bit.

    ``grid`` is ``simulate(key, policy, instance, horizon, num_seeds, record_arms=True)`` (as
    :func:`engine_arms` runs it) for a ``policy`` whose batch shape is the grid.  This runs the
    policy with every parameter reversed along every grid axis: the same shapes, so the same
    compiled program (a new value never recompiles).  Every field of the outcome (regret, curve,
    pulls, estimates, arms, ...), flipped back along the grid axes, must equal the grid's.

    Catches a grid point reading another point's parameters (a parameter indexed with a shifted
    index where the grid is cut into points), or depending on its position in the grid.  Not a
    point reading the parameters of its mirror image through the grid's centre (the reversal maps
    that reading onto itself): the comparisons of each point with a reference catch that one.
    """
    import dataclasses

    import jax

    flipped = htb_jax.simulate(key, jax.tree.map(lambda p: np.flip(np.asarray(p)), policy), instance, horizon,
                               num_seeds, record_arms=True)
    axes = tuple(range(len(policy.batch_shape)))
    for field in dataclasses.fields(grid):
        np.testing.assert_array_equal(getattr(grid, field.name), np.flip(np.asarray(getattr(flipped, field.name)), axes),
                                      err_msg=field.name)
