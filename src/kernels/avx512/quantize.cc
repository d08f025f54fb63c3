// AVX-512 activation quantization, absmax and requant: bit-exact with the scalar oracle.
// fl(x * s) is one _mm512_mul_ps (never fused), rounded half-even by vcvtps2dq under the
// default MXCSR; the amax is a float max, widened to double exactly as the oracle does.
#include <immintrin.h>

#include <cmath>

#include "kernels/avx512/impl.h"

namespace tern::kernels::avx512 {
namespace {

inline __mmask16 TailMask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

inline __m512 Abs(__m512 v) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
}

}  // namespace

float AbsmaxF32(const float* x, int64_t n) {
  __m512 m0 = _mm512_setzero_ps(), m1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm512_max_ps(m0, Abs(_mm512_loadu_ps(x + i)));
    m1 = _mm512_max_ps(m1, Abs(_mm512_loadu_ps(x + i + 16)));
  }
  for (; i < n; i += 16) m0 = _mm512_max_ps(m0, Abs(_mm512_maskz_loadu_ps(TailMask(n - i), x + i)));
  return _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
}

void QuantizeRowsI8(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q, int64_t ldq,
                    float* scale, int32_t* sums) {
  const __m512i lo = _mm512_set1_epi32(-128), hi = _mm512_set1_epi32(127);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    int8_t* qr = q + r * ldq;
    const double amax = std::fmax(1e-5, static_cast<double>(AbsmaxF32(xr, k)));
    const float s = static_cast<float>(127.0 / amax);
    const __m512 vs = _mm512_set1_ps(s);
    __m512i sum = _mm512_setzero_si512();
    for (int64_t i = 0; i < k; i += 16) {
      const __mmask16 m = TailMask(k - i);
      __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + i), vs));
      v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
      sum = _mm512_add_epi32(sum, v);
      _mm_mask_storeu_epi8(qr + i, m, _mm512_cvtepi32_epi8(v));
    }
    scale[r] = s;
    sums[r] = _mm512_reduce_add_epi32(sum);
  }
}

// q = round(clamp(x * inv, -127, 127)); half-away is trunc(v) + (|v - trunc(v)| >= 0.5 ?
// sign(v) : 0), exact because v - trunc(v) is exact in float.
void RequantF32I8(const float* x, int64_t n, float inv, Round mode, int8_t* q) {
  const __m512 vinv = _mm512_set1_ps(inv);
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vinv);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    if (mode == Round::kHalfAway) {
      const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __mmask16 up = _mm512_cmp_ps_mask(Abs(_mm512_sub_ps(v, t)), half, _CMP_GE_OQ);
      const __m512 sgn = _mm512_castsi512_ps(_mm512_or_si512(
          _mm512_castps_si512(one),
          _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(int32_t(0x80000000)))));
      v = _mm512_mask_add_ps(t, up, t, sgn);
    }
    _mm_mask_storeu_epi8(q + i, m, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
  }
}

}  // namespace tern::kernels::avx512
