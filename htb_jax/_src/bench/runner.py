"""Runs policies through the suite: every contender on the same reward tables, stored and resumable.

The settings of an experiment that share a law class, an arm count and a
horizon run as one :func:`~htb_jax._src.simulate.program.simulate` program (a
family of instances); a contender told ``eps`` or ``u`` runs as a grid paired
with the instances.  Every contender's seed ``s`` reads the reward table of
``fold_in(key(KEY), s)``: paired comparisons.  Each run (contender x group of
settings) is stored as it finishes, under ``out/runs/<contender>/``, with the
fingerprint of its program, so a run started again, or a second user policy
benchmarked into the same ``out``, reads back every intact run whose program
is unchanged.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from htb_jax._src import directory_lock
from htb_jax._src.bench import stats, worst_case
from htb_jax._src.bench.peers import Contender, as_file_name, peers
from htb_jax._src.bench.report import write_report
from htb_jax._src.bench.suite import (
    KEY,
    NAMES,
    SIZES,
    VERSION,
    Experiment,
    Setting,
    experiments,
    setting_score,
)
from htb_jax._src.chunk_store import ChunkStore, FolderRemedy, ForeignStoreError, run_chunks
from htb_jax._src.fingerprint import Program, identity_repr, versions
from htb_jax._src.frontier.measure import policy_reads_horizon
from htb_jax._src.output_dir import check_output_dir, make_output_dir
from htb_jax._src.protocol_checks import check_one_policy, check_policy_factory, is_policy_factory
from htb_jax._src.resumable import (
    Interrupted,
    check_interrupt,
    remove_unmoved_outputs,
    root_key_data,
    seed_chunks,
)
from htb_jax._src.simulate.program import memory_plan, simulate
from htb_jax._src.validation import check_choice, check_flag, check_path, given

NUM_CHECKPOINTS = 16


@dataclasses.dataclass(frozen=True)
class Group:
    """Settings of one experiment run by one program.

    Attributes:
      experiment: the experiment's name.
      index: the group's position in the experiment.
      settings: the positions of its settings in the experiment.
      instances: the distinct instances, stacked: batch shape ``(I, K)``.
      horizons: the distinct horizons, increasing.
      where: for each setting, ``(instance row, horizon column)``.
    """

    experiment: str
    index: int
    settings: tuple[int, ...]
    instances: object
    horizons: tuple[int, ...]
    where: tuple[tuple[int, int], ...]


def _stack(laws):
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x, jnp.float64) for x in xs]), *laws)


def _law_key(law) -> tuple:
    """A law's class, structure and parameters' bytes: equal for equal instances only (a ``repr``
    shows arrays to a few digits, so two instances that differ beyond them would share a row)."""
    leaves, tree = jax.tree.flatten(law)
    arrays = [np.asarray(x) for x in leaves]
    return type(law), tree, tuple((a.dtype.str, a.shape, a.tobytes()) for a in arrays)


def groups(experiment: Experiment, contender: Contender) -> list[Group]:
    """The programs a contender runs for an experiment: settings grouped by law class and arm count.

    A contender told ``eps`` or ``u`` keeps one row per setting (its policy differs per setting);
    others share a row between settings of equal instances (the misspecification experiment's).
    """
    keyed: dict[tuple, list[int]] = {}
    for i, s in enumerate(experiment.settings):
        keyed.setdefault((type(s.instance).__name__, s.num_arms), []).append(i)
    out = []
    for index, members in enumerate(keyed.values()):
        rows, where, laws = {}, [], []
        for i in members:
            s = experiment.settings[i]
            identity = i if contender.told else _law_key(s.instance)
            if identity not in rows:
                rows[identity] = len(laws)
                laws.append(s.instance)
            where.append(rows[identity])
        horizons = tuple(sorted({experiment.settings[i].horizon for i in members}))
        out.append(Group(experiment.name, index, tuple(members), _stack(laws), horizons,
                         tuple((r, horizons.index(experiment.settings[i].horizon)) for r, i in zip(where, members, strict=True))))
    return out


_ONE_AT_A_TIME = "benchmark the points of a grid one at a time"


def _calls(contender: Contender, group: Group, experiment: Experiment, reach: int | None) -> list[dict]:
    """The ``simulate`` keywords of a contender's run of a group (horizons beyond ``reach`` dropped).

    One call, but for a contender told ``eps`` or ``u`` whose policies do not stack into a grid
    paired with the instances (policies of different structures, or a ``batch_shape`` fixed at
    ``()``): one call per instance, whose numbers are the same (every instance reads the same
    reward tables).
    """
    horizons = [h for h in group.horizons if reach is None or h <= reach]
    call = {"key": jax.random.key(KEY), "instance": group.instances, "horizon": horizons,
            "num_checkpoints": NUM_CHECKPOINTS}
    if not contender.told:
        return [call | {"policy": contender.make}]
    grid = told_policies(contender, [experiment.settings[i] for i in group.settings])
    if len({jax.tree.structure(p) for p in grid}) == 1:
        stacked = _stack(grid)
        if stacked.batch_shape == (len(grid),):
            return [call | {"policy": stacked, "paired": True}]
    return [call | {"policy": made, "instance": jax.tree.map(lambda p, j=j: p[j:j + 1], group.instances)}
            for j, made in enumerate(grid)]


def _reach(contender: Contender, size: str) -> int | None:
    return SIZES[size].reach if contender.round_cost == "O(t)" else None


def _passes_stored() -> bool:
    """Whether groups run round by round are stored pass by pass: off a CPU, where a pass of a long group
    takes minutes (on a CPU, where the suite's groups take seconds, one chunk, without planning each)."""
    return jax.default_backend() != "cpu"


def seed_layout(contender: Contender, calls: list[dict], seeds: int) -> list[tuple[int, int]]:
    """How a group's ``seeds`` are stored: one chunk, but for a contender run round by round off a CPU
    (:func:`_passes_stored`) whose calls run them in several passes of rounds: as many chunks as the
    longest call's passes (a GPU's 1024 seeds of ForceMoM at ``T = 10^6``, 61 MiB each under its 8 GiB
    chunk: 8), each stored once done, so that an interrupted group keeps them."""
    if contender.round_cost == "fast path" or not _passes_stored():
        return [(0, seeds)]
    passes = max(memory_plan(c["key"], c["policy"], c["instance"], c["horizon"], seeds,
                             **{k: v for k, v in c.items() if k not in ("key", "policy", "instance", "horizon")}
                             ).num_chunks for c in calls)
    return seed_chunks(seeds, -(-seeds // passes))


def run_group(contender: Contender, experiment: Experiment, group: Group, size: str, out: str | None,
              restart: bool = False) -> tuple[dict[str, np.ndarray] | None, bool, float]:
    """One contender's run of one group: ``(arrays, read back, seconds)``; arrays ``None`` where the
    contender reaches none of the group's horizons, seconds those of the run that computed them
    (compilation included; also when read back).

    Arrays: ``regret`` f64[I, H', S], ``curve`` f64[I, H', S, C], ``checkpoints`` i64[I, H', C]
    (``H'`` the horizons it reaches).
    """
    calls = _calls(contender, group, experiment, _reach(contender, size))
    if not calls[0]["horizon"]:
        return None, False, 0.0
    seeds = SIZES[size].seeds
    layout = seed_layout(contender, calls, seeds)
    store = None
    if out is not None:
        directory = os.path.join(contender.runs_folder(out), f"{experiment.name}-{group.index}")
        os.makedirs(directory, exist_ok=True)
        config = {"suite": VERSION, "size": size, "experiment": experiment.name, "group": group.index,
                  "contender": contender.name, "horizons": calls[0]["horizon"], "seeds": seeds}
        store = ChunkStore(directory, config, root_key_data(KEY), layout, Program(calls),
                           restart=restart, remedy=FolderRemedy(folder=contender.runs_folder(out)))

    def compute(first: int, num: int) -> dict[str, np.ndarray]:
        started = time.perf_counter()
        outcomes = [simulate(**call, num_seeds=num, first_seed=first) for call in calls]
        arrays = {  # the instances along the first axis
            "regret": np.concatenate([o.regret for o in outcomes]),
            "curve": np.concatenate([o.regret_curve for o in outcomes]),
            "checkpoints": np.concatenate([np.asarray(o.checkpoints)[..., 0, :] for o in outcomes]),
        }
        return arrays | {"seconds": np.float64(time.perf_counter() - started)}

    parts, resumed = run_chunks(layout, compute, store)
    arrays = {"regret": np.concatenate([p["regret"] for p in parts], axis=-1),  # along the seeds
              "curve": np.concatenate([p["curve"] for p in parts], axis=-2),
              "checkpoints": parts[0]["checkpoints"]}
    return arrays, bool(resumed), float(sum(p["seconds"] for p in parts))


def contenders(policy=None, name: str | None = None, with_peers: bool = True) -> list[Contender]:
    """The user's policy (if any) as a contender, then the built-in peers."""
    out = []
    field = peers() if with_peers else ()
    if policy is not None:
        told = is_policy_factory(policy)
        label = name or (getattr(policy, "__qualname__", "policy") if told else repr(policy))
        if name is None and any(not c.isprintable() for c in label):  # a repr over lines (an array's): one line
            label = " ".join(label.split())
        knows = "eps, u (told by the suite)" if told else "nothing"  # and T where it reads it: knowing_horizon
        # a label given (name) keys the runs folder with the policy it labels: two policies, one label, two folders
        identity = "" if name is None else (  # a repr without addresses, the same in every process
            f"{getattr(policy, '__module__', '')}:{getattr(policy, '__qualname__', '')}" if told
            else identity_repr(policy))
        user = Contender(label, policy, knows, "O(K)", user=True, identity=identity)
        check_label(label, None if name is not None else "its name" if told else "its repr")
        out.append(user)
    return out + list(field)


def check_label(label: str, default: str | None) -> None:
    """``ValueError`` where the user's policy's ``label`` is a built-in peer's name, also as a folder name
    (case-blind): their runs would share a folder.  ``default`` says where a label the user did not give
    comes from (``"its repr"``), ``None`` for a ``name`` given."""
    for peer in peers():  # with peers=False too: their runs may be stored in the same out
        same = label == peer.name
        if not same and as_file_name(label).casefold() != peer.slug.casefold():
            continue
        reads = f", which reads as {peer.name!r}'s runs/{peer.slug}" if not same else ""
        if default is not None:  # the user named nothing
            clash = f"is the built-in peer {peer.name!r}'s name" if same else \
                f"reads as the built-in peer {peer.name!r}'s runs/{peer.slug}"
            raise ValueError(f"name must be given for this policy: its label by default, {default} {label!r}, {clash} "
                             "(give a name of its own)")
        raise ValueError(f"name must differ from every built-in peer's name{'' if same else ', also as a folder name'}"
                         f"; got name={label!r}{reads} (give another name)")


def knowing_horizon(contender: Contender, setting: Setting) -> Contender:
    """``contender`` said to know ``T`` too where its policy (at ``setting``) reads it as it plays, as the
    report says of the peers that do.  Traced, nothing compiled: called once the policy is checked
    (:func:`check_arguments`)."""
    if not policy_reads_horizon(contender.policy(*setting.told()), setting.instance, setting.horizon):
        return contender
    return dataclasses.replace(contender, knows="T" if contender.knows == "nothing" else f"{contender.knows}, T")


def told_policies(contender: Contender, settings: Sequence[Setting], function: str = "htb.bench.run") -> list:
    """The policy a contender told ``(eps, u)`` makes for each setting, checked: ``ValueError``/``TypeError``
    where it raises at a setting's values or returns no single policy there (``function``: the caller, for
    the messages)."""
    made = []
    for s in settings:
        e, u = s.told()
        made.append(contender.policy(e, u))
        check_one_policy(f"policy(eps={e:g}, u={u:g})", made[-1], function, _ONE_AT_A_TIME)
    return made


def check_arguments(policy, name, size, out, peers, only, restart, progress, command,
                    function: str = "htb.bench.run") -> list[str] | None:
    """Every argument of :func:`run` checked before anything is printed or runs; returns ``only`` as a
    list (``None``: every experiment).  ``function``: the caller, for the messages (``"htb-jax bench"``)."""
    check_choice("size", size, tuple(SIZES))
    for flag, value in (("peers", peers), ("restart", restart), ("progress", progress)):
        check_flag(flag, value)
    for label, value in (("name", name), ("command", command)):
        if value is not None and (not isinstance(value, str) or not value):
            raise TypeError(f"{label} must be None or a non-empty string; got {given(label, value)}.")
    if name is not None and (not name.strip() or any(not c.isprintable() for c in name)):
        # a blank label showed blank in the report; a newline split the Markdown scorecard's row
        raise ValueError(f"name must be a label of printable characters, not blank; got name={name!r}.")
    names = [*NAMES, worst_case.NAME]
    if only is not None:
        listed = [only] if isinstance(only, str) else list(only) if isinstance(only, (list, tuple)) else None
        if not listed or any(o not in names for o in listed):
            raise ValueError(f"only must be None or experiment names among {', '.join(names)}; got "
                             f"{given('only', only)}.")
        repeated = sorted({o for o in listed if listed.count(o) > 1})
        if repeated:
            raise ValueError(f"only must not repeat a name; got only={listed!r}, with {', '.join(repeated)} more "
                             f"than once.")
        only = listed
    if policy is None and not peers:
        raise ValueError("peers=False needs a policy: there would be nothing to run")
    if policy is not None and is_policy_factory(policy):
        check_policy_factory("policy", policy, function, "eps, u")
    elif policy is not None:
        check_one_policy("policy", policy, function, _ONE_AT_A_TIME)
    field = contenders(policy, name, peers)  # a name taken by a peer
    if policy is not None and field[0].told:
        told_policies(field[0], [s for e in experiments(size) if only is None or e.name in only for s in e.settings],
                      function)  # every setting's, before anything runs
    if policy is not None:  # its kernel traced on the first setting (nothing compiled): a protocol mistake named now
        first = experiments(size)[0].settings[0]
        memory_plan(jax.random.key(KEY), field[0].policy(*first.told()), first.instance, first.horizon, 2)
        if only is None or worst_case.NAME in only:
            worst_case.check_contender(field[0], size)
    if out is not None:
        check_path("out", out)
        check_output_dir(os.fspath(out))
    return only


def run(policy=None, *, name: str | None = None, size: str = "cpu", out: str | None = "htb-jax-bench",
        peers: bool = True, only: Sequence[str] | None = None, restart: bool = False, progress: bool = True,
        command: str | None = None) -> dict:
    """Runs a policy and the built-in peers through the suite ``ht-v1``; writes and returns the results.

    Every contender's seed ``s`` reads the same reward table, so their regrets are paired.  Each run of
    a contender on a group of settings is stored in ``out`` as it finishes, with the fingerprint of its
    program: the same call resumes, and a second policy benchmarked into the same ``out`` reads the
    peers' runs back (a run whose code or htb_jax version changed is refused, as every store is).

    Args:
      policy: the policy to benchmark (a policy instance, told nothing), a function ``(eps, u) ->
        policy`` told each setting's tail exponent and moment bound, or ``None`` for the peers alone.
      name: its label (default: its ``repr``, or a function's name); a built-in peer's name is refused.
      size: ``"cpu"`` (``T = 2000``, 32 seeds a setting) or ``"gpu"`` (``T = 10^4``, 1024 seeds).
      out: the directory of the stored runs and the report (``None``: nothing stored or written).
      peers: also run the built-in peers (:func:`htb_jax.bench.peers`).
      only: names of the experiments to run, and ``"worst-case"`` for the worst case (default: all,
        the worst case included).
      restart: delete what ``out`` stores of every run this call makes (the policy's and the peers'),
        refused or not, and compute them again; other policies' runs stored there are kept.
      progress: a line on stderr per run.
      command: the command line that made the results, recorded in them.

    Returns:
      The results: results.json's dict (the suite, size, versions, device, every policy's cells,
      curves, scores, ranks and ratios per experiment).

    Raises:
      ValueError, TypeError: for a bad argument, before anything runs.
      Interrupted: a ``KeyboardInterrupt`` on Ctrl-C, every finished run kept.
    """
    only = check_arguments(policy, name, size, out, peers, only, restart, progress, command)
    if out is None:
        return _run(policy, name, size, out, peers, only, restart, progress, command)
    out = os.fspath(out)
    make_output_dir(out)
    try:  # one command at a time in out (each store has its own lock, but their report is out's)
        lock = directory_lock.hold(out)
    except directory_lock.InUseError as in_use:
        raise ForeignStoreError(
            f"the output directory {out!r} is being written by another running command{in_use.owner}; wait for "
            f"it to end, or give another {'--out' if command is not None else 'out'}"
        ) from None
    try:
        remove_unmoved_outputs(out)  # a report's files left by a command killed while it wrote them
        return _run(policy, name, size, out, peers, only, restart, progress, command)
    finally:
        directory_lock.release(out, lock)


def _run(policy, name, size, out, peers, only, restart, progress, command) -> dict:
    """:func:`run` once its arguments are checked (and ``out`` is held)."""
    size_experiments = tuple(e for e in experiments(size) if only is None or e.name in only)
    worst = only is None or worst_case.NAME in only
    field = contenders(policy, name, peers)
    if policy is not None:
        field[0] = knowing_horizon(field[0], experiments(size)[0].settings[0])
    grouped = {(c.name, e.name): groups(e, c) for c in field for e in size_experiments}  # stacked once
    plan = [(c, e, g) for c in field for e in size_experiments for g in grouped[c.name, e.name]]
    total = len(plan) + (len(field) if worst else 0)
    per_contender: dict[str, dict[tuple[str, int], dict | None]] = {c.name: {} for c in field}
    wall = {c.name: 0.0 for c in field}
    started = time.perf_counter()

    def note(n: int, what: str, resumed: bool, seconds: float) -> None:
        if progress:
            state = "read back" if resumed else f"{seconds:.1f} s"
            print(f"[{n}/{total}] {what}: {state}; {time.perf_counter() - started:.0f} s elapsed", file=sys.stderr,
                  flush=True)

    finished = 0
    try:
        for n, (c, e, g) in enumerate(plan, 1):
            check_interrupt()
            arrays, resumed, seconds = run_group(c, e, g, size, out, restart)
            per_contender[c.name][(e.name, g.index)] = arrays
            wall[c.name] += seconds
            finished = n
            settings = f"{len(g.settings)} setting" + "s" * (len(g.settings) > 1)
            note(n, f"{c.name} | {e.name} {g.index + 1}/{len(grouped[c.name, e.name])} ({settings})", resumed, seconds)
        measured = {}
        if worst:
            for n, c in enumerate(field, len(plan) + 1):
                check_interrupt()
                measured[c.name], seconds, resumed = worst_case.measure_contender(c, size, out, restart)
                wall[c.name] += seconds
                finished = n
                note(n, f"{c.name} | {worst_case.NAME}", resumed, seconds)
        check_interrupt()
    except KeyboardInterrupt:  # every finished run is stored: say so in runs, not in the last run's chunks
        raise Interrupted(finished if out is not None else 0, total, out, "runs") from None
    results = assemble(field, size_experiments, grouped, per_contender, wall, size, command)
    if worst:
        results["experiments"].append(worst_case.entry(field, measured, size))
        results["frontier"] = [m.row() | {"seconds": None} for ms in measured.values() for m in ms]
    if out is not None:
        write_report(results, out)
    return results


def _cells(experiment, contender_groups, arrays_by_group) -> tuple[list, list, list]:
    """Per setting: the regrets f64[S] (or None), its summary cell and its curve band, from a contender's
    runs of its groups (:func:`groups`)."""
    regrets, cells, curves = [None] * len(experiment.settings), [None] * len(experiment.settings), \
        [None] * len(experiment.settings)
    for g in contender_groups:
        arrays = arrays_by_group.get((experiment.name, g.index))
        if arrays is None:
            continue
        for i, (row, col) in zip(g.settings, g.where, strict=True):
            if col >= arrays["regret"].shape[1]:
                continue  # a horizon beyond the contender's reach
            s: Setting = experiment.settings[i]
            r = arrays["regret"][row, col]
            regrets[i] = r
            cells[i] = {"horizon": s.horizon, **stats.summary(r),
                        "score": setting_score(float(np.mean(r)), s.uniform_regret())}
            band = stats.curve_band(arrays["curve"][row, col].T)
            curves[i] = {"rounds": arrays["checkpoints"][row, col].tolist(), **band}
    return regrets, cells, curves


def assemble(field, size_experiments, grouped, per_contender, wall, size, command) -> dict:
    """results.json's dict from every contender's runs (``grouped``: each contender's and experiment's groups)."""
    s = SIZES[size]
    out_experiments = []
    for e in size_experiments:
        uniform = np.array([st.uniform_regret() for st in e.settings])
        entry = {
            "name": e.name, "axis": e.axis, "description": e.description, "score": e.score,
            "settings": [{"label": st.label, "axis_value": st.axis_value, "instance": _compact(st.instance),
                          "num_arms": st.num_arms, "horizon": st.horizon, "seeds": s.seeds,
                          "uniform_regret": float(u)} for st, u in zip(e.settings, uniform, strict=True)],
            "cells": {}, "curves": {}, "scores": {},
        }
        normalised = {}
        for c in field:
            regrets, cells, curves = _cells(e, grouped[c.name, e.name], per_contender[c.name])
            entry["cells"][c.name], entry["curves"][c.name] = cells, curves
            scores = [cell["score"] for cell in cells if cell is not None]
            entry["scores"][c.name] = float(np.mean(scores)) if scores else None
            if all(r is not None for r in regrets):
                normalised[c.name] = stats.normalised(np.stack(regrets), uniform)
        # A contender that missed a setting (beyond its reach) has no rank or ratio on the experiment.
        ranks, ratios = stats.ranks_and_ratios(normalised, [c.name for c in field if not c.user and c.name in normalised])
        entry["ranks"] = {c.name: ranks.get(c.name) for c in field}
        entry["ratios"] = {c.name: ratios.get(c.name) for c in field}
        out_experiments.append(entry)
    return {
        "suite": VERSION, "size": size, "key": KEY, "versions": versions(), "device": _device(),
        "command": command,
        "policies": [{"name": c.name, "knows": c.knows, "round_cost": c.round_cost, "user": c.user,
                      "wall_s": round(wall[c.name], 2)} for c in field],
        "experiments": out_experiments,
        "frontier": [],
    }


def _compact(law) -> str:
    """A law's class and each parameter's values over the arms, e.g. ``StudentT(loc=[1, 0, 0, 0], df=2.5,
    scale=1)``."""
    fields = []
    for f in dataclasses.fields(law):
        value = getattr(law, f.name)
        v = np.asarray(value) if isinstance(value, (int, float, np.ndarray, jax.Array)) else None
        if v is None:  # a static field, such as the observations of an Empirical law
            text = repr(value)
        elif v.size and np.all(v == v.flat[0]):
            text = f"{v.flat[0]:g}"
        else:
            text = "[" + ", ".join(f"{x:g}" for x in v.ravel()) + "]"
        fields.append(f"{f.name}={text}")
    return f"{type(law).__name__}({', '.join(fields)})"


def _device() -> str:
    """The device the runs used: its platform and kind, with the CPU's model name on a CPU."""
    d = jax.devices()[0]
    kind = d.device_kind
    if d.platform == "cpu" and os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            models = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        kind = models[0] if models else kind
    return f"{d.platform}: {kind} ({len(jax.devices())} device(s), {os.cpu_count()} cores)"
