# Corpus throughput in audio hours per hour (audio seconds / wall seconds) of the CLI in one
# process against python3 -m tern.batch on local Dask clusters, over the same files:
#   PYTHONPATH=build/python python3 bench/python/corpus.py [--tern build/bin/tern]
#       [--model models/tiny-en] [--rounds 3] [--copies K] [FILES...]
# (default files: tests/data/heldout/000.wav .. 011.wav; --copies K runs over K copies of
# each, for a longer corpus). Rounds alternate the
# configurations so the machine's noise falls on all of them alike. For tern.batch two
# figures: its own last line (from the workers' model load to the last record) and the whole
# command (cluster start and model load included); for the CLI, the whole command (its model
# load included). Each run writes a fresh manifest.
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time, wave

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BATCH_LINE = re.compile(r"in ([0-9.]+) s \(([0-9.]+) audio hours per hour\)")


def duration(path):
    with wave.open(path, "rb") as w:
        return w.getnframes() / w.getframerate()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tern", default=os.path.join(ROOT, "build", "bin", "tern"))
    p.add_argument("--model", default=os.path.join(ROOT, "models", "tiny-en"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--copies", type=int, default=1)
    p.add_argument("files", nargs="*")
    a = p.parse_args()
    files = a.files or [os.path.join(ROOT, "tests", "data", "heldout", f"{i:03d}.wav")
                        for i in range(12)]
    tmp = tempfile.mkdtemp()
    if a.copies > 1:
        copies = []
        for k in range(a.copies):
            for f in files:
                copies.append(os.path.join(tmp, f"{k:03d}-{os.path.basename(f)}"))
                shutil.copyfile(f, copies[-1])
        files = copies
    audio_s = sum(duration(f) for f in files)
    configs = {
        "tern transcribe (1 process, 2 threads)":
            [a.tern, "transcribe", "--model", a.model, "-q", "--output-format", "json",
             "--output-dir", "{out}", *files],
        "tern.batch --local 1 (1 worker x 1 Dask thread, Session of 2 threads)":
            [sys.executable, "-m", "tern.batch", "--model", a.model, "--local", "1",
             "--no-progress", "--out", "{out}/m.jsonl", *files],
        "tern.batch --local 2 (2 workers x 1 Dask thread, Session of 1 thread)":
            [sys.executable, "-m", "tern.batch", "--model", a.model, "--local", "2",
             "--no-progress", "--out", "{out}/m.jsonl", *files],
        "tern.batch --local 1 --worker-threads 2 (BatchSession, 2 threads, 2 lanes)":
            [sys.executable, "-m", "tern.batch", "--model", a.model, "--local", "1",
             "--worker-threads", "2", "--no-progress", "--out", "{out}/m.jsonl", *files],
    }
    runs = {k: [] for k in configs}
    n = 0
    for _ in range(a.rounds):
        for name, cmd in configs.items():
            n += 1
            out = os.path.join(tmp, str(n))
            os.mkdir(out)
            t0 = time.perf_counter()
            r = subprocess.run([c.replace("{out}", out) for c in cmd], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            wall = time.perf_counter() - t0
            if r.returncode != 0:
                sys.exit(f"{name}: exit {r.returncode}\n{r.stderr}")
            m = BATCH_LINE.search(r.stderr)
            runs[name].append((audio_s / wall, float(m.group(2)) if m else None))
    print(f"{len(files)} files, {audio_s:.1f} s of audio, model {a.model}, {a.rounds} rounds, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("audio hours per hour: whole command (median, min-max); tern.batch's own line")
    for name, rs in runs.items():
        whole = [w for w, _ in rs]
        own = [o for _, o in rs if o is not None]
        line = f"{name:78s} {statistics.median(whole):6.0f} ({min(whole):.0f}-{max(whole):.0f})"
        if own:
            line += f"; {statistics.median(own):6.0f} ({min(own):.0f}-{max(own):.0f})"
        print(line)


if __name__ == "__main__":
    main()
