// AVX-512 activation quantization, absmax and requant: bit-exact with the scalar oracle.
// fl(x * s) is one _mm512_mul_ps (never fused), rounded half-even by vcvtps2dq under the
// default MXCSR; the amax is a float max, widened to double exactly as the oracle does.
#include <immintrin.h>

#include <cmath>

#include "kernels/avx512/impl.h"
#include "kernels/avx512/requant.h"

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

namespace {

template <Round kMode>
void RequantF32(const float* x, int64_t n, float inv, int8_t* q) {
  Requant<kMode>(
      n, inv, [x](int64_t i, __mmask16 m) { return _mm512_maskz_loadu_ps(m, x + i); }, q);
}

// One row of the fused epilogue: y as I32AffineF32 (elementwise.cc) computes it.
template <Round kMode, bool kBias, bool kRelu>
void RequantI32Row(const int32_t* acc, int64_t n, float c, const float* bias, float inv,
                   int8_t* q) {
  const __m512 vc = _mm512_set1_ps(c);
  Requant<kMode, kRelu>(
      n, inv,
      [&](int64_t i, __mmask16 m) {
        const __m512 y =
            _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, acc + i)), vc);
        if constexpr (kBias) return _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, bias + i));
        return y;
      },
      q);
}

template <Round kMode, bool kRelu>
void RequantI32(const int32_t* acc, int64_t rows, int64_t n, float c, const float* bias, float inv,
                int8_t* q) {
  if (n % 16 == 0) {
    // Whole vectors per row: the rows run on as one stream (Requant's 64-byte stores then
    // serve rows of 32 too), the bias restarting at each row. Requant asks for the vectors
    // in order, so a running column finds the bias.
    const __m512 vc = _mm512_set1_ps(c);
    int64_t col = 0;
    Requant<kMode, kRelu>(
        rows * n, inv,
        [&](int64_t i, __mmask16) {
          __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(acc + i)), vc);
          if (bias != nullptr) y = _mm512_add_ps(y, _mm512_loadu_ps(bias + col));
          col = col + 16 == n ? 0 : col + 16;
          return y;
        },
        q);
    return;
  }
  for (int64_t j = 0; j < rows; ++j) {
    if (bias)
      RequantI32Row<kMode, true, kRelu>(acc + j * n, n, c, bias, inv, q + j * n);
    else
      RequantI32Row<kMode, false, kRelu>(acc + j * n, n, c, bias, inv, q + j * n);
  }
}

}  // namespace

// q = round(clamp(x * inv, -127, 127)), half-even by vcvtps2dq or half-away as above.
void RequantF32I8(const float* x, int64_t n, float inv, Round mode, int8_t* q) {
  (mode == Round::kHalfEven ? RequantF32<Round::kHalfEven> : RequantF32<Round::kHalfAway>)(x, n,
                                                                                           inv, q);
}

void I32RequantI8(const int32_t* acc, int64_t rows, int64_t n, float c, const float* bias,
                  float inv, Round mode, bool relu, int8_t* q) {
  const bool even = mode == Round::kHalfEven;
  (relu ? (even ? RequantI32<Round::kHalfEven, true> : RequantI32<Round::kHalfAway, true>)
        : (even ? RequantI32<Round::kHalfEven, false> : RequantI32<Round::kHalfAway, false>))(
      acc, rows, n, c, bias, inv, q);
}

}  // namespace tern::kernels::avx512
