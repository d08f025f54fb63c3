"""The figures of a model folder on every held-out set, through tern's engine.

usage: /usr/bin/python3 eval_mix.py --model ../models/tiny-en
           [--sets old,nat,multi,dlg,live,ctx,noise] [--threads 1] [--json out.json]

Sets (synth.py --test and synth_mix.py build them under work/data/):
  old    the 200 test clips of textgen's grammar (engine_wer.py's set): WER
  nat    natural sentences in held-out frames: WER overall, seen voices, the held-out
         voice, per voice
  multi  2-6 utterances of one voice, 5-40 s, transcribed with no options: WER, and WER
         of the clips of 30 s or more
  dlg    dialogues of 2-3 speakers with --format json: WER of the segments' text, speaker
         attribution (of the reference words aligned to a hypothesis word, the share whose
         hypothesis segment's speaker is the reference speaker, under the best one-to-one
         renaming of the hypothesis speakers), segment boundary error (each reference
         segment paired with the hypothesis segment that overlaps it most; |start| and |end|
         differences: median and 90th percentile; a reference segment with no overlapping
         hypothesis segment counts as an error of its own length) and the share of
         answers that parsed as segments
  live   the dialogues again, fed as a live stream (`tern transcribe --live FILE --format
         json`, one piece per turn): the same measures over the finals' segments, whose
         speakers the engine numbers over the stream
  ctx    clips naming rare names: WER with the context line and without
  noise  noise and silence: the share of clips whose transcript is empty

Scoring is reference.py's: lowercased words without punctuation, summed edits over summed
reference words. Every call is greedy; the clips of a set go through one `tern transcribe`
call per distinct option set (context clips one by one: each has its own line).
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import common
import reference
import synth

SETS = {"old": "test", "nat": "nat_test", "multi": "multi_test", "dlg": "dlg_test",
        "live": "dlg_test", "ctx": "ctx_test", "noise": "noise_test"}


def wavs_of(split):
    audio, meta = common.read_split(split)
    d = os.path.join(common.WORK, "eval_" + split)
    os.makedirs(d, exist_ok=True)
    out = []
    for i, mt in enumerate(meta):
        p = os.path.join(d, f"{i:03d}.wav")
        if not os.path.exists(p):
            reference.write_test_wav(p, audio, mt)
        out.append(p)
    return meta, out


def transcribe(tern, model, wavs, opts, threads):
    """-> list of verbose_json dicts, one per wav."""
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([tern, "transcribe", "--model", model, "-t", str(threads), "-q",
                            "--output-format", "verbose_json", "--output-dir", out] + opts + wavs,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"eval_mix.py: tern transcribe failed: {r.stderr[-500:]}")
        res = []
        for p in wavs:
            stem = os.path.splitext(os.path.basename(p))[0]
            with open(os.path.join(out, stem + ".verbose.json"), encoding="utf-8") as f:
                res.append(json.load(f))
        return res


def transcribe_live(tern, model, wav, threads):
    """-> {"structured", "segments"}: the segments of every final of a live run on wav."""
    r = subprocess.run([tern, "transcribe", "--model", model, "-t", str(threads), "--format",
                        "json", "--live", wav, "--output-format", "json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"eval_mix.py: tern transcribe --live failed: {r.stderr[-500:]}")
    segs = []
    for line in r.stdout.splitlines():
        event = json.loads(line)
        if event["type"] == "final":
            segs += event.get("segments", [])
    return {"structured": True, "segments": segs}


def wer(pairs):
    e = w = 0
    for ref, hyp in pairs:
        r = reference.norm_words(ref)
        e += reference.edit_distance(r, reference.norm_words(hyp))
        w += len(r)
    return {"wer": round(e / max(1, w), 4), "errors": e, "words": w}


def seg_text(res):
    return " ".join(s["text"] for s in res["segments"]) if res["structured"] else res["text"]


def align_pairs(a, b):
    """Edit-distance alignment of word lists: [(i, j)] of aligned (equal or substituted)."""
    n, m = len(a), len(b)
    d = np.zeros((n + 1, m + 1), dtype=np.int32)
    d[:, 0] = np.arange(n + 1)
    d[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    i, j, out = n, m, []
    while i > 0 and j > 0:
        if d[i, j] == d[i - 1, j - 1] + (a[i - 1] != b[j - 1]):
            out.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif d[i, j] == d[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    return out[::-1]


def speaker_words(segs, key_text, key_spk):
    words, spk = [], []
    for s in segs:
        w = reference.norm_words(s[key_text])
        words += w
        spk += [s.get(key_spk, -1) if isinstance(s, dict) else s[2]] * len(w)
    return words, spk


def best_renaming(pairs):
    """pairs: (reference speaker, hypothesis speaker) per word -> the most words right under
    a one-to-one renaming of hypothesis speakers (unrenamed ones count as wrong). Tries every
    choice of one hypothesis speaker (or none) per reference speaker: few reference
    speakers, however many hypothesis ones."""
    count = {}
    for r, h in pairs:
        count[(r, h)] = count.get((r, h), 0) + 1
    ref_ids = sorted({r for r, _ in pairs})
    hyp_ids = sorted({h for _, h in pairs})
    best = 0
    for pick in itertools.product([None] + hyp_ids, repeat=len(ref_ids)):
        used = [h for h in pick if h is not None]
        if len(used) != len(set(used)):
            continue
        best = max(best, sum(count.get((r, h), 0) for r, h in zip(ref_ids, pick)))
    return best


def dialog_scores(meta, results):
    right = total = 0
    errs, parsed = [], 0
    for mt, res in zip(meta, results):
        ref_w, ref_s = [], []
        for s in mt["segs"]:
            w = reference.norm_words(s[3])
            ref_w += w
            ref_s += [s[2]] * len(w)
        total += len(ref_w)
        if not res["structured"]:
            errs += [s[1] - s[0] for s in mt["segs"] for _ in (0, 1)]
            continue
        parsed += 1
        hyp_w, hyp_s = [], []
        for s in res["segments"]:
            w = reference.norm_words(s["text"])
            hyp_w += w
            hyp_s += [s.get("speaker", -1)] * len(w)
        pairs = align_pairs(ref_w, hyp_w)
        right += best_renaming([(ref_s[i], hyp_s[j]) for i, j in pairs])
        for s in mt["segs"]:
            ov = [(min(s[1], h["end"]) - max(s[0], h["start"]), h) for h in res["segments"]]
            ov = [o for o in ov if o[0] > 0]
            if not ov:
                errs += [s[1] - s[0]] * 2
                continue
            h = max(ov, key=lambda o: o[0])[1]
            errs += [abs(h["start"] - s[0]), abs(h["end"] - s[1])]
    e = np.array(errs) if errs else np.zeros(1)
    return {"speaker_attribution": round(right / max(1, total), 4),
            "boundary_median_s": round(float(np.median(e)), 3),
            "boundary_p90_s": round(float(np.percentile(e, 90)), 3),
            "boundary_within_0.5s": round(float(np.mean(e <= 0.5)), 4),
            "parsed_as_segments": f"{parsed}/{len(meta)}"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--sets", default="old,nat,multi,dlg,live,ctx,noise")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tern", default=os.path.join(reference.ROOT, "build", "bin", "tern"))
    ap.add_argument("--json", default="", help="also write the figures here")
    ap.add_argument("--show", type=int, default=2)
    a = ap.parse_args()
    if not os.access(a.tern, os.X_OK):
        sys.exit(f"eval_mix.py: no tern binary at {a.tern} (build it, or pass --tern)")
    held = "%s:%s" % synth.HELDOUT_VOICE
    out = {}
    for name in a.sets.split(","):
        meta, wavs = wavs_of(SETS[name])
        if name in ("old", "nat"):
            res = transcribe(a.tern, a.model, wavs, ["--max-tokens", "96"], a.threads)
            hyp = [r["text"] for r in res]
            by = {}
            for mt, h in zip(meta, hyp):
                by.setdefault(mt["voice"], []).append((mt["text"], h))
            out[name] = {"all": wer([(mt["text"], h) for mt, h in zip(meta, hyp)]),
                         "seen": wer([p for v, ps in by.items() if v != held for p in ps]),
                         "heldout_voice": wer(by.get(held, [])),
                         "by_voice": {v: wer(ps)["wer"] for v, ps in sorted(by.items())}}
        elif name == "multi":
            res = transcribe(a.tern, a.model, wavs, [], a.threads)
            pairs = [(mt["text"], r["text"]) for mt, r in zip(meta, res)]
            long_ = [p for p, mt in zip(pairs, meta) if mt["length"] >= 30 * common.SR]
            out[name] = {"all": wer(pairs), "30s_or_more": wer(long_),
                         "clips_30s_or_more": len(long_)}
        elif name == "dlg":
            res = transcribe(a.tern, a.model, wavs, ["--format", "json"], a.threads)
            out[name] = {"wer": wer([(mt["text"], seg_text(r)) for mt, r in zip(meta, res)])}
            out[name].update(dialog_scores(meta, res))
            hyp = [seg_text(r) for r in res]
        elif name == "live":
            res = [transcribe_live(a.tern, a.model, w, a.threads) for w in wavs]
            out[name] = {"wer": wer([(mt["text"], seg_text(r)) for mt, r in zip(meta, res)])}
            out[name].update(dialog_scores(meta, res))
            hyp = [seg_text(r) for r in res]
        elif name == "ctx":
            plain = transcribe(a.tern, a.model, wavs, [], a.threads)
            withc = [transcribe(a.tern, a.model, [w], ["--context", mt["context"]], a.threads)[0]
                     for mt, w in zip(meta, wavs)]
            out[name] = {"without_context": wer([(mt["text"], r["text"]) for mt, r in zip(meta, plain)]),
                         "with_context": wer([(mt["text"], r["text"]) for mt, r in zip(meta, withc)])}
            hyp = [r["text"] for r in withc]
        elif name == "noise":
            res = transcribe(a.tern, a.model, wavs, [], a.threads)
            empty = sum(not r["text"].strip() for r in res)
            out[name] = {"empty_share": round(empty / max(1, len(res)), 4),
                         "empty": f"{empty}/{len(res)}"}
            hyp = [r["text"] for r in res]
        if name in ("old", "nat", "multi") and name != "dlg":
            hyp = [r["text"] for r in res]
        for i in range(min(a.show, len(meta))):
            print(f"{name} {i:3d} REF: {meta[i]['text'][:300]}\n          HYP: {hyp[i][:300]}")
        print(json.dumps({name: out[name]}), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
