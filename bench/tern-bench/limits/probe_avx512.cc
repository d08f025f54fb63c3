// AVX-512 probes (compiled with the AVX-512 kernels' flags only): 512-bit streaming loads and
// vpdpbusd zmm, as research limits.c measures them.
#include <immintrin.h>

#include "probes.h"

namespace tern::cli::bench::limits {

int64_t ReadSumAvx512(const int64_t* p, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0;
  for (size_t i = 0; i < n; i += 64) {
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(p + i + 0));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(p + i + 8));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(p + i + 16));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(p + i + 24));
    a4 = _mm512_add_epi64(a4, _mm512_load_si512(p + i + 32));
    a5 = _mm512_add_epi64(a5, _mm512_load_si512(p + i + 40));
    a6 = _mm512_add_epi64(a6, _mm512_load_si512(p + i + 48));
    a7 = _mm512_add_epi64(a7, _mm512_load_si512(p + i + 56));
  }
  a0 = _mm512_add_epi64(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)),
                        _mm512_add_epi64(_mm512_add_epi64(a4, a5), _mm512_add_epi64(a6, a7)));
  return _mm512_reduce_add_epi64(a0);
}

void DotAvx512Vnni(long iters) {
#define TERN_I(r) "vpdpbusd %%zmm12, %%zmm13, %%zmm" #r "\n\t"
  for (long i = 0; i < iters; ++i) {
    __asm__ volatile(TERN_I(0) TERN_I(1) TERN_I(2) TERN_I(3) TERN_I(4) TERN_I(5) TERN_I(6) TERN_I(7)
                         TERN_I(8) TERN_I(9) TERN_I(10) TERN_I(11)::
                             : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                               "xmm8", "xmm9", "xmm10", "xmm11");
  }
#undef TERN_I
  _mm256_zeroupper();
}

}  // namespace tern::cli::bench::limits
