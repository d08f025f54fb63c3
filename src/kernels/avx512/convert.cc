// AVX-512 conversions: F16 <-> F32 with vcvtph2ps / vcvtps2ph (round to nearest even, the
// same results as the scalar bit-level code), and Q6_K rows in the oracle's exact order.
#include <immintrin.h>

#include "kernels/avx512/impl.h"
#include "tensor/blocks.h"

namespace tern::kernels::avx512 {
namespace {

inline __mmask16 TailMask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

}  // namespace

void F32ToF16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(out + i, m, h);
  }
}

void F16ToF32(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)));
  }
}

// The scalar loop's arithmetic, 16 values at a time: y = (d * sc) * (q - 32).
void DequantRowQ6K(const void* blocks, int64_t k, float* out) {
  const BlockQ6_K* b = static_cast<const BlockQ6_K*>(blocks);
  const __m128i m4 = _mm_set1_epi8(15), m2 = _mm_set1_epi8(3);
  for (int64_t i = 0; i < k / kQ6_KBlockElems; ++i) {
    const float d = _cvtsh_ss(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    float* y = out + i * kQ6_KBlockElems;
    for (int half = 0; half < 2; ++half) {
      for (int l = 0; l < 32; l += 16) {
        const int is = l / 16;
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ql + l));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ql + l + 32));
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh + l));
        // 6-bit codes: low nibble | 2 high bits << 4 (shifts on 16-bit lanes, then masked).
        const __m128i q[4] = {
            _mm_or_si128(_mm_and_si128(a, m4), _mm_slli_epi16(_mm_and_si128(h, m2), 4)),
            _mm_or_si128(_mm_and_si128(c, m4),
                         _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 2), m2), 4)),
            _mm_or_si128(_mm_and_si128(_mm_srli_epi16(a, 4), m4),
                         _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 4), m2), 4)),
            _mm_or_si128(_mm_and_si128(_mm_srli_epi16(c, 4), m4),
                         _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 6), m2), 4))};
        for (int s = 0; s < 4; ++s) {
          const __m512 ds = _mm512_set1_ps(d * static_cast<float>(sc[is + 2 * s]));
          const __m512i qi = _mm512_sub_epi32(_mm512_cvtepu8_epi32(q[s]), _mm512_set1_epi32(32));
          _mm512_storeu_ps(y + l + 32 * s, _mm512_mul_ps(ds, _mm512_cvtepi32_ps(qi)));
        }
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace tern::kernels::avx512
