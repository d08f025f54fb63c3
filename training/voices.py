"""Telling voices apart: the voice projection a model folder declares (tern.voices.*).

usage: /usr/bin/python3 voices.py --split mix_train --out work/voices.npz

The bundled model gives every segment of a dialogue "Speaker 0": it never learnt to hear
voices apart. The engine then labels segments itself (src/engine/speakers.h): it describes
each segment's voice by the statistics of its cepstra and pitch (src/audio/voice_features.h; the
definition below is the same, step for step), projects them onto the directions that
separate the training voices best (linear discriminant analysis: between-voice over
within-voice scatter, so a voice's own spread of pitch and speed counts little), and joins
segments whose projections point the same way (average linkage on cosine distance) until
the closest two groups are further apart than the link distance.

This script fits the projection on the split's single utterances (each clip one known
voice) and picks the link distance that attributes the words of the split's multi-sentence
clips and dialogues best, cut at their reference segments. export.py --voices writes the
result into the LM file.
"""
import argparse
import os

import numpy as np

import common

SR = common.SR
WIN, HOP, NFFT = 600, 240, 1024         # 25 ms Hamming window, 10 ms hop, zero-padded FFT
N_MEL, F_LO, F_HI = 40, 60.0, 8000.0    # HTK-mel triangles
N_CEP = 19                              # cepstra 1..19 (c0, the level, is left out)
GATE = np.log(1000.0)                   # frames within 30 dB of the loud ones
MIN_FRAMES = 10
LAG_MIN, LAG_MAX = 60, 320              # pitch periods of 75-400 Hz at 24 kHz
VOICED = 0.5                            # normalized autocorrelation peak of a voiced frame
MIN_VOICED = 3                          # fewer voiced frames: pitch of 150 Hz, spread 0
DIMS = 8                                # discriminant directions kept
FEATURES = 2 * N_CEP + 3


def _mel_filters():
    mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    hz = lambda m: 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    pts = hz(np.linspace(mel(F_LO), mel(F_HI), N_MEL + 2))
    f = np.arange(NFFT // 2 + 1) * SR / NFFT
    fb = np.zeros((N_MEL, NFFT // 2 + 1))
    for i in range(N_MEL):
        a, b, c = pts[i], pts[i + 1], pts[i + 2]
        fb[i] = np.clip(np.minimum((f - a) / (b - a), (c - f) / (c - b)), 0.0, None)
    return fb


FB = _mel_filters()
DCT = np.cos(np.pi / N_MEL * (np.arange(N_MEL) + 0.5)[None, :] * np.arange(1, N_CEP + 1)[:, None])
WINDOW = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(WIN) / (WIN - 1))
# The window's own autocorrelation, which tapers every frame's (Boersma 1993): dividing by
# it makes a periodic frame's peak at its period near 1 whatever the lag.
WINDOW_AC = np.correlate(WINDOW, WINDOW, "full")[WIN - 1:WIN + LAG_MAX]
WINDOW_AC = WINDOW_AC / WINDOW_AC[0]


def features(x):
    """Samples (float, 24 kHz, [-1, 1)) -> the FEATURES statistics, or None when fewer than
    MIN_FRAMES frames fit."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < WIN:
        return None
    fr = np.lib.stride_tricks.sliding_window_view(x, WIN)[::HOP] * WINDOW
    if len(fr) < MIN_FRAMES:
        return None
    p = np.abs(np.fft.rfft(fr, NFFT, axis=1)) ** 2
    lm = np.log(p @ FB.T + 1e-9)
    top = lm.max(1)
    keep = top > np.percentile(top, 95) - GATE
    c = lm[keep] @ DCT.T
    # Pitch: each kept frame's autocorrelation (the inverse transform of its power spectrum;
    # the zero padding keeps lags up to NFFT - WIN free of wrap-around) over the window's.
    r = np.fft.irfft(p[keep], NFFT, axis=1)[:, :LAG_MAX + 1]
    r0 = r[:, :1]
    rn = np.where(r0 > 0, r / np.where(r0 > 0, r0, 1.0), 0.0) / WINDOW_AC
    lag = LAG_MIN + rn[:, LAG_MIN:].argmax(1)
    voiced = rn[np.arange(len(rn)), lag] > VOICED
    log_f0 = np.log(SR / lag[voiced])
    if len(log_f0) < MIN_VOICED:
        log_f0 = np.full(1, np.log(150.0))
    pitch = [np.median(log_f0), log_f0.std(), voiced.mean()]
    return np.concatenate([c.mean(0), c.std(0), pitch])


def segment_features(x, t0, t1):
    a, b = max(0, int(round(t0 * SR))), min(len(x), int(round(t1 * SR)))
    return features(x[a:b]) if b > a else None


def embed(fit, f):
    return (f - fit["mean"]) @ fit["projection"]


def cluster(E, link):
    """Average linkage on cosine distance -> labels numbered in order of first appearance."""
    n = len(E)
    if n == 0:
        return []
    U = E / (np.linalg.norm(E, axis=1, keepdims=True) + 1e-12)
    D = 1.0 - U @ U.T
    groups = [[i] for i in range(n)]
    while len(groups) > 1:
        best = None
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                v = D[np.ix_(groups[i], groups[j])].mean()
                if best is None or v < best[0]:
                    best = (v, i, j)
        if best[0] > link:
            break
        _, i, j = best
        groups[i] += groups[j]
        del groups[j]
    lab = [0] * n
    for k, g in enumerate(sorted(groups, key=min)):
        for i in g:
            lab[i] = k
    return lab


def fit_projection(audio, meta):
    X, Y, names = [], [], {}
    for m in meta:
        if m["kind"] != "single":
            continue
        f = features(common.clip(audio, m))
        if f is None:
            continue
        X.append(f)
        Y.append(names.setdefault(m["voice"], len(names)))
    X, Y = np.array(X), np.array(Y)
    mean = X.mean(0)
    Xc = X - mean
    Sw = np.zeros((FEATURES, FEATURES))
    Sb = np.zeros_like(Sw)
    for c in range(len(names)):
        Z = Xc[Y == c]
        mc = Z.mean(0)
        Sw += (Z - mc).T @ (Z - mc)
        Sb += len(Z) * np.outer(mc, mc)
    Sw /= len(X)
    Sb /= len(X)
    # Generalized symmetric eigenproblem Sb v = w Sw v through Sw's Cholesky factor.
    L = np.linalg.cholesky(Sw + np.eye(FEATURES) * 1e-6 * np.trace(Sw) / FEATURES)
    Li = np.linalg.inv(L)
    w, U = np.linalg.eigh(Li @ Sb @ Li.T)
    V = (Li.T @ U)[:, ::-1][:, :DIMS]
    print(f"projection: {len(X)} utterances of {len(names)} voices; discriminant ratios "
          f"{np.round(w[::-1][:DIMS], 2).tolist()}")
    return mean, V


def attribution(segs_ref, labels):
    """(words right, words) of reference segments labelled `labels`, under the best
    one-to-one renaming (eval_mix.py's measure, reference segments as hypotheses)."""
    import eval_mix
    pairs = [(s[2], h) for s, h in zip(segs_ref, labels) for _ in s[3].split()]
    return eval_mix.best_renaming(pairs), len(pairs)


def pick_link(audio, meta, fit, n=600):
    clips = [m for m in meta if m["kind"] in ("multi", "dialog")][:n]
    embs = []
    for m in clips:
        x = common.clip(audio, m)
        F = [segment_features(x, s[0], s[1]) for s in m["segs"]]
        embs.append([None if f is None else embed(fit, f) for f in F])
    best = None
    for link in np.arange(0.05, 0.61, 0.05):
        right = total = 0
        for m, E in zip(clips, embs):
            ok = [i for i, e in enumerate(E) if e is not None]
            lab = [0] * len(E)
            for i, l in zip(ok, cluster(np.array([E[i] for i in ok]), link) if ok else []):
                lab[i] = l
            r, t = attribution(m["segs"], lab)
            right += r
            total += t
        print(f"link distance {link:.2f}: attribution {right / total:.4f} on {len(clips)} "
              f"training clips' reference segments")
        if best is None or right / total > best[0] + 1e-9:
            best = (right / total, float(link))
    return best[1]


def kvs(path):
    """The tern.voices.* keys of a fitted .npz, for export.py."""
    import gguf_io as G
    z = np.load(path)
    return [
        ("tern.voices.mean", G.V_ARR, (G.V_F32, [float(v) for v in z["mean"]])),
        ("tern.voices.projection", G.V_ARR,
         (G.V_F32, [float(v) for v in z["projection"].reshape(-1)])),
        ("tern.voices.link_distance", G.V_F32, float(z["link"])),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="mix_train")
    ap.add_argument("--out", default=os.path.join(common.WORK, "voices.npz"))
    a = ap.parse_args()
    audio, meta = common.read_split(a.split)
    mean, V = fit_projection(audio, meta)
    fit = {"mean": mean, "projection": V}
    link = pick_link(audio, meta, fit)
    np.savez(a.out, mean=mean.astype(np.float32), projection=V.astype(np.float32), link=link)
    print(f"link distance {link:.2f}; wrote {a.out}")


if __name__ == "__main__":
    main()
