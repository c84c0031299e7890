"""AdaR-ETC regret sweeps over ``(alpha, q)`` grids and horizons: run, tabulate, plot, resume.

A sweep is one call of :func:`htb_jax.simulate` per chunk of seeds (the same
compiled program each time; seed ``s`` draws from ``fold_in(key, s)`` alone,
so the chunking never changes a number), reported as a table of mean regret
with standard errors and a log-log figure of regret against the horizon.
Given an output directory, every finished chunk is kept there
(:mod:`htb_jax._src.chunk_store`) and a restarted sweep continues from them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import sys
import time
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import theory, user_code
from htb_jax._src.chunk_store import ChunkStore, run_chunks
from htb_jax._src.distributions import Distribution, Gaussian, Pareto, StudentT
from htb_jax._src.fingerprint import Program
from htb_jax._src.instances import equal_gap, lower_bound_pair
from htb_jax._src.memory import check_host_results, check_memory_budget
from htb_jax._src.policies.adar_etc import AdaRETC
from htb_jax._src.resumable import (
    MAX_SEEDS,
    atomic_write,
    check_layout,
    check_root_key,
    root_key_data,
    seed_chunks,
)
from htb_jax._src.simulate.program import memory_plan, simulate
from htb_jax._src.validation import (
    FLOAT32_MAX,
    check_distinct,
    check_increasing,
    check_integer,
    check_interval,
    check_nonempty,
    check_real,
    given,
    real_array,
)

FAMILIES = ("pareto", "student-t", "gaussian", "two-point")
# The sweep's arms: its instance holds every arm's parameters on the host before any memory check
# (--arms 1e10 failed inside JAX); a larger K is the Python API's, with htb.memory_plan.
MAX_ARMS = 10**5


@dataclasses.dataclass(frozen=True)
class SweepConfig:
    """An AdaR-ETC sweep over an ``(alpha, q)`` grid and horizons on one instance.

    Attributes:
      num_arms: ``K``.
      gap: ``Delta``.  For ``pareto``, ``student-t`` and ``gaussian``: the
        equal-gap instance, arm 0 shifted up by ``Delta`` (means ``(Delta, 0,
        ..., 0)`` for centred arms).  For ``two-point``: Theorem 1's instance
        ``nu^(1)`` of :func:`lower_bound_pair` (arm 0 ``Dirac(Delta)``, arm 1
        ``0`` or ``2 Delta / spike_prob`` with probability ``spike_prob``, the
        others ``Dirac(0)``), whose best arm is arm 1.
      family: ``"pareto"``, ``"student-t"``, ``"gaussian"`` or ``"two-point"``, or
        ``"MODULE:EXPRESSION"`` naming one arm's law of one's own (an
        ``htb.Distribution`` of batch shape ``()``, :mod:`~htb_jax._src.user_code`):
        the equal-gap instance of it, as for the built-in families.
      pareto_shape: tail index of the Pareto arms (``E|X|^(1+eps)`` is finite
        iff ``1 + eps < pareto_shape``).
      df: degrees of freedom of the Student-t arms (finite
        ``(1+eps)``-moment iff ``1 + eps < df``).
      spike_prob: ``beta`` of the two-point family, in ``(0, 1]``.
      eps: tail exponent the schedules are designed for.
      alphas: grid of ``alpha`` values.
      qs: grid of ``q`` values.
      horizons: horizons ``T``.
      num_seeds: seeds per grid point.
      seed_chunk: seeds per call of the compiled program: the unit of
        progress and, in an output directory, of what a resumed run keeps.
      key: integer seed of the root ``jax.random.key``.
      memory_budget: bytes per device each call may use (``None``: the
        backend's default); it changes the chunking inside a call, never a
        number, so it is not part of what a resumed run must match.
    """

    num_arms: int = 10
    gap: float = 0.1
    family: str = "pareto"
    pareto_shape: float = 2.5
    df: float = 3.0
    spike_prob: float = 0.01
    eps: float = 1.0
    alphas: tuple[float, ...] = (2 / 3, 0.75, 0.85, 0.95)
    qs: tuple[float, ...] = (0.0, 1 / 3)
    horizons: tuple[int, ...] = (10**3, 10**4, 10**5, 10**6)
    num_seeds: int = 200
    seed_chunk: int = 50
    key: int = 0
    memory_budget: int | None = None

    def validate(self) -> None:
        """Every setting, and a dry run of one chunk's simulation set-up (nothing is compiled).

        Raises:
          TypeError: for a setting of the wrong type (a string where a number belongs).
          ValueError: for a value out of range, a sweep ``simulate`` would refuse
            (a memory budget too small, gaps float32 rewards cannot resolve, ...), or results
            larger than the machine's memory.
        """
        if not user_code.is_spec(self.family) and (not isinstance(self.family, str) or self.family not in FAMILIES):
            raise ValueError(
                f"family must be one of {', '.join(FAMILIES)} or MODULE:EXPRESSION (one arm's law of one's own); "
                f"got family={self.family!r}."
            )
        check_integer("num_arms", self.num_arms, 2, maximum=MAX_ARMS, one=True)
        # float32 rewards: a larger gap would be inf (one range, not two messages for the two ends)
        check_interval("gap", self.gap, 0.0, FLOAT32_MAX, low_closed=False, high_closed=True)
        check_interval("eps", self.eps, 0.0, 1.0, low_closed=False, high_closed=True)
        moment = f"(the arms need a finite (1+eps)-moment for eps={self.eps:g})"
        if self.family == "pareto":
            check_interval(
                "pareto_shape", self.pareto_shape, 1.0 + self.eps, np.inf, low_closed=False, high_closed=False,
                where=moment,
            )
        elif self.family == "student-t":
            check_interval("df", self.df, 1.0 + self.eps, np.inf, low_closed=False, high_closed=False, where=moment)
        elif self.family == "two-point":
            check_interval("spike_prob", self.spike_prob, 0.0, 1.0, low_closed=False, high_closed=True)
        elif user_code.is_spec(self.family):
            sup = float(user_code.load_arm_law(self.family, "family").eps_sup())
            if not sup > 0:
                raise ValueError(
                    f"family {self.family!r} must have a finite (1+eps)-moment for some eps in (0, 1]; its eps_sup() "
                    f"is {sup:g}, so it has none."
                )
            if not self.eps < sup:
                raise ValueError(
                    f"family {self.family!r} has a finite (1+eps)-moment only for eps < {sup:g}; got eps={self.eps:g}."
                )
        check_integer("num_seeds", self.num_seeds, 2, maximum=MAX_SEEDS, one=True)
        check_layout(self.num_seeds, self.seed_chunk)
        check_root_key(self.key)
        for name in ("alphas", "qs", "horizons"):
            check_nonempty(name, getattr(self, name))
        real_array("alphas", list(self.alphas))
        real_array("qs", list(self.qs))
        # AdaRETC's ranges (Algorithm 1), each list checked on its own (the grid names an entry [i, j])
        at = f"for eps={self.eps:g}"
        check_interval("alphas", list(self.alphas), *theory.alpha_range(self.eps), low_closed=True,
                       high_closed=False, where=at)
        check_interval("qs", list(self.qs), *theory.q_range(self.eps), low_closed=True, high_closed=True, where=at)
        check_integer("horizons", list(self.horizons), 1, maximum=10**18)
        check_increasing("horizons", list(self.horizons))  # a horizon repeated would be a row twice
        check_distinct("alphas", list(self.alphas))
        check_distinct("qs", list(self.qs))
        check_memory_budget(self.memory_budget)
        policy = self.policy()  # refuses an (alpha, q) outside the admissible range for eps
        memory_plan(
            jax.random.key(int(self.key)), policy, self.instance(), list(self.horizons),
            max(count for _, count in self.chunks()), memory_budget=self.memory_budget,
        )
        # A seed's regret (f64) and commit (i32) per grid point and horizon, held twice at the end:
        # the chunks' arrays and their concatenation.
        cells = len(self.alphas) * len(self.qs) * len(self.horizons)
        check_host_results(self.num_seeds, 2 * 12 * cells, "run fewer seeds, or several sweeps with other keys")

    def policy(self) -> AdaRETC:
        return AdaRETC(
            eps=self.eps,
            alpha=jnp.asarray(self.alphas, jnp.float64)[:, None],
            q=jnp.asarray(self.qs, jnp.float64)[None, :],
        )

    def instance(self) -> Distribution:
        if self.family == "two-point":
            return lower_bound_pair(self.num_arms, self.gap, self.spike_prob)[1]
        if user_code.is_spec(self.family):
            return equal_gap(user_code.load_arm_law(self.family, "family"), self.num_arms, self.gap)
        base = {
            "pareto": lambda: Pareto(loc=0.0, shape=self.pareto_shape),
            "student-t": lambda: StudentT(loc=0.0, df=self.df),
            "gaussian": lambda: Gaussian(loc=0.0, scale=1.0),
        }[self.family]()
        return equal_gap(base, self.num_arms, self.gap)

    def describe(self) -> str:
        """The instance in words, e.g. ``K=10 equal-gap Pareto(2.5) arms, gap 0.1``."""
        if user_code.is_spec(self.family):
            return f"K={self.num_arms} equal-gap {user_code.parts(self.family)[1]} arms, gap {self.gap:g}"
        arms = {
            "pareto": f"equal-gap Pareto({self.pareto_shape:g})",
            "student-t": f"equal-gap Student-t({self.df:g})",
            "gaussian": "equal-gap Gaussian(0, 1)",
            "two-point": f"two-point (spike probability {self.spike_prob:g})",
        }[self.family]
        return f"K={self.num_arms} {arms} arms, gap {self.gap:g}"

    def identity(self) -> dict:
        """What a resumed run must match: every field but ``memory_budget``, JSON-able."""
        fields = dataclasses.asdict(self)
        del fields["memory_budget"]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}

    def chunks(self) -> list[tuple[int, int]]:
        """``(first_seed, num_seeds)`` of every chunk."""
        return seed_chunks(self.num_seeds, self.seed_chunk)


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """Per-seed regrets of a sweep, f64[len(alphas), len(qs), len(horizons), num_seeds]."""

    config: SweepConfig
    regret: np.ndarray
    exploration: np.ndarray  # i64[A, Q, H]
    best_arm_rate: np.ndarray  # f64[A, Q, H], fraction of seeds committing to the best arm
    seconds: float
    committed: np.ndarray | None = None  # i32[A, Q, H, S]
    resumed_chunks: int = 0  # chunks read back from an output directory


def progress_bar(
    done: int, total: int, started: float, stream, *, initial: int = 0, chunk: tuple[int, int] | None = None
) -> None:
    """A progress bar over seed chunks, with the elapsed time and an ETA.

    What the chunked runs of the library show (``htb-jax sweep``,
    :func:`htb_jax.frontier.run_family`, :func:`htb_jax.frontier.measure`);
    call it after each chunk of a loop of one's own over ``simulate(...,
    first_seed=...)``.  The bar is redrawn in place on a terminal, one line
    per update otherwise.

    Args:
      done: seeds finished, ``>= 0``.
      total: seeds in all, ``>= 1``.
      started: ``time.perf_counter()`` when this run started.
      stream: where to write (an object with ``write``, e.g. ``sys.stderr``).
      initial: seeds already finished when this run started (read back from
        disk); the ETA extrapolates from the seeds computed since.
      chunk: ``(chunks done, chunks in all)``, shown when given.

    Examples:
      >>> import io, time, htb_jax as htb
      >>> out = io.StringIO()
      >>> htb.progress_bar(8, 32, time.perf_counter(), out)
      >>> out.getvalue()[:46]
      '  [#######.......................] 8/32 seeds '
    """
    check_integer("total", total, 1, one=True)
    check_integer("done", done, 0, maximum=int(total), one=True)
    check_real("started", started, "a time.perf_counter() reading")
    if stream is None or isinstance(stream, type) or not callable(getattr(stream, "write", None)):
        raise TypeError(f"stream must be an object with a write method (e.g. sys.stderr); got {given('stream', stream)}.")
    check_integer("initial", initial, 0, maximum=int(done), one=True)
    if chunk is not None and not (isinstance(chunk, tuple) and len(chunk) == 2):
        raise TypeError(f"chunk must be None or a pair (chunks done, chunks in all); got {given('chunk', chunk)}.")
    if chunk is not None:
        check_integer("chunk[1] (chunks in all)", chunk[1], 1, one=True)
        check_integer("chunk[0] (chunks done)", chunk[0], 0, maximum=int(chunk[1]), one=True)
    elapsed = time.perf_counter() - started
    computed = done - initial
    eta = elapsed / computed * (total - done) if computed > 0 else float("nan")
    width = 30
    filled = int(width * done / total)
    chunks = f"chunk {chunk[0]}/{chunk[1]}, " if chunk is not None else ""
    line = (
        f"  [{'#' * filled}{'.' * (width - filled)}] {chunks}{done}/{total} seeds  "
        f"{elapsed:6.1f}s elapsed  ETA {eta:5.1f}s"
    )
    tty = getattr(stream, "isatty", lambda: False)()
    stream.write(("\r" + line) if tty else (line + "\n"))
    stream.flush()


def sweep_calls(config: SweepConfig) -> list[dict]:
    """The ``simulate`` call of every chunk of the sweep, but its seeds: what a chunk runs and what
    its store's fingerprint traces (:func:`~htb_jax._src.fingerprint.fingerprint`)."""
    return [dict(key=jax.random.key(config.key), policy=config.policy(), instance=config.instance(),
                 horizon=list(config.horizons), memory_budget=config.memory_budget)]


def run_chunk(config: SweepConfig, first: int, count: int) -> dict[str, np.ndarray]:
    """Seeds ``first .. first + count - 1`` of the sweep.

    Returns:
      ``regret`` f64[A, Q, H, count], ``committed`` i32[A, Q, H, count] and
      ``exploration`` i64[A, Q, H].
    """
    (call,) = sweep_calls(config)
    out = simulate(**call, num_seeds=count, first_seed=first)
    return {
        "regret": np.asarray(out.regret),
        "committed": np.asarray(out.committed),
        "exploration": np.asarray(out.exploration[..., 0]),
    }


def open_store(config: SweepConfig, out_dir: str, *, restart: bool = False, stream=None) -> ChunkStore:
    """The store of the sweep in ``out_dir``, checked against its configuration and its program
    (traced, nothing compiled), before anything is computed or written.

    Raises:
      ForeignStoreError, StaleStoreError: ``out_dir`` holds another sweep, or chunks of another
        program, and ``restart`` is false (with ``restart`` they are deleted).
    """
    return ChunkStore(out_dir, config.identity(), root_key_data(config.key), config.chunks(),
                      Program(sweep_calls(config)), stream, restart)


def run_sweep(
    config: SweepConfig,
    progress: Callable[..., None] | None = progress_bar,
    stream=None,
    store: ChunkStore | None = None,
) -> SweepResult:
    """Runs the sweep, chunk of seeds by chunk of seeds, showing progress on ``stream`` (stderr).

    Args:
      config: the sweep.
      progress: called as ``progress(done, total, started, stream, initial=,
        chunk=)`` after every chunk (see :func:`progress_bar`), or ``None``.
      stream: where progress goes (default stderr).
      store: if given (:func:`open_store`), every finished chunk is written there (see
        :mod:`htb_jax._src.chunk_store`) and chunks already there are read back
        instead of recomputed: a killed run started again resumes.

    Raises:
      ValueError: for an invalid configuration.
      Interrupted: on Ctrl-C, with the chunks stored.
    """
    config.validate()
    stream = sys.stderr if stream is None else stream
    layout = config.chunks()
    started = time.perf_counter()
    parts, resumed = run_chunks(
        layout, lambda first, count: run_chunk(config, first, count), store, progress, stream
    )
    regret = np.concatenate([p["regret"] for p in parts], axis=-1)
    committed = np.concatenate([p["committed"] for p in parts], axis=-1)
    best_arm = int(np.argmax(np.asarray(config.instance().mean())))
    best = np.mean(committed == best_arm, axis=-1)
    return SweepResult(
        config, regret, parts[-1]["exploration"], best, time.perf_counter() - started, committed, resumed
    )


def save_npz(result: SweepResult, path, manifest: dict | None = None) -> None:
    """The per-seed results (``regret``, ``committed``), ``exploration``, ``best_arm_rate``, the grid
    (``alphas``, ``qs``, ``horizons``) and the manifest as JSON text, written atomically."""
    c = result.config
    arrays = dict(
        regret=result.regret,
        committed=result.committed,
        exploration=result.exploration,
        best_arm_rate=result.best_arm_rate,
        alphas=np.asarray(c.alphas, np.float64),
        qs=np.asarray(c.qs, np.float64),
        horizons=np.asarray(c.horizons, np.int64),
        manifest=np.str_(json.dumps(manifest if manifest is not None else {"config": c.identity()}, sort_keys=True)),
    )
    atomic_write(str(path), lambda f: np.savez(f, **arrays))


def table_rows(result: SweepResult) -> list[dict]:
    """One row per (alpha, q, T): exploration length, mean regret, standard error, commit rate.

    ``best_arm_rate`` is NaN where ``L_T = T`` (no commit).
    """
    c = result.config
    rows = []
    for a, alpha in enumerate(c.alphas):
        for b, q in enumerate(c.qs):
            for h, horizon in enumerate(c.horizons):
                r = result.regret[a, b, h]
                explored = int(result.exploration[a, b, h])
                rows.append(
                    dict(
                        alpha=float(alpha),
                        q=float(q),
                        beta=(1.0 - alpha) * (1.0 + c.eps) / c.eps,
                        horizon=int(horizon),
                        exploration=explored,
                        mean_regret=float(np.mean(r)),
                        stderr=float(np.std(r - r.flat[0], ddof=1) / math.sqrt(r.size)),  # equal regrets: 0
                        best_arm_rate=float(result.best_arm_rate[a, b, h]) if explored < horizon else math.nan,
                    )
                )
    return rows


def format_table(rows: Sequence[dict]) -> str:
    """A markdown table of :func:`table_rows`."""
    head = (
        "| alpha | q | beta | T | L_T | mean regret | std. err. | P(commit to best) |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )

    def rate(r):
        return "no commit" if math.isnan(r["best_arm_rate"]) else f"{r['best_arm_rate']:.3f}"

    def two_digits(x):
        return f"{float(f'{x:.2g}'):g}"

    def horizon(t):  # every digit, as few as it takes: 1e+03, 1.5e+03, 1.23456e+05
        digits = str(int(t))
        significant = digits.rstrip("0")
        return f"{significant[0]}{'.' * (len(significant) > 1)}{significant[1:]}e{len(digits) - 1:+03d}"

    lines = [
        f"| {r['alpha']:.3f} | {r['q']:.3f} | {r['beta']:.3f} | {horizon(r['horizon'])} | {r['exploration']} "
        f"| {r['mean_regret']:.4g} | {two_digits(r['stderr'])} | {rate(r)} |"
        for r in rows
    ]
    return head + "\n".join(lines)


def _csv_field(value):
    """A CSV field: floats (NumPy's too) as the shortest repr that reads back exactly, NumPy
    integers and booleans as Python's, everything else as ``str``."""
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (np.integer, np.bool_)):
        return str(value.item())
    return str(value)


def write_csv(rows: Sequence[dict], path) -> None:
    """The rows as CSV, a header then one line per row, written atomically.

    The columns are the first row's keys.  Floats are written exactly
    (``repr``), fields holding a comma or a quote are quoted (``csv``'s
    minimal quoting), and lines end in ``\\n``.
    """
    keys = list(rows[0])
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(keys)
    writer.writerows([_csv_field(r[k]) for k in keys] for r in rows)
    atomic_write(str(path), lambda f: f.write(text.getvalue().encode()))


LEGEND_CURVES = 8  # curves a sweep's figure names one by one in its legend


def plot(result: SweepResult, path) -> None:
    """Log-log regret against ``T`` per ``(alpha, q)``, mean with a standard-error band: up to
    :data:`LEGEND_CURVES` curves named in the legend, more colored by ``alpha`` on a color bar, with
    the legend naming each ``q``'s line style."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = result.config
    horizons = np.asarray(c.horizons, float)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    styles = ["-", "--", ":", "-."]
    # A legend entry per curve up to LEGEND_CURVES; beyond, a color bar for alpha and a legend for q.
    many = len(c.alphas) * len(c.qs) > LEGEND_CURVES
    if many:
        cmap = matplotlib.colors.ListedColormap(plt.cm.viridis(np.linspace(0.0, 0.85, 256)))
        norm = matplotlib.colors.Normalize(min(c.alphas), max(c.alphas) + (len(c.alphas) == 1))
        colors = cmap(norm(np.asarray(c.alphas, float)))
    else:
        colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(c.alphas)))
    for a, alpha in enumerate(c.alphas):
        for b, q in enumerate(c.qs):
            r = result.regret[a, b]
            mean = r.mean(-1)
            se = r.std(-1, ddof=1) / math.sqrt(r.shape[-1])
            if many:  # no bands: a hundred of them would cover the curves
                ax.plot(horizons, mean, styles[b % 4], color=colors[a], marker="o", ms=2, lw=0.8)
                continue
            ax.plot(horizons, mean, styles[b % 4], color=colors[a], marker="o", ms=3,
                    label=f"alpha={alpha:.3g}, q={q:.3g}")
            ax.fill_between(horizons, np.maximum(mean - se, 1e-9), mean + se, color=colors[a], alpha=0.2)
    if many:
        fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="alpha")
        for b, q in enumerate(c.qs):
            ax.plot([], [], styles[b % 4], color="0.3", label=f"q={q:.3g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("mean regret" if many else "mean regret (± 1 s.e.)")
    ax.set_title(
        f"AdaR-ETC, eps={c.eps:g}: {c.describe()}, {c.num_seeds} seeds",
        fontsize=9,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=1 if many else 2)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
