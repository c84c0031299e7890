"""A versioned benchmark of heavy-tailed bandit policies.

``htb_jax.bench`` runs a policy, a user's or a built-in one, and the
literature's policies (:func:`htb_jax.bench.peers`) through the suite's experiments
(:func:`experiments`: tail heaviness, asymmetry, gaps, arms, horizon,
misspecification and real data; then the worst case, Theorem 1's ``(d, c)``
as :func:`htb_jax.frontier.measure` fits them), every policy on the same
reward tables, and writes a
report (:func:`write_report`; its scorecard alone: :func:`scorecard_markdown`):
scores in ``[0, 1]`` per experiment, ranks, regret ratios to the best peer with
paired bootstrap intervals, regret curves, and a LaTeX scorecard.
:func:`wti_returns` gives the real data of its real-data experiment.
"""

from htb_jax._src.bench.peers import Contender, peers
from htb_jax._src.bench.real_data import wti_returns
from htb_jax._src.bench.report import scorecard_markdown, write_report
from htb_jax._src.bench.runner import run
from htb_jax._src.bench.suite import Experiment, Setting, Size, experiments, setting_score

__all__ = [
    "Contender",
    "Experiment",
    "Setting",
    "Size",
    "experiments",
    "peers",
    "run",
    "scorecard_markdown",
    "setting_score",
    "write_report",
    "wti_returns",
]
