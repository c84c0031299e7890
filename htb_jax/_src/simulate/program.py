"""One simulation's program: its arguments checked, its memory planned, the program built.

:func:`prepare` validates a call (:mod:`htb_jax._src.simulate.checks`), then
hands it to the fast path (:mod:`htb_jax._src.simulate.fast_path`) or to the
engine (:mod:`htb_jax._src.simulate.engine_path`), each of which plans its
seed chunks for the memory budget and builds one seed-sharded program.
:func:`simulate` runs that program; :func:`memory_plan` reports its plan.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

import jax

from htb_jax._src.distributions import Distribution
from htb_jax._src.memory import MemoryPlan, default_memory_budget
from htb_jax._src.outcome import Outcome
from htb_jax._src.simulate.checks import check_simulation
from htb_jax._src.simulate.engine_path import prepare_engine_path
from htb_jax._src.simulate.fast_path import prepare_fast_path, takes_fast_path
from htb_jax._src.simulate.request import Request
from htb_jax._src.simulate.schedule import _flatten, default_pull_chunk, max_blocks
from htb_jax._src.validation import check_flag


def simulate(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizon: int | Sequence[int],
    num_seeds: int,
    *,
    first_seed: int = 0,
    engine: bool = False,
    record_arms: bool = False,
    num_checkpoints: int = 16,
    pull_chunk: int | None = None,
    seed_chunk: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    sampler: str = "auto",
    memory_budget: int | None = None,
    threads: int | None = None,
    paired: bool = False,
) -> Outcome:
    """Simulates a policy over seeds, its parameter grid, an instance family and horizons.

    The whole sweep is one ``jit``-compiled program.  :class:`AdaRETC` and
    :class:`EmpiricalETC` take the fast path (only exploration rewards are
    drawn, the commit phase is exact); every other policy, or any policy
    with ``engine=True``, runs round by round.  Rewards come from the reward
    table of each seed (see :func:`reward_table`), so every policy, grid point
    and horizon sees the same ``j``-th pull of arm ``i``: round by round, and on
    the fast path with ``sampler="per_pull"``.  The fast path's default
    (``"auto"``) draws each Median-of-Means estimate from the family's block
    sums or as one order statistic where the family allows it (Gaussian,
    two-point, Dirac and stable arms): the same law, other numbers, so there
    ``engine=True`` or ``record_arms=True`` (round by round) and
    :func:`run_on_rewards` on the table agree with it in law, not draw by draw.

    Args:
      key: a threefry ``jax.random.key``; seed ``s`` uses ``fold_in(key, s)``.
      policy: a policy with grid shape ``G`` (its batch shape).
      instance: a distribution with batch shape ``I + (K,)``.
      horizon: ``T`` or a sequence of horizons (shape ``H``), each in ``[1, 10^18]`` on the
        fast path and ``[1, 2^31 - 1]`` round by round (rounds are int32 there).
      num_seeds: ``S``.
      first_seed: index of the first seed (seeds ``first_seed .. + S - 1``),
        so that a sweep split into pieces equals the sweep in one piece.
      engine: run round by round even where the fast path applies.
      record_arms: also return the arm played in every round (``Outcome.arms``,
        i32[..., max(T)]); implies ``engine``, so it reads the reward table per pull
        (see ``sampler``).
      num_checkpoints: log-spaced rounds of ``regret_curve`` (from 1 to ``T``), in
        ``[2, 2^20]``; more than ``T`` repeat rounds.
      pull_chunk: static streaming step (pulls per arm per step).
      seed_chunk: seeds processed together inside the program; by default
        the largest chunk that fits ``memory_budget`` (see :func:`memory_plan`).
        A ``seed_chunk`` given alone takes precedence over the default budget; given
        with ``memory_budget``, it must fit it (else ``ValueError``).  One above the
        seeds an execution runs is lowered to them.
      devices: devices to shard the seeds over (default: all of
        ``jax.devices()``, after ``jax.distributed.initialize()`` those of
        every host; on a CPU, ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
        set before importing jax makes N cores N devices).  The program's seed
        axis is sharded over a one-axis ``Mesh`` of them; the Outcome is
        arranged from its outputs, on a CPU in host memory and placed on the
        default device, elsewhere by small jitted programs.
      sampler: fast-path exploration rewards: ``"per_pull"`` (the reward
        table, at most ``2^32`` pulls per arm), ``"block_sums"`` (one exact
        draw per Median-of-Means block), ``"order_statistic"`` (each
        estimate drawn as the ``ceil(B/2)``-th of ``B`` block means, exactly
        in law: one Beta level per seed, arm and ``B``, shared by every grid
        point, instance and horizon with that ``B``, and the block mean's
        quantile there) or ``"auto"``: the order statistic where the family
        has a closed-form quantile, else block sums where it has them, else
        per pull.  ``"block_sums"`` takes :class:`TwoPoint`, :class:`Dirac`,
        :class:`Gaussian` and :class:`Stable` (one standard draw per block
        whatever its size, shared by every grid point and horizon),
        ``"order_statistic"`` all
        four (for :class:`Stable`, concrete ``alpha`` and ``beta``: its
        quantile is tabulated when the program is built, and a run costs the
        same at every ``T``).  The samplers agree in law, not draw by draw;
        the engine always reads the reward table, and a run round by round
        takes ``"auto"`` or ``"per_pull"`` only.
      memory_budget: bytes per device the program may use (an integer
        ``>= 1``; default :func:`default_memory_budget`: 2 GiB on a CPU, half
        the memory of an accelerator).  The seeds run in chunks of the
        largest size whose working memory plus every seed's results fits it,
        up to a working set beyond which larger chunks run no faster (16 MiB
        on a CPU's fast path, 512 MiB for its engine; see the guide);
        a budget too small for one seed per chunk is a ``ValueError`` naming
        the minimum.  Seed ``s`` draws from ``fold_in(key, s)`` alone, so the
        results are bitwise identical for every budget, chunk size and
        number of devices (Student-t draws: but for about one in 10^8, the
        reproducibility guide says why).
      threads: executions of the compiled program run concurrently on each
        device, each on its own consecutive seeds (an integer ``>= 1``;
        default: on CPU devices one per usable core, shared out over the
        devices, or the environment variable ``HTB_JAX_THREADS``; 1 on an
        accelerator, and the only choice under several processes).  XLA runs the small kernels of a
        round or a seed chunk on one core, so on a CPU these threads are
        what puts the other cores to work; the budget is shared out over
        them.  The results are bitwise the same for every ``threads``.
      paired: run grid point ``i`` on instance ``i`` alone, instead of every
        grid point on every instance: for a policy told each instance's own
        parameter, such as Robust UCB's ``u``.  The policy's batch shape ``G``
        must equal the instances' ``I``; the outputs lose the instance axes.
        The engine runs only the pairs (in one program, as it runs a family);
        the fast path, whose draws every grid point shares, computes every
        grid point on every instance and keeps the pairs.  Each pair's numbers
        are those of the unpaired run's grid point ``i`` on instance ``i``.

    Returns:
      Outcome with leading axes ``G + I + H + (S,)`` (``paired``: ``G + H + (S,)``).

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
      >>> out = htb.simulate(jax.random.key(0), htb.AdaRETC.order_free(), nu, 10**5, num_seeds=100)
      >>> out.regret.shape
      (100,)

      Robust UCB told each member's own moment bound ``u``, one run per member:

      >>> import jax.numpy as jnp
      >>> family = htb.equal_gap(htb.Pareto(loc=0.0, shape=jnp.array([1.8, 2.5, 4.0])), num_arms=2, gap=0.5)
      >>> u = family.abs_moment(0.5).max(axis=-1)  # E|X|^(1 + eps) of each member's heaviest arm
      >>> told = htb.RobustUCB(eps=0.5, u=u)
      >>> htb.simulate(jax.random.key(0), told, family, 1000, num_seeds=10, paired=True).regret.mean(-1)
      Array([190.85, 105.75,  65.8 ], dtype=float64)
    """
    plan, run = prepare(
        key, policy, instance, horizon, num_seeds, first_seed=first_seed, engine=engine,
        record_arms=record_arms, num_checkpoints=num_checkpoints, pull_chunk=pull_chunk,
        seed_chunk=seed_chunk, devices=devices, sampler=sampler, memory_budget=memory_budget,
        threads=threads, paired=paired,
    )
    del plan
    return run()


def memory_plan(
    key: jax.Array,
    policy: Any,
    instance: Distribution,
    horizon: int | Sequence[int],
    num_seeds: int,
    *,
    measure: bool = False,
    **options,
) -> MemoryPlan:
    """How :func:`simulate` with the same arguments splits its seeds, without running it.

    Args:
      key, policy, instance, horizon, num_seeds: as for :func:`simulate`.
      measure: also compile the program and record its ``memory_analysis()``
        (``temp + output + argument`` bytes per device, times the concurrent
        executions ``threads``) as ``measured_peak``.
      **options: any keyword argument of :func:`simulate` (``memory_budget``,
        ``seed_chunk``, ``devices``, ``engine``, ...).

    Returns:
      The :class:`MemoryPlan`: seed chunk, chunks per device, the per-seed and
      output estimates, and their sum ``estimated_peak <= memory_budget``.

    Examples:
      >>> import jax, htb_jax as htb
      >>> nu = htb.equal_gap(htb.Pareto(loc=0.0, shape=1.5), num_arms=10, gap=0.5)
      >>> plan = htb.memory_plan(jax.random.key(0), htb.AdaRETC.order_free(), nu, 10**5, 1000,
      ...                        memory_budget=2**23, devices=jax.devices()[:1], threads=2)
      >>> plan.threads, plan.seed_chunk, plan.num_chunks, plan.estimated_peak <= 2**23
      (2, 6, 84, True)
    """
    check_flag("measure", measure)
    known = [n for n, p in inspect.signature(prepare).parameters.items() if p.kind is p.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(known))
    if unknown:  # prepare's own TypeError names prepare, which the user never called
        raise TypeError(f"memory_plan takes simulate's keyword arguments ({', '.join(known)}); got {unknown[0]}, "
                        "which simulate does not take.")
    plan, run = prepare(key, policy, instance, horizon, num_seeds, **options)
    if measure:
        analysis = run.lower().compile().memory_analysis()
        if analysis is not None:
            peak = analysis.temp_size_in_bytes + analysis.output_size_in_bytes + analysis.argument_size_in_bytes
            plan = dataclasses.replace(plan, measured_peak=int(peak) * plan.threads)
    return plan


def prepare(
    key,
    policy,
    instance,
    horizon,
    num_seeds,
    *,
    first_seed: int = 0,
    engine: bool = False,
    record_arms: bool = False,
    num_checkpoints: int = 16,
    pull_chunk: int | None = None,
    seed_chunk: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    sampler: str = "auto",
    memory_budget: int | None = None,
    threads: int | None = None,
    paired: bool = False,
):
    """Validates a simulation and builds its program: ``(plan, run)``, ``run()`` gives the Outcome,
    ``run.lower()`` the lowered program, ``run.trace()`` the traced one and ``run.arguments`` its
    arguments."""
    key, k, horizons, horizon_shape, devices = check_simulation(
        key, policy, instance, horizon, num_seeds, first_seed=first_seed, engine=engine,
        record_arms=record_arms, num_checkpoints=num_checkpoints, pull_chunk=pull_chunk,
        seed_chunk=seed_chunk, devices=devices, sampler=sampler, memory_budget=memory_budget,
        threads=threads, paired=paired,
    )
    budget = default_memory_budget(devices[0]) if memory_budget is None else int(memory_budget)
    # Integral floats (1e6) pass the checks as integers: from here on they are ints.
    fast = takes_fast_path(policy, engine, record_arms)
    num_seeds, first_seed, num_checkpoints = int(num_seeds), int(first_seed), int(num_checkpoints)
    seed_chunk, threads, pull_chunk = (None if v is None else int(v) for v in (seed_chunk, threads, pull_chunk))
    flat = _flatten(policy)
    flat_instance = jax.tree.map(lambda p: p.reshape(-1, k), instance.broadcast())
    chunk = pull_chunk or default_pull_chunk(k, int(horizons.max()))
    blocks = max_blocks(k, horizons)
    if sampler == "block_sums" and not type(instance).has_block_sums:
        raise ValueError(
            f"sampler='block_sums' needs a family with closed-form block sums (TwoPoint, Dirac, "
            f"Gaussian, Stable); got {type(instance).__name__}."
        )
    family = type(instance)
    if sampler == "order_statistic" and not (family.has_block_quantile or family.tabulated_quantile):
        raise ValueError(
            f"sampler='order_statistic' needs a family with a computable block-mean quantile (TwoPoint, "
            f"Dirac, Gaussian, Stable); got {family.__name__}."
        )
    request = Request(key, policy, instance, horizons, horizon_shape, num_seeds, flat, flat_instance, chunk, blocks,
                      num_checkpoints, first_seed, seed_chunk, devices, budget, threads, paired)
    plan, run = prepare_fast_path(request, sampler) if fast else prepare_engine_path(request, record_arms)
    if memory_budget is not None and seed_chunk is not None and plan.estimated_peak > budget:
        # Given alone, a seed_chunk overrides the default budget; given with it, the budget holds.
        shared = (f" ({plan.threads} concurrent executions share the budget, each with its chunk: fewer threads "
                  f"need less)") if plan.threads > 1 else ""
        raise ValueError(
            f"seed_chunk={seed_chunk} needs about {plan.estimated_peak} bytes per device for this simulation{shared}, "
            f"more than memory_budget={budget}; give a smaller seed_chunk, a larger memory_budget"
            f"{', fewer threads' if plan.threads > 1 else ''}, or one of the two alone"
        )
    return plan, run
