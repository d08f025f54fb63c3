#!/usr/bin/python3
# Independent reference for the tokenizer goldens in src/text/tokenizer_test.cc.
# Written separately from the C++ code: Python `re` with explicit Unicode classes built
# from unicodedata, every pre-tokenizer step as a regex (no hand-written GPT-2 splitter),
# and the classic GPT-2 BPE loop (merge every occurrence of the lowest-ranked pair).
# Usage: qwen2_bpe_reference.py DIR 'text' ...   (DIR holds vocab.json and merges.txt)
import json, re, sys, unicodedata

def cls(pred):
    out, start = [], None
    for c in range(0x110001):
        ok = c <= 0x10FFFF and not (0xD800 <= c <= 0xDFFF) and pred(chr(c))
        if ok and start is None: start = c
        if not ok and start is not None:
            out.append(f"\\U{start:08x}-\\U{c-1:08x}"); start = None
    return "".join(out)

L = cls(lambda ch: unicodedata.category(ch).startswith("L"))
N = cls(lambda ch: unicodedata.category(ch).startswith("N"))
P = cls(lambda ch: unicodedata.category(ch).startswith("P"))
WS = "\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"

QWEN2 = [re.compile(
    f"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n{L}{N}]?[{L}]+|[{N}]|"
    f" ?[^{WS}{L}{N}]+[\\r\\n]*|[{WS}]*[\\r\\n]+|[{WS}]+(?![^{WS}])|[{WS}]+")]
DEFAULT = [re.compile(f"[{P}\\$\\+<=>\\^~\\|]+"),
           re.compile(f"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{WS}{L}{N}]+|"
                      f"[{WS}]+(?![^{WS}])|[{WS}]+"),
           re.compile(f"[{N}]+"), re.compile("[0-9][0-9][0-9]")]

def split(text, steps):
    frags = [text] if text else []
    for rx in steps:
        nxt = []
        for f in frags:
            cur = 0
            for m in rx.finditer(f):
                if m.start() > cur: nxt.append(f[cur:m.start()])
                nxt.append(m.group()); cur = m.end()
            if cur < len(f): nxt.append(f[cur:])
        frags = nxt
    return frags

def byte_map():
    bs = list(range(33, 127)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs: bs.append(b); cs.append(256 + n); n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}

def main():
    d = sys.argv[1]
    vocab = json.load(open(f"{d}/vocab.json", encoding="utf-8"))
    ranks = {}
    for i, line in enumerate(open(f"{d}/merges.txt", encoding="utf-8").read().split("\n")):
        if not line or line.startswith("#version"): continue
        a, b = line.split(" ")
        ranks.setdefault((a, b), len(ranks))
    bm = byte_map()
    def bpe(word):
        w = [bm[b] for b in word.encode("utf-8")]
        while len(w) > 1:
            pairs = [(ranks.get((w[i], w[i + 1]), 1 << 30), i) for i in range(len(w) - 1)]
            r, _ = min(pairs)
            if r == 1 << 30: break
            a, b = next((w[i], w[i + 1]) for rr, i in pairs if rr == r)
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b: out.append(a + b); i += 2
                else: out.append(w[i]); i += 1
            w = out
        return [vocab[s] for s in w]
    for text in sys.argv[2:]:
        text = text.encode("utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
        for name, steps in (("qwen2", QWEN2), ("default", DEFAULT)):
            ids = [i for wd in split(text, steps) for i in bpe(wd)]
            print(name, json.dumps(text, ensure_ascii=False), " ".join(map(str, ids)))

main()
