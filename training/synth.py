"""Deterministic speech data generator: Debian TTS voices + sox, cached to training/work/.

usage: /usr/bin/python3 synth.py [--train N] [--test N] [--jobs 2]

Every clip is determined by (split, index) up to sox's dither (a re-run differs by 1-3 LSB):
the sentence comes from textgen with a
fixed seed, the voice and the speed/pitch/rate settings from random.Random(hash of
split+index). Output per split: work/data/<split>.npy (int16 24 kHz samples, all clips
concatenated), work/data/<split>.json (list of {text, voice, start, length}).
Noise and level changes are applied on the fly by the trainer (seeded too).

Voices (synthesis settings):
  train: flite rms/awb/slt/kal16, festival cmu_us_slt_arctic_hts and kal_diphone,
         espeak-ng en-us+m1, en-us+m3, en-us+f1, en-us+f4, en-gb+m4, en-us+klatt
  held-out voice setting (test only): espeak-ng en-us+f2 (a variant never used in training)
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import wave
from multiprocessing import Pool

import numpy as np

import textgen

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work", "data")
SR = 24000

TRAIN_VOICES = (
    [("flite", v) for v in ["rms", "awb", "slt", "kal16"]] * 2
    + [("festival", "cmu_us_slt_arctic_hts"), ("festival", "kal_diphone")]
    + [("espeak", v) for v in ["en-us+m1", "en-us+m3", "en-us+f1", "en-us+f4",
                               "en-gb+m4", "en-us+klatt"]]
)
HELDOUT_VOICE = ("espeak", "en-us+f2")


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").copy()


def write_wav(path, samples, sr=SR):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(np.asarray(samples, dtype="<i2").tobytes())


def synth_one(args):
    """(text, engine, voice, seed) -> int16 array at 24 kHz."""
    text, engine, voice, seed = args
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as td:
        raw, out = os.path.join(td, "raw.wav"), os.path.join(td, "out.wav")
        if engine == "flite":
            subprocess.run(["flite", "-voice", voice, "-t", text, "-o", raw], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif engine == "festival":
            subprocess.run(["text2wave", "-eval", f"(voice_{voice})", "-o", raw],
                           input=text.encode(), check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:
            subprocess.run(["espeak-ng", "-v", voice, "-s", str(rng.randint(135, 195)),
                            "-p", str(rng.randint(25, 75)), "-w", raw, text], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        speed = rng.uniform(0.88, 1.12)           # tempo and pitch together
        eff = ["speed", f"{speed:.4f}"]
        if rng.random() < 0.4:                   # extra pitch shift, tempo kept
            eff += ["pitch", str(rng.randint(-250, 250))]
        pad_l, pad_r = rng.uniform(0.02, 0.35), rng.uniform(0.05, 0.4)
        eff += ["pad", f"{pad_l:.3f}", f"{pad_r:.3f}", "rate", "-h", str(SR)]
        subprocess.run(["sox", "-V1", raw, "-r", str(SR), "-b", "16", "-c", "1", out] + eff,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        x = read_wav(out).astype(np.float32)
    # Level: peak between -20 and -1 dBFS (noise is added later by the trainer).
    peak = max(1.0, float(np.abs(x).max()))
    x *= (10 ** (rng.uniform(-20, -1) / 20) * 32767) / peak
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def clip_seed(split, i):
    return int.from_bytes(hashlib.sha1(f"{split}:{i}".encode()).digest()[:8], "little")


def plan(split, n):
    """The (text, engine, voice, seed) list of a split."""
    if split == "train":
        texts = textgen.generate(n, seed=1234, want_test=False)
        items = []
        for i, t in enumerate(texts):
            rng = random.Random(clip_seed(split, i))
            e, v = TRAIN_VOICES[rng.randrange(len(TRAIN_VOICES))]
            items.append((t, e, v, clip_seed(split, i)))
        return items
    # test: held-out sentences; first half with training voices, second half with the
    # held-out voice setting.
    texts = textgen.generate(n, seed=99, want_test=True)
    items = []
    for i, t in enumerate(texts):
        rng = random.Random(clip_seed(split, i))
        if i % 2 == 0:
            e, v = TRAIN_VOICES[rng.randrange(len(TRAIN_VOICES))]
        else:
            e, v = HELDOUT_VOICE
        items.append((t, e, v, clip_seed(split, i)))
    return items


def build(split, n, jobs):
    os.makedirs(WORK, exist_ok=True)
    items = plan(split, n)
    with Pool(jobs) as pool:
        clips = pool.map(synth_one, items, chunksize=16)
    meta, pos = [], 0
    for (t, e, v, _), c in zip(items, clips):
        meta.append({"text": t, "voice": f"{e}:{v}", "start": pos, "length": int(len(c))})
        pos += len(c)
    np.save(os.path.join(WORK, f"{split}.npy"), np.concatenate(clips))
    with open(os.path.join(WORK, f"{split}.json"), "w") as f:
        json.dump(meta, f, indent=0)
    hours = pos / SR / 3600
    print(f"{split}: {len(meta)} clips, {hours:.2f} h", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", type=int, default=3000)
    ap.add_argument("--test", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args()
    for split, n in (("test", a.test), ("train", a.train)):
        if os.path.exists(os.path.join(WORK, f"{split}.json")) and not a.force:
            print(f"{split}: cached", file=sys.stderr)
            continue
        build(split, n, a.jobs)


if __name__ == "__main__":
    main()
