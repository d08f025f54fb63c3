"""Speech for natural phrasings, multi-sentence clips, dialogues, contexts and noise.

usage: /usr/bin/python3 synth_mix.py [--singles 6000] [--composed 2400] [--noise 300]
           [--jobs 2]

Builds, cached under work/data/ like synth.py (seeded: every utterance's text, voice and
settings follow from (split, index); sox's dither makes re-runs differ by 1-3 LSB):

  mix_train   single utterances (textgen's sentences capitalized, and natural.py's
              training frames), then clips composed of them: monologues of 2-6 utterances
              of one voice, dialogues of 2-3 speakers (distinct voices), 5-40 s, pauses
              0.25-1.5 s between utterances; a share with a context line; noise/silence
  nat_test    natural sentences in held-out frames (never trained), even indices a
              training voice, odd the held-out voice setting (espeak-ng en-us+f2)
  multi_test  monologues of held-out utterances: even indices 5-20 s (2-6 utterances),
              odd indices 30-40 s
  dlg_test    dialogues of 2-3 speakers over held-out utterances (one speaker the held-out
              voice in half of them)
  ctx_test    clips naming rare names, with the context line that names them
  noise_test  noise and silence clips (target: empty)

Each clip's meta: text (plain target: the utterances joined by a space), segs ([start,
end, speaker, content] per utterance: start/end are where the utterance's speech begins
and ends in the clip, found from its samples: the first and last 10 ms frame within 35 dB
of the utterance's loudest), context ("" or a line), json (whether training asks for the
JSON answer), kind, voice (the first speaker's).
"""
import argparse
import json
import os
import random
import sys
from multiprocessing import Pool

import numpy as np

import natural
import synth

WORK = synth.WORK
SR = synth.SR


def speech_bounds(x):
    """(first, last) sample of speech in an utterance: 10 ms frames within 35 dB of the
    loudest frame."""
    f = 240
    n = max(1, len(x) // f)
    e = np.sqrt(np.mean(x[:n * f].astype(np.float64).reshape(n, f) ** 2, axis=1) + 1e-9)
    on = np.nonzero(e > e.max() * 10 ** (-35 / 20))[0]
    if len(on) == 0:
        return 0, len(x)
    return int(on[0] * f), int(min(len(x), (on[-1] + 1) * f))


def single_plan(split, n, seed, texts_fn):
    texts = texts_fn(n, seed)
    items = []
    for i, t in enumerate(texts):
        s = synth.clip_seed(split, i)
        rng = random.Random(s)
        if split.startswith("train") or (split != "train" and i % 2 == 0):
            e, v = synth.TRAIN_VOICES[rng.randrange(len(synth.TRAIN_VOICES))]
        else:
            e, v = synth.HELDOUT_VOICE
        items.append((t, e, v, s))
    return items


def synth_all(items, jobs):
    with Pool(jobs) as pool:
        return pool.map(synth.synth_one, items, chunksize=8)


def compose(pool, rng, kind, max_s=40.0, min_s=5.0):
    """A clip from utterances of the pool: kind 'multi' (one voice) or 'dialog' (2-3
    voices), of a length drawn from [min_s, max_s]: 2-6 utterances, or as many as reach it
    when it is over 20 s (the utterances are 1-6 s). Returns (int16 samples, segs, voice)."""
    by_voice = {}
    for k, u in enumerate(pool):
        by_voice.setdefault(u["voice"], []).append(k)
    target = rng.uniform(min_s, max_s)
    n_utt = rng.randint(2, 6) if target < 20 else 16
    if kind == "multi":
        v = rng.choice(sorted(by_voice))
        speakers = [v]
    else:
        speakers = rng.sample(sorted(by_voice), rng.choice([2, 2, 3]))
    parts, segs, pos = [], [], 0
    turn = 0
    for j in range(n_utt):
        if kind == "multi":
            spk = 0
        else:
            # alternate, with an occasional second utterance of the same speaker
            spk = turn % len(speakers) if (j == 0 or rng.random() < 0.85) else segs[-1][2]
            turn = spk + 1
        u = pool[rng.choice(by_voice[speakers[spk]])]
        x = u["audio"]
        if j > 0:
            gap = int(rng.uniform(0.25, 1.5) * SR)
            if pos + gap + len(x) > max_s * SR:
                break
            parts.append(np.zeros(gap, dtype=np.int16))
            pos += gap
        elif len(x) > max_s * SR:
            x = x[:int(max_s * SR)]
        a, b = speech_bounds(x)
        segs.append([(pos + a) / SR, (pos + b) / SR, spk, u["text"]])
        parts.append(x)
        pos += len(x)
        if pos > target * SR and j >= 1:
            break
    # speaker ids in order of first appearance
    order = []
    for s in segs:
        if s[2] not in order:
            order.append(s[2])
    for s in segs:
        s[2] = order.index(s[2])
    return np.concatenate(parts), segs, speakers[0] if kind == "multi" else "+".join(speakers)


def noise_clip(rng):
    """Noise or near-silence: white, brown, hum, or digital near-silence, 1-15 s,
    -70..-15 dBFS RMS."""
    n = int(rng.uniform(1.0, 15.0) * SR)
    g = np.random.default_rng(rng.getrandbits(32))
    kind = rng.choice(["white", "brown", "hum", "quiet", "mixed"])
    if kind == "brown":
        x = np.cumsum(g.standard_normal(n))
        x -= np.convolve(x, np.ones(256) / 256, mode="same")
    elif kind == "hum":
        t = np.arange(n) / SR
        f0 = rng.choice([50.0, 60.0, 100.0, 120.0])
        x = sum(np.sin(2 * np.pi * f0 * h * t + rng.random() * 6) / h for h in (1, 2, 3, 5))
        x = x + 0.1 * g.standard_normal(n)
    elif kind == "mixed":
        x = g.standard_normal(n) * np.linspace(rng.random(), 1, n)
    else:
        x = g.standard_normal(n)
    lvl = rng.uniform(-70, -15) if kind != "quiet" else rng.uniform(-90, -60)
    x = x / (np.sqrt(np.mean(x ** 2)) + 1e-12) * 10 ** (lvl / 20) * 32767
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def save(split, clips, metas):
    pos = 0
    for c, m in zip(clips, metas):
        m["start"], m["length"] = pos, int(len(c))
        pos += len(c)
    np.save(os.path.join(WORK, f"{split}.npy"), np.concatenate(clips))
    with open(os.path.join(WORK, f"{split}.json"), "w") as f:
        json.dump(metas, f, indent=0)
    print(f"{split}: {len(metas)} clips, {pos / SR / 3600:.2f} h", file=sys.stderr, flush=True)


def single_meta(u, ctx="", js=False):
    a, b = speech_bounds(u["audio"])
    return {"text": u["text"], "voice": u["voice"], "kind": "single", "context": ctx,
            "json": js, "segs": [[a / SR, b / SR, 0, u["text"]]]}


def composed_meta(x, segs, voice, kind, ctx="", js=False):
    return {"text": " ".join(s[3] for s in segs), "voice": voice, "kind": kind,
            "context": ctx, "json": js, "segs": segs}


def pool_of(items, audio):
    return [{"text": t, "voice": f"{e}:{v}", "audio": a} for (t, e, v, _), a in zip(items, audio)]


def build_train(n_single, n_comp, n_noise, jobs):
    half = n_single * 2 // 5
    items = single_plan("train_old", half, 4321, lambda n, s: natural.old_grammar(n, s)) + \
        single_plan("train_nat", n_single - half, 4322, lambda n, s: natural.natural(n, s))
    audio = synth_all(items, jobs)
    pool = pool_of(items, audio)
    rng = random.Random(7)
    clips, metas = [], []
    for u in pool:
        r = rng.random()
        ctx = ""
        if r < 0.08 and natural.names_in(u["text"]):
            # the context names a rare name the sentence is re-spoken with? No: the audio
            # is fixed, so the context names the sentence's own names (+ distractors).
            ctx = natural.context_line([u["text"]], rng)
        clips.append(u["audio"])
        metas.append(single_meta(u, ctx, js=rng.random() < 0.1))
    for k in range(n_comp):
        kind = "dialog" if k % 2 else "multi"
        x, segs, voice = compose(pool, rng, kind)
        ctx = natural.context_line([s[3] for s in segs], rng) if rng.random() < 0.15 else ""
        js = rng.random() < (0.8 if kind == "dialog" else 0.35)
        clips.append(x)
        metas.append(composed_meta(x, segs, voice, kind, ctx, js))
    for _ in range(n_noise):
        clips.append(noise_clip(rng))
        metas.append({"text": "", "voice": "noise", "kind": "noise", "context": "",
                      "json": rng.random() < 0.3, "segs": []})
    # rare-name clips with their context (the context is how the model can spell them)
    ritems = []
    r2 = random.Random(11)
    src = [t for t in natural.natural(3000, 4323) if natural.names_in(t)]
    for i, t in enumerate(src[:400]):
        t2 = natural.with_rare_name(t, r2)
        s = synth.clip_seed("train_rare", i)
        e, v = synth.TRAIN_VOICES[random.Random(s).randrange(len(synth.TRAIN_VOICES))]
        ritems.append((t2, e, v, s))
    raudio = synth_all(ritems, jobs)
    for u in pool_of(ritems, raudio):
        clips.append(u["audio"])
        metas.append(single_meta(u, natural.context_line([u["text"]], r2), js=r2.random() < 0.1))
    save("mix_train", clips, metas)


def build_tests(jobs, n_nat=200, n_multi=40, n_dlg=40, n_ctx=40, n_noise=40):
    nat_items = single_plan("nat_test", n_nat, 99,
                            lambda n, s: natural.natural(n, s, heldout_frames=True))
    pool_items = single_plan("pool_test", 400, 98,
                             lambda n, s: natural.natural(n // 2, s, test=True) +
                             natural.old_grammar(n - n // 2, s, test=True))
    # rare names in held-out sentences, for the context set
    r = random.Random(5)
    src = [t for t in natural.natural(2000, 97, test=True) if natural.names_in(t)][:n_ctx]
    ctx_items = single_plan("ctx_test", len(src), 0, lambda n, s: [natural.with_rare_name(t, r)
                                                                 for t in src])
    allitems = nat_items + pool_items + ctx_items
    audio = synth_all(allitems, jobs)
    a_nat, a_pool, a_ctx = (audio[:len(nat_items)], audio[len(nat_items):-len(ctx_items)],
                            audio[-len(ctx_items):])
    save("nat_test", a_nat, [single_meta(u) for u in pool_of(nat_items, a_nat)])
    pool = pool_of(pool_items, a_pool)
    rng = random.Random(3)
    clips, metas = [], []
    for k in range(n_multi):
        x, segs, voice = compose(pool, rng, "multi", max_s=40.0 if k % 2 else 20.0,
                                 min_s=30.0 if k % 2 else 5.0)
        clips.append(x)
        metas.append(composed_meta(x, segs, voice, "multi"))
    save("multi_test", clips, metas)
    clips, metas = [], []
    for k in range(n_dlg):
        x, segs, voice = compose(pool, rng, "dialog", max_s=rng.uniform(10, 40))
        clips.append(x)
        metas.append(composed_meta(x, segs, voice, "dialog", js=True))
    save("dlg_test", clips, metas)
    metas = [single_meta(u, natural.context_line([u["text"]], rng))
             for u in pool_of(ctx_items, a_ctx)]
    save("ctx_test", a_ctx, metas)
    clips = [noise_clip(rng) for _ in range(n_noise)]
    save("noise_test", clips, [{"text": "", "voice": "noise", "kind": "noise", "context": "",
                                "json": False, "segs": []} for _ in clips])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--singles", type=int, default=6000)
    ap.add_argument("--composed", type=int, default=2400)
    ap.add_argument("--noise", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--tests-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    if a.force or not os.path.exists(os.path.join(WORK, "noise_test.json")):
        build_tests(a.jobs)
    if not a.tests_only and (a.force or not os.path.exists(os.path.join(WORK, "mix_train.json"))):
        build_train(a.singles, a.composed, a.noise, a.jobs)


if __name__ == "__main__":
    main()
