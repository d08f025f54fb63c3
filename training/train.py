"""Trainer: float warm-up, then quantization-aware training, on a wall-clock or step budget.

usage: /usr/bin/python3 train.py --minutes 75 [--qat-from 0.45] [--threads 2] [--init CKPT]
       /usr/bin/python3 train.py --steps 2400 [--horizon 8450] ...
       (recipe.sh runs the stages behind the bundled model; README.md says why each)

Schedule is a fraction of the budget (elapsed time, or steps over --horizon): learning rate
warm-up then cosine decay (or hold-then-decay with --decay-from);
fake quantization (int8 encoder, ternary + int8-row decoder) switched on at --qat-from.
Loss: cross-entropy on the assistant turn, plus training-only aids whose heads are not
exported: token CTC on the features (--ctc-weight), character CTC on the trunk's stage 5
and on the features (--char-weight, the mean of the two), a log-mel regression on stage 5
(--mel-weight) and the decoder alignment guide (--guide-weight). The checkpoint (--out) is
written every 5 minutes and at the end, and once in float just before QAT starts.
"""
import argparse
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import common
import keep
import model


def batches(meta, max_audio_s, rng):
    """Length-sorted buckets: each batch holds clips of similar length, total audio capped."""
    order = sorted(range(len(meta)), key=lambda i: meta[i]["length"])
    out, cur = [], []
    for i in order:
        n = meta[i]["length"]
        if cur and (len(cur) + 1) * n > max_audio_s * common.SR:
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def make_audio(audio, meta, idx, rng, aug=True):
    xs = [common.clip(audio, meta[i]) for i in idx]
    n = max(len(x) for x in xs)
    n = max(n, common.HOP)
    batch = np.zeros((len(xs), n), dtype=np.float32)
    for b, x in enumerate(xs):
        batch[b, :len(x)] = x           # trailing silence pads the batch to one length
        if aug:
            batch[b] = common.augment(batch[b], rng)
        batch[b] = common.frontend(batch[b])
    return torch.from_numpy(batch), n


def ctc(logits, targets):
    """Mean CTC of [B, T, C] logits (blank = last class) against lists of target ids."""
    lp = logits.log_softmax(-1).transpose(0, 1)
    tgt = torch.cat([torch.tensor(t, dtype=torch.long) for t in targets])
    return F.ctc_loss(lp, tgt, torch.full((len(targets),), lp.shape[0], dtype=torch.long),
                      torch.tensor([len(t) for t in targets]), blank=lp.shape[-1] - 1,
                      zero_infinity=True)


def guide_prior(frame, centre, fr):
    """The alignment guide's Gaussian at `frame` around `centre` (broadcast) for a clip of
    `fr` frames: sigma 15% of the clip + 1 frame."""
    sig = 0.15 * fr + 1.0
    return torch.exp(-((frame - centre) ** 2) / (2 * sig * sig))


def guide_nll(mass):
    """-log of the attention mass under the prior (floored: a head looking elsewhere gives
    a large but finite loss)."""
    return -torch.log(mass + 1e-4)


def guide_loss(m, tok, n, lens, targets, labels):
    """Alignment guide (training aid): head 0 of every decoder layer should attend, from the
    position that predicts content token c of L, near frame (c + 0.5) / L of the clip's own
    frames (a Gaussian prior, sigma 15% of the clip + 1 frame; speech is roughly uniform in
    time). -log of the attention mass under the prior. Without it the 2-layer decoder takes
    far longer than our budget to discover where in the prompt the audio is."""
    speech0 = len(common.prompt_parts(tok, n)[0])          # first <|speech_pad|> slot
    head = len(common.target_ids(tok, "")) - 1            # <|im_start|> assistant \n
    # the position predicting targets[b][0]: where build_batch's labels start (same for all b)
    base = int((labels[0] != -100).nonzero()[0])
    total, count = 0.0, 0
    for L in m.decoder.layers:
        att = L.last_att[:, 0]                              # [B, S, S]
        for b, t in enumerate(targets):
            fr = max(1, lens[b] // common.HOP)
            lc = len(t) - head - 1                          # content tokens (no <|im_end|>)
            if lc <= 0:
                continue
            c = torch.arange(lc, dtype=torch.float32)
            centre = (c + 0.5) / lc * fr
            i = torch.arange(fr, dtype=torch.float32)
            prior = guide_prior(i[None], centre[:, None], fr)
            rows = att[b, base + head: base + head + lc, speech0: speech0 + fr]
            total = total + guide_nll((rows * prior).sum(-1)).sum()
            count += lc
    return total / max(1, count)


def step_loss(m, tok, audio_t, n, texts, tok_drop=0.0, rng=None, lens=None):
    """-> (cross-entropy of the assistant turn, token CTC, char CTC (mean of the stage-5 and
    the feature heads), mel regression, alignment guide). `lens`: each clip's own length."""
    feats, tapped = m.encoder(audio_t, tap=model.AUX_STAGE)
    targets = [common.target_ids(tok, t) for t in texts]
    x, pos, mask, labels = common.build_batch(m, tok, feats, n, targets, tok_drop, rng)
    logits = m.decoder(x, pos, mask)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                         ignore_index=-100)
    tok_ctc = ctc(m.ctc(feats), [tok.encode(t) for t in texts])
    tapped = tapped.transpose(1, 2)                                   # [B, T5, C5]
    chars = [common.aux_chars(t) for t in texts]
    char_ctc = ctc(m.aux_char(tapped), chars)
    B, Fr, _ = feats.shape
    sub = m.aux_feat_char(feats).reshape(B, Fr * model.FEAT_SUB, len(model.AUX_CHARS) + 1)
    char_ctc = 0.5 * (char_ctc + ctc(sub, chars))
    mel = F.mse_loss(m.aux_mel(tapped), common.aux_mel(audio_t, tapped.shape[1]))
    guide = guide_loss(m, tok, n, lens or [n] * len(texts), targets, labels)
    return ce, tok_ctc, char_ctc, mel, guide


def lr_shape(frac, decay_from):
    """Learning-rate multiplier at `frac` of the budget: constant until `decay_from`, then a
    cosine down to 0.05 at the end. The staged history of the bundle (README) showed runs
    whose cosine over the whole budget had decayed while the losses still fell steeply;
    holding the rate and decaying only at the end is the warmup-stable-decay schedule."""
    t = 0.0 if frac <= decay_from else (min(frac, 1.0) - decay_from) / (1.0 - decay_from)
    return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * t))


def save_small(m, path, step):
    """The model in fp16 with its step, no optimizer state (keep.py's format plus the step)."""
    torch.save({"model": keep.fp16(m.state_dict()), "cfg": m.cfg, "qat": m.qs.on, "step": step},
               path + ".tmp")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=75)
    ap.add_argument("--steps", type=int, default=0,
                    help="budget in optimizer steps instead of minutes: the same model on a "
                         "busy or a paused machine (recipe.sh uses this)")
    ap.add_argument("--horizon", type=int, default=0,
                    help="with --steps: the schedule's length in steps (default --steps); a "
                         "longer horizon stops the run part-way through its schedule")
    ap.add_argument("--qat-from", type=float, default=0.45)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-seconds", type=float, default=24)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--max-train", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(common.WORK, "ckpt.pt"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--split", default="train")
    ap.add_argument("--init", default="", help="start from this checkpoint's weights")
    ap.add_argument("--ctc-weight", type=float, default=0.3)
    ap.add_argument("--char-weight", type=float, default=0.5,
                    help="weight of the character CTC (mean of the stage-5 and feature heads; training aid)")
    ap.add_argument("--mel-weight", type=float, default=1.0,
                    help="weight of the stage-5 log-mel regression (training aid)")
    ap.add_argument("--reinit", default="",
                    help="comma-separated tensor-name prefixes NOT taken from --init")
    ap.add_argument("--guide-weight", type=float, default=0.5,
                    help="weight of the decoder alignment guide (training aid)")
    ap.add_argument("--no-lsuv", action="store_true",
                    help="skip the data-dependent init of the trunk's downsampling convs")
    ap.add_argument("--tok-drop", type=float, default=0.0,
                    help="replace this fraction of teacher-forced text inputs by random tokens")
    ap.add_argument("--fresh-first", type=int, default=0,
                    help="for this many steps train only the tensors not taken from --init: "
                         "heads a checkpoint lacks (init_from_gguf.py writes no training aids) "
                         "start at random, and their first gradients would disturb the "
                         "trained trunk")
    ap.add_argument("--decay-from", type=float, default=0.0,
                    help="hold the learning rate until this fraction of the budget, then a "
                         "cosine decay to 5%% over the rest (0: cosine over the whole budget)")
    ap.add_argument("--save-small", default="",
                    help="also keep the model in fp16 here, with its step, every 250 steps "
                         "and at the end: what --resume reads (a stage longer than the "
                         "machine's time goes on in the next one)")
    ap.add_argument("--resume", default="",
                    help="a --save-small checkpoint: its weights replace --init's and the "
                         "schedule goes on at its step")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)

    tok = common.build_tokenizer()
    m = common.make_model(tok)
    took = {}
    if a.init:
        # take every tensor whose name and shape match (e.g. the decoder of a run with
        # another encoder geometry); the rest keeps its fresh initialization
        ck = torch.load(a.init, map_location="cpu")
        src, untrained = ck["model"], set(ck.get("fresh", ()))
        own = m.state_dict()
        skip = tuple(p for p in a.reinit.split(",") if p)
        took = {k: v for k, v in src.items() if k in own and own[k].shape == v.shape
                and not k.startswith(skip) and k not in untrained}
        own.update(took)
        m.load_state_dict(own)
        print(f"initialized {len(took)} of {len(own)} tensors from {a.init}", flush=True)
    step0 = 0
    if a.resume:
        ck = torch.load(a.resume, map_location="cpu")
        m.load_state_dict({k: v.float() for k, v in ck["model"].items()})
        m.qs.on, step0 = ck["qat"], ck["step"]
        print(f"resumed from {a.resume} at step {step0}", flush=True)
    audio, meta = common.read_split(a.split)
    if a.max_train:
        meta = meta[:a.max_train]
    fresh = [i for i in range(len(model.STRIDES))
             if f"encoder.trunk.down.{i}.weight" not in took]
    if not a.no_lsuv and fresh:
        x, _ = make_audio(audio, meta, list(range(min(4, len(meta)))), random.Random(0),
                          aug=False)
        model.lsuv_init(m.encoder.trunk, x, fresh)
        print(f"trunk downsampling convs {fresh} scaled to unit output (LSUV)", flush=True)
    n_par = sum(p.numel() for p in m.parameters())
    print(f"vocab {tok.n_vocab}, params {n_par}, train clips {len(meta)}", flush=True)

    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, betas=(0.9, 0.98), weight_decay=0.01)
    budget = a.minutes * 60
    horizon = a.horizon or a.steps
    if a.steps and horizon < a.steps:
        sys.exit("--horizon must be at least --steps")
    t0 = time.time()
    last_save = t0
    # A resumed run goes on with the schedule where the saved one was; its optimizer state is
    # fresh (warmed up again) and its batch order drawn anew, seeded by the step: the same cut
    # resumes to the same weights, not to those of an uncut run.
    step, epoch, seen = step0, 0, 0
    if step0:
        rng = random.Random(a.seed * 1000003 + step0)
    ema = None
    qat_saved = False
    done = False
    while not done:
        for idx in batches(meta, a.batch_seconds, rng):
            frac = step / horizon if a.steps else (time.time() - t0) / budget
            if (step >= a.steps) if a.steps else frac >= 1:
                done = True
                break
            if not m.qs.on and frac >= a.qat_from:
                m.qs.on = True
                torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": False},
                           a.out.replace(".pt", "_float.pt"))
                print(f"[{time.time() - t0:.0f}s] step {step}: quantization-aware training on",
                      flush=True)
            for k, p in m.named_parameters():  # --fresh-first: the inherited ones wait
                p.requires_grad_(step >= a.fresh_first or k not in took)
            warm = min(1.0, (step - step0 + 1) / 50)
            lr = a.lr * warm * lr_shape(frac, a.decay_from)
            for g in opt.param_groups:
                g["lr"] = lr
            x, n = make_audio(audio, meta, idx, rng)
            ce, ctc, cctc, mel, guide = step_loss(m, tok, x, n, [meta[i]["text"] for i in idx],
                                                  a.tok_drop, rng,
                                                  [meta[i]["length"] for i in idx])
            loss = ce + a.ctc_weight * ctc + a.char_weight * cctc + a.mel_weight * mel + \
                a.guide_weight * guide
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            step += 1
            seen += len(idx)
            v = [ce.item(), ctc.item(), cctc.item(), mel.item(), float(guide)]
            ema = v if ema is None else [0.95 * e + 0.05 * x for e, x in zip(ema, v)]
            if step % 10 == 0:
                print(f"[{time.time() - t0:.0f}s] step {step} ep {epoch} seen {seen} "
                      f"B {len(idx)} n {n} lr {lr:.2e} q {int(m.qs.on)} ce {ema[0]:.3f} "
                      f"ctc {ema[1]:.3f} char {ema[2]:.3f} mel {ema[3]:.3f} "
                      f"guide {ema[4]:.3f}", flush=True)
            if a.save_small and step % 250 == 0:
                save_small(m, a.save_small, step)
            if time.time() - last_save > 300:
                torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": m.qs.on}, a.out)
                last_save = time.time()
        epoch += 1
    torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": m.qs.on}, a.out)
    if a.save_small:
        save_small(m, a.save_small, step)
    print(f"done: {step} steps, {seen} clips, {epoch} epochs, "
          f"{(time.time() - t0) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
