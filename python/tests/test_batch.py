# python3 -m tern.batch on a distributed.LocalCluster (2 worker processes, 1 thread each):
# 12 clips and an unreadable file, one worker killed in the middle of a file; that file must
# be redone on another worker, the manifest must hold every file exactly once with the CLI's
# results, the bad file an error record, and a rerun must do nothing. Then one worker with two
# Dask threads, which share one BatchSession.
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import psutil
import pytest

from conftest import MODEL, SAMPLES, read_wav, run_cli, write_wav
from tern import batch

N_CLIPS = 12


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """12 distinct clips of 20-36 s (the samples in turn, in different orders and lengths),
    long enough that a worker is always in the middle of one."""
    d = tmp_path_factory.mktemp("corpus")
    parts = [read_wav(p) for p in SAMPLES]
    rate = parts[0][1]
    assert all(r == rate for _, r in parts)
    rng = np.random.default_rng(7)
    paths = []
    for i in range(N_CLIPS):
        order = rng.permutation(len(parts))
        x = np.concatenate([parts[j][0] for j in order])
        n = int((20 + 4 * (i % 5)) * rate)
        x = np.tile(x, -(-n // len(x)))[:n]
        path = str(d / f"clip{i:02d}.wav")
        write_wav(path, x, rate)
        paths.append(path)
    bad = d / "unreadable.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEnot really audio")
    return d, paths, str(bad)


@pytest.fixture(scope="module")
def cli_reference(corpus, tmp_path_factory):
    """The CLI's json, srt and vtt for every clip (one process, one Session)."""
    _, paths, _ = corpus
    out = tmp_path_factory.mktemp("cli")
    run_cli("--output-format", "json,srt,vtt", "--output-dir", str(out), *paths)
    return out


def worker_processes(pid):
    """The Dask worker processes under the batch client (spawned by multiprocessing)."""
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for k in kids:
        try:
            if "spawn_main" in " ".join(k.cmdline()):
                out.append(k)
        except psutil.NoSuchProcess:
            pass
    return out


def read_manifest(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_events(path):
    """The --events lines written so far (a line still being written is left for later)."""
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")[:-1]
    return [json.loads(line) for line in lines]


def running(events):
    """{(file, pid): start event} of the tasks started and not ended."""
    open_tasks = {}
    for e in events:
        key = (e["file"], e["pid"])
        if e["event"] == "start":
            open_tasks[key] = e
        else:
            open_tasks.pop(key, None)
    return open_tasks


def stopped(pid, timeout=10):
    """Waits until the process is stopped (kill() returns before a process running on another
    CPU has taken the signal); False if it is gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_STOPPED:
                return True
        except psutil.NoSuchProcess:
            return False
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop")


def run_batch(args, env, **kw):
    return subprocess.Popen([sys.executable, "-m", "tern.batch", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_batch_on_local_cluster_survives_a_killed_worker(corpus, cli_reference, tmp_path):
    d, paths, bad = corpus
    manifest = str(tmp_path / "results.jsonl")
    events = str(tmp_path / "events.jsonl")
    outdir = tmp_path / "out"
    outdir.mkdir()
    env = dict(os.environ)
    args = ["--model", MODEL, "--local", "2", "--out", manifest, "--formats", "srt,vtt",
            "--output-dir", str(outdir), "--no-progress", "--events", events, str(d)]
    p = run_batch(args, env)

    # Kill a worker in the middle of a clip. A task whose start is logged and whose end is not
    # may be just ending, so the worker is first stopped (SIGSTOP): if its end is still
    # missing once it cannot run, the task is in progress and SIGKILL lands inside it;
    # otherwise it goes on (SIGCONT) and the next task is tried.
    killed = {}

    def killer():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            ours = {w.pid for w in worker_processes(p.pid)}
            for (path, pid), e in running(read_events(events)).items():
                if path == bad or pid not in ours:
                    continue
                os.kill(pid, signal.SIGSTOP)
                if not stopped(pid):
                    continue  # it died meanwhile
                if (path, pid) in running(read_events(events)):
                    os.kill(pid, signal.SIGKILL)
                    killed.update(file=path, pid=pid, worker=e["worker"])
                    return
                os.kill(pid, signal.SIGCONT)
            time.sleep(0.01)

    t = threading.Thread(target=killer)
    t.start()
    stdout, stderr = p.communicate(timeout=300)
    t.join()
    stderr = stderr.decode()
    assert "pid" in killed, f"no worker was killed; stderr:\n{stderr}"
    assert "Restarting worker" in stderr, stderr  # Dask's nanny saw the worker die
    assert p.returncode == 1, stderr  # one file failed

    # The file being transcribed by the killed worker was started there, never ended there,
    # and was done again, to the end, by another worker: the one its record names.
    log = read_events(events)
    tries = [e for e in log if e["file"] == killed["file"]]
    on_killed = [e for e in tries if e["pid"] == killed["pid"]]
    assert [e["event"] for e in on_killed] == ["start"], tries
    ended = [e for e in tries if e["event"] == "end"]
    assert ended and all(e["worker"] != killed["worker"] for e in ended), tries
    assert all(e["session"] == "Session" for e in log)  # one Dask thread per worker

    records = read_manifest(manifest)
    files = [r["file"] for r in records]
    assert sorted(files) == sorted(paths + [bad]), "each file exactly once"
    by_file = {r["file"]: r for r in records}
    for path in paths:
        r = by_file[path]
        assert "error" not in r, r
        stem = os.path.splitext(os.path.basename(path))[0]
        ref = json.loads((cli_reference / (stem + ".json")).read_bytes())
        assert r["text"] == ref["text"] and r["segments"] == ref["segments"], path
        assert r["sha256"] == batch.sha256_file(path)
        assert r["duration"] == pytest.approx(len(read_wav(path)[0]) / 24000)
        assert r["timings"]["wall_ms"] > 0
        for ext in (".srt", ".vtt"):
            assert (outdir / (stem + ext)).read_bytes() == \
                (cli_reference / (stem + ext)).read_bytes(), stem + ext
    # How the other files were spread is the scheduler's choice (the survivor may do them all
    # while the killed worker restarts); the killed one's record is from the worker that ended it.
    assert by_file[killed["file"]]["worker"] in {e["worker"] for e in ended}
    assert by_file[killed["file"]]["worker"] != killed["worker"]

    err = by_file[bad]["error"]
    p_cli = run_cli(bad, check=False)
    assert p_cli.returncode != 0
    assert err in p_cli.stderr.decode()

    # A rerun finds everything in the manifest and does nothing (no cluster is started).
    before = open(manifest, "rb").read()
    p2 = run_batch(args, env)
    out2, err2 = p2.communicate(timeout=120)
    assert p2.returncode == 0, err2.decode()
    assert b"nothing to do" in err2
    assert open(manifest, "rb").read() == before


def test_batch_worker_with_two_threads_shares_a_batch_session(corpus, cli_reference, tmp_path):
    d, paths, _ = corpus
    manifest = str(tmp_path / "results.jsonl")
    events = str(tmp_path / "events.jsonl")
    p = run_batch(["--model", MODEL, "--local", "1", "--worker-threads", "2", "--out", manifest,
                   "--no-progress", "--events", events, *paths], dict(os.environ))
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()
    records = read_manifest(manifest)
    assert sorted(r["file"] for r in records) == sorted(paths)
    for r in records:
        stem = os.path.splitext(os.path.basename(r["file"]))[0]
        ref = json.loads((cli_reference / (stem + ".json")).read_bytes())
        assert r["text"] == ref["text"] and r["segments"] == ref["segments"], r["file"]
    log = read_events(events)
    assert len(log) == 2 * len(paths)
    assert {e["session"] for e in log} == {"BatchSession"}
    assert len({e["pid"] for e in log}) == 1


def test_manifest_drops_a_line_cut_short_and_resumes(tmp_path):
    m = tmp_path / "m.jsonl"
    good = {"file": "/a.wav", "sha256": "1" * 64, "text": "x"}
    m.write_text(json.dumps(good) + "\n" + '{"file": "/b.wav", "sha')
    man = batch.Manifest(str(m))
    assert man.has(("/a.wav", "1" * 64), retry_errors=False)
    assert not man.has(("/a.wav", "2" * 64), retry_errors=False)  # changed content: redo
    assert not man.has(("/b.wav", "2" * 64), retry_errors=False)
    man.append({"file": "/c.wav", "sha256": "3" * 64, "error": "bad"})
    man.close()
    assert [r["file"] for r in read_manifest(m)] == ["/a.wav", "/c.wav"]
    man = batch.Manifest(str(m))
    assert man.has(("/c.wav", "3" * 64), retry_errors=False)
    assert not man.has(("/c.wav", "3" * 64), retry_errors=True)
    man.close()
    m.write_text("not json\n")
    with pytest.raises(batch.UsageError, match="m.jsonl:1"):
        batch.Manifest(str(m))


def test_inputs_from_files_folders_and_lists(tmp_path):
    (tmp_path / "sub").mkdir()
    for n in ("b.wav", "a.flac", "sub/c.MP3", "notes.txt", "x.json"):
        (tmp_path / n).write_bytes(b"")
    lst = tmp_path / "more.list"
    lst.write_text("# corpus\nb.wav\nsub/c.MP3  # again\n")
    got = batch.expand_inputs([str(tmp_path / "b.wav"), str(tmp_path), "@" + str(lst)])
    assert got == [str(tmp_path / n) for n in ("b.wav", "a.flac", "sub/c.MP3")]
    with pytest.raises(batch.UsageError, match="nope"):
        batch.expand_inputs([str(tmp_path / "nope")])
    lst.write_text("missing.wav\n")
    with pytest.raises(batch.UsageError, match="missing.wav"):
        batch.expand_inputs([str(lst)])


def test_usage_errors(tmp_path):
    env = dict(os.environ)
    for args, message in [
        (["--local", "1", "--out", str(tmp_path / "m"), SAMPLES[0]], b"--model"),
        (["--model", MODEL, "--local", "1", "--out", str(tmp_path / "m"), "--formats", "srt",
          SAMPLES[0]], b"--output-dir"),
        (["--model", MODEL, "--local", "1", "--out", str(tmp_path / "m"), "/nowhere.wav"],
         b"/nowhere.wav"),
        (["--model", MODEL, "--scheduler", "tcp://127.0.0.1:1", "--worker-threads", "2",
          "--out", str(tmp_path / "m"), SAMPLES[0]], b"--worker-threads"),
    ]:
        p = run_batch(args, env)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 2 and message in err, err
