// Horizontal sums of 16 vectors at once (AVX-512 TUs only). static: an inline function with
// external linkage compiled here could be shared with code built without AVX-512
// (packing.h explains the hazard).
#pragma once

#include <immintrin.h>

namespace tern::kernels::avx512 {

// Lane r of the result = the sum of the 16 int32 lanes of a[r]: a transpose-and-add tree,
// ~3 shuffles and adds per vector where _mm512_reduce_add_epi32 spends a dependent chain of
// nine on each.
static inline __m512i Transpose16Sum(const __m512i (&a)[16]) {
  __m512i b[8], c[4], d[2];
  // b[i], 128-bit lane L: vectors (2i, 2i+1, 2i, 2i+1), each the sum of two of its lane-L
  // values.
  for (int i = 0; i < 8; ++i)
    b[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(a[2 * i], a[2 * i + 1]),
                            _mm512_unpackhi_epi32(a[2 * i], a[2 * i + 1]));
  // c[i], lane L: vectors 4i .. 4i+3, each its lane-L total.
  for (int i = 0; i < 4; ++i)
    c[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(b[2 * i], b[2 * i + 1]),
                            _mm512_unpackhi_epi64(b[2 * i], b[2 * i + 1]));
  // Lanes (0, 2, 0, 2) of two vectors plus their (1, 3, 1, 3), twice: the four lane totals.
  for (int i = 0; i < 2; ++i)
    d[i] = _mm512_add_epi32(_mm512_shuffle_i32x4(c[2 * i], c[2 * i + 1], 0x88),
                            _mm512_shuffle_i32x4(c[2 * i], c[2 * i + 1], 0xdd));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(d[0], d[1], 0x88),
                          _mm512_shuffle_i32x4(d[0], d[1], 0xdd));
}

}  // namespace tern::kernels::avx512
