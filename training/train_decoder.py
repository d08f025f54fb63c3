"""Stage G: the decoder alone, on the frozen encoder's features (recipe.sh's last stage).

usage: /usr/bin/python3 train_decoder.py --init work/recipe/F/ckpt.pt --steps 6000 \
           --out work/recipe/G/ckpt.pt          (needs tern-dev built: build/bin/tern-dev)

Why: on the bundle before last (stage F of 3600 steps) a linear token-CTC head on the
features transcribed the 200 test clips at 19.4% WER (greedy), the decoder at 41.1%: the
features carry the words and the 2-layer decoder did not read them well, while in stages
A-F every step also paid for the encoder's forward and backward, ~70% of it. Here the
encoder is frozen and run once per clip, and a decoder step costs ~8 ms per clip against
~135 ms per clip for a stage F step.

The features are tern's own (`tern-dev encode --output-dir` on the exported encoder, each clip
alone): exactly what inference feeds the decoder, and far faster than the PyTorch forward
of one clip at a time (~70-115 ms per clip; PyTorch's features also differ from the
engine's by up to ~3% of their range, tests/tiny_model_test.cc).
`--views` versions per clip: view 0 the clean clip, the others through the trainer's
augmentation (noise; seeded by clip and view). Every clip gets its own prompt (its own pad
count, frame count and duration string), as at inference, where stages A-F pad a batch's
clips to one length.

Loss: the decoder's cross-entropy on the assistant turn plus the alignment guide, with
token dropout, as in stages D-F; quantization-aware throughout (ternary projections, int8
rows), with the decoder's faster float order (model.QState.fast). Schedule: warm-up, the
rate held until --decay-from, then a cosine to 5%.
"""
import argparse
import concurrent.futures
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

import common
import natural
import synth
import train


def clip_features(init, audio, meta, views, seed, tern_dev, jobs, chunk=500, model_dir="",
                  split="train"):
    """-> feats[v][i]: [Fr_i, hidden] float32 for view v of clip i (v = 0 the clean clip),
    computed by tern's engine from the exported encoder: exactly the features inference
    sees. Each view goes through a 16-bit WAV as at inference (an augmented one scaled to a
    0.5 peak first: the encoder is scale-invariant but for its front end, which normalizes
    the level anyway); `tern-dev encode --output-dir` takes `chunk` of them per call, `jobs`
    calls at a time, one thread each."""
    t0 = time.time()
    out = [[None] * len(meta) for _ in range(views)]
    with tempfile.TemporaryDirectory() as tmp:
        model = model_dir or os.path.join(tmp, "model")
        if not model_dir:
            # the split only sets the declarations (tern.trained.*), which encode ignores
            subprocess.run([sys.executable, os.path.join(common.HERE, "export.py"), "--ckpt",
                            init, "--out", model, "--split", split], check=True,
                           stdout=subprocess.DEVNULL)

        def run(part):
            wavs = []
            for v, i in part:
                x = np.asarray(audio[meta[i]["start"]:meta[i]["start"] + meta[i]["length"]])
                if v > 0:
                    y = common.augment(x.astype(np.float32) / 32768.0,
                                       random.Random(seed * 1000003 + i * 16 + v))
                    x = np.round(y * (0.5 * 32767.0 / max(1e-9, float(np.abs(y).max()))))
                wavs.append(os.path.join(tmp, f"{v}_{i}.wav"))
                synth.write_wav(wavs[-1], x.astype(np.int16))
            r = subprocess.run([tern_dev, "encode", "--model", model, "-t", "1", "-q",
                                "--output-dir", tmp] + wavs, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"tern-dev encode: {r.stderr.strip()}")
            for (v, i), wav in zip(part, wavs):
                f32 = wav[:-4] + ".f32"
                out[v][i] = torch.from_numpy(        # half the memory; exact enough
                    np.fromfile(f32, dtype=np.float32).reshape(-1, common.CFG["hidden"])
                    .astype(np.float16))
                os.remove(wav)
                os.remove(f32)
            return len(part)

        todo = [(v, i) for v in range(views) for i in range(len(meta))]
        parts = [todo[k:k + chunk] for k in range(0, len(todo), chunk)]
        done = 0
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            for n in ex.map(run, parts):
                done += n
                if done % 4000 < chunk:
                    print(f"[{time.time() - t0:.0f}s] features of {done} clip views", flush=True)
    return out


def prompt_head(m, tok):
    """The prompt's first part (system turn, user header, <|speech_start|>) is the same for
    every clip, and causal attention keeps it from seeing anything after it: its keys and
    values are computed once per step ([1, nkv, P, dh] per layer) and every clip continues
    from them (a quarter of the tokens of a batch otherwise)."""
    pre = common.prompt_parts(tok, common.HOP)[0]
    P = len(pre)
    m.decoder(m.decoder.embed(torch.tensor(pre))[None], torch.arange(P)[None],
              torch.tril(torch.ones((P, P), dtype=torch.bool))[None], keep=True, head=False)
    return [L.kv for L in m.decoder.layers], P


def build(m, tok, feats, lens, targets, tok_drop, rng, P, opts=None):
    """The rest of each clip's prompt and its answer, right-padded: (x, pos, mask, labels,
    rows); x continues the shared prompt head of P tokens (mask [B, S, P + S]), rows[b] =
    (row predicting target 0, frame count) for the guide. Every clip has its own pad count,
    frame count and duration string, as at inference."""
    seqs, poss, labs, rows = [], [], [], []
    E = m.decoder.embed
    opts = opts or [(False, "")] * len(feats)
    for f, n, t, (js, ctx) in zip(feats, lens, targets, opts):
        pre, N, Fr, suf, n_prompt = common.prompt_parts(tok, n, js, ctx)
        inp = list(t[:-1])
        for k in range(3, len(inp)):            # keep the <|im_start|>assistant\n header
            if tok_drop > 0 and rng.random() < tok_drop:
                inp[k] = rng.randrange(256, tok.n_vocab - 6)
        x = torch.cat([f[:Fr], E(torch.tensor(suf)), E(torch.tensor(inp))])
        p = torch.cat([P + torch.arange(Fr + len(suf)), n_prompt + torch.arange(len(inp))])
        base = Fr + len(suf) - 1
        lab = torch.full((x.shape[0],), -100, dtype=torch.long)
        lab[base:base + len(t)] = torch.tensor(t)
        seqs.append(x)
        poss.append(p)
        labs.append(lab)
        rows.append((base, Fr))
    S, B = max(s.shape[0] for s in seqs), len(seqs)
    x = torch.zeros(B, S, seqs[0].shape[1])
    pos = torch.zeros(B, S, dtype=torch.long)
    labels = torch.full((B, S), -100, dtype=torch.long)
    valid = torch.zeros(B, S, dtype=torch.bool)
    for b in range(B):
        L = seqs[b].shape[0]
        x[b, :L] = seqs[b]
        pos[b, :L] = poss[b]
        labels[b, :L] = labs[b]
        valid[b, :L] = True
    causal = torch.tril(torch.ones((S, S), dtype=torch.bool))
    own = (causal[None] & valid[:, None, :]) | torch.eye(S, dtype=torch.bool)[None]
    mask = torch.cat([torch.ones((B, S, P), dtype=torch.bool), own], dim=2)
    return x, pos, mask, labels, rows


def guide(m, tok, targets, rows, P, aligns=None):
    """train.guide_loss for clips with their own prompt layout, all clips at once (rows in
    build's coordinates; attention keys include the P-token prompt head). aligns[b], when
    given, is (centres, sigmas) per content token in frames (from the clip's segments,
    align_of); otherwise token c of L is centred at (c + 0.5) / L of the clip, sigma 15% of
    the clip + 1 frame (train.guide_prior)."""
    head = len(common.target_ids(tok, "")) - 1
    lc = torch.tensor([max(0, len(t) - head - 1) for t in targets])
    fr = torch.tensor([r[1] for r in rows], dtype=torch.float32)
    base = torch.tensor([r[0] for r in rows])
    Lc, Fm = int(lc.max()), int(fr.max())
    if Lc == 0:
        return torch.zeros(())
    c = torch.arange(Lc, dtype=torch.float32)[None]                      # [1, Lc]
    centre = (c + 0.5) / lc.clamp(min=1)[:, None] * fr[:, None]          # [B, Lc]
    sig = (0.15 * fr + 1.0)[:, None].expand(-1, Lc).clone()
    valid = c < lc[:, None]                                              # [B, Lc]
    if aligns is not None:
        for b, al in enumerate(aligns):
            if al is None:
                continue
            ce, sg = al
            k = min(len(ce), Lc)
            centre[b, :k] = torch.tensor(ce[:k])
            sig[b, :k] = torch.tensor(sg[:k])
            valid[b, :k] &= torch.tensor(ce[:k]) >= 0
    i = torch.arange(Fm, dtype=torch.float32)[None, None]                # [1, 1, Fm]
    prior = torch.exp(-((i - centre[:, :, None]) ** 2) / (2 * sig[:, :, None] ** 2))
    prior = prior * (i < fr[:, None, None])                              # own frames only
    att0 = m.decoder.layers[0].last_att
    rows_i = (base[:, None] + head + c.long()) * valid                # padding rows: row 0
    rows_i = rows_i.clamp(max=att0.shape[-2] - 1)
    cols = (P + torch.arange(Fm)).clamp(max=att0.shape[-1] - 1)         # the clip's frames
    bidx = torch.arange(len(targets))[:, None, None]
    total = 0.0
    for L in m.decoder.layers:
        r = L.last_att[:, 0][bidx, rows_i[:, :, None], cols[None, None, :]]   # [B, Lc, Fm]
        total = total + (train.guide_nll((r * prior).sum(-1)) * valid).sum()
    return total / max(1, int(valid.sum()) * len(m.decoder.layers))


def answer_pieces(mt):
    """The answer of a clip as (pieces, segment of each piece): the JSON rows or the
    utterances, whose concatenation is the target text."""
    segs = mt.get("segs") or []
    if mt.get("json"):
        rows = [natural.segments_json([s])[1:-1] for s in segs]
        if not rows:
            return ["[]"], [None]
        pieces = ["[" + rows[0]] + ["," + r for r in rows[1:]]
        pieces[-1] += "]"
        return pieces, list(range(len(segs)))
    if not segs or mt.get("kind") == "single":
        return [mt["text"]], [None]
    return [s[3] if k == 0 else " " + s[3] for k, s in enumerate(segs)], list(range(len(segs)))


def target_of(tok, mt):
    return common.target_ids(tok, "".join(answer_pieces(mt)[0]))


def align_of(tok, mt):
    """Per content token (centre, sigma) in frames from the clip's segments: a piece's
    tokens spread over its segment's speech; None (the whole-clip rule) for a single
    utterance or when the pieces tokenize differently apart than together."""
    pieces, seg_of = answer_pieces(mt)
    if seg_of[0] is None:
        return None
    ids = [tok.encode(p) for p in pieces]
    if sum(len(x) for x in ids) != len(tok.encode("".join(pieces))):
        return None
    ce, sg = [], []
    for x, k in zip(ids, seg_of):
        a, b = mt["segs"][k][0] * common.SR / common.HOP, mt["segs"][k][1] * common.SR / common.HOP
        for j in range(len(x)):
            ce.append(a + (j + 0.5) / len(x) * (b - a))
            sg.append(0.15 * (b - a) + 1.0)
    ce.append(-1.0)          # <|im_end|>: no prior
    sg.append(1.0)
    return ce, sg


def losses(m, tok, feats, lens, targets, tok_drop, rng, opts=None, aligns=None):
    """(cross-entropy of the answers, alignment guide) of one batch."""
    past, P = prompt_head(m, tok)
    x, pos, mask, labels, rows = build(m, tok, feats, lens, targets, tok_drop, rng, P, opts)
    h = m.decoder(x, pos, mask, past=past, head=False)
    sel = labels != -100                          # the head only where there is a label
    ce = F.cross_entropy(m.decoder.output(h[sel]), labels[sel])
    return ce, guide(m, tok, targets, rows, P, aligns)


def save_small(m, path, step, args):
    """The decoder alone in fp16, no optimizer state (a few MB): what --resume reads."""
    sd = {k: v.half() for k, v in m.decoder.state_dict().items()}
    torch.save({"decoder": sd, "step": step, "args": vars(args)}, path)


def load_small(m, path):
    ck = torch.load(path, map_location="cpu")
    m.decoder.load_state_dict({k: v.float() for k, v in ck["decoder"].items()})
    return ck.get("step", 0)


def batches(lens, costs, budget, rng):
    """Clips of similar length together, as many as fit `budget` tokens (at least one)."""
    order = sorted(range(len(lens)), key=lambda i: (lens[i], costs[i]))
    groups, cur, worst = [], [], 0
    for i in order:
        w = max(worst, costs[i])
        if cur and w * (len(cur) + 1) > budget:
            groups.append(cur)
            cur, w = [], costs[i]
        cur.append(i)
        worst = w
    if cur:
        groups.append(cur)
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--split", default="train",
                    help="work/data/<split>.npy/.json; several as a,b:N (N: its first N clips)")
    ap.add_argument("--steps", type=int, default=2400)
    ap.add_argument("--minutes", type=float, default=0,
                    help="also stop (and schedule the rate) by wall-clock minutes")
    ap.add_argument("--batch", type=int, default=32, help="clips per step (--tokens 0)")
    ap.add_argument("--tokens", type=int, default=0,
                    help="batch by a budget of sequence tokens instead of a clip count")
    ap.add_argument("--views", type=int, default=2)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--decay-from", type=float, default=0.3)
    ap.add_argument("--tok-drop", type=float, default=0.3)
    ap.add_argument("--guide-weight", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (a step at 2 was slower than at 1 on the 2-core host)")
    ap.add_argument("--jobs", type=int, default=2, help="`tern-dev encode` processes at a time")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-train", type=int, default=0)
    ap.add_argument("--encoder-model", default="",
                    help="compute features with this model folder's encoder (the frozen one) "
                         "instead of exporting --init's")
    ap.add_argument("--resume", default="", help="a --save-small checkpoint: its decoder "
                    "replaces --init's (the encoder stays --init's) and the run goes on from "
                    "the step it was saved at (--steps counts the whole run)")
    ap.add_argument("--save-small", default="", help="also write the decoder in fp16 here, "
                    "every 250 steps and at the end (so a run cut short can be resumed)")
    ap.add_argument("--tern-dev",
                    default=os.path.join(common.HERE, "..", "build", "bin", "tern-dev"))
    a = ap.parse_args()
    if not os.access(a.tern_dev, os.X_OK):
        sys.exit(f"train_decoder.py: no tern-dev binary at {a.tern_dev} "
                 "(build it, or pass --tern-dev)")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)

    tok = common.build_tokenizer()
    m = common.make_model(tok)
    m.load_state_dict(torch.load(a.init, map_location="cpu")["model"])
    step0 = load_small(m, a.resume) if a.resume else 0   # steps the resumed decoder had
    if a.resume:
        print(f"resumed the decoder from {a.resume} (step {step0})")
    m.qs.on = True
    m.qs.fast = True      # one matmul for q/k/v and one for gate/up (model.QState.fast)
    for p in m.parameters():
        p.requires_grad_(False)
    for p in m.decoder.parameters():
        p.requires_grad_(True)
    t0 = time.time()
    meta, feats = [], [[] for _ in range(a.views)]
    for spec in a.split.split(","):
        name, _, first = spec.partition(":")
        audio, m_split = common.read_split(name)
        m_split = m_split[:int(first or a.max_train or len(m_split))]
        f_split = clip_features(a.init, audio, m_split, a.views, a.seed, a.tern_dev, a.jobs,
                                model_dir=a.encoder_model, split=name)
        meta += m_split
        for v in range(a.views):
            feats[v] += f_split[v]
    print(f"features: {len(meta)} clips x {a.views} views in {time.time() - t0:.0f} s",
          flush=True)
    targets = [target_of(tok, mt) for mt in meta]
    aligns = [align_of(tok, mt) for mt in meta]
    opts = [(bool(mt.get("json")), mt.get("context", "")) for mt in meta]
    lens = [mt["length"] for mt in meta]
    costs = [len(common.prompt_parts(tok, n, js, ctx)[3]) + n // common.HOP + len(t)
             for n, (js, ctx), t in zip(lens, opts, targets)]
    print(f"targets: longest {max(len(t) for t in targets)} tokens, longest sequence "
          f"{max(costs)} tokens", flush=True)

    params = list(m.decoder.parameters())
    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.98), weight_decay=0.01)
    if a.tokens:
        groups = batches(lens, costs, a.tokens, rng)
    else:
        order = sorted(range(len(meta)), key=lambda i: lens[i])   # similar lengths per batch
        groups = [order[k:k + a.batch] for k in range(0, len(order), a.batch)]
    print(f"{len(groups)} batches per epoch", flush=True)
    # A resumed run goes on with the schedule where the saved one was; its optimizer state is
    # fresh (warmed up again) and its batch order drawn anew, seeded by the step: the same
    # cut resumes to the same weights, not to those of an uncut run.
    step, ema, t1 = step0, None, time.time()
    if step0:
        rng = random.Random(a.seed * 1000003 + step0)

    def frac_done():
        f = step / a.steps
        if a.minutes:
            f = max(f, (time.time() - t1) / 60 / a.minutes)
        return f

    while frac_done() < 1:
        rng.shuffle(groups)
        for g in groups:
            frac = frac_done()
            if frac >= 1:
                break
            lr = a.lr * min(1.0, (step - step0 + 1) / 50) * train.lr_shape(frac, a.decay_from)
            for pg in opt.param_groups:
                pg["lr"] = lr
            views = [rng.randrange(a.views) for _ in g]
            ce, gl = losses(m, tok, [feats[v][i].float() for v, i in zip(views, g)],
                            [lens[i] for i in g], [targets[i] for i in g], a.tok_drop, rng,
                            [opts[i] for i in g], [aligns[i] for i in g])
            loss = ce + a.guide_weight * gl
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            step += 1
            v = [ce.item(), float(gl)]
            ema = v if ema is None else [0.95 * e + 0.05 * u for e, u in zip(ema, v)]
            if step % 50 == 0:
                print(f"[{time.time() - t1:.0f}s] step {step} lr {lr:.2e} ce {ema[0]:.3f} "
                      f"guide {ema[1]:.3f}", flush=True)
            if step % 500 == 0:
                torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": True}, a.out)
            if a.save_small and step % 250 == 0:
                save_small(m, a.save_small, step, a)
    torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": True}, a.out)
    if a.save_small:
        save_small(m, a.save_small, step, a)
    print(f"done: {step - step0} steps (to step {step}) in {(time.time() - t1) / 60:.1f} min "
          f"(+{(t1 - t0) / 60:.1f} min of features)", flush=True)


if __name__ == "__main__":
    main()
