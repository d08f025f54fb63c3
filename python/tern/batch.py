"""Batch transcription of a corpus over a Dask cluster.

    python3 -m tern.batch --model DIR (--scheduler tcp://HOST:PORT | --local N) \\
        --out RESULTS.jsonl [--formats srt,vtt --output-dir DIR] inputs...

Inputs are audio files, folders (searched recursively for .wav .flac .ogg .oga .mp3) and list
files (@LIST, or a name ending in .list or .txt: one path per line, relative to the list's
folder, '#' starts a comment). Each file is one Dask task; long files are cut into pieces by
the engine itself. Each worker loads the model once (a WorkerPlugin) and transcribes on one
Session if it has one Dask thread, or on one BatchSession with a lane per Dask thread (their
decoding batched) if it has several.

Exactly once and resumable: every result is appended, as it completes, to the JSONL manifest
as one record keyed by the file's path and sha256. A rerun skips every file whose path and
content are already there (--retry-errors redoes those with an error record). Dask retries a
task whose worker died (the scheduler's allowed-failures) or whose function raised
(--retries); the client alone writes the manifest, one line per completed task, so no file
appears twice or goes missing. A file tern cannot transcribe gets an error record and the run
goes on. --events FILE logs each task's start and end on the workers (which worker ran
what, including the attempts a dead worker never finished).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
from typing import Iterable, List, Optional, Tuple

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".oga", ".mp3")
LIST_EXTENSIONS = (".list", ".txt")
PLUGIN_NAME = "tern-model"


# ---- inputs ----------------------------------------------------------------------------

class UsageError(Exception):
    pass


def _read_list(path: str) -> List[str]:
    base = os.path.dirname(os.path.abspath(path))
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(os.path.join(base, line))
    return out


def expand_inputs(inputs: Iterable[str]) -> List[str]:
    """Absolute paths of the audio files the inputs name, in order, each once."""
    files: List[str] = []
    seen = set()

    def add(p):
        p = os.path.abspath(p)
        if p not in seen:
            seen.add(p)
            files.append(p)

    for arg in inputs:
        if arg.startswith("@") or (os.path.isfile(arg) and arg.lower().endswith(LIST_EXTENSIONS)):
            lst = arg[1:] if arg.startswith("@") else arg
            if not os.path.isfile(lst):
                raise UsageError(f"{lst}: list file not found")
            for p in _read_list(lst):
                if not os.path.isfile(p):
                    raise UsageError(f"{lst}: {p}: not a file")
                add(p)
        elif os.path.isdir(arg):
            for root, dirs, names in os.walk(arg):
                dirs.sort()
                for n in sorted(names):
                    if n.lower().endswith(AUDIO_EXTENSIONS):
                        add(os.path.join(root, n))
        elif os.path.isfile(arg):
            add(arg)
        else:
            raise UsageError(f"{arg}: no such file or folder")
    return files


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---- manifest --------------------------------------------------------------------------

class Manifest:
    """The JSONL results file: one record per line, appended and flushed as results arrive.
    A record for the same (file, sha256) later in the file replaces an earlier one."""

    def __init__(self, path: str):
        self.path = path
        self.records = {}
        if os.path.exists(path):
            with open(path, "rb") as f:
                data = f.read()
            # A line cut short by a crash of an earlier run: drop it (its file is redone).
            if data and not data.endswith(b"\n"):
                keep = data.rfind(b"\n") + 1
                with open(path, "r+b") as f:
                    f.truncate(keep)
                data = data[:keep]
            for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    self.records[(rec["file"], rec["sha256"])] = rec
                except (ValueError, KeyError, TypeError) as e:
                    raise UsageError(f"{path}:{n}: not a manifest record ({e})")
        self._file = open(path, "a", encoding="utf-8")

    def has(self, key: Tuple[str, str], retry_errors: bool) -> bool:
        rec = self.records.get(key)
        return rec is not None and not (retry_errors and "error" in rec)

    def append(self, rec: dict) -> None:
        self._file.write(json.dumps(rec, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.records[(rec["file"], rec["sha256"])] = rec

    def close(self) -> None:
        self._file.close()


# ---- workers ---------------------------------------------------------------------------

try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # only the client needs Dask to import this module's helpers
    WorkerPlugin = object


class ModelPlugin(WorkerPlugin):
    """Loads the model once per worker process. A worker with one Dask thread gets a Session;
    one with several gets one BatchSession whose lanes are its threads, so their files decode
    together (one pass over the decoder's weights per step for all of them) on one thread pool
    instead of each thread's Session streaming the weights alone."""

    name = PLUGIN_NAME

    def __init__(self, model_dir: str, vae: str, lm: str, head: str, threads: int):
        self.model_dir, self.vae, self.lm, self.head = model_dir, vae, lm, head
        self.threads = threads  # per Dask thread; 0: the worker's CPUs / its Dask threads

    def setup(self, worker):
        import tern

        self.model = tern.Model.load(self.model_dir or None, vae=self.vae or None,
                                     lm=self.lm or None, head=self.head)
        nthreads = getattr(getattr(worker, "state", None), "nthreads", None) or worker.nthreads
        per_thread = self.threads or max(1, (os.cpu_count() or 1) // max(1, nthreads))
        self.address = worker.address
        self.batch = None
        if nthreads > 1:
            self.batch = self.model.batch_session(threads=per_thread * nthreads, lanes=nthreads)
        self.session_threads = per_thread
        self._local = threading.local()

    def session(self):
        if self.batch is not None:
            return self.batch
        s = getattr(self._local, "session", None)
        if s is None:
            s = self._local.session = self.model.session(threads=self.session_threads)
        return s


def note_event(events: str, **rec) -> None:
    """Appends one line to the --events log. One write() of the whole line to a file opened
    with O_APPEND keeps the lines of several worker processes whole."""
    line = (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def transcribe_file(path: str, sha256: str, options: dict, formats: List[str],
                    max_cue_chars: int, events: str = "") -> dict:
    """The task: one file on the worker's session. tern's errors become an error record; any
    other exception propagates for Dask to retry."""
    import tern
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins[PLUGIN_NAME]
    session = plugin.session()
    note = {"file": path, "worker": plugin.address, "pid": os.getpid(),
            "session": type(session).__name__}
    if events:
        note_event(events, event="start", time=time.time(), **note)
    rec = {"file": path, "sha256": sha256}
    try:
        t = session.transcribe(path, **options)
    except tern.Error as e:
        rec.update(error=str(e), worker=plugin.address)
    else:
        j = json.loads(t.to_json())  # text and segments exactly as the CLI's json writer has them
        rec.update(duration=t.duration, text=j["text"], segments=j["segments"],
                   timings=t.timings, stop_reason=t.stop_reason, warnings=t.warnings,
                   worker=plugin.address)
        rec["outputs"] = {f: t.format(f, max_cue_chars) for f in formats}
    # Written before the result leaves the worker: a start without its end is a task that was
    # still running when its worker stopped.
    if events:
        note_event(events, event="end", time=time.time(), error="error" in rec, **note)
    return rec


# ---- client ----------------------------------------------------------------------------

def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python3 -m tern.batch",
        description="Transcribe a corpus over a Dask cluster into a JSONL manifest "
                    "(exactly once, resumable).")
    p.add_argument("--model", default="", help="model folder (on every worker)")
    p.add_argument("--vae", default="", help="encoder GGUF (overrides the one in --model)")
    p.add_argument("--lm", default="", help="decoder GGUF (overrides the one in --model)")
    p.add_argument("--head", default="f16", choices=["f16", "int8"], help="output head precision")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    where.add_argument("--local", type=int, metavar="N",
                       help="start a local cluster of N worker processes")
    p.add_argument("--worker-threads", type=int, default=1, metavar="T",
                   help="--local: Dask threads per worker process (T > 1: one BatchSession "
                        "with T lanes per worker)")
    p.add_argument("--out", required=True, help="JSONL manifest (appended; read to resume)")
    p.add_argument("--formats", default="", help="also write these outputs: txt,json,verbose_json,srt,vtt")
    p.add_argument("--output-dir", default="", help="folder for --formats files (<stem>.<ext>)")
    p.add_argument("--max-cue-chars", type=int, default=0, help="srt/vtt: split longer cues")
    p.add_argument("--threads", type=int, default=0,
                   help="compute threads per Dask thread (default: the worker's CPUs / its Dask "
                        "threads); a worker's BatchSession gets this times its Dask threads")
    p.add_argument("--retries", type=int, default=2,
                   help="Dask retries of a task that raised (a lost worker is retried by the "
                        "scheduler regardless)")
    p.add_argument("--retry-errors", action="store_true",
                   help="redo files whose manifest record is an error")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--events", default="",
                   help="append a JSON line per task start and end on the workers (file, worker "
                        "address, pid, session kind, time): which worker ran what, retries "
                        "included; the path must be writable from the workers")
    p.add_argument("--format", default="text", choices=["text", "json"], help="prompt variant")
    p.add_argument("--context", default="", help="extra information for the model")
    p.add_argument("--chunk-seconds", type=float, default=0, help="long audio: at most this many seconds per piece")
    p.add_argument("--max-tokens", type=int, default=None, help="maximum generated tokens")
    p.add_argument("--hotwords", default="", help="comma-separated words to favour")
    p.add_argument("inputs", nargs="+", help="audio files, folders, list files (@LIST, *.list, *.txt)")
    return p.parse_args(argv)


def transcribe_options(a: argparse.Namespace) -> dict:
    o = {"format": a.format, "chunk_seconds": a.chunk_seconds}
    if a.context:
        o["context"] = a.context
    if a.max_tokens is not None:
        o["max_tokens"] = a.max_tokens
    if a.hotwords:
        o["hotwords"] = a.hotwords
    return o


def _check_args(a: argparse.Namespace) -> List[str]:
    if not a.model and not (a.vae and a.lm):
        raise UsageError("--model DIR (or --vae and --lm) is required")
    if a.local is not None and not 1 <= a.local <= 1024:
        raise UsageError(f"--local must be in [1, 1024], got {a.local}")
    if not 1 <= a.worker_threads <= 256:
        raise UsageError(f"--worker-threads must be in [1, 256], got {a.worker_threads}")
    if a.worker_threads != 1 and a.local is None:
        raise UsageError("--worker-threads goes with --local (a cluster's workers have their own)")
    formats = [f for f in a.formats.split(",") if f]
    for f in formats:
        if f not in ("txt", "json", "verbose_json", "srt", "vtt"):
            raise UsageError(f"--formats: unknown format '{f}' (txt, json, verbose_json, srt, vtt)")
    if formats and not a.output_dir:
        raise UsageError("--formats needs --output-dir")
    if a.output_dir and not os.path.isdir(a.output_dir):
        raise UsageError(f"--output-dir {a.output_dir}: not a directory")
    return formats


EXTENSIONS = {"txt": ".txt", "json": ".json", "verbose_json": ".verbose.json", "srt": ".srt", "vtt": ".vtt"}


def run(a: argparse.Namespace) -> int:
    formats = _check_args(a)
    files = expand_inputs(a.inputs)
    if formats:
        stems = {}
        for f in files:
            stem = os.path.splitext(os.path.basename(f))[0]
            if stem in stems:
                raise UsageError(f"--output-dir: {stems[stem]} and {f} would both write {stem}.*")
            stems[stem] = f
    manifest = Manifest(a.out)
    todo = []
    for f in files:
        key = (f, sha256_file(f))
        if not manifest.has(key, a.retry_errors):
            todo.append(key)
    skipped = len(files) - len(todo)
    if not todo:
        print(f"tern.batch: nothing to do: all {len(files)} files are in {a.out}", file=sys.stderr)
        manifest.close()
        return 0
    print(f"tern.batch: {len(todo)} files to transcribe ({skipped} already in {a.out})",
          file=sys.stderr)

    from distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm

    cluster = None
    if a.local is not None:
        cluster = LocalCluster(n_workers=a.local, threads_per_worker=a.worker_threads,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
        threads = a.threads or max(1, (os.cpu_count() or 1) // (a.local * a.worker_threads))
    else:
        client = Client(a.scheduler)
        threads = a.threads
    failed = 0
    try:
        client.register_worker_plugin(
            ModelPlugin(os.path.abspath(a.model) if a.model else "",
                        os.path.abspath(a.vae) if a.vae else "",
                        os.path.abspath(a.lm) if a.lm else "", a.head, threads),
            name=PLUGIN_NAME)
        options = transcribe_options(a)
        events = os.path.abspath(a.events) if a.events else ""
        started = time.monotonic()
        futures, todo_of = {}, {}
        for i, (path, sha) in enumerate(todo):
            fut = client.submit(transcribe_file, path, sha, options, formats, a.max_cue_chars,
                                events, key=f"tern-{i}-{sha[:16]}", pure=False, retries=a.retries)
            futures[fut.key] = fut
            todo_of[fut.key] = (path, sha)
        audio_s = 0.0
        bar = tqdm(total=len(todo), unit="file", disable=a.no_progress, dynamic_ncols=True,
                   file=sys.stderr)
        for fut in as_completed(list(futures.values())):
            path, sha = todo_of[fut.key]
            try:
                rec = fut.result()
            except Exception as e:  # retries used up, or the worker died too often
                rec = {"file": path, "sha256": sha, "error": f"{type(e).__name__}: {e}"}
            outputs = rec.pop("outputs", {})
            for fmt, text in outputs.items():
                stem = os.path.splitext(os.path.basename(path))[0]
                with open(os.path.join(a.output_dir, stem + EXTENSIONS[fmt]), "w",
                          encoding="utf-8", newline="") as out:
                    out.write(text)
            manifest.append(rec)
            if "error" in rec:
                failed += 1
                bar.write(f"tern.batch: {path}: {rec['error']}", file=sys.stderr)
            else:
                audio_s += rec["duration"]
            elapsed = time.monotonic() - started
            bar.set_postfix_str(f"audio {audio_s / 3600:.3f} h, "
                                f"{audio_s / max(elapsed, 1e-9):.1f} audio h/h, {failed} failed",
                                refresh=False)
            bar.update(1)
            del futures[fut.key]  # lets the scheduler forget the result
        bar.close()
        elapsed = time.monotonic() - started
        print(f"tern.batch: {len(todo) - failed} transcribed, {failed} failed, "
              f"{audio_s / 3600:.4f} h of audio in {elapsed:.1f} s "
              f"({audio_s / max(elapsed, 1e-9):.1f} audio hours per hour)", file=sys.stderr)
    finally:
        manifest.close()
        client.close()
        if cluster is not None:
            cluster.close()
    return 1 if failed else 0


def main(argv: Optional[List[str]] = None) -> int:
    a = parse_args(argv)
    try:
        return run(a)
    except UsageError as e:
        print(f"tern.batch: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
