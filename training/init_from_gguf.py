"""A float checkpoint from a model folder's two GGUFs (the bundled model's float checkpoint
is not in the repository): the starting point of train_decoder.py --init.

usage: /usr/bin/python3 init_from_gguf.py [--model ../models/tiny-en] --out work/init.pt

Encoder I8_S tensors dequantize to q * scale, which re-quantize to the same codes and scale
(max |w| = 127 * scale). A ternary I2_S tensor dequantizes to {-1, 0, +1} * scale, but the
absmean quantizer (model.ternary) applied to those values would pick a new scale (mean |w|
= scale * share of non-zeros); so the latents are set to +-a * scale for the non-zero codes
and +-c * scale for the zeros with a share-weighted mean of exactly 1 (c = 0.3 and a solved
from the share, a < 1.5): their codes and,
up to float rounding of the mean, their scale are the file's. F16 / F32 tensors load as
they are. The training-only heads (CTC, auxiliary) are not in the files and stay at
their initialization; train_decoder.py does not use them and export.py does not write them.
"""
import argparse
import os

import numpy as np
import torch

import common
import export
import gguf_io as G


def ternary_latent(codes_vals, scale, seed):
    """codes_vals: dequantized ternary values; returns float latents with the same codes
    and (to float rounding) the same absmean scale."""
    q = np.sign(codes_vals).astype(np.float32)
    nz = float(np.mean(q != 0))
    a = min(1.49, (1.0 - 0.3 * (1.0 - nz)) / max(nz, 1e-6))     # zeros at 0.3 if it can
    c = (1.0 - nz * a) / max(1e-6, 1.0 - nz)
    if c >= 0.5:                    # too few non-zeros to keep the scale exactly
        print(f"ternary latent: share of non-zeros {nz:.3f}: scale not kept exactly")
        c = 0.49
    rs = np.random.default_rng(seed)
    zsign = np.where(rs.random(q.shape) < 0.5, -1.0, 1.0).astype(np.float32)
    lat = np.where(q != 0, q * a, zsign * c) * np.float32(scale)
    return lat.astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(common.HERE, "..", "models", "tiny-en"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    tok = common.build_tokenizer()
    m = common.make_model(tok)
    vae = G.Reader(os.path.join(a.model, export.VAE_NAME))
    lm = G.Reader(os.path.join(a.model, export.LM_NAME))
    assert lm.kv["tokenizer.ggml.tokens"] == tok.tokens, "tokenizer differs from the model's"
    with torch.no_grad():
        # encoder: invert export.vae_tensors
        vt = dict((n, None) for n in vae.tensors)
        enc = m.encoder

        def conv(mod, name):
            w = vae.array(name + ".weight")
            k = mod.weight.shape[2]
            w = w[:, :, w.shape[2] - k:] if w.ndim == 3 else w[:, :, None]
            mod.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            mod.bias.copy_(torch.from_numpy(vae.array(name + ".bias").reshape(-1).copy()))
            vt.pop(name + ".weight"), vt.pop(name + ".bias")

        def vec(p, name):
            p.copy_(torch.from_numpy(vae.array(name).reshape(-1).copy()))
            vt.pop(name)

        for P, head in (("acoustic", enc.acoustic), ("semantic", enc.semantic)):
            for i, (down, stage) in enumerate(zip(enc.trunk.down, enc.trunk.stages)):
                conv(down, f"{P}.downsample_layers.{i}.0.conv.conv")   # shared trunk: both
                for b, blk in enumerate(stage):
                    s = f"{P}.stages.{i}.{b}"
                    vec(blk.norm, s + ".norm.weight")
                    conv(blk.mixer, s + ".mixer.conv.conv.conv")
                    vec(blk.gamma, s + ".gamma")
                    vec(blk.ffn_norm, s + ".ffn_norm.weight")
                    conv(blk.linear1, s + ".ffn.linear1")
                    conv(blk.linear2, s + ".ffn.linear2")
                    vec(blk.ffn_gamma, s + ".ffn_gamma")
            conv(head.head, f"{P}.head.conv.conv")
            conv(head.fc1, f"{P}_connector.fc1")
            vec(head.cnorm, f"{P}_connector.norm.weight")
            conv(head.fc2, f"{P}_connector.fc2")
        assert not vt, f"unused encoder tensors: {list(vt)[:4]}"
        d = m.decoder
        d.embed.weight.copy_(torch.from_numpy(lm.array("token_embd.weight")))
        d.output.weight.copy_(torch.from_numpy(lm.array("output.weight")))
        d.norm.copy_(torch.from_numpy(lm.array("output_norm.weight")))
        k = 0
        for l, L in enumerate(d.layers):
            p = f"blk.{l}."
            L.attn_norm.copy_(torch.from_numpy(lm.array(p + "attn_norm.weight")))
            L.ffn_norm.copy_(torch.from_numpy(lm.array(p + "ffn_norm.weight")))
            for nm, mod in (("attn_q", L.q), ("attn_k", L.k), ("attn_v", L.v),
                            ("attn_output", L.o), ("ffn_gate", L.gate), ("ffn_up", L.up),
                            ("ffn_down", L.down)):
                lat = ternary_latent(lm.array(p + nm + ".weight"), lm.scale(p + nm + ".weight"), k)
                k += 1
                mod.weight.copy_(torch.from_numpy(lat))
            for nm, mod in (("attn_q", L.q), ("attn_k", L.k), ("attn_v", L.v)):
                mod.bias.copy_(torch.from_numpy(lm.array(p + nm + ".bias").reshape(-1)))
    # the aid heads keep their random initialization: named so train.py treats them as new
    fresh = [k for k in m.state_dict() if k.startswith(("ctc.", "aux_"))]
    torch.save({"model": m.state_dict(), "cfg": m.cfg, "qat": True, "fresh": fresh}, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
