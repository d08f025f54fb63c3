// AVX-512 encoder fills: the scalar loops 16 lanes at a time, same expression and order per
// element (no FMA: -ffp-contract=off), masked tails.
#include <immintrin.h>

#include "kernels/avx512/impl.h"
#include "kernels/expf_poly.h"

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

// Sums of squares 32 values at a time (int16 squares, pairs summed by vpmaddwd: exact), one
// reduction per row; then the float steps for 16 rows at once (vdivps and vsqrtps round
// exactly as the scalar divss and sqrtss).
void I8RmsFactors(const int8_t* q, int64_t rows, int64_t n, float eps, float* s) {
  alignas(64) int32_t ss[16];
  const __m512 vn = _mm512_set1_ps(static_cast<float>(n)), veps = _mm512_set1_ps(eps);
  for (int64_t j0 = 0; j0 < rows; j0 += 16) {
    const int64_t nr = rows - j0 < 16 ? rows - j0 : 16;
    for (int64_t r = 0; r < nr; ++r) {
      const int8_t* qr = q + (j0 + r) * n;
      __m512i acc = _mm512_setzero_si512();
      for (int64_t i = 0; i < n; i += 32) {
        const __mmask32 m = n - i >= 32 ? ~__mmask32(0) : (__mmask32(1) << (n - i)) - 1;
        const __m512i v = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, qr + i));
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(v, v));
      }
      ss[r] = _mm512_reduce_add_epi32(acc);
    }
    const __mmask16 m = TailMask(nr);
    const __m512 ms = _mm512_add_ps(
        _mm512_div_ps(_mm512_cvtepi32_ps(_mm512_maskz_load_epi32(m, ss)), vn), veps);
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

// 32 channels per step: int16 products (exact) summed in pairs in int16, widened once. The
// eight weight vectors stay in registers for all rows of the chunk.
void Dw8I8I32(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
              int64_t n, int32_t* out, int64_t ldo) {
  for (int64_t i = 0; i < n; i += 32) {
    const __mmask32 m = n - i >= 32 ? ~__mmask32(0) : (__mmask32(1) << (n - i)) - 1;
    const __mmask16 lo_m = static_cast<__mmask16>(m), hi_m = static_cast<__mmask16>(m >> 16);
    __m512i wv[8];
    for (int t = 0; t < 8; ++t)
      wv[t] = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, w + t * ldw + i));
    for (int64_t r = 0; r < rows; ++r) {
      const int8_t* xr = x + r * ldx + i;
      __m512i pair[4];
      for (int p = 0; p < 4; ++p) {
        const __m512i a = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, xr + 2 * p * ldx));
        const __m512i b =
            _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, xr + (2 * p + 1) * ldx));
        pair[p] = _mm512_add_epi16(_mm512_mullo_epi16(a, wv[2 * p]),
                                   _mm512_mullo_epi16(b, wv[2 * p + 1]));
      }
      __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
      for (int p = 0; p < 4; ++p) {
        lo = _mm512_add_epi32(lo, _mm512_cvtepi16_epi32(_mm512_castsi512_si256(pair[p])));
        hi = _mm512_add_epi32(hi, _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(pair[p], 1)));
      }
      _mm512_mask_storeu_epi32(out + r * ldo + i, lo_m, lo);
      _mm512_mask_storeu_epi32(out + r * ldo + i + 16, hi_m, hi);
    }
  }
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
