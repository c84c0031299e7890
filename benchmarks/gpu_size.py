"""The size of a GPU suite run: how many seeds, horizons and repeats each part of ``gpu_suite.py`` takes.

The suite (``gpu_suite.py``), its checks (``gpu_checks.py``) and its experiments
(``gpu_experiments.py``) read it; ``gpu_suite.SIZES`` holds the two sizes, ``toy`` and ``full``.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Size:
    """Seeds, horizons and repeats of every part, by the field's prefix.

    ``sweep_*``, ``numpy_seeds`` and ``cpu_2core``: the AdaR-ETC sweep against the NumPy sweep and two
    CPU cores; ``engine_*``, ``robust_*``, ``loop_seeds``, ``smpy_seeds``: the round-by-round engine;
    ``scale_*``, ``horizon_*``, ``budget*``: the scaling benchmark; ``frontier_*``, ``stable_*`` and
    ``peers*``: the T-frontier, the alpha-stable families and the peers (seeds, and seeds per chunk);
    ``check_seeds``: the seeds compared with the CPU path; ``repeats``: timed calls of each benchmark.
    """

    sweep_seeds: int
    sweep_horizon: int
    numpy_seeds: int
    repeats: int
    engine_seeds: int
    engine_horizon: int
    robust_seeds: int
    robust_ucb: bool
    loop_seeds: int
    smpy_seeds: int
    scale_max_seeds: int
    scale_horizon: int
    horizon_seeds: int
    horizon_exponents: tuple[int, int]
    budget_seeds: int
    budget_engine_seeds: int
    budget_horizon: int
    budget_engine_horizon: int
    budgets: tuple
    frontier_seeds: int
    frontier_chunk: int
    stable_seeds: int
    stable_chunk: int
    peers: tuple[str, ...]  # the measured peers, of gpu_experiments.PEERS
    peers_seeds: int
    peers_chunk: int
    peers_horizon: int  # the largest T of the peers whose round costs O(t)
    peers_fit_from: int  # the smallest fitted T
    peers_per_decade: int  # horizons per decade of the peers that read T (one run each)
    peers_spike_probs: tuple  # Theorem 1's family: the spike probabilities (beta)
    check_seeds: int
    cpu_2core: bool
