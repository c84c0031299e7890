"""The experiments the GPU suite runs at GPU size: ``experiments/t_frontier.py``'s T-frontier,
``experiments/stable_frontier.py``'s six families on alpha-stable arms, and
``experiments/peer_frontier.py``'s peers whose round costs O(t), each with a toy configuration of the
same structure, and the stores that let a stopped part resume (``gpu_suite.py --store``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import time
from collections.abc import Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
import peer_frontier  # noqa: E402
from gpu_size import Size  # noqa: E402
from progress import note  # noqa: E402

import htb_jax as htb  # noqa: E402
from htb_jax._src import frontier  # noqa: E402
from htb_jax._src.resumable import seed_chunks  # noqa: E402

# experiments/peer_frontier.py's peers whose round costs O(t) by definition: AdaR-UCB's sorted
# insertion, APE2, MR-UCB and MR-APE recomputing the pulled arm's estimate from all its rewards,
# Robust UCB's truncated mean (told each member's true u) whose levels move every round.
PEERS = ("AdaR-UCB", "APE2 p=2", "MR-UCB p=2", "MR-APE p=2", "Robust UCB, true u")


def frontier_config(size: str, seeds: int, chunk: int) -> frontier.TFrontierConfig:
    """``experiments/t_frontier.py``'s configuration (full), or a toy one with the same structure."""
    if size == "full":
        return frontier.TFrontierConfig(
            alphas_per_eps=4, horizons=tuple(10**e for e in range(3, 19)), fit_from=10**10,
            num_seeds=seeds, seed_chunk=chunk,
            family=frontier.SpikeFamily(spike_probs=htb.powers_of_ten(-16.0, 0.0, 0.5) + (0.5,)),
        )
    return frontier.TFrontierConfig(
        eps_values=(1.0,), alphas_per_eps=1, horizons=(10**3, 10**4, 10**5), fit_from=10**4,
        num_seeds=seeds, seed_chunk=chunk, family=frontier.SpikeFamily(spike_probs=(1e-2, 0.5)),
    )


def stable_configs(size: str, seeds: int, chunk: int) -> list[tuple[float, frontier.TFrontierConfig]]:
    """``experiments/stable_frontier.py``'s configurations, ``(a, config)`` per stability index (full),
    or one toy configuration with the same structure."""
    if size == "full":
        return [
            (a, frontier.TFrontierConfig(
                eps_values=(eps,), alphas_per_eps=3, horizons=tuple(10**e for e in range(3, 19)), fit_from=10**9,
                num_seeds=seeds, seed_chunk=chunk, family=frontier.StableFamily(index=a)))
            for eps in (0.5, 0.25) for a in (round(1.0 + eps + 0.05, 6), round(1.0 + eps + 0.3, 6), 2.0)
        ]
    return [(1.8, frontier.TFrontierConfig(
        eps_values=(0.5,), alphas_per_eps=1, horizons=(10**3, 10**4, 10**5), fit_from=10**4, num_seeds=seeds,
        seed_chunk=chunk, family=frontier.StableFamily(index=1.8, gaps=(0.01, 0.1, 1.0))))]


def peer_entries(names: Sequence[str] = PEERS) -> list[peer_frontier.Entry]:
    """The peers ``names`` as ``experiments/peer_frontier.py`` defines them, in that order."""
    entries = {entry.name: entry for entry in peer_frontier.entries()}
    missing = [name for name in names if name not in entries]
    if missing:
        raise ValueError(f"experiments/peer_frontier.py defines no peer named {', '.join(missing)}")
    return [entries[name] for name in names]


def measure_peers(size: Size, store_dir: str | None = None) -> tuple[list, dict, float, tuple[int, int]]:
    """The peers ``size.peers`` measured by ``htb.frontier.measure`` on Theorem 1's two-point family (arm 0
    pays ``Delta = 1``, the fixed member's spike probability is peer_frontier's) at eps = 1 and 0.5.

    Anytime policies run once to ``size.peers_horizon`` and are read at its checkpoints (ten per
    decade) from ``size.peers_fit_from`` on; MR-UCB and MR-APE, which read ``T``, run once per horizon
    at ``size.peers_per_decade`` horizons per decade.

    With ``store_dir``, each measurement's seed chunks are kept in a store of its own there (see
    :func:`store_path`), and read back by a run started again.  Each run prints a progress line per
    seed chunk on stderr (seeds done, elapsed time, ETA), so a run stopped by a time limit still says
    how far it got.

    Returns:
      ``(measurements, claims, seconds, (read_back, chunks))``: the measurements by eps (1 first;
      ``size.peers``' order within each), the sources' claimed ``(d, c)`` keyed by ``(name, eps)``,
      the wall time (compilation included), and the seed chunks read back from ``store_dir`` out of
      all the measurements' chunks.
    """
    started = time.perf_counter()
    family = dataclasses.replace(peer_frontier.FAMILY, spike_probs=tuple(size.peers_spike_probs))
    anytime = htb.frontier.checkpoint_horizons(size.peers_horizon, size.peers_fit_from)
    per_horizon = htb.frontier.checkpoint_horizons(size.peers_horizon, size.peers_fit_from, size.peers_per_decade)
    measurements, claims, read_back, chunks = [], {}, 0, 0
    seed_chunk = min(size.peers_chunk, size.peers_seeds)
    for entry in peer_entries(size.peers):
        horizons = per_horizon if entry.knows.endswith("T") else anytime
        for assumed in (peer_frontier.EPS if entry.needs_eps else (None,)):
            label = "peers " + entry.name + ("" if assumed is None else f" eps {assumed}")
            found = htb.frontier.measure(
                entry.make(assumed), peer_frontier.EPS if assumed is None else (assumed,), horizons,
                size.peers_seeds, family=family, name=entry.name, family_name="two-point",
                anytime=entry.anytime, seed_chunk=seed_chunk, store=store_path(store_dir, label), progress=True,
            )
            read_back += found[0].resumed_chunks  # one run per call, whatever the number of eps
            chunks += len(seed_chunks(size.peers_seeds, seed_chunk))
            claims.update({(m.name, m.eps): entry.claim(m.eps) for m in found})
            measurements += found
            note(f"peers: {entry.name}" + ("" if assumed is None else f", assumed eps {assumed}"))
    measurements.sort(key=lambda m: -m.eps)  # stable: the peers' order within each eps
    return measurements, claims, time.perf_counter() - started, (read_back, chunks)


def store_path(store_dir: str | None, label: str) -> str | None:
    """The store of one run under ``store_dir`` (``None`` without one), named after ``label``:
    ``"stable index 1.55 eps 0.5"`` -> ``store_dir/stable-index-1.55-eps-0.5``."""
    if store_dir is None:
        return None
    path = os.path.join(store_dir, re.sub(r"[^A-Za-z0-9.]+", "-", label).strip("-"))
    os.makedirs(path, exist_ok=True)
    return path
