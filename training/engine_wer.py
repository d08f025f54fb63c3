"""Held-out WER through tern's engine: fast enough to score checkpoints while a run trains.

usage: /usr/bin/python3 engine_wer.py (--ckpt CKPT | --model DIR) [--n 200] [--threads 1]
           [--decode '--beam 4']

--ckpt exports the checkpoint (export.py, validated) to a temporary model folder; --model
scores a folder as it is (e.g. ../models/tiny-en). The test clips are written once to
work/eval_wav/ exactly as reference.py writes them, and all of them go through one
`tern transcribe` call (the model loads once), greedy, at most 48 generated tokens as
reference.py decodes (--decode adds transcribe options: a beam, hotwords). Scoring is reference.py's: lowercased words without punctuation,
summed edits over summed reference words. The engine computes what the quantized PyTorch
forward computes up to rounding (tests/tiny_model_test.cc checks the parity on every CI
run), so this is nearly the figure reference.py gives, in seconds instead of minutes: 200
clips took 5.5 s at one thread. The bundled model scores 9.9% here; README.md quotes
10.2% from reference.py: where one requantization lands on the other side of a rounding
boundary the two greedy decodes can part (README "Bundled model", engine parity).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import common
import reference
import synth


def score(counts):
    e, w = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return {"errors": e, "words": w, "wer": round(e / max(1, w), 4)}


def main():
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--ckpt", help="a train.py checkpoint (exported to a temporary folder)")
    src.add_argument("--model", help="a model folder with the two GGUF files")
    ap.add_argument("--n", type=int, default=200, help="the first N test clips")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tern", default=os.path.join(reference.ROOT, "build", "bin", "tern"))
    ap.add_argument("--show", type=int, default=6, help="print this many hypotheses")
    ap.add_argument("--decode", default="", help="extra `tern transcribe` options, e.g. '--beam 4'")
    a = ap.parse_args()
    if not os.access(a.tern, os.X_OK):
        sys.exit(f"engine_wer.py: no tern binary at {a.tern} (build it, or pass --tern)")

    audio, meta = common.read_split("test")
    meta = meta[:a.n]
    wav_dir = os.path.join(common.WORK, "eval_wav")
    os.makedirs(wav_dir, exist_ok=True)
    wavs = []
    for i, mt in enumerate(meta):
        p = os.path.join(wav_dir, f"{i:03d}.wav")
        if not os.path.exists(p):
            reference.write_test_wav(p, audio, mt)
        wavs.append(p)

    with tempfile.TemporaryDirectory() as tmp:
        model = a.model
        if a.ckpt:
            model = os.path.join(tmp, "model")
            subprocess.run([sys.executable, os.path.join(common.HERE, "export.py"),
                            "--ckpt", a.ckpt, "--out", model], check=True,
                           stdout=subprocess.DEVNULL)
        out = os.path.join(tmp, "txt")
        os.makedirs(out)
        r = subprocess.run([a.tern, "transcribe", "--model", model, "-t", str(a.threads), "-q",
                            "--max-tokens", "48", "--output-format", "txt", "--output-dir", out]
                           + a.decode.split() + wavs)
        if r.returncode != 0:
            sys.exit(f"engine_wer.py: tern transcribe failed (exit {r.returncode})")
        hyps = []
        for p in wavs:
            stem = os.path.splitext(os.path.basename(p))[0]
            with open(os.path.join(out, stem + ".txt"), encoding="utf-8") as f:
                hyps.append(f.read().strip())

    held = "%s:%s" % synth.HELDOUT_VOICE
    by_voice = {}
    for i, (mt, hyp) in enumerate(zip(meta, hyps)):
        ref = reference.norm_words(mt["text"])
        c = by_voice.setdefault(mt["voice"], [0, 0])
        c[0] += reference.edit_distance(ref, reference.norm_words(hyp))
        c[1] += len(ref)
        if i < a.show:
            print(f"{i:3d} REF: {mt['text']}\n    HYP: {hyp}")
    summary = {"seen": score([c for v, c in by_voice.items() if v != held]),
               "heldout": score([c for v, c in by_voice.items() if v == held]),
               "all": score(list(by_voice.values())),
               "by_voice": {v: score([c]) for v, c in sorted(by_voice.items())}}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
