"""Trainer: float warm-up, then quantization-aware training, on a wall-clock budget.

usage: nice -n 5 /usr/bin/python3 train.py --minutes 75 [--qat-from 0.45] [--threads 2]

Schedule is a fraction of the time budget: learning rate warm-up then cosine decay;
fake quantization (int8 encoder, ternary + int8-row decoder) switched on at --qat-from.
Loss: cross-entropy on the assistant turn + 0.3 x CTC of the speech features (a linear
head used only for training, not exported). Checkpoints go to work/ckpt.pt (and
work/ckpt_qat.pt once QAT runs) every few minutes and at the end.
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


def step_loss(m, tok, audio_t, n, texts, tok_drop=0.0, rng=None):
    feats = m.encoder(audio_t)
    targets = [common.target_ids(tok, t) for t in texts]
    x, pos, mask, labels = common.build_batch(m, tok, feats, n, targets, tok_drop, rng)
    logits = m.decoder(x, pos, mask)
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                         ignore_index=-100)
    # CTC on the frames (blank = last class)
    lp = m.ctc(feats).log_softmax(-1).transpose(0, 1)
    tt = [tok.encode(t) for t in texts]
    tgt = torch.cat([torch.tensor(t) for t in tt])
    ctc = F.ctc_loss(lp, tgt, torch.full((len(tt),), lp.shape[0], dtype=torch.long),
                     torch.tensor([len(t) for t in tt]), blank=lp.shape[-1] - 1,
                     zero_infinity=True)
    return ce, ctc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=75)
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
    ap.add_argument("--tok-drop", type=float, default=0.0,
                    help="replace this fraction of teacher-forced text inputs by random tokens")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)

    tok = common.build_tokenizer()
    m = common.make_model(tok)
    if a.init:
        m.load_state_dict(torch.load(a.init, map_location="cpu")["model"])
        print(f"initialized from {a.init}", flush=True)
    audio, meta = common.read_split(a.split)
    if a.max_train:
        meta = meta[:a.max_train]
    n_par = sum(p.numel() for p in m.parameters())
    print(f"vocab {tok.n_vocab}, params {n_par}, train clips {len(meta)}", flush=True)

    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, betas=(0.9, 0.98), weight_decay=0.01)
    budget = a.minutes * 60
    t0 = time.time()
    last_save = t0
    step, epoch, seen = 0, 0, 0
    ema = None
    qat_saved = False
    done = False
    while not done:
        for idx in batches(meta, a.batch_seconds, rng):
            frac = (time.time() - t0) / budget
            if frac >= 1:
                done = True
                break
            if not m.qs.on and frac >= a.qat_from:
                m.qs.on = True
                torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": False},
                           a.out.replace(".pt", "_float.pt"))
                print(f"[{time.time() - t0:.0f}s] step {step}: quantization-aware training on",
                      flush=True)
            warm = min(1.0, (step + 1) / 50)
            lr = a.lr * warm * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(frac, 1))))
            for g in opt.param_groups:
                g["lr"] = lr
            x, n = make_audio(audio, meta, idx, rng)
            ce, ctc = step_loss(m, tok, x, n, [meta[i]["text"] for i in idx], a.tok_drop, rng)
            loss = ce + a.ctc_weight * ctc
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            step += 1
            seen += len(idx)
            ema = (ce.item(), ctc.item()) if ema is None else \
                (0.95 * ema[0] + 0.05 * ce.item(), 0.95 * ema[1] + 0.05 * ctc.item())
            if step % 10 == 0:
                print(f"[{time.time() - t0:.0f}s] step {step} ep {epoch} seen {seen} "
                      f"B {len(idx)} n {n} lr {lr:.2e} q {int(m.qs.on)} ce {ema[0]:.3f} "
                      f"ctc {ema[1]:.3f}", flush=True)
            if time.time() - last_save > 300:
                torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": m.qs.on}, a.out)
                last_save = time.time()
        epoch += 1
    torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": m.qs.on}, a.out)
    print(f"done: {step} steps, {seen} clips, {epoch} epochs, "
          f"{(time.time() - t0) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
