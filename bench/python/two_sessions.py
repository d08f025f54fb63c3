# Two transcriptions of one long clip from Python: one after the other, at once in two Python
# threads on two Sessions of 1 thread each, and at once through one BatchSession (2 threads,
# 2 lanes). The binding releases the GIL inside tern, so two threads should take about the
# wall time of one transcription on a machine with two free cores, not the sum.
#   PYTHONPATH=build/python python3 bench/python/two_sessions.py [--model models/tiny-en]
#       [--clip LONG.wav | --seconds 60] [--rounds 5]
# Without --clip, the clip is the samples/ files end to end, repeated to --seconds. Rounds
# alternate the configurations so the machine's noise falls on all of them alike; each line
# gives the median wall time and CPU time / wall time (2 = both cores busy).
import argparse, os, statistics, sys, tempfile, threading, time, wave

import numpy as np

import tern

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def make_clip(seconds, path):
    parts, rate = [], None
    samples = sorted(f for f in os.listdir(os.path.join(ROOT, "samples")) if f.endswith(".wav"))
    for name in samples:
        with wave.open(os.path.join(ROOT, "samples", name), "rb") as w:
            rate = w.getframerate()
            parts.append(np.frombuffer(w.readframes(w.getnframes()), dtype="<i2"))
    x = np.concatenate(parts)
    n = int(seconds * rate)
    x = np.tile(x, -(-n // len(x)))[:n]
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(x.tobytes())


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    w1, c1 = time.perf_counter(), time.process_time()
    return w1 - w0, (c1 - c0) / (w1 - w0)


def at_once(*calls):
    threads = [threading.Thread(target=c) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=os.path.join(ROOT, "models", "tiny-en"))
    p.add_argument("--clip", default="")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    clip = a.clip
    if not clip:
        clip = os.path.join(tempfile.mkdtemp(), "long.wav")
        make_clip(a.seconds, clip)
    model = tern.Model.load(a.model)
    s1, s2 = model.session(threads=1), model.session(threads=1)
    batch = model.batch_session(threads=2, lanes=2)
    duration = s1.transcribe(clip).duration  # also the warm-up
    s2.transcribe(clip)
    batch.transcribe(clip)
    configs = {
        "sequential, 2 sessions x 1 thread": lambda: (s1.transcribe(clip), s2.transcribe(clip)),
        "2 Python threads, 2 sessions x 1 thread":
            lambda: at_once(lambda: s1.transcribe(clip), lambda: s2.transcribe(clip)),
        "2 Python threads, 1 BatchSession (2 threads, 2 lanes)":
            lambda: at_once(lambda: batch.transcribe(clip), lambda: batch.transcribe(clip)),
    }
    results = {k: [] for k in configs}
    for _ in range(a.rounds):
        for name, fn in configs.items():
            results[name].append(timed(fn))
    print(f"model {a.model}, clip {duration:.1f} s, 2 transcriptions per run, "
          f"{a.rounds} rounds, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    base = statistics.median(w for w, _ in results[next(iter(configs))])
    for name, runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{name:55s} {wall * 1000:8.0f} ms  cpu/wall {cpu:4.2f}  "
              f"x{base / wall:4.2f}  ({2 * duration / wall:6.1f} x real time)")


if __name__ == "__main__":
    sys.exit(main())
