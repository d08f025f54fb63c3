// AVX2 activation quantization, absmax and requant: bit-exact with the scalar oracle
// (one _mm256_mul_ps per product, never fused; vcvtps2dq rounds half-even). Tails shorter
// than a vector go through a zero-padded copy, so no load ever passes the end of a row.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/avx2/impl.h"

namespace tern::kernels::avx2 {
namespace {

inline __m256 Abs(__m256 v) {
  return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
}

inline float HMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int32_t HSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// 8 int32 (already within int8 range) to 8 int8 stored at q.
inline void Store8(__m256i v, int8_t* q, int64_t count) {
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i b = _mm_packs_epi16(w16, w16);
  if (count >= 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q), b);
  } else {
    int8_t tmp[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tmp), b);
    std::memcpy(q, tmp, static_cast<size_t>(count));
  }
}

inline __m256 Load8(const float* x, int64_t count) {
  if (count >= 8) return _mm256_loadu_ps(x);
  float tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tmp, x, static_cast<size_t>(count) * sizeof(float));
  return _mm256_loadu_ps(tmp);
}

}  // namespace

float AbsmaxF32(const float* x, int64_t n) {
  __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(m0, Abs(_mm256_loadu_ps(x + i)));
    m1 = _mm256_max_ps(m1, Abs(_mm256_loadu_ps(x + i + 8)));
  }
  for (; i < n; i += 8) m0 = _mm256_max_ps(m0, Abs(Load8(x + i, n - i)));
  return HMax(_mm256_max_ps(m0, m1));
}

void QuantizeRowsI8(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q, int64_t ldq,
                    float* scale, int32_t* sums) {
  const __m256i lo = _mm256_set1_epi32(-128), hi = _mm256_set1_epi32(127);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    int8_t* qr = q + r * ldq;
    const double amax = std::fmax(1e-5, static_cast<double>(AbsmaxF32(xr, k)));
    const float s = static_cast<float>(127.0 / amax);
    const __m256 vs = _mm256_set1_ps(s);
    __m256i sum = _mm256_setzero_si256();
    for (int64_t i = 0; i < k; i += 8) {
      __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(Load8(xr + i, k - i), vs));
      v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
      sum = _mm256_add_epi32(sum, v);
      Store8(v, qr + i, k - i);
    }
    scale[r] = s;
    sums[r] = HSum(sum);
  }
}

namespace {

// Half-away: one add and a truncation (kBelowHalf in kernels.h says why it is exact).
// kNonNegative: v >= +0 is known (after the ReLU clamp), so the sign needs no copying.
template <Round kMode, bool kNonNegative = false>
inline __m256i RoundToI32(__m256 v) {
  if constexpr (kMode == Round::kHalfEven) {
    return _mm256_cvtps_epi32(v);
  } else if constexpr (kNonNegative) {
    return _mm256_cvttps_epi32(_mm256_add_ps(v, _mm256_set1_ps(kBelowHalf)));
  } else {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(int32_t(0x80000000)));
    const __m256 h = _mm256_or_ps(_mm256_and_ps(v, sign), _mm256_set1_ps(kBelowHalf));
    return _mm256_cvttps_epi32(_mm256_add_ps(v, h));
  }
}

// Requantizes n values that src(i, count) yields 8 at a time (lanes past count zero),
// clamping to [-127, 127], or to [0, 127] with kRelu (the ReLU of the rounded value:
// rounding is monotone and maps [-0.5, 0] to 0 in both modes). vmaxps(v, +0) returns +0
// for -0 and NaN as well, so after the ReLU clamp every lane is >= +0.
template <Round kMode, bool kRelu = false, typename Src>
void Requant(int64_t n, float inv, Src src, int8_t* q) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256 lo = _mm256_set1_ps(kRelu ? 0.0f : -127.0f), hi = _mm256_set1_ps(127.0f);
  auto round8 = [&](int64_t i, int64_t count) {
    const __m256 v = _mm256_mul_ps(src(i, count), vinv);
    return RoundToI32<kMode, kRelu>(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
  };
  // 32 values per step: the saturating packs (exact, |q| <= 127) leave dword 4L + s holding
  // values 4L..4L+3 of input vector s (L = 128-bit lane); one permute restores the order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = round8(i, 8), b = round8(i + 8, 8);
    const __m256i c = round8(i + 16, 8), d = round8(i + 24, 8);
    const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i),
                        _mm256_permutevar8x32_epi32(packed, order));
  }
  for (; i < n; i += 8) Store8(round8(i, n - i), q + i, n - i);
}

template <Round kMode>
void RequantF32(const float* x, int64_t n, float inv, int8_t* q) {
  Requant<kMode>(
      n, inv, [x](int64_t i, int64_t count) { return Load8(x + i, count); }, q);
}

inline __m256i LoadI32x8(const int32_t* x, int64_t count) {
  if (count >= 8) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  int32_t tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tmp, x, static_cast<size_t>(count) * sizeof(int32_t));
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tmp));
}

// The fused epilogue: y as I32AffineF32 (elementwise.cc) computes it.
template <Round kMode, bool kRelu>
void RequantI32(const int32_t* acc, int64_t rows, int64_t n, float c, const float* bias, float inv,
                int8_t* q) {
  const __m256 vc = _mm256_set1_ps(c);
  for (int64_t j = 0; j < rows; ++j) {
    const int32_t* a = acc + j * n;
    Requant<kMode, kRelu>(
        n, inv,
        [&](int64_t i, int64_t count) {
          const __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(LoadI32x8(a + i, count)), vc);
          return bias ? _mm256_add_ps(y, Load8(bias + i, count)) : y;
        },
        q + j * n);
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

}  // namespace tern::kernels::avx2
