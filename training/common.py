"""Shared pieces: model config, tokenizer construction, front end, prompt layout."""
import math
import os
import random

import numpy as np
import torch

import bpe
import textgen

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work")
SR = 24000
HOP = 3200

SYSTEM = "You are a helpful assistant that transcribes audio input into text output in JSON format."

CFG = {
    # Encoder stage widths and ConvNeXt depths (FFN 4C). The early stages run at 24/12/6 kHz
    # and dominate training time, so they are plain strided convs (depth 0, a learned linear
    # filter bank); the capacity sits in the cheap low-rate stages.
    "chans": [8, 16, 32, 64, 128, 192, 256],
    "depths": [0, 0, 0, 1, 1, 2, 2],
    "d_ac": 32, "d_se": 64,                  # head widths (published: 64 / 128)
    "hidden": 256, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 512,
    "theta": 10000.0, "n_merges": 700,
}


def build_tokenizer():
    """Deterministic BPE over the training text (+ the prompt strings)."""
    texts = textgen.generate(20000, seed=1234, want_test=False)
    fixed = ["system\n" + SYSTEM, "\n", "user\n", "assistant", "assistant\n",
             "\nThis is a 3.25 seconds audio, please transcribe it."]
    return bpe.train(texts + fixed * 200, CFG["n_merges"])


def frontend(x):
    """float32 mono 24 kHz -> normalized (RMS to -25 dBFS, eps 1e-6; then / max|x| if > 1)."""
    x = np.asarray(x, dtype=np.float32)
    rms = np.float32(math.sqrt(float(np.sum(x.astype(np.float64) ** 2)) / max(1, len(x))))
    if rms >= 1e-6:
        x = x * np.float32(10 ** (-25 / 20) / (float(rms) + 1e-6))
    m = float(np.abs(x).max()) if len(x) else 0.0
    if m > 1.0:
        x = x / np.float32(m)
    return x.astype(np.float32)


def duration_str(n):
    return "%.2f" % float(np.float32(n) / np.float32(SR))


JSON_KEYS = " with these keys: Start, End, Speaker, Content"


def suffix_text(n, json_format=False, context=""):
    """The user turn's text after <|speech_end|> (spec 5.3; src/engine/prompt.cc)."""
    s = "\nThis is a " + duration_str(n) + " seconds audio, "
    if not context:
        return s + ("please transcribe it" + JSON_KEYS if json_format else "please transcribe it.")
    return s + "with extra info: " + context + "\n\nPlease transcribe it" + \
        (JSON_KEYS if json_format else ".")


def prompt_parts(tok, n, json_format=False, context=""):
    """Token layout of spec 5 for a clip of n samples (text or JSON prompt, with or without
    a context line). Returns (prefix ids, N pads, F frames fed, suffix ids, n_prompt)."""
    S = tok.special
    pre = [S("<|im_start|>")] + tok.encode("system\n" + SYSTEM) + [S("<|im_end|>")] + \
        tok.encode("\n") + [S("<|im_start|>")] + tok.encode("user\n") + [S("<|speech_start|>")]
    N = max(1, -(-n // HOP))
    Fr = max(1, n // HOP)
    suf = [S("<|speech_end|>")] + tok.encode(suffix_text(n, json_format, context)) + \
        [S("<|im_end|>")] + tok.encode("\n")
    return pre, N, Fr, suf, len(pre) + N + len(suf)


def target_ids(tok, text):
    S = tok.special
    return [S("<|im_start|>")] + tok.encode("assistant") + tok.encode("\n") + tok.encode(text) + \
        [S("<|im_end|>")]


def read_split(split):
    import json
    audio = np.load(os.path.join(WORK, "data", f"{split}.npy"), mmap_mode="r")
    with open(os.path.join(WORK, "data", f"{split}.json")) as f:
        meta = json.load(f)
    return audio, meta


def clip(audio, m):
    return np.asarray(audio[m["start"]:m["start"] + m["length"]], dtype=np.float32) / 32768.0


def augment(x, rng):
    """Level change and additive noise (white or low-passed), seeded."""
    x = x * np.float32(10 ** (rng.uniform(-12, 6) / 20))
    if rng.random() < 0.6:
        rms = float(np.sqrt(np.mean(x ** 2)) + 1e-9)
        snr = rng.uniform(8, 40)
        nrng = np.random.default_rng(rng.getrandbits(32))
        noise = nrng.standard_normal(len(x)).astype(np.float32)
        if rng.random() < 0.5:
            noise = np.cumsum(noise) * 0.05
            noise -= np.convolve(noise, np.ones(64) / 64, mode="same")
        noise *= np.float32(rms / (float(np.sqrt(np.mean(noise ** 2))) + 1e-9) / 10 ** (snr / 20))
        x = x + noise
    return x.astype(np.float32)


def make_model(tok):
    import model
    cfg = dict(CFG)
    cfg["vocab"] = tok.n_vocab
    return model.ASR(cfg)


def encode_features(m, audio_batch):
    """[B, T] float -> [B, F, hidden]."""
    return m.encoder(audio_batch)


def build_batch(m, tok, feats, n, targets, tok_drop=0.0, rng=None):
    """Embeddings, positions, mask and labels for a batch that shares clip length n.
    feats [B, F, H]; targets: list of target id lists. Returns (x, pos, mask, labels)."""
    pre, N, Fr, suf, n_prompt = prompt_parts(tok, n)
    B = feats.shape[0]
    E = m.decoder.embed
    Lt = max(len(t) for t in targets)
    S = len(pre) + Fr + len(suf) + Lt - 1
    ids_pre = torch.tensor(pre)
    ids_suf = torch.tensor(suf)
    xs, labels = [], torch.full((B, S), -100, dtype=torch.long)
    tgt_in = torch.zeros((B, Lt - 1), dtype=torch.long)
    for b, t in enumerate(targets):
        inp = list(t[:-1])
        for k in range(3, len(inp)):            # keep the <|im_start|>assistant\n header
            if tok_drop > 0 and rng.random() < tok_drop:
                inp[k] = rng.randrange(256, tok.n_vocab - 6)
        tgt_in[b, :len(t) - 1] = torch.tensor(inp)
        base = len(pre) + Fr + len(suf) - 1
        labels[b, base:base + len(t)] = torch.tensor(t)
    x = torch.cat([E(ids_pre)[None].expand(B, -1, -1), feats[:, :Fr],
                   E(ids_suf)[None].expand(B, -1, -1), E(tgt_in)], dim=1)
    pos = torch.cat([torch.arange(len(pre) + Fr + len(suf)),
                     n_prompt + torch.arange(Lt - 1)])[None].expand(B, -1)
    valid = torch.ones((B, S), dtype=torch.bool)
    for b, t in enumerate(targets):
        valid[b, len(pre) + Fr + len(suf) + len(t) - 1:] = False
    causal = torch.tril(torch.ones((S, S), dtype=torch.bool))
    mask = causal[None] & valid[:, None, :]
    mask = mask | torch.eye(S, dtype=torch.bool)[None]
    return x, pos, mask, labels


# ---------------------------------------------------------------- auxiliary training targets

def aux_chars(text):
    """Character ids for the character CTC heads: lowercase letters, space, apostrophe."""
    import model
    return [model.AUX_CHARS.index(c) for c in text.lower() if c in model.AUX_CHARS]


_MEL = {}


def aux_mel(audio, frames, hop=400, n_fft=1024):
    """Causal log-mel targets [B, frames, 80]: frame t is the 1024-sample window ending at
    sample hop*(t+1), i.e. what the stage-5 frame t has heard. Scaled to about unit range."""
    import torch.nn.functional as F
    import model
    if "fb" not in _MEL:
        n_mels = model.AUX_MELS
        f = torch.linspace(0, SR / 2, n_fft // 2 + 1)
        to_mel = lambda h: 2595.0 * math.log10(1 + h / 700.0)
        pts = [700.0 * (10 ** (m / 2595.0) - 1) for m in
               np.linspace(to_mel(60.0), to_mel(8000.0), n_mels + 2)]
        fb = torch.zeros(n_mels, len(f))
        for i in range(n_mels):
            l, c, r = pts[i], pts[i + 1], pts[i + 2]
            fb[i] = torch.clamp(torch.minimum((f - l) / (c - l), (r - f) / (r - c)), min=0)
        _MEL["fb"], _MEL["win"] = fb, torch.hann_window(n_fft)
    x = F.pad(audio, (n_fft - hop, 0))
    st = torch.stft(x, n_fft, hop, window=_MEL["win"], center=False, return_complex=True)
    p = st[:, :, :frames].abs() ** 2
    return ((torch.log(_MEL["fb"] @ p + 1e-6) + 7.0) / 4.0).transpose(1, 2)
