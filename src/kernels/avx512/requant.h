// AVX-512 requantization of 16 floats to int32 in [-127, 127]: shared by the requant entries
// (quantize.cc), the fused fills (elementwise.cc) and the GEMM's fused epilogue (gemm_i8.cc),
// so all give the same bytes. The stream version is static: a template with external
// linkage compiled here could be shared with code built without AVX-512 (packing.h).
#pragma once

#include <immintrin.h>

#include "kernels/kernels.h"

namespace tern::kernels::avx512 {

// Half-away: one add and a truncation (kBelowHalf in kernels.h says why it is exact).
// kNonNegative: v >= +0 is known (after the ReLU clamp), so the sign needs no copying.
template <Round kMode, bool kNonNegative = false>
inline __m512i RoundToI32(__m512 v) {
  if constexpr (kMode == Round::kHalfEven) {
    return _mm512_cvtps_epi32(v);
  } else if constexpr (kNonNegative) {
    return _mm512_cvttps_epi32(_mm512_add_ps(v, _mm512_set1_ps(kBelowHalf)));
  } else {
    // h = (v & sign bit) | kBelowHalf: copysign(kBelowHalf, v) in one vpternlogd (0xea:
    // (A & B) | C).
    const __m512 h = _mm512_castsi512_ps(
        _mm512_ternarylogic_epi32(_mm512_castps_si512(v), _mm512_set1_epi32(int32_t(0x80000000)),
                                  _mm512_castps_si512(_mm512_set1_ps(kBelowHalf)), 0xea));
    return _mm512_cvttps_epi32(_mm512_add_ps(v, h));
  }
}

// round(clamp(y * inv, -127, 127)), or clamped to [0, 127] with kRelu (the ReLU of the
// rounded value: rounding is monotone and maps [-0.5, 0] to 0 in both modes). vmaxps(v, +0)
// returns +0 for -0 and NaN as well, so after the ReLU clamp every lane is >= +0.
template <Round kMode, bool kRelu>
inline __m512i ScaleRoundI32(__m512 y, __m512 inv) {
  const __m512 hi = _mm512_set1_ps(127.0f);
  const __m512 v = _mm512_mul_ps(y, inv);
  if constexpr (kRelu) {
    return RoundToI32<kMode, true>(_mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), hi));
  } else {
    // vrangeps imm 0b0010: the operand of smaller magnitude, with v's sign: clamp(v, -127,
    // 127) in one instruction, infinities included.
    return RoundToI32<kMode, false>(_mm512_range_ps(v, hi, 0x02));
  }
}

// Requantizes n values that src(i, mask) yields 16 at a time, in order of i (masked lanes
// zero), clamping to [-127, 127], or to [0, 127] with kRelu.
template <Round kMode, bool kRelu = false, typename Src>
static inline void Requant(int64_t n, float inv, Src src, int8_t* q) {
  const __m512 vinv = _mm512_set1_ps(inv);
  auto round16 = [&](int64_t i, __mmask16 m) {
    return ScaleRoundI32<kMode, kRelu>(src(i, m), vinv);
  };
  // 64 values per step: two saturating packs (exact, |q| <= 127) leave dword 4L + s holding
  // values 4L..4L+3 of input vector s; one permute restores the order for a single store.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i a = round16(i, 0xffff), b = round16(i + 16, 0xffff);
    const __m512i c = round16(i + 32, 0xffff), d = round16(i + 48, 0xffff);
    const __m512i packed = _mm512_packs_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d));
    _mm512_storeu_si512(q + i, _mm512_permutexvar_epi32(order, packed));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    _mm_mask_storeu_epi8(q + i, m, _mm512_cvtepi32_epi8(round16(i, m)));
  }
}

}  // namespace tern::kernels::avx512
