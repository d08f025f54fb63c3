// AVX2 + F16C conversions: F16 <-> F32 with vcvtph2ps / vcvtps2ph (round to nearest even,
// the same results as the scalar bit-level code), and Q6_K rows in the oracle's exact order.
#include <immintrin.h>

#include <cstring>

#include "kernels/avx2/impl.h"
#include "tensor/blocks.h"

namespace tern::kernels::avx2 {

void F32ToF16(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  if (i < n) {
    float tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint16_t h[8];
    std::memcpy(tmp, x + i, static_cast<size_t>(n - i) * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h),
                     _mm256_cvtps_ph(_mm256_loadu_ps(tmp), _MM_FROUND_TO_NEAREST_INT));
    std::memcpy(out + i, h, static_cast<size_t>(n - i) * sizeof(uint16_t));
  }
}

void F16ToF32(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
  if (i < n) {
    uint16_t tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float f[8];
    std::memcpy(tmp, x + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
    _mm256_storeu_ps(f, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tmp))));
    std::memcpy(out + i, f, static_cast<size_t>(n - i) * sizeof(float));
  }
}

// The scalar loop's arithmetic, 8 values at a time: y = (d * sc) * (q - 32).
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
        const __m128i q[4] = {
            _mm_or_si128(_mm_and_si128(a, m4), _mm_slli_epi16(_mm_and_si128(h, m2), 4)),
            _mm_or_si128(_mm_and_si128(c, m4),
                         _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 2), m2), 4)),
            _mm_or_si128(_mm_and_si128(_mm_srli_epi16(a, 4), m4),
                         _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 4), m2), 4)),
            _mm_or_si128(_mm_and_si128(_mm_srli_epi16(c, 4), m4),
                         _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(h, 6), m2), 4))};
        for (int s = 0; s < 4; ++s) {
          const __m256 ds = _mm256_set1_ps(d * static_cast<float>(sc[is + 2 * s]));
          for (int part = 0; part < 2; ++part) {
            const __m128i bytes = part ? _mm_srli_si128(q[s], 8) : q[s];
            const __m256i qi = _mm256_sub_epi32(_mm256_cvtepu8_epi32(bytes), _mm256_set1_epi32(32));
            _mm256_storeu_ps(y + l + 32 * s + 8 * part, _mm256_mul_ps(ds, _mm256_cvtepi32_ps(qi)));
          }
        }
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace tern::kernels::avx2
