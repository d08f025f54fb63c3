// AVX-512 encoder fills: the scalar loops 16 lanes at a time, same expression and order per
// element (no FMA: -ffp-contract=off), masked tails.
// Not clang-formatted: TERN_UNROLL (a _Pragma before a loop) is laid out as an expression by
// clang-format 14, which then joins nested loops into one line; this file keeps its hand layout.
// clang-format off
#include <immintrin.h>

#include <climits>

#include "kernels/avx512/impl.h"
#include "kernels/avx512/reduce.h"
#include "kernels/avx512/requant.h"
#include "kernels/expf_poly.h"
#include "kernels/unroll.h"

namespace tern::kernels::avx512 {
namespace {

inline __mmask16 TailMask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

inline __m512 LoadI8(__mmask16 m, const int8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p)));
}

}  // namespace

void I32AffineF32(const int32_t* acc, int64_t n, float c, const float* bias, float* out) {
  const __m512 vc = _mm512_set1_ps(c);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, acc + i)), vc);
    if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + i));
    _mm512_mask_storeu_ps(out + i, m, v);
  }
}

// Four column vectors per pass over the rows: four independent min/max chains.
void I32MinMax(const int32_t* x, int64_t rows, int64_t n, int64_t ld, int32_t* mn, int32_t* mx) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i lo[4], hi[4];
    for (int u = 0; u < 4; ++u) {
      lo[u] = _mm512_loadu_si512(mn + i + 16 * u);
      hi[u] = _mm512_loadu_si512(mx + i + 16 * u);
    }
    for (int64_t j = 0; j < rows; ++j)
      for (int u = 0; u < 4; ++u) {
        const __m512i v = _mm512_loadu_si512(x + j * ld + i + 16 * u);
        lo[u] = _mm512_min_epi32(lo[u], v);
        hi[u] = _mm512_max_epi32(hi[u], v);
      }
    for (int u = 0; u < 4; ++u) {
      _mm512_storeu_si512(mn + i + 16 * u, lo[u]);
      _mm512_storeu_si512(mx + i + 16 * u, hi[u]);
    }
  }
  for (; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    __m512i lo = _mm512_maskz_loadu_epi32(m, mn + i), hi = _mm512_maskz_loadu_epi32(m, mx + i);
    for (int64_t j = 0; j < rows; ++j) {
      const __m512i v = _mm512_maskz_loadu_epi32(m, x + j * ld + i);
      lo = _mm512_min_epi32(lo, v);
      hi = _mm512_max_epi32(hi, v);
    }
    _mm512_mask_storeu_epi32(mn + i, m, lo);
    _mm512_mask_storeu_epi32(mx + i, m, hi);
  }
}

void I8ToF32(const int8_t* q, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(out + i, m, LoadI8(m, q + i));
  }
}

void I8AddScaledF32(const int8_t* a, float sa, const float* g, const int8_t* b, float sb,
                    int64_t rows, int64_t n, float* out) {
  const __m512 va = _mm512_set1_ps(sa), vb = _mm512_set1_ps(sb);
  if (!g) {  // no per-channel factor: the rows are one contiguous run
    n *= rows;
    rows = 1;
  }
  for (int64_t j = 0; j < rows; ++j, a += n, b += n, out += n) {
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = TailMask(n - i);
      __m512 x = _mm512_mul_ps(LoadI8(m, a + i), va);
      if (g) x = _mm512_mul_ps(x, _mm512_maskz_loadu_ps(m, g + i));
      _mm512_mask_storeu_ps(out + i, m, _mm512_add_ps(x, _mm512_mul_ps(LoadI8(m, b + i), vb)));
    }
  }
}

// Sums of squares 32 values at a time (int16 squares, pairs summed by vpmaddwd: exact),
// reduced 16 rows at once (reduce.h: at C = 32 one reduction per row is the RMSNorm's
// bottleneck); then the float steps for those rows together
// (vdivps and vsqrtps round exactly as the scalar divss and sqrtss).
void I8RmsFactors(const int8_t* q, int64_t rows, int64_t n, float eps, float* s) {
  const __m512 vn = _mm512_set1_ps(static_cast<float>(n)), veps = _mm512_set1_ps(eps);
  const __mmask32 tail = n % 32 ? (__mmask32(1) << (n % 32)) - 1 : ~__mmask32(0);
  for (int64_t j0 = 0; j0 < rows; j0 += 16) {
    const int64_t nr = rows - j0 < 16 ? rows - j0 : 16;
    __m512i acc[16];
    TERN_UNROLL for (int r = 0; r < 16; ++r) acc[r] = _mm512_setzero_si512();
    for (int64_t i = 0; i < n; i += 32) {
      const __mmask32 m = i + 32 <= n ? ~__mmask32(0) : tail;
      // Rows past the last load nothing (mask 0) from the last row's address.
      TERN_UNROLL for (int r = 0; r < 16; ++r) {
        const int8_t* qr = q + (j0 + (r < nr ? r : nr - 1)) * n + i;
        const __m512i v = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(r < nr ? m : 0, qr));
        acc[r] = _mm512_add_epi32(acc[r], _mm512_madd_epi16(v, v));
      }
    }
    const __mmask16 m = TailMask(nr);
    const __m512 ms =
        _mm512_add_ps(_mm512_div_ps(_mm512_cvtepi32_ps(Transpose16Sum(acc)), vn), veps);
    _mm512_mask_storeu_ps(s + j0, m, _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(ms)));
  }
}

void I8ScaleMulF32(const int8_t* q, int64_t rows, int64_t n, const float* s, const float* g,
                   float* out) {
  for (int64_t j = 0; j < rows; ++j, q += n, out += n) {
    const __m512 vs = _mm512_set1_ps(s[j]);
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = TailMask(n - i);
      const __m512 x = _mm512_mul_ps(LoadI8(m, q + i), vs);
      _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(x, _mm512_maskz_loadu_ps(m, g + i)));
    }
  }
}

namespace {

// The fused fills (kernels.h, i8_fill_fused). A Src yields the 16 values of y at element
// offset o (row j, column i) under mask m; Row(j) is called when row j starts.
struct ScaleMulSrc {
  const I8Fill& f;
  __m512 vs;
  void Row(int64_t j) { vs = _mm512_set1_ps(f.s[j]); }
  __m512 operator()(int64_t o, int64_t i, __mmask16 m) const {
    return _mm512_mul_ps(_mm512_mul_ps(LoadI8(m, f.a + o), vs), _mm512_maskz_loadu_ps(m, f.g + i));
  }
};

template <bool kG>
struct AddScaledSrc {
  const I8Fill& f;
  __m512 va, vb;
  void Row(int64_t) {}
  __m512 operator()(int64_t o, int64_t i, __mmask16 m) const {
    __m512 x = _mm512_mul_ps(LoadI8(m, f.a + o), va);
    if constexpr (kG) x = _mm512_mul_ps(x, _mm512_maskz_loadu_ps(m, f.g + i));
    return _mm512_add_ps(x, _mm512_mul_ps(LoadI8(m, f.b + o), vb));
  }
};

// max |y|: vrangeps with imm 0b1011 keeps the operand of larger magnitude, sign cleared.
template <class Src>
float FillAbsmax(Src src, int64_t rows, int64_t n) {
  __m512 m0 = _mm512_setzero_ps(), m1 = _mm512_setzero_ps();
  for (int64_t j = 0; j < rows; ++j) {
    src.Row(j);
    const int64_t o = j * n;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      m0 = _mm512_range_ps(m0, src(o + i, i, 0xffff), 0x0b);
      m1 = _mm512_range_ps(m1, src(o + i + 16, i + 16, 0xffff), 0x0b);
    }
    for (; i < n; i += 16) m0 = _mm512_range_ps(m0, src(o + i, i, TailMask(n - i)), 0x0b);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
}

// Requantized bytes, through requant.h's Requant. With n % 16 == 0 the values run on
// across rows in whole vectors (Requant asks for them in order), so its 64-byte stores
// serve rows of 32 too. Always inlined: gcc kept the RMSNorm instance out of line, and the
// call cost shows at stage 0's short rows.
template <Round kMode, class Src>
[[gnu::always_inline]] inline void FillRequant(Src src, int64_t rows, int64_t n, float inv, int8_t* q) {
  if (n % 16 != 0) {
    for (int64_t j = 0; j < rows; ++j) {
      src.Row(j);
      Requant<kMode>(n, inv, [&](int64_t i, __mmask16 m) { return src(j * n + i, i, m); },
                     q + j * n);
    }
    return;
  }
  if (rows == 0) return;
  int64_t j = 0, i = 0;
  src.Row(0);
  Requant<kMode>(rows * n, inv, [&](int64_t o, __mmask16) {
    const __m512 y = src(o, i, 0xffff);
    i += 16;
    if (i == n && ++j < rows) {
      i = 0;
      src.Row(j);
    }
    return y;
  }, q);
}

template <class Src>
float FillFused(Src src, int64_t rows, int64_t n, float inv, Round mode, int8_t* q) {
  if (q == nullptr) return FillAbsmax(src, rows, n);
  if (mode == Round::kHalfEven) FillRequant<Round::kHalfEven>(src, rows, n, inv, q);
  else FillRequant<Round::kHalfAway>(src, rows, n, inv, q);
  return 0;
}

}  // namespace

float I8FillFused(const I8Fill& f, int64_t rows, int64_t n, float inv, Round mode, int8_t* q) {
  if (f.s != nullptr) return FillFused(ScaleMulSrc{f, {}}, rows, n, inv, mode, q);
  const __m512 va = _mm512_set1_ps(f.sa), vb = _mm512_set1_ps(f.sb);
  if (f.g != nullptr) return FillFused(AddScaledSrc<true>{f, va, vb}, rows, n, inv, mode, q);
  // No per-channel factor: the rows are one run.
  return FillFused(AddScaledSrc<false>{f, va, vb}, 1, rows * n, inv, mode, q);
}

namespace {

// Depthwise 8-tap conv with vpdpbusd, four taps per instruction; lane c of a vector is one
// channel. Q[s] holds input rows s..s+3 of each channel as four bytes, newest lowest, each
// flipped to u = x + 128 (vpdpbusd's unsigned operand; the weights are its signed one):
//   Q[s] = u[s+3] | u[s+2] << 8 | u[s+1] << 16 | u[s] << 24,  Q[s+1] = Q[s] << 8 | u[s+4],
// one shift and one vpternlogd per input row, in registers. Output r is two instructions,
// Q[r] against taps 3..0 and Q[r+4] against taps 7..4 (bytes in the same order), from
// -128 * (the channel's tap sum), which takes the flip back out. Exact in int32. Q[s+1]
// waits for Q[s], so kG channel groups (16 channels each) run side by side to overlap those
// chains (an int16-pair version with vpdpwssd is slower: twice the instructions per tap).
//
// Ep receives the sums: Put(g, r, c, s, m) for output row r of the group g at channel c
// (lanes m), then Done(g, c, m) once per group.
template <int kG, class Ep>
void Dw8Groups(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
               int64_t i, int64_t n, Ep ep) {
  const __m512i flip = _mm512_set1_epi32(0x80), byte = _mm512_set1_epi32(0xff);
  // Q << 8 | u of the next row: (A | B) ^ C is vpternlogd 0x56, the flip in the low byte.
  auto push = [&](__m512i q, __m512i b) {
    return _mm512_ternarylogic_epi32(_mm512_slli_epi32(q, 8), b, flip, 0x56);
  };
  __mmask16 m[kG];
  __m512i wlo[kG], whi[kG], base[kG], q[kG][5];
  TERN_UNROLL for (int g = 0; g < kG; ++g) {
    m[g] = TailMask(n - i - 16 * g);
    const int64_t c = i + 16 * g;
    __m512i sum = _mm512_setzero_si512();
    wlo[g] = whi[g] = sum;
    for (int t = 0; t < 4; ++t) {  // taps 3 and 7 in the low bytes
      const __m512i lo = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m[g], w + t * ldw + c));
      const __m512i hi = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m[g], w + (t + 4) * ldw + c));
      sum = _mm512_add_epi32(sum, _mm512_add_epi32(lo, hi));
      wlo[g] = _mm512_or_si512(wlo[g], _mm512_slli_epi32(_mm512_and_si512(lo, byte), 24 - 8 * t));
      whi[g] = _mm512_or_si512(whi[g], _mm512_slli_epi32(_mm512_and_si512(hi, byte), 24 - 8 * t));
    }
    base[g] = _mm512_mullo_epi32(sum, _mm512_set1_epi32(-128));
    __m512i qs = _mm512_setzero_si512();
    for (int t = 0; t < 8; ++t) {
      qs = push(qs, _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m[g], x + t * ldx + c)));
      if (t >= 3) q[g][t - 3] = qs;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    TERN_UNROLL for (int g = 0; g < kG; ++g) {
      const int64_t c = i + 16 * g;
      ep.Put(g, r, c,
             _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(base[g], q[g][0], wlo[g]), q[g][4], whi[g]),
             m[g]);
      q[g][0] = q[g][1];
      q[g][1] = q[g][2];
      q[g][2] = q[g][3];
      q[g][3] = q[g][4];
      if (r + 1 < rows)  // input row r + 8 exists only then
        q[g][4] = push(q[g][4],
                       _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m[g], x + (r + 8) * ldx + c)));
    }
  }
  TERN_UNROLL for (int g = 0; g < kG; ++g) ep.Done(g, i + 16 * g, m[g]);
}

// Pairs of channel groups, then a last single one. (No rows: nothing to read; a group
// starts by reading its first eight input rows.)
template <template <int> class Ep, class Args>
void Dw8(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows, int64_t n,
         const Args& args) {
  if (rows <= 0) return;
  int64_t i = 0;
  for (; i + 16 < n; i += 32) Dw8Groups<2>(x, ldx, w, ldw, rows, i, n, Ep<2>(args));
  if (i < n) Dw8Groups<1>(x, ldx, w, ldw, rows, i, n, Ep<1>(args));
}

// Where DwStore writes. (A plain struct, not std::pair: nothing with external linkage gets
// instantiated in this ISA-flagged TU; packing.h.)
struct DwOut {
  int32_t* out;
  int64_t ldo;
};

template <int kG>
struct DwStore {
  int32_t* out;
  int64_t ldo;
  explicit DwStore(const DwOut& a) : out(a.out), ldo(a.ldo) {}
  void Put(int, int64_t r, int64_t c, __m512i s, __mmask16 m) const {
    _mm512_mask_storeu_epi32(out + r * ldo + c, m, s);
  }
  void Done(int, int64_t, __mmask16) const {}
};

// Per-channel bounds in registers, folded into ep.mn / ep.mx once per group.
template <int kG>
struct DwBounds {
  const I8Epilogue* ep;
  __m512i lo[kG], hi[kG];
  explicit DwBounds(const I8Epilogue& e) : ep(&e) {
    TERN_UNROLL for (int g = 0; g < kG; ++g) {
      lo[g] = _mm512_set1_epi32(INT32_MAX);
      hi[g] = _mm512_set1_epi32(INT32_MIN);
    }
  }
  void Put(int g, int64_t, int64_t, __m512i s, __mmask16) {
    lo[g] = _mm512_min_epi32(lo[g], s);
    hi[g] = _mm512_max_epi32(hi[g], s);
  }
  void Done(int g, int64_t c, __mmask16 m) const {
    int32_t* pn = ep->mn + c;
    int32_t* px = ep->mx + c;
    _mm512_mask_storeu_epi32(pn, m, _mm512_min_epi32(lo[g], _mm512_maskz_loadu_epi32(m, pn)));
    _mm512_mask_storeu_epi32(px, m, _mm512_max_epi32(hi[g], _mm512_maskz_loadu_epi32(m, px)));
  }
};

// The requant of i32_requant_i8 (c, bias, inv, mode, relu), per sum.
template <Round kMode, bool kRelu>
struct DwRequant {
  // The epilogue's fields copied, not read through a pointer: the int8 stores may alias
  // anything, so gcc would reload them after every store (as RequantEp in gemm_i8.cc).
  template <int kG>
  struct Ep {
    const float* bias;
    int8_t* q;
    int64_t ldq;
    __m512 c, inv;
    explicit Ep(const I8Epilogue& e)
        : bias(e.bias), q(e.q), ldq(e.ldq), c(_mm512_set1_ps(e.c)), inv(_mm512_set1_ps(e.inv)) {}
    void Put(int, int64_t r, int64_t ch, __m512i s, __mmask16 m) const {
      __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(s), c);
      if (bias != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, bias + ch));
      _mm_mask_storeu_epi8(q + r * ldq + ch, m,
                           _mm512_cvtepi32_epi8(ScaleRoundI32<kMode, kRelu>(y, inv)));
    }
    void Done(int, int64_t, __mmask16) const {}
  };
};

template <Round kMode, bool kRelu>
void Dw8Requant(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
                int64_t n, const I8Epilogue& ep) {
  Dw8<DwRequant<kMode, kRelu>::template Ep>(x, ldx, w, ldw, rows, n, ep);
}

}  // namespace

void Dw8I8I32(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
              int64_t n, int32_t* out, int64_t ldo) {
  Dw8<DwStore>(x, ldx, w, ldw, rows, n, DwOut{out, ldo});
}

void Dw8I8Ep(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
             int64_t n, const I8Epilogue& ep) {
  if (ep.q == nullptr) return Dw8<DwBounds>(x, ldx, w, ldw, rows, n, ep);
  const bool even = ep.mode == Round::kHalfEven;
  (ep.relu ? (even ? Dw8Requant<Round::kHalfEven, true> : Dw8Requant<Round::kHalfAway, true>)
           : (even ? Dw8Requant<Round::kHalfEven, false> : Dw8Requant<Round::kHalfAway, false>))(
      x, ldx, w, ldw, rows, n, ep);
}

// kernels/expf_poly.h's sequence 16 lanes at a time.
void SiluMulF32(const float* g, const float* u, int64_t n, float* out) {
  using namespace expf_poly;
  const __m512 lo = _mm512_set1_ps(kExpMin), hi = _mm512_set1_ps(kExpMax);
  const __m512 log2e = _mm512_set1_ps(kLog2e), magic = _mm512_set1_ps(kRoundMagic);
  const __m512 ln2hi = _mm512_set1_ps(kLn2Hi), ln2lo = _mm512_set1_ps(kLn2Lo);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    const __m512 x = _mm512_maskz_loadu_ps(m, g + i);
    const __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_xor_ps(x, _mm512_set1_ps(-0.0f)), lo), hi);
    const __m512 nf = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(t, log2e), magic), magic);
    const __m512 r =
        _mm512_sub_ps(_mm512_sub_ps(t, _mm512_mul_ps(nf, ln2hi)), _mm512_mul_ps(nf, ln2lo));
    __m512 p = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(kP0), r), _mm512_set1_ps(kP1));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kP2));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kP3));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kP4));
    p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kP5));
    const __m512i bits = _mm512_slli_epi32(
        _mm512_add_epi32(_mm512_cvttps_epi32(nf), _mm512_set1_epi32(127)), 23);
    const __m512 e = _mm512_mul_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r), one),
        _mm512_castsi512_ps(bits));
    const __m512 y = _mm512_mul_ps(_mm512_div_ps(x, _mm512_add_ps(one, e)),
                                   _mm512_maskz_loadu_ps(m, u + i));
    _mm512_mask_storeu_ps(out + i, m, y);
  }
}

}  // namespace tern::kernels::avx512
