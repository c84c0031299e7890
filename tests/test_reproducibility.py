"""What the documentation promises across machines, checked on this one under other XLA CPU code generation.

XLA compiles for the CPU it runs on: the vector width, and whether ``a * b + c`` becomes one fused
multiply-add (CPUs with FMA: every x86-64 CPU since 2013) or two roundings (older CPUs), change
float arithmetic in the last bit.  ``--xla_cpu_max_isa`` and ``--xla_cpu_prefer_vector_width``
make this machine compile as another would:

* ``AVX2`` with 128-bit vectors: FMA at another vector width.  Every simulation output is equal,
  bit for bit; the single float64 results of long reductions (``U_eps``, the proxy and its
  gradient, a tuned schedule), whose summation order follows the vector
  width, to the 10 significant digits the documentation shows.
* ``SSE4_2``: no FMA (and 128-bit vectors).  The float32 rewards of continuous families come from
  XLA's float32 ``log``/``exp``, whose last bit changes without FMA, so the estimates may differ in
  the last bit; everything else (exploration lengths, checkpoints, pull counts, commits, regret
  and regret curves) is equal, because the regret is computed from the counts without a rounded
  product (``pseudo_regret``) and no decision here rests on a last-bit tie.  Two-point block sums
  are binomial counts: their estimates are equal too.  Nothing is promised of the reductions
  (the tuning amplifies a last-bit change of the rewards).

Both are compared with the probe's recording, made on another CPU with FMA at XLA's default code
generation (``tests/reproducibility_probe.npz``): what the documentation promises between machines, checked
here between that one and this one's two settings.  This machine's own default code generation
is compared with recorded outputs by the documentation's and the notebooks' tests, which compile
with XLA's older CPU emitters (``tests/conftest.py``: they compile faster); the probes here compile
with XLA's default emitters, the ones users run, and so check them against the recording.

The devices axis (1 against 4 forced host devices, and memory budgets) is in ``test_sharding.py``.
"""

import os
import subprocess
import sys

import jax
import numpy as np
import reproducibility_probe as probe

from conftest import host_fuses_multiply_add

PROBE = os.path.join(os.path.dirname(__file__), "reproducibility_probe.py")
# Where a change of outputs is deliberate (the recorded documentation outputs change with it):
RERECORD = "record anew on a CPU with FMA: python tests/reproducibility_probe.py tests/reproducibility_probe.npz"
SETTINGS = {
    "fma-128-bit": "--xla_cpu_max_isa=AVX2 --xla_cpu_prefer_vector_width=128",
    "no-fma": "--xla_cpu_max_isa=SSE4_2",
}


def test_same_results_under_other_cpu_code_generation(tmp_path):
    here, recorded_with = probe.load(probe.RECORDED)
    assert set(probe.REDUCTIONS) < set(here)  # recorded with them
    rerecord = f"recorded with jax {recorded_with}, run with {jax.__version__}: {RERECORD}"
    fuses = host_fuses_multiply_add()
    for setting, flags in SETTINGS.items():
        out = tmp_path / f"{setting}.npz"
        env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
        with_fma = setting == "fma-128-bit" and fuses
        extra = [] if with_fma else ["--no-reductions"]  # nothing is promised of them without FMA
        subprocess.run([sys.executable, PROBE, str(out), *extra], env=env, check=True, timeout=600)
        there, _ = probe.load(out)
        assert sorted(there) == sorted(here if with_fma else set(here) - set(probe.REDUCTIONS))
        promised = [
            name for name in here if name not in probe.REDUCTIONS and (
                with_fma or not name.endswith(".estimates") or name.split(".")[0] in probe.INTEGER_REWARDS)
        ]
        differ = [name for name in promised if not np.array_equal(here[name], there[name], equal_nan=True)]
        assert differ == [], (setting, differ, rerecord)
        if with_fma:  # the reductions to the digits the documentation shows (nothing is promised without FMA)
            differ = [name for name in probe.REDUCTIONS if probe.shown(here[name]) != probe.shown(there[name])]
            assert differ == [], (setting, differ, rerecord)
        if setting == "no-fma" and fuses:  # the flag took effect: rewards changed
            assert not np.array_equal(here["pareto.estimates"], there["pareto.estimates"])
    # The probe reaches what it guards: commits happen, and not always to the best arm.
    committed = here["pareto.committed"]
    assert 0 < np.mean(committed == 0) < 1 and np.all(committed >= 0)
