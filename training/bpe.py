"""Byte-level BPE (GPT-2 byte-to-unicode mapping) trained on our own text.

Pre-tokenisation is the Qwen2 regex the engine uses for tokenizer.ggml.pre = "qwen2":
  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+
Python's `re` has no \\p{L}/\\p{N}; our text is ASCII only, for which \\p{L} == [A-Za-z] and
\\p{N} == [0-9], so QWEN2_ASCII below splits every string we train on or encode exactly
as the Unicode regex does (encode() refuses non-ASCII input to keep that true).

Ids: 0..255 the byte tokens (in bytes_to_unicode order of byte value), then one token per
merge in merge order, then the six CONTROL tokens in Qwen2's relative order.
"""
import collections
import re

QWEN2_ASCII = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\sA-Za-z0-9]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+")

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|speech_start|>",
            "<|speech_end|>", "<|speech_pad|>"]


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()
U2B = {v: k for k, v in B2U.items()}


def pretokenize(text):
    return QWEN2_ASCII.findall(text)


def to_unicode(piece):
    return "".join(B2U[b] for b in piece.encode("utf-8"))


class Tokenizer:
    def __init__(self, merges):
        self.merges = list(merges)                       # list of (a, b) unicode strings
        self.tokens = [B2U[b] for b in range(256)]
        for a, b in self.merges:
            self.tokens.append(a + b)
        self.tokens += SPECIALS
        self.id = {t: i for i, t in enumerate(self.tokens)}
        assert len(self.id) == len(self.tokens), "duplicate token"
        self.rank = {m: i for i, m in enumerate(self.merges)}
        self.cache = {}

    @property
    def n_vocab(self):
        return len(self.tokens)

    def special(self, name):
        return self.id[name]

    def token_types(self):
        return [3 if t in SPECIALS else 1 for t in self.tokens]

    def _bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            best, bi = None, -1
            for i in range(len(parts) - 1):
                r = self.rank.get((parts[i], parts[i + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            parts = parts[:bi] + [parts[bi] + parts[bi + 1]] + parts[bi + 2:]
        ids = [self.id[p] for p in parts]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        """Plain text only (specials are inserted by id, never parsed from text)."""
        assert text.isascii(), "ASCII regex only valid for ASCII text"
        out = []
        for piece in pretokenize(text):
            out += self._bpe(to_unicode(piece))
        return out

    def decode(self, ids):
        bs = bytearray()
        for i in ids:
            t = self.tokens[i]
            if t in SPECIALS:
                continue
            bs += bytes(U2B[c] for c in t)
        return bs.decode("utf-8", errors="replace")


def train(texts, n_merges):
    """Classic BPE: repeatedly merge the most frequent adjacent pair (ties: lexicographically smallest pair)."""
    words = collections.Counter()
    for t in texts:
        for piece in pretokenize(t):
            words[to_unicode(piece)] += 1
    vocab = {tuple(w): c for w, c in words.items()}
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, c in vocab.items():
            for i in range(len(w) - 1):
                pairs[(w[i], w[i + 1])] += c
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        a, b = best
        nv = {}
        for w, c in vocab.items():
            if len(w) < 2:
                nv[w] = nv.get(w, 0) + c
                continue
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            out = tuple(out)
            nv[out] = nv.get(out, 0) + c
        vocab = nv
    return Tokenizer(merges)
