"""A small, fixed share of synth_mix.py's held-out sets, kept in the repository for ctest.

usage: /usr/bin/python3 heldout_mix.py [--out ../tests/data/heldout_mix]

eval_mix.py scores a model on the whole sets (200 natural sentences, 40 clips of each other
kind), which live under work/ and are rebuilt by synth_mix.py. The tests need clips a clean
checkout has, few enough to keep the repository lean: this writes, as 16-bit FLAC (libsndfile
reads it; half the bytes of WAV), the first clips in set order that meet each rule below,
and clips.json with their references (text, voice, context, segments [start, end, speaker,
text]). Nothing is picked by how a model does on it: the gates in tests/heldout_mix_test.cc
are measured on exactly these clips.
"""
import argparse
import json
import os
import subprocess
import sys

import common
import reference
import synth

HELD = "%s:%s" % synth.HELDOUT_VOICE
S = common.SR

# set name -> (split, [(how many, rule), ...]); a clip joins the first rule it meets that
# still wants clips.
PICK = {
    "nat": ("nat_test", [(10, lambda m: m["voice"] == HELD),
                         (10, lambda m: m["voice"] != HELD)]),
    "multi": ("multi_test", [(2, lambda m: m["length"] >= 30 * S),
                             (1, lambda m: 10 * S <= m["length"] < 20 * S)]),
    "dlg": ("dlg_test", [(3, lambda m: len({s[2] for s in m["segs"]}) == 2 and
                          m["length"] <= 15 * S),
                         (2, lambda m: len({s[2] for s in m["segs"]}) == 3 and
                          m["length"] <= 15 * S)]),
    "ctx": ("ctx_test", [(6, lambda m: True)]),
    "noise": ("noise_test", [(6, lambda m: m["length"] <= 9 * S)]),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(reference.ROOT, "tests", "data", "heldout_mix"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    clips = []
    for name, (split, rules) in PICK.items():
        audio, meta = common.read_split(split)
        want = [n for n, _ in rules]
        for i, mt in enumerate(meta):
            k = next((k for k, (_, rule) in enumerate(rules) if want[k] and rule(mt)), None)
            if k is None:
                continue
            want[k] -= 1
            stem = f"{name}-{i:03d}"
            wav = os.path.join(a.out, stem + ".wav")
            reference.write_test_wav(wav, audio, mt)
            r = subprocess.run(["sox", wav, "-b", "16", os.path.join(a.out, stem + ".flac")],
                               stderr=subprocess.PIPE, text=True)
            os.remove(wav)
            if r.returncode:
                sys.exit(f"heldout_mix.py: sox failed on {stem}: {r.stderr}")
            clips.append({"file": stem + ".flac", "set": name, "text": mt["text"],
                          "voice": mt["voice"], "context": mt["context"],
                          "segments": [[round(s[0], 3), round(s[1], 3), s[2], s[3]]
                                       for s in mt["segs"]]})
        if any(want):
            sys.exit(f"heldout_mix.py: {split} has too few clips for the rules of {name}")
    with open(os.path.join(a.out, "clips.json"), "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(c) for c in clips) + "\n]\n")  # a clip a line
    secs = sum(c["segments"][-1][1] if c["segments"] else 0 for c in clips)
    print(f"wrote {len(clips)} clips ({secs:.0f} s of speech) and clips.json to {a.out}")


if __name__ == "__main__":
    main()
