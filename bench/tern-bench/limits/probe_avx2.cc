// AVX2 probes (compiled with -mavx2 only): 256-bit streaming loads, and the AVX2 kernels'
// int8 dot sequence (research limits.c k_avx2seq).
#include <immintrin.h>

#include "probes.h"

namespace tern::cli::bench::limits {

int64_t ReadSumAvx2(const int64_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0;
  for (size_t i = 0; i < n; i += 32) {
    const __m256i* q = reinterpret_cast<const __m256i*>(p + i);
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(q + 0));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(q + 1));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(q + 2));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(q + 3));
    a4 = _mm256_add_epi64(a4, _mm256_load_si256(q + 4));
    a5 = _mm256_add_epi64(a5, _mm256_load_si256(q + 5));
    a6 = _mm256_add_epi64(a6, _mm256_load_si256(q + 6));
    a7 = _mm256_add_epi64(a7, _mm256_load_si256(q + 7));
  }
  a0 = _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)),
                        _mm256_add_epi64(_mm256_add_epi64(a4, a5), _mm256_add_epi64(a6, a7)));
  alignas(32) int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a0);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

void DotAvx2(long iters) {
#define TERN_S(r)                         \
  "vpmaddubsw %%ymm12, %%ymm13, %%ymm" #r \
  "\n\t"                                  \
  "vpmaddwd %%ymm14, %%ymm" #r ", %%ymm" #r "\n\t"
  for (long i = 0; i < iters; ++i) {
    __asm__ volatile(TERN_S(0) TERN_S(1) TERN_S(2) TERN_S(3) TERN_S(4) TERN_S(5)
                     "vpaddd %%ymm0, %%ymm6, %%ymm6\n\t"
                     "vpaddd %%ymm1, %%ymm7, %%ymm7\n\t"
                     "vpaddd %%ymm2, %%ymm8, %%ymm8\n\t"
                     "vpaddd %%ymm3, %%ymm9, %%ymm9\n\t"
                     "vpaddd %%ymm4, %%ymm10, %%ymm10\n\t"
                     "vpaddd %%ymm5, %%ymm11, %%ymm11\n\t" ::
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                           "xmm8", "xmm9", "xmm10", "xmm11");
  }
#undef TERN_S
  _mm256_zeroupper();
}

}  // namespace tern::cli::bench::limits
