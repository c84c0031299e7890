"""The T-frontier experiment (Figure 1, ``htb-jax frontier``): configuration, run, fits and table."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from htb_jax._src import theory
from htb_jax._src.chunk_store import CLI_REMEDY, ChunkStore, Remedy, check_store_dir
from htb_jax._src.frontier.families import SpikeFamily, StableFamily
from htb_jax._src.frontier.fits import _fit_mask, dependent_exponent, free_exponent, verdict
from htb_jax._src.frontier.runs import (
    FamilyRuns,
    _check_runs,
    check_family_results,
    family_runs,
    open_family_store,
)
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.resumable import MAX_SEEDS, check_layout, check_root_key, default_seed_chunk, seed_chunks
from htb_jax._src.simulate.fast_path import SAMPLERS
from htb_jax._src.simulate.program import memory_plan
from htb_jax._src.validation import (
    check_choice,
    check_distinct,
    check_flag,
    check_increasing,
    check_instance_type,
    check_integer,
    check_interval,
    check_nonempty,
    check_path,
    shown,
)

CPU_SEED_CHUNK = 16  # the T-frontier's seeds per call on a CPU (the fast path: a call costs its seeds' work)


@dataclasses.dataclass(frozen=True)
class TFrontierConfig:
    """The T-frontier experiment: measured ``(d, c)`` for a grid of ``alpha`` at several ``eps``.

    Attributes:
      eps_values: tail exponents the schedules are designed for (and true ``eps``).
      alphas_per_eps: ``alpha`` grid size, evenly spaced in ``[alpha*(eps), max_alpha]``.
      max_alpha: the largest ``alpha``.
      horizons: horizons ``T``.
      fit_from: smallest horizon in the fits.
      num_seeds, seed_chunk, key: seeds, seeds per compiled call (the resume unit; ``None``: 16 on
        a CPU, every seed up to 4096 a chunk off a CPU, :attr:`chunk`), root key.
      family: the instance family: Theorem 1's two-point family, or a
        :class:`StableFamily` (whose index must exceed ``1 + eps`` for every
        ``eps``, or be 2, for ``U_eps`` to be finite; ``d theory`` is then
        :meth:`StableFamily.free_theory`).
      sampler: ``simulate``'s sampler of the exploration rewards (:func:`run_family`): ``"auto"``,
        or ``"order_statistic"`` to draw a stable family's estimates as one order statistic each
        (the same law as the default block sums, at a cost that does not grow with ``T``).
    """

    eps_values: tuple[float, ...] = (1.0, 0.5, 0.25)
    alphas_per_eps: int = 3
    max_alpha: float = 0.9
    horizons: tuple[int, ...] = tuple(int(10**e) for e in range(3, 16))
    fit_from: int = 10**9
    num_seeds: int = 256
    seed_chunk: int | None = None
    key: int = 0
    family: SpikeFamily | StableFamily = SpikeFamily()
    sampler: str = "auto"

    def validate(self) -> None:
        """Checks every field, and that the runs would fit in memory, before anything is compiled.

        Raises:
          ValueError: naming the field out of its range (or memory that would not suffice).
          TypeError: for a field of the wrong type (``max_alpha`` not one number, ``family``
            not a :class:`SpikeFamily` or :class:`StableFamily`).
        """
        for name in ("eps_values", "horizons"):
            check_nonempty(name, getattr(self, name))
            if np.ndim(getattr(self, name)) != 1:
                raise ValueError(f"{name} must be a flat list of numbers; got {name}={getattr(self, name)!r}.")
        check_interval("eps_values", list(self.eps_values), 0.0, 1.0, low_closed=False, high_closed=True)
        check_distinct("eps_values", list(self.eps_values))
        check_integer("alphas_per_eps", self.alphas_per_eps, 1, one=True)
        if np.ndim(self.max_alpha) != 0:
            raise TypeError(f"max_alpha must be one number; got max_alpha={self.max_alpha!r}.")
        # The grid of each eps runs from alpha*(eps) up to max_alpha: with several alphas, max_alpha above
        # every alpha*(eps), else the grid would repeat one schedule (simulated, fitted and shown again).
        lowest = {e: theory.balanced_alpha(e) for e in self.eps_values}
        binding = max(lowest, key=lowest.get)
        several = self.alphas_per_eps > 1
        check_interval(
            "max_alpha", self.max_alpha, lowest[binding], 1.0, low_closed=not several, high_closed=False,
            where=f"for eps={binding:g}" + (f" with alphas_per_eps={self.alphas_per_eps} > 1" if several else ""),
        )
        check_integer("horizons", list(self.horizons), 1, maximum=10**18)
        check_increasing("horizons", list(self.horizons))  # a horizon repeated would weigh twice in the fits
        check_integer("fit_from", self.fit_from, 1, maximum=10**18, one=True)
        check_integer("num_seeds", self.num_seeds, 2, maximum=MAX_SEEDS, one=True)
        check_layout(self.num_seeds, self.chunk)
        check_root_key(self.key)
        check_choice("sampler", self.sampler, SAMPLERS)
        _fit_mask(np.asarray(self.horizons), self.fit_from)
        check_instance_type("family", self.family, (SpikeFamily, StableFamily), "a SpikeFamily or StableFamily")
        self.family.validate()
        if isinstance(self.family, StableFamily) and self.family.index < 2.0:
            check_interval("eps_values", list(self.eps_values), 0.0, self.family.index - 1.0, low_closed=False,
                           high_closed=False, where=f"for a StableFamily of index {self.family.index:g} (U_eps finite)")
        # The grid's size counted, not built: a grid too large for the results is refused, not allocated.
        check_family_results(self.num_seeds, len(self.eps_values) * int(self.alphas_per_eps), self.family,
                             len(self.horizons), "run fewer seeds, eps_values or alphas_per_eps, or several "
                             "T-frontier runs with other keys")
        # What simulate would refuse, refused now (nothing is compiled).
        memory_plan(
            jax.random.key(int(self.key)), t_frontier_policy(self), self.family.instances(), list(self.horizons),
            min(self.chunk, self.num_seeds), sampler=self.sampler,
        )

    @property
    def chunk(self) -> int:
        """The seeds per compiled call, ``seed_chunk``, or by default 16 on a CPU and every seed up to 4096
        off a CPU."""
        return default_seed_chunk(self.num_seeds, CPU_SEED_CHUNK) if self.seed_chunk is None else self.seed_chunk

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """``(eps, alpha)`` of every schedule, f64[G] each.

        Raises:
          ValueError: for no ``eps_values`` or ``alphas_per_eps`` below 1 (the rest of the
            configuration is checked by :meth:`validate`).
        """
        check_nonempty("eps_values", self.eps_values)
        check_integer("alphas_per_eps", self.alphas_per_eps, 1, one=True)
        eps, alpha = [], []
        for e in self.eps_values:
            lo = theory.balanced_alpha(e)
            for a in np.linspace(lo, self.max_alpha, int(self.alphas_per_eps)) if self.alphas_per_eps > 1 else [lo]:
                eps.append(e)
                alpha.append(float(a))
        return np.asarray(eps), np.asarray(alpha)


@dataclasses.dataclass(frozen=True)
class TFrontierResult:
    """A T-frontier run and its fits, from :func:`run_t_frontier` or :func:`fit_t_frontier`.

    Attributes:
      config: the experiment.
      runs: the regrets, one schedule per entry of ``config.grid()``.
      rows: one dict per schedule, in the grid's order, with keys

        * ``eps``, ``alpha``: the schedule (``q = 0``);
        * ``d_theory``, ``c_theory``: the schedule's exponents by Theorems 2-3, ``alpha`` and ``beta_alpha``,
          a point of Theorem 1's line (on a :class:`StableFamily`, ``d_theory`` is that family's own,
          ``StableFamily.free_theory``);
        * ``d``, ``d_low``, ``d_high``: the measured worst-case slope of ``R_T / U_eps`` over
          horizons from ``fit_from`` on, with its 95% seed-bootstrap interval;
        * ``c``, ``c_low``, ``c_high``: the same for the regret on the family's fixed instance;
        * ``d_finite_t``, ``c_finite_t``: the slopes the schedule itself implies over the same horizons;
        * ``block_share``: ``K B_T / L_T`` at the largest horizon;
        * ``d_verdict``, ``c_verdict``: how the measured slope compares with theory (the main-job
          page lists the verdicts).
    """

    config: TFrontierConfig
    runs: FamilyRuns
    rows: list


def t_frontier_policy(config: TFrontierConfig) -> AdaRETC:
    """The flat batch of schedules of the experiment, grid shape ``(G,)``."""
    eps, alpha = config.grid()
    return AdaRETC(eps=jax.device_put(eps), alpha=jax.device_put(alpha), q=0.0)  # placed, no program compiled


def run_t_frontier(
    config: TFrontierConfig, *, progress: bool = True, out_dir: str | None = None, restart: bool = False
) -> TFrontierResult:
    """Runs the T-frontier experiment and fits ``(d, c)`` for every ``(eps, alpha)``.

    Args:
      config: the experiment.
      progress: show a progress bar on stderr.
      out_dir: if given, the seed chunks are stored there with a manifest: a killed run
        started again resumes, and
        a directory holding another configuration, or chunks that another program
        computed (htb_jax's code, or the version of htb_jax, jax or jaxlib, changed),
        is refused (``ValueError``), as is one where nothing can be written, before anything runs.
      restart: delete what ``out_dir`` holds and start again instead of refusing it.

    Returns:
      A :class:`TFrontierResult`: ``config``, the runs (:class:`FamilyRuns`, ``regret``
      f64[G, F + 1, H, S] with one schedule per entry of ``config.grid()``) and one row of fits
      per schedule, as :func:`fit_t_frontier` returns them.

    Raises:
      ValueError: where ``config`` is invalid (:meth:`TFrontierConfig.validate`) or ``out_dir``
        is refused.
      Interrupted: a ``KeyboardInterrupt`` on Ctrl-C, after every finished chunk is stored.
    """
    check_instance_type("config", config, TFrontierConfig, "a TFrontierConfig")
    check_flag("progress", progress)
    check_flag("restart", restart)
    remedy = Remedy("out_dir", "restart=True")
    if out_dir is not None:
        check_path("out_dir", out_dir)
        check_store_dir(out_dir, remedy)
    config.validate()
    store = None if out_dir is None else open_store(config, out_dir, restart, remedy)
    return run_with_store(config, store, progress)


def open_store(config: TFrontierConfig, out_dir: str, restart: bool, remedy: Remedy = CLI_REMEDY) -> ChunkStore:
    """The store of a (validated) T-frontier experiment in ``out_dir``, checked against its
    configuration and its program (traced, nothing compiled) before anything runs."""
    return open_family_store(
        t_frontier_policy(config), config.family, config.horizons, config.key, config.sampler, out_dir,
        frontier_identity(config), seed_chunks(config.num_seeds, config.chunk), restart, remedy,
    )


def run_with_store(config: TFrontierConfig, store: ChunkStore | None, progress: bool = True) -> TFrontierResult:
    """:func:`run_t_frontier` of a validated configuration, with its store opened (:func:`open_store`)."""
    runs = family_runs(
        t_frontier_policy(config), config.family, config.horizons, seed_chunks(config.num_seeds, config.chunk),
        config.key, progress, store, config.sampler,
    )
    return fit_t_frontier(config, runs)


def frontier_identity(config: TFrontierConfig) -> dict:
    """What must match for a stored T-frontier run to resume: the configuration but the chunking,
    ``fit_from`` (the fits alone read it: another one refits the stored runs) and the sampler where
    it is the default ``"auto"`` (so that runs stored before it was a setting resume)."""
    identity = dataclasses.asdict(config)
    identity.pop("seed_chunk")  # in the chunk layout, checked separately
    identity.pop("fit_from")
    if identity["sampler"] == "auto":
        identity.pop("sampler")
    return {"experiment": "t_frontier", **identity}


def fit_t_frontier(config: TFrontierConfig, runs: FamilyRuns) -> TFrontierResult:
    """The fits of :func:`run_t_frontier` from its runs (deterministic: fixed bootstrap keys).

    Refitting stored runs (:func:`load_runs`) with another ``fit_from`` needs no new run.

    Args:
      config: the experiment the runs were run with.
      runs: its runs, :class:`FamilyRuns` with ``regret`` f64[G, F + 1, H, S] (one schedule per
        entry of ``config.grid()``).

    Returns:
      A :class:`TFrontierResult` of ``config``, ``runs`` and one row per schedule (``d`` by
      :func:`free_exponent`, ``c`` by :func:`dependent_exponent`, and their verdicts; the keys
      are listed in :class:`TFrontierResult`).

    Raises:
      ValueError: where ``runs`` are not ``config``'s: another family, horizons, number of seeds or grid of
        schedules (told by its exploration lengths ``L_T``), whose rows would carry this config's labels.
    """
    check_instance_type("config", config, TFrontierConfig, "a TFrontierConfig")
    _check_runs("runs", runs)
    _check_runs_of(config, runs)
    eps, alpha = config.grid()
    rows = []
    for g, (e, a) in enumerate(zip(eps, alpha, strict=True)):
        d_fit, d_finite, hardest = free_exponent(runs, g, e, config.fit_from)
        c_fit, c_finite = dependent_exponent(runs, g, config.fit_from)
        d_theory, c_theory = float(a), float(theory.beta_alpha(a, e))
        if isinstance(config.family, StableFamily):
            d_theory = config.family.free_theory(float(e), float(a))
        rows.append(
            dict(
                eps=float(e), alpha=float(a),
                d_theory=d_theory, d_finite_t=d_finite, d=d_fit.slope, d_low=d_fit.low, d_high=d_fit.high,
                c_theory=c_theory, c_finite_t=c_finite, c=c_fit.slope, c_low=c_fit.low, c_high=c_fit.high,
                block_share=hardest,
                d_verdict=verdict(d_fit, d_theory, d_finite, hardest, runs.family), c_verdict=verdict(c_fit, c_theory, c_finite),
            )
        )
    return TFrontierResult(config, runs, rows)


def _same_family(a, b) -> bool:
    if type(a) is not type(b):
        return False
    return all(np.array_equal(np.asarray(x), np.asarray(y))
               for x, y in zip(dataclasses.astuple(a), dataclasses.astuple(b), strict=True))


# L_T of every schedule and horizon as one program (op by op, each of its ~25 operations compiled alone
# after the run: 39 programs in a default `htb-jax frontier`, 16 with this).
_exploration_lengths = jax.jit(lambda policy, horizons, num_arms: policy.exploration_length(num_arms, horizons),
                               static_argnums=2)


def _check_runs_of(config: TFrontierConfig, runs: FamilyRuns) -> None:
    """``ValueError`` where ``runs`` were not run with ``config`` (see :func:`fit_t_frontier`)."""
    grid = len(config.grid()[0])
    lengths = np.asarray(_exploration_lengths(t_frontier_policy(config), np.asarray(config.horizons)[:, None],
                                              config.family.num_arms)).T  # [G, H]
    checks = (  # (what differs, whether it is the same, the runs', the config's): formatted only for a message
        ("family", _same_family(runs.family, config.family), runs.family, config.family),
        ("horizons", np.array_equal(runs.horizons, config.horizons), [int(t) for t in runs.horizons],
         list(config.horizons)),
        ("num_seeds", runs.regret.shape[-1] == config.num_seeds, runs.regret.shape[-1], config.num_seeds),
        ("the schedules (eps_values, alphas_per_eps, max_alpha)",
         runs.regret.shape[0] == grid and np.array_equal(runs.exploration, lengths),
         np.asarray(runs.exploration).tolist(), lengths.tolist()),
    )
    for name, same, there, here in checks:
        if not same:
            raise ValueError(f"runs must be the runs of config; they differ in {name} (runs: {shown(there, 200)}; "
                             f"config: {shown(here, 200)}): fit them with the config that ran them.")


def fitted_horizons(config: TFrontierConfig) -> str:
    """``"1e+03, 1e+07"``: the smallest and largest horizons the fits use (``fit_from`` itself need not be one)."""
    horizons = np.asarray(config.horizons)
    fitted = horizons[_fit_mask(horizons, config.fit_from)]
    return f"{fitted[0]:.0e}, {fitted[-1]:.0e}"


def _fixed_errors(result: TFrontierResult) -> str:
    """The range of the fixed stable instance's predicted wrong-commit probability over schedules and fitted T."""
    mask = _fit_mask(result.runs.horizons, result.config.fit_from)
    p = [result.config.family.wrong_commit_probability(result.runs.horizons[mask], e[mask])
         for e in result.runs.exploration]
    return f"{np.min(p):.2f}..{np.max(p):.2f}"


def t_frontier_table(result: TFrontierResult) -> str:
    """Markdown: measured vs theory for every schedule.

    Args:
      result: a :class:`TFrontierResult` (from :func:`run_t_frontier` or :func:`fit_t_frontier`).

    Returns:
      A header naming the fitted horizons and seeds, then a Markdown table with one line per
      row of ``result.rows``: ``d`` and ``c`` in theory, at finite T and measured (with the
      95% intervals), ``K B_T / L_T`` and the verdicts.
    """
    check_instance_type("result", result, TFrontierResult, "a TFrontierResult (from run_t_frontier)")
    c = result.config
    stable = isinstance(c.family, StableFamily)
    # E|X|^p of S_a is finite iff p < a: Theorem 3 needs the fixed instance's moment of order 1 + eps.
    uncovered = [e for e in c.eps_values if stable and c.family.fixed_index <= 1.0 + e]
    at = "" if len(uncovered) == len(c.eps_values) else f" at eps = {', '.join(f'{e:g}' for e in uncovered)}"
    not_covered = f" (Theorem 3 does not cover this instance, it has no moment of order 1 + eps{at})" if uncovered else ""
    head = (
        f"Fits over T in [{fitted_horizons(c)}], {c.num_seeds} seeds, 95% bootstrap "
        "intervals; 'finite T' is the slope the schedule itself implies over the same horizons; "
        "K B_T / L_T at the largest T.\n"
        + (f"Stable family: S_a arms, a = {c.family.index:g}, {c.family.num_members} gaps on a log grid; "
           "d theory = max(beta, 1 - beta (a-1)/a); c on a fixed S_"
           f"{c.family.fixed_index:g} instance whose commits fail with probability {_fixed_errors(result)} "
           f"at the fitted T; c theory is beta, which needs them to vanish{not_covered}.\n" if stable else "")
        + "\n"
        "| eps | alpha | d theory | d finite T | d measured | c theory | c finite T | c measured "
        "| K B_T / L_T | d | c |\n"
        "|---:|---:|---:|---:|---|---:|---:|---|---:|---|---|\n"
    )
    lines = [
        f"| {r['eps']:g} | {r['alpha']:.3f} | {r['d_theory']:.3f} | {r['d_finite_t']:.3f} "
        f"| {r['d']:.3f} [{r['d_low']:.3f}, {r['d_high']:.3f}] | {r['c_theory']:.3f} | {r['c_finite_t']:.3f} "
        f"| {r['c']:.3f} [{r['c_low']:.3f}, {r['c_high']:.3f}] | {r['block_share']:.2f} "
        f"| {r['d_verdict']} | {r['c_verdict']} |"
        for r in result.rows
    ]
    return head + "\n".join(lines)
