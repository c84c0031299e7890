"""htb_jax: a JAX simulator for heavy-tailed multi-armed bandits.

Implements and checks "Parameter-Free Heavy-Tailed Bandits" (Genalti and
Metelli): AdaR-ETC, a Median-of-Means Explore-Then-Commit policy whose
exploration budget ``L_T = min(T, K B_T + ceil(K^q T^beta))`` needs neither
the moment bound ``u`` nor, in its order-free form, the tail exponent ``eps``.

Importing htb_jax enables ``jax_enable_x64``: horizons reach 10^18, so
counters, schedules and regrets are int64/float64.  Rewards and samplers stay
float32 (every array here has an explicit dtype); code outside htb_jax sees
64-bit defaults for ``jnp.array(1.0)`` and the like.
"""

from htb_jax._src import interrupt_guard as _interrupt_guard

_interrupt_guard.start()  # a Ctrl-C during the import is raised once it is done, never dropped

import jax as _jax  # noqa: E402

_jax.config.update("jax_enable_x64", True)

from htb_jax import bench, frontier, theory  # noqa: E402
from htb_jax._src.bits import signed_tail, uniform_from_bits  # noqa: E402
from htb_jax._src.chunk_store import ForeignStoreError, StaleStoreError  # noqa: E402
from htb_jax._src.distributions import (  # noqa: E402
    Dirac,
    Distribution,
    Empirical,
    Frechet,
    Gaussian,
    LogNormal,
    Pareto,
    Stable,
    StudentT,
    TwoPoint,
)
from htb_jax._src.distributions.location_scale import abs_moment_by_quadrature  # noqa: E402
from htb_jax._src.exponents import (  # noqa: E402
    ExponentFit,
    fit_exponent,
    fit_worst_case_exponent,
    local_slopes,
)
from htb_jax._src.grids import powers_of_ten  # noqa: E402
from htb_jax._src.instances import (  # noqa: E402
    equal_gap,
    gaps,
    intrinsic_scale,
    lower_bound_pair,
    num_arms,
)
from htb_jax._src.memory import MemoryPlan, default_memory_budget  # noqa: E402
from htb_jax._src.mom import median_of_means  # noqa: E402
from htb_jax._src.outcome import Outcome, Summary, summarize  # noqa: E402
from htb_jax._src.policies.adar_etc import AdaRETC, ExploreThenCommit, exploration_pulls, num_blocks  # noqa: E402
from htb_jax._src.policies.adar_ucb import AdaRUCB  # noqa: E402
from htb_jax._src.policies.anytime_adar_etc import AnytimeAdaRETC  # noqa: E402
from htb_jax._src.policies.ape2 import APE2  # noqa: E402
from htb_jax._src.policies.empirical_etc import EmpiricalETC  # noqa: E402
from htb_jax._src.policies.force_mom import ForceMoM  # noqa: E402
from htb_jax._src.policies.mr_ape import MRAPE  # noqa: E402
from htb_jax._src.policies.mr_ucb import MRUCB  # noqa: E402
from htb_jax._src.policies.robust_ucb import RobustUCB  # noqa: E402
from htb_jax._src.policies.robust_ucb_f import RobustUCBf  # noqa: E402
from htb_jax._src.policies.ucb1 import UCB1  # noqa: E402
from htb_jax._src.policy_protocol import (  # noqa: E402
    EngineSpec,
    PolicyKernel,
    PolicySummary,
    RoundContext,
    first_argmax,
)
from htb_jax._src.proxy import (  # noqa: E402
    ProxyTable,
    analytic_regret_bound,
    proxy_regrets,
    proxy_table,
    regret_proxy,
)
from htb_jax._src.resumable import Interrupted  # noqa: E402
from htb_jax._src.reward_table import TableReader, reward_table, seed_keys  # noqa: E402
from htb_jax._src.round_stream import round_uniforms  # noqa: E402
from htb_jax._src.schedule_search import admissible_schedule  # noqa: E402
from htb_jax._src.selection import kth_smallest  # noqa: E402
from htb_jax._src.simulate.on_rewards import run_on_rewards  # noqa: E402
from htb_jax._src.simulate.program import memory_plan, simulate  # noqa: E402
from htb_jax._src.smoothing import regret_at_lengths, smoothed_regret  # noqa: E402
from htb_jax._src.sweep import progress_bar  # noqa: E402
from htb_jax._src.tail_index import TailIndex, suggested_eps, tail_index  # noqa: E402
from htb_jax._src.tuning import TuningResult, smooth_max_log, tune_schedule  # noqa: E402
from htb_jax._src.version import __version__  # noqa: E402, F401  (htb_jax.__version__)

__all__ = [
    "APE2",
    "AdaRETC",
    "AdaRUCB",
    "AnytimeAdaRETC",
    "Dirac",
    "Distribution",
    "Empirical",
    "EmpiricalETC",
    "EngineSpec",
    "ExponentFit",
    "ExploreThenCommit",
    "ForceMoM",
    "ForeignStoreError",
    "Frechet",
    "Gaussian",
    "Interrupted",
    "LogNormal",
    "MRAPE",
    "MRUCB",
    "MemoryPlan",
    "Outcome",
    "Pareto",
    "PolicyKernel",
    "PolicySummary",
    "ProxyTable",
    "RobustUCB",
    "RobustUCBf",
    "RoundContext",
    "Stable",
    "StaleStoreError",
    "StudentT",
    "Summary",
    "TableReader",
    "TailIndex",
    "TuningResult",
    "TwoPoint",
    "UCB1",
    "abs_moment_by_quadrature",
    "admissible_schedule",
    "analytic_regret_bound",
    "bench",
    "default_memory_budget",
    "equal_gap",
    "exploration_pulls",
    "first_argmax",
    "fit_exponent",
    "fit_worst_case_exponent",
    "frontier",
    "gaps",
    "intrinsic_scale",
    "kth_smallest",
    "local_slopes",
    "lower_bound_pair",
    "median_of_means",
    "memory_plan",
    "num_arms",
    "powers_of_ten",
    "progress_bar",
    "num_blocks",
    "proxy_regrets",
    "proxy_table",
    "regret_at_lengths",
    "regret_proxy",
    "reward_table",
    "round_uniforms",
    "run_on_rewards",
    "seed_keys",
    "signed_tail",
    "simulate",
    "smooth_max_log",
    "smoothed_regret",
    "suggested_eps",
    "summarize",
    "tail_index",
    "theory",
    "tune_schedule",
    "uniform_from_bits",
]

_interrupt_guard.finish()
