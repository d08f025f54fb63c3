"""Compare a built `tern` binary with the PyTorch reference dumps and measure its WER.

usage: /usr/bin/python3 check_engine.py --tern BUILD/bin/tern [--model ../models/tiny-en]

For every tests/data/heldout/reference/NNN.json: runs `tern transcribe --dump-features`
on the WAV and prints the feature cosine / max abs difference and whether the transcript
matches the reference forward's. Then transcribes every clip of transcripts.tsv and
prints the engine's WER (same normalization as reference.py).
"""
import argparse
import glob
import json
import os
import subprocess
import tempfile

import numpy as np

from reference import edit_distance, norm_words

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def run(tern, model, wav, feat=None):
    cmd = [tern, "transcribe", "--model", model, "-t", "1", wav]
    if feat:
        cmd[2:2] = ["--dump-features", feat]
    return subprocess.run(cmd, check=True, capture_output=True, encoding="utf-8", errors="replace").stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tern", required=True)
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "tiny-en"))
    a = ap.parse_args()
    hd = os.path.join(ROOT, "tests", "data", "heldout")
    with tempfile.TemporaryDirectory() as td:
        for js in sorted(glob.glob(os.path.join(hd, "reference", "*.json"))):
            r = json.load(open(js))
            feat = os.path.join(td, "f.f32")
            text = run(a.tern, a.model, os.path.join(hd, r["wav"]), feat)
            e = np.fromfile(feat, dtype=np.float32)
            f = np.fromfile(js.replace(".json", ".features.f32"), dtype=np.float32)
            cos = float(e @ f / (np.linalg.norm(e) * np.linalg.norm(f))) if e.shape == f.shape else float("nan")
            mad = float(np.abs(e - f).max()) if e.shape == f.shape else float("nan")
            print(f"{r['wav']}: features cos {cos:.6f} max|d| {mad:.4g} (ref max {np.abs(f).max():.3g}); "
                  f"text {'SAME' if text == r['text'].strip() else 'DIFF'}\n  engine: {text}\n  torch:  {r['text'].strip()}")
    errs = words = 0
    for line in open(os.path.join(hd, "transcripts.tsv")):
        wav, ref = line.rstrip("\n").split("\t")[:2]
        hyp = run(a.tern, a.model, os.path.join(hd, wav))
        errs += edit_distance(norm_words(ref), norm_words(hyp))
        words += len(norm_words(ref))
    print(f"engine WER on {hd}: {errs}/{words} = {errs / max(1, words):.3f}")


if __name__ == "__main__":
    main()
