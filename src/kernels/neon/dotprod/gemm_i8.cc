// NEON + dotprod (ARMv8.2-A SDOT) int8 x int8 GEMM on canonical row-major weights.
//
// Only the dotprod TUs are built with -march=armv8.2-a+dotprod, and dispatch reaches them
// only after HWCAP_ASIMDDP was seen: GCC may hoist an SDOT out of a runtime `if`, so the
// flag must never reach code that could run before that check. Hence no library includes
// with inline code here, only <arm_neon.h> and file-local functions.
//
// vdotq_s32 adds four int8 x int8 products straight into each int32 lane: no int16 stage,
// exact for any input bytes (|D| <= 16384 * K).
#include <arm_neon.h>

#include <cstdint>

#include "kernels/neon/dotprod/impl.h"

namespace tern::kernels::neon_dotprod {
namespace {

constexpr int kTileJ = 4;

template <int NJ>
inline void DotI8(const int8_t* wr, int64_t k, const int8_t* x, int64_t ldx, int32_t* d) {
  int32x4_t acc[NJ];
  for (int t = 0; t < NJ; ++t) acc[t] = vdupq_n_s32(0);
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const int8x16_t wv = vld1q_s8(wr + i);
    for (int t = 0; t < NJ; ++t) acc[t] = vdotq_s32(acc[t], wv, vld1q_s8(x + t * ldx + i));
  }
  for (int t = 0; t < NJ; ++t) {
    int32_t s = vaddvq_s32(acc[t]);
    for (int64_t j = i; j < k; ++j) s += int32_t{wr[j]} * int32_t{x[t * ldx + j]};
    d[t] = s;
  }
}

}  // namespace

void GemmI8I8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo) {
  const int8_t* wi = reinterpret_cast<const int8_t*>(w);
  for (int64_t r = r0; r < r1; ++r) {
    const int8_t* wr = wi + r * k;
    int32_t d[kTileJ];
    for (int64_t j = 0; j < n; j += kTileJ) {
      const int64_t nj = n - j < kTileJ ? n - j : kTileJ;
      if (nj == kTileJ) {
        DotI8<kTileJ>(wr, k, x + j * ldx, ldx, d);
      } else {
        for (int64_t t = 0; t < nj; ++t) DotI8<1>(wr, k, x + (j + t) * ldx, ldx, d + t);
      }
      for (int64_t t = 0; t < nj; ++t) acc[(j + t) * ldo + r] = d[t];
    }
  }
}

}  // namespace tern::kernels::neon_dotprod
