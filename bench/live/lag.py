#!/usr/bin/env python3
"""End-to-end lag of `tern transcribe --live`: streams a raw s16le 24 kHz clip into it in real
time (20 ms blocks; or SPEED times faster), reads its JSON events as they come, and reports,
for partial and final events, the time from writing the last sample an event covers (for a
final: the piece's end, in the middle of the pause) and from writing the sample that decided it
(a final at a pause is decided pause/2 later) to reading the event (median and 95th
percentile), beside the engine's own figure (lag_ms: from the Feed call to the event).

    python3 bench/live/lag.py CLIP.raw [SPEED] -- build/bin/tern transcribe --model M -t 2
"""
import json
import subprocess
import sys
import threading
import time

args = sys.argv[1:]
sep = args.index("--")
clip, speed = args[0], float(args[1]) if sep > 1 else 1.0
cmd = args[sep + 1:] + ["--live", "-", "--output-format", "json"]
block = 960  # bytes: 20 ms at 24 kHz s16 mono
data = open(clip, "rb").read()
written = []  # (samples written so far, time)
events = []   # (event, time read)

proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def reader():
    for line in proc.stdout:
        events.append((json.loads(line), time.monotonic()))


t = threading.Thread(target=reader)
t.start()
start = time.monotonic()
for i in range(0, len(data), block):
    delay = start + (i / 48000.0) / speed - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    proc.stdin.write(data[i:i + block])
    proc.stdin.flush()
    written.append(((i + len(data[i:i + block])) // 2, time.monotonic()))
end_time = time.monotonic()
proc.stdin.close()
t.join()
proc.wait()


def written_at(sample):
    for n, when in written:
        if n >= sample:
            return when
    return end_time


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] if v else float("nan")


for kind in ("partial", "final"):
    e2e = [(when - written_at(round(e["end"] * 24000))) * 1000 for e, when in events
           if e["type"] == kind]
    heard = [(when - written_at(round(e["heard"] * 24000))) * 1000 for e, when in events
             if e["type"] == kind]
    eng = [e["lag_ms"] for e, _ in events if e["type"] == kind]
    print(f"{kind}: n={len(e2e)} ms from its last sample median={pct(e2e, .5):.1f} "
          f"p95={pct(e2e, .95):.1f}; from the sample that decided it median={pct(heard, .5):.1f} "
          f"p95={pct(heard, .95):.1f}; engine lag_ms median={pct(eng, .5):.1f} "
          f"p95={pct(eng, .95):.1f}")
for e, _ in events:
    if e["type"] == "final":
        print(f"  [{e['start']:.2f}-{e['end']:.2f}] {e['text']}")
