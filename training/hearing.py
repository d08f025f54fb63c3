"""What the encoder hears, apart from the decoder: greedy character CTC on held-out sets.

usage: /usr/bin/python3 hearing.py --ckpt CKPT [--sets test,nat_test,ctx_test] [--n 100]

A checkpoint's character CTC heads (training aids, not exported: on the trunk's stage 5 and
on the features, model.py) decoded greedily, one clip at a time, in the quantized forward,
and scored as words (reference.py's normalization) and as characters (CER: a head that
spells a word almost right counts as wrong in the WER). The features' head is the one that
matters: it reads exactly what the decoder reads. A decoder trained on the features (stage G)
can reach about this figure, rarely much better, so this tells, stage by stage, whether more
encoder training is what a set needs (the decoder's WER does not say: before G the decoder
is the weaker half). A checkpoint written by init_from_gguf.py has no trained heads.
"""
import argparse
import json

import torch

import common
import model
import reference


def greedy(logits):
    """Collapse repeats, drop blanks (the last class), map to AUX_CHARS."""
    ids = logits.argmax(-1).tolist()
    blank, out, prev = logits.shape[-1] - 1, [], None
    for i in ids:
        if i != prev and i != blank:
            out.append(model.AUX_CHARS[i])
        prev = i
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--sets", default="test,nat_test,ctx_test")
    ap.add_argument("--n", type=int, default=100, help="the first N clips of each set")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--show", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    tok = common.build_tokenizer()
    m = common.make_model(tok)
    ck = torch.load(a.ckpt, map_location="cpu")
    m.load_state_dict({k: v.float() for k, v in ck["model"].items()})
    m.qs.on = bool(ck.get("qat", True))
    m.eval()
    out = {}
    for name in a.sets.split(","):
        audio, meta = common.read_split(name)
        e = {h + u: [0, 0] for h in ("features", "stage5") for u in ("_wer", "_cer")}
        with torch.no_grad():
            for k, mt in enumerate(meta[:a.n]):
                x = torch.from_numpy(common.frontend(common.clip(audio, mt))[None])
                feats, tapped = m.encoder(x, tap=model.AUX_STAGE)
                sub = m.aux_feat_char(feats).reshape(-1, len(model.AUX_CHARS) + 1)
                hyps = {"features": greedy(sub),
                        "stage5": greedy(m.aux_char(tapped.transpose(1, 2))[0])}
                ref = reference.norm_words(mt["text"])
                for head, hyp in hyps.items():
                    hw = reference.norm_words(hyp)
                    e[head + "_wer"][0] += reference.edit_distance(ref, hw)
                    e[head + "_wer"][1] += len(ref)
                    e[head + "_cer"][0] += reference.edit_distance(" ".join(ref), " ".join(hw))
                    e[head + "_cer"][1] += len(" ".join(ref))
                if k < a.show:
                    print(f"{name} {k}: {mt['text']}\n  features: {hyps['features']}")
        out[name] = {h: round(v[0] / max(1, v[1]), 4) for h, v in e.items()}
        print(json.dumps({name: out[name]}), flush=True)


if __name__ == "__main__":
    main()
