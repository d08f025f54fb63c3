"""Export a trained checkpoint as the two GGUFs of the published VibeASR package.

usage: /usr/bin/python3 export.py [--ckpt work/ckpt.pt] [--out ../models/tiny-en]

  vibeasr-vae-encoder-i8_s.gguf   arch "vibeasr-vae": I8_S weights (type 37), F32 rest
  vibeasr-lm-i2_s-embed-q6_k.gguf arch "qwen2": I2_S projections (type 36), F16
                                  token_embd.weight and output.weight (the name keeps the
                                  published file name; the embedding is F16, not Q6_K)
Names, shapes (ggml order), kernel front-padding and KV keys follow spec 1.3/1.4.
Every tensor is re-read with gguf_io.Reader and compared with the quantized weights the
PyTorch forward uses (validate()).
"""
import argparse
import os
import shutil

import numpy as np
import torch

import common
import voices
import gguf_io as G
import model as M


def load(ckpt):
    tok = common.build_tokenizer()
    ck = torch.load(ckpt, map_location="cpu")
    m = common.make_model(tok)
    m.load_state_dict(ck["model"])
    m.eval()
    m.qs.on = True
    m.qs.exact = True
    # F16 storage of embedding and head: the reference forward uses the rounded values.
    with torch.no_grad():
        m.decoder.embed.weight.copy_(m.decoder.embed.weight.half().float())
        m.decoder.output.weight.copy_(m.decoder.output.weight.half().float())
    return tok, m


def f32(name, a, ne=None):
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    return (name, ne if ne is not None else list(reversed(a.shape)), G.T_F32, a.tobytes())


def conv_i8(name, w):
    """torch conv weight [OC, IC, K] -> kernel zero-padded at index 0 to pad_k(K)."""
    w = w.detach().numpy().astype(np.float32)
    oc, ic, k = w.shape
    kp = M.pad_k(k)
    w = np.pad(w, ((0, 0), (0, 0), (kp - k, 0)))
    data, _, _ = G.quant_i8s(w)
    return (name, [kp, ic, oc], G.T_I8S, data)


def lin_i8(name, w):
    w = w.detach().numpy().astype(np.float32)[:, :, 0]     # [out, in]
    data, _, _ = G.quant_i8s(w)
    return (name, [w.shape[1], w.shape[0]], G.T_I8S, data)


def bias2d(name, b):
    b = b.detach().numpy()
    return f32(name, b, [b.shape[0], 1])


def vae_tensors(m):
    enc = m.encoder
    out = []
    for P, head in (("acoustic", enc.acoustic), ("semantic", enc.semantic)):
        for i, (down, stage) in enumerate(zip(enc.trunk.down, enc.trunk.stages)):
            pre = f"{P}.downsample_layers.{i}.0.conv.conv"
            out += [conv_i8(pre + ".weight", down.weight), bias2d(pre + ".bias", down.bias)]
            for b, blk in enumerate(stage):
                s = f"{P}.stages.{i}.{b}"
                out += [
                    f32(s + ".norm.weight", blk.norm.detach()),
                    conv_i8(s + ".mixer.conv.conv.conv.weight", blk.mixer.weight),
                    bias2d(s + ".mixer.conv.conv.conv.bias", blk.mixer.bias),
                    f32(s + ".gamma", blk.gamma.detach()),
                    f32(s + ".ffn_norm.weight", blk.ffn_norm.detach()),
                    lin_i8(s + ".ffn.linear1.weight", blk.linear1.weight),
                    bias2d(s + ".ffn.linear1.bias", blk.linear1.bias),
                    lin_i8(s + ".ffn.linear2.weight", blk.linear2.weight),
                    bias2d(s + ".ffn.linear2.bias", blk.linear2.bias),
                    f32(s + ".ffn_gamma", blk.ffn_gamma.detach()),
                ]
        out += [conv_i8(f"{P}.head.conv.conv.weight", head.head.weight),
                bias2d(f"{P}.head.conv.conv.bias", head.head.bias),
                lin_i8(f"{P}_connector.fc1.weight", head.fc1.weight),
                bias2d(f"{P}_connector.fc1.bias", head.fc1.bias),
                f32(f"{P}_connector.norm.weight", head.cnorm.detach()),
                lin_i8(f"{P}_connector.fc2.weight", head.fc2.weight),
                bias2d(f"{P}_connector.fc2.bias", head.fc2.bias)]
    return out


def vae_kvs(m):
    cfg = m.cfg
    depths = [len(s) for s in m.encoder.trunk.stages]
    kv = [("general.architecture", G.V_STR, "vibeasr-vae"),
          ("general.name", G.V_STR, "tern tiny-en VAE encoder"),
          ("general.file_type", G.V_U32, 41),
          ("general.version", G.V_U32, 1)]
    for P, d in (("acoustic", cfg["d_ac"]), ("semantic", cfg["d_se"])):
        kv += [(f"vae.{P}.output_dim", G.V_U32, d),
               (f"vae.{P}.stage_depths", G.V_ARR, (G.V_U32, depths)),
               (f"vae.{P}.downsample_strides", G.V_ARR, (G.V_U32, [8, 5, 5, 4, 2, 2]))]
    kv += [("vae.rms_norm_eps", G.V_F32, 1e-6),     # as published; the numerics use 1e-5
           ("vae.kernel_size", G.V_U32, 7),
           ("vae.layer_scale_init_value", G.V_F32, 1e-6)]
    return kv


def ternary_np(w):
    with torch.no_grad():
        qs = M.QState()
        qs.on = True
        return M.ternary(w.detach(), qs).numpy().astype(np.float32)


def i2s(name, w):
    wt = ternary_np(w)                                   # [out, in]
    data, _, _ = G.quant_i2s(wt)
    return (name, [wt.shape[1], wt.shape[0]], G.T_I2S, data)


def f16(name, w):
    a = w.detach().numpy().astype(np.float16)
    return (name, list(reversed(a.shape)), G.T_F16, a.tobytes())


def lm_tensors(m):
    d = m.decoder
    out = [f16("token_embd.weight", d.embed.weight),
           f32("output_norm.weight", d.norm.detach()),
           f16("output.weight", d.output.weight)]
    for l, L in enumerate(d.layers):
        p = f"blk.{l}."
        out += [f32(p + "attn_norm.weight", L.attn_norm.detach()),
                i2s(p + "attn_q.weight", L.q.weight), f32(p + "attn_q.bias", L.q.bias.detach()),
                i2s(p + "attn_k.weight", L.k.weight), f32(p + "attn_k.bias", L.k.bias.detach()),
                i2s(p + "attn_v.weight", L.v.weight), f32(p + "attn_v.bias", L.v.bias.detach()),
                i2s(p + "attn_output.weight", L.o.weight),
                f32(p + "ffn_norm.weight", L.ffn_norm.detach()),
                i2s(p + "ffn_gate.weight", L.gate.weight),
                i2s(p + "ffn_up.weight", L.up.weight),
                i2s(p + "ffn_down.weight", L.down.weight)]
    return out


def lm_kvs(m, tok):
    c = m.cfg
    S = tok.special
    merges = [a + " " + b for a, b in tok.merges]
    return [
        ("general.architecture", G.V_STR, "qwen2"),
        ("general.name", G.V_STR, "tern tiny-en"),
        ("general.file_type", G.V_U32, 40),
        ("general.quantization_version", G.V_U32, 2),
        ("qwen2.vocab_size", G.V_U32, tok.n_vocab),
        ("qwen2.context_length", G.V_U32, 4096),
        ("qwen2.embedding_length", G.V_U32, c["hidden"]),
        ("qwen2.block_count", G.V_U32, c["layers"]),
        ("qwen2.feed_forward_length", G.V_U32, c["ffn"]),
        ("qwen2.rope.dimension_count", G.V_U32, c["hidden"] // c["heads"]),
        ("qwen2.attention.head_count", G.V_U32, c["heads"]),
        ("qwen2.attention.head_count_kv", G.V_U32, c["kv_heads"]),
        ("qwen2.attention.layer_norm_rms_epsilon", G.V_F32, 1e-6),
        ("qwen2.rope.freq_base", G.V_F32, c["theta"]),
        ("tokenizer.ggml.model", G.V_STR, "gpt2"),
        ("tokenizer.ggml.pre", G.V_STR, "qwen2"),
        ("tokenizer.ggml.tokens", G.V_ARR, (G.V_STR, tok.tokens)),
        ("tokenizer.ggml.token_type", G.V_ARR, (G.V_I32, tok.token_types())),
        ("tokenizer.ggml.merges", G.V_ARR, (G.V_STR, merges)),
        ("tokenizer.ggml.bos_token_id", G.V_U32, S("<|endoftext|>")),
        ("tokenizer.ggml.eos_token_id", G.V_U32, S("<|endoftext|>")),
        ("tokenizer.ggml.padding_token_id", G.V_U32, S("<|endoftext|>")),
        ("tokenizer.ggml.add_bos_token", G.V_BOOL, False),
    ]


def trained_kvs(split="train", chunk_seconds=0.0, snap_seconds=0.0, beam=0,
                utterance_pieces=False):
    """What the model was trained with (docs/formats-tern-keys.md), read from its training
    split: whether any clip had a context line or asked for the JSON answer, and the
    longest clip in seconds. (train_decoder.py's split: the decoder is what answers.)
    `chunk_seconds` > 0 adds the piece length the model was measured to read long audio
    best in (eval_mix.py's multi set at several --chunk-seconds); `snap_seconds` > 0 how far
    its segment times may be from the speech's edges; `beam` > 0 the beam width it reads
    best with; `utterance_pieces` that it reads audio best cut at every pause (each measured
    through the engine)."""
    _, meta = common.read_split(split)
    longest = max(mt["length"] for mt in meta) / common.SR
    kvs = [
        ("tern.trained.context", G.V_BOOL, any(mt.get("context") for mt in meta)),
        ("tern.trained.json_format", G.V_BOOL, any(mt.get("json") for mt in meta)),
        ("tern.trained.max_audio_seconds", G.V_F32, longest),
    ]
    if chunk_seconds > 0:
        kvs.append(("tern.trained.chunk_seconds", G.V_F32, chunk_seconds))
    if snap_seconds > 0:
        kvs.append(("tern.trained.snap_seconds", G.V_F32, snap_seconds))
    if beam > 0:
        kvs.append(("tern.trained.beam", G.V_U32, beam))
    if utterance_pieces:
        kvs.append(("tern.trained.utterance_pieces", G.V_BOOL, True))
    return kvs


VAE_NAME = "vibeasr-vae-encoder-i8_s.gguf"
LM_NAME = "vibeasr-lm-i2_s-embed-q6_k.gguf"


def validate(out_dir, m, tok, check_vae=True):
    """Re-read both files; check structure, in-band scales, and that every dequantized tensor
    equals what the PyTorch quantized forward uses."""
    qs = m.qs
    vae = G.Reader(os.path.join(out_dir, VAE_NAME))
    lm = G.Reader(os.path.join(out_dir, LM_NAME))
    n_i8 = sum(t["type"] == G.T_I8S for t in vae.tensors.values())
    n_i2 = sum(t["type"] == G.T_I2S for t in lm.tensors.values())
    with torch.no_grad():
        enc = m.encoder
        for P, head in (("acoustic", enc.acoustic), ("semantic", enc.semantic))[:2 * check_vae]:
            mods = {f"{P}.head.conv.conv": head.head, f"{P}_connector.fc1": head.fc1,
                    f"{P}_connector.fc2": head.fc2}
            for i, (down, st) in enumerate(zip(enc.trunk.down, enc.trunk.stages)):
                mods[f"{P}.downsample_layers.{i}.0.conv.conv"] = down
                for b, blk in enumerate(st):          # depth may be 0
                    mods[f"{P}.stages.{i}.{b}.mixer.conv.conv.conv"] = blk.mixer
                    mods[f"{P}.stages.{i}.{b}.ffn.linear1"] = blk.linear1
                    mods[f"{P}.stages.{i}.{b}.ffn.linear2"] = blk.linear2
            for name, mod in mods.items():
                w = M.fq_weight_i8(mod.weight, qs).numpy()
                got = vae.array(name + ".weight")
                k = w.shape[2]
                if got.ndim == 3:
                    assert got.shape[:2] == w.shape[:2] and (got[:, :, :got.shape[2] - k] == 0).all()
                    got = got[:, :, got.shape[2] - k:]
                else:
                    w = w[:, :, 0]
                assert np.array_equal(got, w), name
                assert abs(vae.scale(name + ".weight") * 127 - np.abs(mod.weight.numpy()).max()) \
                    <= 1e-5 * np.abs(mod.weight.numpy()).max(), name
                assert np.array_equal(vae.array(name + ".bias").reshape(-1), mod.bias.numpy())
        d = m.decoder
        for l, L in enumerate(d.layers):
            for nm, mod in (("attn_q", L.q), ("attn_k", L.k), ("attn_v", L.v), ("attn_output", L.o),
                            ("ffn_gate", L.gate), ("ffn_up", L.up), ("ffn_down", L.down)):
                w = M.ternary(mod.weight, qs).numpy()
                got = lm.array(f"blk.{l}.{nm}.weight")
                assert np.array_equal(got, w), nm
        assert np.array_equal(lm.array("token_embd.weight"), d.embed.weight.numpy())
        assert np.array_equal(lm.array("output.weight"), d.output.weight.numpy())
    assert lm.kv["tokenizer.ggml.tokens"] == tok.tokens
    sizes = {n: os.path.getsize(os.path.join(out_dir, n)) for n in (VAE_NAME, LM_NAME)}
    print(f"validated: VAE {len(vae.tensors)} tensors ({n_i8} I8_S), LM {len(lm.tensors)} tensors "
          f"({n_i2} I2_S); sizes {sizes}")
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(common.WORK, "ckpt.pt"))
    ap.add_argument("--out", default=os.path.join(common.HERE, "..", "models", "tiny-en"))
    ap.add_argument("--split", default="train",
                    help="the training split whose clips the tern.trained.* keys describe")
    ap.add_argument("--vae-from", default="",
                    help="copy this folder's encoder file byte for byte (the encoder was "
                         "frozen: train_decoder.py) instead of writing it from the checkpoint")
    ap.add_argument("--chunk-seconds", type=float, default=0.0,
                    help="declare tern.trained.chunk_seconds: the piece length the model reads "
                         "long audio best in, measured (0: not declared)")
    ap.add_argument("--snap-seconds", type=float, default=0.0,
                    help="declare tern.trained.snap_seconds: how far the model's segment times "
                         "may be from the speech's edges, measured (0: not declared)")
    ap.add_argument("--beam", type=int, default=0,
                    help="declare tern.trained.beam: the beam width the model reads best with, "
                         "measured (0: not declared)")
    ap.add_argument("--utterance-pieces", action="store_true",
                    help="declare tern.trained.utterance_pieces: the model reads audio best cut "
                         "at every pause, measured")
    ap.add_argument("--voices", default="",
                    help="declare the tern.voices.* keys from this voices.py fit (.npz): the "
                         "engine then labels speakers by voice")
    a = ap.parse_args()
    tok, m = load(a.ckpt)
    os.makedirs(a.out, exist_ok=True)
    if a.vae_from:
        shutil.copyfile(os.path.join(a.vae_from, VAE_NAME), os.path.join(a.out, VAE_NAME))
    else:
        G.write(os.path.join(a.out, VAE_NAME), vae_kvs(m), vae_tensors(m))
    kvs = lm_kvs(m, tok) + trained_kvs(a.split, a.chunk_seconds, a.snap_seconds, a.beam,
                                         a.utterance_pieces)
    if a.voices:
        kvs += voices.kvs(a.voices)
    G.write(os.path.join(a.out, LM_NAME), kvs, lm_tensors(m))
    validate(a.out, m, tok, check_vae=not a.vae_from)


if __name__ == "__main__":
    main()
