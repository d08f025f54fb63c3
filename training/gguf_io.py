"""Minimal GGUF v3 writer and reader/validator (numpy), with the VibeASR types.

File layout (little-endian; see src/gguf/gguf.h):
  "GGUF" | u32 version=3 | u64 n_tensors | u64 n_kv
  n_kv x      key(string) | u32 value type | value
  n_tensors x name(string) | u32 n_dims | u64 ne[n_dims] | u32 type | u64 offset
  zero padding to ALIGN (32), then the data section; each tensor starts at a multiple
  of 32 from the data start, next offset = prev offset + PAD(prev stored size, 32).
  string = u64 length + bytes; array = u32 elem type + u64 count + elements.
Stored sizes: F32 4n, F16 2n, I8_S n + 32 (int8 values, f32 scale at byte n, 28 zero
bytes), I2_S n/4 + 32 (2-bit codes, f32 scale at byte n/4, 28 zero bytes).
"""
import struct

import numpy as np

ALIGN = 32
T_F32, T_F16, T_I2S, T_I8S = 0, 1, 36, 37
V_U8, V_I8, V_U16, V_I16, V_U32, V_I32, V_F32, V_BOOL, V_STR, V_ARR, V_U64, V_I64, V_F64 = range(13)
TYPE_NAMES = {T_F32: "F32", T_F16: "F16", T_I2S: "I2_S", T_I8S: "I8_S"}


def pad_to(n, a=ALIGN):
    return (n + a - 1) // a * a


def stored_bytes(t, n):
    return {T_F32: 4 * n, T_F16: 2 * n, T_I8S: n + 32, T_I2S: n // 4 + 32}[t]


# ------------------------------------------------------------------ quantizers

def quant_i8s(w):
    """Weight I8_S (spec 2.1): s = 127/max|w|, q = clamp(roundf(w*s), +-127), store 1/s."""
    w = np.asarray(w, dtype=np.float32).reshape(-1)
    m = np.float32(np.abs(w).max())
    s = np.float32(127.0) / m if m > 0 else np.float32(1.0)
    v = w * s
    q = np.clip(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)), -127, 127).astype(np.int8)
    stored = np.float32(1.0) / s
    return q.tobytes() + np.float32(stored).tobytes() + bytes(28), q, stored


def pack_i2s(codes, scale):
    """codes uint8 in {0,1,2} flat (n % 128 == 0): 128-element blocks -> 32 bytes, byte p
    holds elements p, p+32, p+64, p+96 in bit pairs 7:6, 5:4, 3:2, 1:0."""
    c = np.asarray(codes, dtype=np.uint8).reshape(-1, 4, 32)        # [block, group, pos]
    b = (c[:, 0] << 6) | (c[:, 1] << 4) | (c[:, 2] << 2) | c[:, 3]
    return b.astype(np.uint8).tobytes() + np.float32(scale).tobytes() + bytes(28)


def unpack_i2s(buf, n):
    b = np.frombuffer(buf[:n // 4], dtype=np.uint8).reshape(-1, 32)
    c = np.stack([(b >> 6) & 3, (b >> 4) & 3, (b >> 2) & 3, b & 3], axis=1)
    scale = np.frombuffer(buf[n // 4:n // 4 + 4], dtype="<f4")[0]
    return c.reshape(-1), scale


def quant_i2s(ternary_vals):
    """ternary_vals: W' = t * scale (t in {-1,0,1}), float32 flat. Returns bytes, codes, scale."""
    w = np.asarray(ternary_vals, dtype=np.float32).reshape(-1)
    scale = np.float32(np.abs(w).max())
    codes = np.where(np.abs(w) < 1e-6, 1, np.where(w > 0, 2, 0)).astype(np.uint8)
    return pack_i2s(codes, scale), codes, scale


# ------------------------------------------------------------------ writer

def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _val(t, v):
    if t == V_STR:
        return _str(v)
    if t == V_ARR:
        et, items = v
        out = struct.pack("<IQ", et, len(items))
        if et == V_STR:
            return out + b"".join(_str(x) for x in items)
        fmt = {V_I32: "<i", V_U32: "<I", V_F32: "<f", V_U8: "<B", V_I8: "<b"}[et]
        return out + b"".join(struct.pack(fmt, x) for x in items)
    fmt = {V_U8: "<B", V_I8: "<b", V_U16: "<H", V_I16: "<h", V_U32: "<I", V_I32: "<i",
           V_F32: "<f", V_BOOL: "<?", V_U64: "<Q", V_I64: "<q", V_F64: "<d"}[t]
    return struct.pack(fmt, v)


def write(path, kvs, tensors):
    """kvs: [(key, vtype, value)]; tensors: [(name, ne list (ggml order), type, bytes)]."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for k, t, v in kvs:
        head += _str(k) + struct.pack("<I", t) + _val(t, v)
    off = 0
    offsets = []
    for name, ne, t, data in tensors:
        n = int(np.prod(ne))
        assert len(data) == stored_bytes(t, n), (name, len(data), stored_bytes(t, n))
        head += _str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        head += struct.pack("<IQ", t, off)
        offsets.append(off)
        off = pad_to(off + len(data))
    head += bytes(pad_to(len(head)) - len(head))
    with open(path, "wb") as f:
        f.write(head)
        for (name, ne, t, data), o in zip(tensors, offsets):
            f.write(data)
            f.write(bytes(pad_to(len(data)) - len(data)))


# ------------------------------------------------------------------ reader / validator

class Reader:
    def __init__(self, path):
        self.path = path
        self.buf = open(path, "rb").read()
        self.p = 0
        assert self._take(4) == b"GGUF", f"{path}: bad magic"
        self.version, nt, nkv = struct.unpack("<IQQ", self._take(20))
        assert self.version == 3, f"{path}: version {self.version}"
        self.kv = {}
        for _ in range(nkv):
            k = self._s()
            (t,) = struct.unpack("<I", self._take(4))
            self.kv[k] = self._v(t)
        self.tensors = {}
        for _ in range(nt):
            name = self._s()
            (nd,) = struct.unpack("<I", self._take(4))
            ne = list(struct.unpack(f"<{nd}Q", self._take(8 * nd)))
            t, off = struct.unpack("<IQ", self._take(12))
            assert name not in self.tensors, f"{path}: duplicate tensor {name}"
            self.tensors[name] = {"ne": ne, "type": t, "offset": off}
        align = self.kv.get("general.alignment", ALIGN)
        self.data_start = pad_to(self.p, align)
        spans = []
        for name, ti in self.tensors.items():
            n = int(np.prod(ti["ne"]))
            size = stored_bytes(ti["type"], n)
            assert ti["offset"] % align == 0, f"{name}: offset {ti['offset']} not aligned"
            a = self.data_start + ti["offset"]
            assert a + size <= len(self.buf), f"{name}: data past end of file"
            ti["n"], ti["size"], ti["abs"] = n, size, a
            spans.append((a, a + size, name))
        spans.sort()
        for (a0, b0, n0), (a1, b1, n1) in zip(spans, spans[1:]):
            assert b0 <= a1, f"{n0} overlaps {n1}"

    def _take(self, n):
        b = self.buf[self.p:self.p + n]
        assert len(b) == n, f"{self.path}: truncated at {self.p}"
        self.p += n
        return b

    def _s(self):
        (n,) = struct.unpack("<Q", self._take(8))
        return self._take(n).decode("utf-8")

    def _v(self, t):
        if t == V_STR:
            return self._s()
        if t == V_ARR:
            et, n = struct.unpack("<IQ", self._take(12))
            return [self._v(et) for _ in range(n)]
        fmt = {V_U8: "<B", V_I8: "<b", V_U16: "<H", V_I16: "<h", V_U32: "<I", V_I32: "<i",
               V_F32: "<f", V_BOOL: "<?", V_U64: "<Q", V_I64: "<q", V_F64: "<d"}[t]
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def raw(self, name):
        ti = self.tensors[name]
        return self.buf[ti["abs"]:ti["abs"] + ti["size"]]

    def scale(self, name):
        """In-band scale of an I8_S / I2_S tensor."""
        ti = self.tensors[name]
        o = ti["n"] if ti["type"] == T_I8S else ti["n"] // 4
        return float(np.frombuffer(self.raw(name)[o:o + 4], dtype="<f4")[0])

    def array(self, name):
        """Dequantized float32 values in ggml order, reshaped to the reversed ne (torch order)."""
        ti = self.tensors[name]
        raw, n, t = self.raw(name), ti["n"], ti["type"]
        if t == T_F32:
            v = np.frombuffer(raw, dtype="<f4")
        elif t == T_F16:
            v = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif t == T_I8S:
            v = np.frombuffer(raw[:n], dtype=np.int8).astype(np.float32) * np.float32(self.scale(name))
            assert raw[n + 4:] == bytes(28)
        elif t == T_I2S:
            c, s = unpack_i2s(raw, n)
            assert (c <= 2).all(), f"{name}: code 3"
            v = (c.astype(np.float32) - 1) * np.float32(s)
            assert raw[n // 4 + 4:] == bytes(28)
        else:
            raise ValueError(f"{name}: type {t}")
        return v.reshape(list(reversed(ti["ne"])))
