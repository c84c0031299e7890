"""Resumable sweeps: killed with SIGKILL and restarted, or with a damaged chunk, the results equal an
uninterrupted run's bit for bit; another configuration in an old directory is refused."""

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import lock_held_by_another_process
from htb_jax._src import chunk_store, directory_lock, resumable
from htb_jax._src.cli import main

SMALL = ["sweep", "--arms", "3", "--alphas", "2/3,0.9", "--qs", "0", "--horizons", "1000,5000",
         "--pareto-shape", "3"]
KILLED = [*SMALL, "--seeds", "40", "--seed-chunk", "1"]


def _npz(path):
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def _same_results(a, b):
    x, y = _npz(a / "sweep.npz"), _npz(b / "sweep.npz")
    assert set(x) == set(y)
    for name in ("regret", "committed", "exploration", "best_arm_rate", "alphas", "qs", "horizons"):
        np.testing.assert_array_equal(x[name], y[name], err_msg=name)
    assert json.loads(str(x["manifest"]))["config"] == json.loads(str(y["manifest"]))["config"]
    assert (a / "sweep.csv").read_text() == (b / "sweep.csv").read_text()


def _first_chunk_written(process, out):
    """``out``'s chunk folder, once ``process`` (a command writing there) has stored a chunk and goes on."""
    chunks = out / "chunks"
    deadline = time.monotonic() + 300
    while not (chunks.is_dir() and any(p.suffix == ".npz" for p in chunks.iterdir())):
        assert process.poll() is None and time.monotonic() < deadline, "no chunk was written"
        time.sleep(0.005)
    return chunks


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted")
    assert main([*KILLED, "--out", str(out)]) == 0
    return out


def test_sigkill_mid_run_then_restart_equals_uninterrupted(tmp_path, uninterrupted):
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "htb_jax", *KILLED, "--out", str(out)]
    # Both processes read the program the uninterrupted run compiled from the test run's persistent
    # cache (tests/conftest.py), where there is one.
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chunks = _first_chunk_written(first, out)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert first.returncode == -signal.SIGKILL
    written = sorted(p.name for p in chunks.iterdir() if p.suffix == ".npz")
    assert 1 <= len(written) < 40, written  # killed mid-run
    assert not (out / "sweep.npz").exists()

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"resumed: {len(written)} of 40 chunks" in again.stderr
    _same_results(out, uninterrupted)


def test_sigint_mid_run_prints_one_line_exits_130_and_the_command_resumes(tmp_path, uninterrupted):
    # Ctrl-C is SIGINT: Python raises KeyboardInterrupt wherever the main thread is (compiling, in a
    # chunk, writing one). Catches the 60-line traceback through JAX's compiler, another status,
    # and a finished chunk lost (tests/test_interrupts.py puts the interrupt at chosen moments).
    out = tmp_path / "interrupted"
    command = [sys.executable, "-m", "htb_jax", *KILLED, "--out", str(out)]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    # A shell's background job starts with SIGINT ignored, and Python then installs no handler for it:
    # the first run installs Ctrl-C's own (python -m htb_jax, by runpy, after that), so that the test
    # does not depend on how the suite was started.
    started = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
               "sys.argv = ['htb_jax', *sys.argv[1:]]; runpy.run_module('htb_jax', run_name='__main__')")
    first = subprocess.Popen([sys.executable, "-c", started, *command[3:]], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    _stopped_then_resumed(first, signal.SIGINT, 130, "interrupted", out, command, env, uninterrupted)


def _stopped_then_resumed(first, signum, status, stopped, out, command, env, uninterrupted):
    """Sends ``signum`` to the run ``first`` once a chunk is stored: it ends with ``status``, one line
    saying it was ``stopped`` and how many chunks are kept, and ``command`` resumes to the uninterrupted
    results."""
    chunks = _first_chunk_written(first, out)
    first.send_signal(signum)
    stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == status, stderr
    assert stdout == "" and "Traceback" not in stderr
    stored = sorted(p.name for p in chunks.iterdir())
    assert all(name.endswith(".npz") for name in stored) and 1 <= len(stored) < 40, stored
    assert stderr.splitlines()[-1] == (
        f"htb-jax: {stopped}: {len(stored)} of 40 chunks stored in {out}; the same command resumes from them")

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"resumed: {len(stored)} of 40 chunks" in again.stderr
    _same_results(out, uninterrupted)


def test_damaged_chunks_are_recomputed_never_merged(tmp_path, uninterrupted, capsys):
    out = tmp_path / "damaged"
    args = [*KILLED, "--out", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    chunks = out / "chunks"
    truncated = chunks / "chunk-00003.npz"
    truncated.write_bytes(truncated.read_bytes()[:200])
    flipped = chunks / "chunk-00007.npz"
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0xFF
    flipped.write_bytes(bytes(data))
    # A well-formed file with other numbers (its digest recomputed to match): the manifest's digest catches it.
    forged = _npz(chunks / "chunk-00011.npz")
    forged["regret"] = forged["regret"] + 1.0
    forged.pop("sha256")
    np.savez(chunks / "chunk-00011.npz", sha256=np.str_(resumable.digest(forged)), **forged)
    (chunks / ".chunk-00012.npz.abc.tmp").write_bytes(b"partial")  # left by a kill mid-write
    assert main(args) == 0
    err = capsys.readouterr().err
    for index in ("00003", "00007", "00011"):
        assert f"chunk-{index}.npz is damaged or incomplete; recomputing it" in err
    assert "resumed: 37 of 40 chunks" in err
    assert not (chunks / ".chunk-00012.npz.abc.tmp").exists()
    _same_results(out, uninterrupted)


def test_another_configuration_in_an_old_directory_is_refused(tmp_path, uninterrupted, capsys):
    out = tmp_path / "old"
    shutil.copytree(uninterrupted, out)
    assert main([*KILLED, "--gap", "0.2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"htb-jax: error: the output directory {str(out)!r} holds a run with another configuration "
        "(--gap: 0.1 there, 0.2 here); give another --out, or --restart to delete its chunks and start again"
    ]
    # The memory budget changes no number: a resumed run may use another.
    assert main([*KILLED, "--memory-budget", "64MiB", "--out", str(out)]) == 0
    assert "resumed: 40 of 40 chunks read back" in capsys.readouterr().err


def test_chunks_without_their_manifest_or_a_manifest_missing_a_field_are_refused_and_kept(tmp_path, uninterrupted,
                                                                                          capsys):
    # Deleting manifest.json to "reset" a run, or copying chunks/ by hand, left chunks that nothing ties to a
    # configuration: they were read back into a run of another gap.  A manifest without its digests raised a
    # KeyError after deleting a chunk.
    out = tmp_path / "no-manifest"
    shutil.copytree(uninterrupted, out)
    (out / "manifest.json").unlink()
    chunks = sorted(p.name for p in (out / "chunks").iterdir())
    assert main([*KILLED, "--gap", "0.5", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"htb-jax: error: the output directory {str(out)!r} holds chunk files but no manifest.json that says which "
        "run computed them; give another --out, or --restart to delete its chunks and start again"]
    assert sorted(p.name for p in (out / "chunks").iterdir()) == chunks

    out = tmp_path / "no-digests"
    shutil.copytree(uninterrupted, out)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["chunk_sha256"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main([*KILLED, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"htb-jax: error: {out / 'manifest.json'} is not a readable htb-jax sweep manifest; give another --out, "
        "or --restart to delete its chunks and start again"]
    assert sorted(p.name for p in (out / "chunks").iterdir()) == chunks


def test_a_ctrl_c_that_python_dropped_stops_the_run_at_the_next_chunk(monkeypatch):
    # Raised inside a garbage-collection callback, KeyboardInterrupt is printed as "Exception ignored" and
    # lost: the command line's handler records it, and the chunk loop raises it again before the next chunk
    # (a bench went on to its end and exited 0).
    monkeypatch.setattr(resumable, "_stop_signal", None)
    computed = []

    def compute(first, count):
        computed.append(first)
        if first == 1:
            try:  # what a gc callback does with the interrupt
                resumable.stop_handler(2, None)
            except KeyboardInterrupt:
                pass
        return {"x": np.zeros(count)}

    with pytest.raises(resumable.Interrupted) as stopped:
        chunk_store.run_chunks([(0, 1), (1, 1), (2, 1), (3, 1)], compute)
    assert computed == [0, 1] and stopped.value.total == 4


def test_a_signal_inside_a_gc_callback_is_recorded_not_raised_there(monkeypatch):
    # Raised inside jax's _xla_gc_callback, the KeyboardInterrupt was printed as "Exception ignored" with a
    # traceback on stderr (a SIGTERM test failed on it in CI); now the handler records it there and the
    # chunk loop raises it between chunks.
    monkeypatch.setattr(resumable, "_stop_signal", None)
    seen = []

    def callback(phase, info):
        if phase == "start" and not seen:
            try:
                resumable.stop_handler(signal.SIGTERM, sys._getframe())
                seen.append("recorded")
            except KeyboardInterrupt:
                seen.append("raised")

    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)
    assert seen == ["recorded"] and resumable.interrupt_signal() == signal.SIGTERM
    with pytest.raises(KeyboardInterrupt):
        resumable.check_interrupt()
    with pytest.raises(KeyboardInterrupt):  # elsewhere it raises at once, as Python's own Ctrl-C
        resumable.stop_handler(signal.SIGINT, sys._getframe())


def test_the_progress_counts_the_chunks_done_when_a_recomputed_chunk_precedes_stored_ones(tmp_path):
    # Chunk 0 damaged (recomputed), chunks 1 and 2 read back: after chunk 0 three of four are done
    # (the bar said "chunk 1/4", the position of the chunk computed).
    layout = [(0, 1), (1, 1), (2, 1), (3, 1)]
    store = chunk_store.ChunkStore(str(tmp_path), {"a": 1}, [0, 0], layout, {"program_sha256": "0"})
    for i in (1, 2):
        store.save(i, {"x": np.zeros(1)})
    shown = []
    chunk_store.run_chunks(layout, lambda first, count: {"x": np.zeros(count)}, store,
                         lambda *args, chunk, **kwargs: shown.append(chunk))
    assert shown == [(3, 4), (4, 4)]


def test_a_setting_the_identity_leaves_at_its_default_is_named_as_the_default(tmp_path):
    # The T-frontier's identity leaves out sampler="auto" (runs stored before it was a setting resume):
    # refused for another sampler, the message said "sampler: None there" where the user had typed auto.
    manifest = {"config": {"experiment": "t_frontier", "key": 0}, "chunks": [[0, 2]], "chunk_sha256": {},
                "root_key": [0, 0]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(chunk_store.ForeignStoreError, match=r"\(sampler: the default there, 'per_pull' here\)"):
        chunk_store.read_manifest(str(tmp_path), {"experiment": "t_frontier", "key": 0, "sampler": "per_pull"},
                                [0, 0], [(0, 2)], {}, chunk_store.CLI_REMEDY)


def test_another_experiment_is_named_alone(tmp_path):
    # Every setting of another experiment differs: the refusal listed each (about 2,000 characters, a
    # family's repr against its fields, defaults "there" that are the same here), the experiment buried.
    manifest = {"config": {"experiment": "measure", "family": "SpikeFamily()", "num_seeds": 32},
                "chunks": [[0, 2]], "chunk_sha256": {}, "root_key": [0, 0]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    for config, shown in (({"experiment": "t_frontier", "family": {"gap": 0.1}, "num_seeds": 256}, "a t_frontier"),
                          ({"family": "pareto", "num_seeds": 32}, "a sweep")):  # a sweep's identity names none
        with pytest.raises(chunk_store.ForeignStoreError, match=rf"another configuration \(a measure run there, {shown} "
                                                              r"run here\); give another"):
            chunk_store.read_manifest(str(tmp_path), config, [0, 0], [(0, 2)], {}, chunk_store.CLI_REMEDY)


def test_sigterm_mid_run_prints_one_line_exits_143_and_the_command_resumes(tmp_path, uninterrupted):
    # SIGTERM, a scheduler's time limit, ended the command silently with status 143; now it stops as on Ctrl-C
    # and says so.  Catches SIGTERM reported as an interrupt (130), or killing the process mid-chunk.
    out = tmp_path / "terminated"
    command = [sys.executable, "-m", "htb_jax", *KILLED, "--out", str(out)]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _stopped_then_resumed(first, signal.SIGTERM, 143, "terminated", out, command, env, uninterrupted)


def _store(directory, config=None):
    return chunk_store.ChunkStore(str(directory), config or {"a": 1}, [0, 0], [(0, 1), (1, 1)], {"program_sha256": "0"})


def test_a_directory_another_running_command_writes_is_refused(tmp_path):
    # Two commands with one --out both ended "successfully", one run's manifest and chunks written over the
    # other's.  The writer holds flock on .htb-jax.lock; a plain process holds it here, as a second command would.
    with lock_held_by_another_process(tmp_path):
        with pytest.raises(chunk_store.ForeignStoreError, match=r"^the output directory '.*' is being written by "
                           r"another running command \(process 4242\); wait for it to end, or give another --out$"):
            _store(tmp_path)
    # A store opened before its directory existed made it and took its lock with its first chunk, so a second
    # command started meanwhile computed a whole chunk before it was refused; both are done at the opening now.
    new = _store(tmp_path / "new")
    probe = ("import fcntl, sys; f = open(sys.argv[1], 'a+')\n"
             "try: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
             "except OSError: print('held')")
    held = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "new" / ".htb-jax.lock")],
                          capture_output=True, text=True, check=True)
    assert held.stdout == "held\n"
    new.save(0, {"x": np.zeros(1)})
    assert (tmp_path / "new" / "manifest.json").exists()


@pytest.mark.parametrize("error", [ValueError("in the first chunk"), KeyboardInterrupt()])
def test_a_directory_made_by_the_store_goes_if_no_chunk_was_written(tmp_path, error):
    # Made and locked at the opening (above), it must not outlive a run that failed or stopped before its first
    # chunk; one that was there, or that got a chunk, stays.
    def compute(first, count):
        if first:
            raise error
        return {"x": np.zeros(count)}

    (tmp_path / "there").mkdir()
    for name, layout, kept in (("new/a/b", [(1, 1)], False), ("there/a", [(1, 1)], False),
                               ("there", [(1, 1)], True), ("chunk", [(0, 1), (1, 1)], True)):
        store = chunk_store.ChunkStore(str(tmp_path / name), {"a": 1}, [0, 0], layout, {"program_sha256": "0"})
        with pytest.raises((ValueError, KeyboardInterrupt)):
            chunk_store.run_chunks(store.layout, compute, store)
        assert (tmp_path / name).exists() == kept, name
    assert not (tmp_path / "new").exists()  # the missing parents made with it go too; one that was there stays
    assert os.listdir(tmp_path / "there") == [".htb-jax.lock"]
    # "link/../there", with link a symlink into another folder, is that folder's "there" (os.path.abspath's
    # string took it for a new folder beside the link, and discard removed the lock of the one that existed)
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "elsewhere" / "there").mkdir()
    os.symlink(tmp_path / "elsewhere" / "deep", tmp_path / "link")
    store = chunk_store.ChunkStore(str(tmp_path / "link" / ".." / "there"), {"a": 1}, [0, 0], [(1, 1)],
                                   {"program_sha256": "0"})
    with pytest.raises((ValueError, KeyboardInterrupt)):
        chunk_store.run_chunks(store.layout, compute, store)
    assert os.listdir(tmp_path / "elsewhere" / "there") == [".htb-jax.lock"]


def test_a_lock_whose_file_was_removed_meanwhile_is_refused(tmp_path, monkeypatch):
    # A command that opened the lock file just before a failed store removed it (with its directory) held a
    # lock on a deleted file, then failed on the missing directory; it is refused as the directory's writer's.
    import fcntl

    flock = fcntl.flock

    def removed_first(fd, operation):
        os.remove(tmp_path / ".htb-jax.lock")
        flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", removed_first)
    with pytest.raises(directory_lock.InUseError):
        directory_lock.hold(str(tmp_path))


def test_a_manifest_another_command_wrote_meanwhile_is_never_overwritten(tmp_path):
    # Opened before any manifest existed; another command's manifest appeared before this one's first chunk.
    # (Only where the file system has no locks: elsewhere the lock taken at the opening refuses that command.)
    store = _store(tmp_path / "out")
    (tmp_path / "out" / "manifest.json").write_text("{}")
    with pytest.raises(chunk_store.ForeignStoreError, match=r"got a manifest.json from another command while this "
                       r"one computed its first chunk; give another --out, or --restart"):
        store.save(0, {"x": np.zeros(1)})
    assert (tmp_path / "out" / "manifest.json").read_text() == "{}"


def test_another_root_key_is_named_with_both_keys(tmp_path):
    # It said "another configuration (root key)", without either key.
    _store(tmp_path).save(0, {"x": np.zeros(1)})
    with pytest.raises(chunk_store.ForeignStoreError, match=r"another configuration \(root key: jax.random.key\(0\) "
                                                            r"there, jax.random.key\(3\) here\)"):
        chunk_store.ChunkStore(str(tmp_path), {"a": 1}, [0, 3], [(0, 1), (1, 1)], {"program_sha256": "0"})


def test_a_store_opened_again_in_one_process_takes_its_lock_over(tmp_path):
    # A notebook cell run again while a traceback still holds the first store must not refuse itself.
    first = _store(tmp_path)
    again = _store(tmp_path)
    again.save(0, {"x": np.zeros(1)})
    del first
    gc.collect()
    with pytest.raises(chunk_store.ForeignStoreError, match=r"another configuration"):
        _store(tmp_path, {"a": 2})  # the lock is still this process's: the refusal is the configuration's


def test_a_manifest_left_without_its_chunks_folder_resumes_and_killed_outputs_are_removed(tmp_path):
    # chunks/ deleted by hand: every command failed on a temporary file in the missing folder.
    _store(tmp_path).save(0, {"x": np.zeros(1)})
    shutil.rmtree(tmp_path / "chunks")
    # A command killed (kill -9) while it moved its outputs into place left a full copy of them behind.
    (tmp_path / ".htb-jax-outputs-abc123").mkdir()
    (tmp_path / ".htb-jax-outputs-abc123" / "sweep.npz").write_bytes(b"x")
    store = _store(tmp_path)
    assert not (tmp_path / ".htb-jax-outputs-abc123").exists()
    assert store.load(0) is None
    store.save(0, {"x": np.ones(1)})
    np.testing.assert_array_equal(_store(tmp_path).load(0)["x"], np.ones(1))


def test_the_default_seed_chunk_never_makes_too_many_chunks():
    # 2^32 seeds in the sweep's default chunks of 50 were refused as "seed_chunk must be at least 42950 ...;
    # got seed_chunk=50", a value the user never gave.
    chunk = resumable.default_seed_chunk(2**32, 50)
    assert chunk == 42950 == -(-(2**32) // resumable.MAX_CHUNKS)
    resumable.check_layout(2**32, chunk)
    assert resumable.default_seed_chunk(10**6, 50) == 50


def test_a_chunk_stored_after_the_manifests_last_update_gets_its_digest_and_temporary_files_go(tmp_path):
    # kill -9 between a chunk's rename and the manifest's update: the chunk was read back but its digest never
    # recorded (the sweep.npz that embeds the manifest differed from an uninterrupted run's, and the chunk was
    # never checked against it); a manifest write killed midway left .manifest.json.*.tmp for good.
    _store(tmp_path).save(0, {"x": np.zeros(1)})
    _store(tmp_path).save(1, {"x": np.ones(1)})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    recorded = manifest["chunk_sha256"].pop("1")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / ".manifest.json.abc123.tmp").write_text("{")
    store = _store(tmp_path)
    assert not (tmp_path / ".manifest.json.abc123.tmp").exists()
    np.testing.assert_array_equal(store.load(1)["x"], np.ones(1))
    assert json.loads((tmp_path / "manifest.json").read_text())["chunk_sha256"]["1"] == recorded
