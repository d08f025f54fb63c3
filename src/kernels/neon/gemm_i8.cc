// NEON (ARMv8.0, no dotprod) int8 x int8 GEMM on canonical row-major weights.
//
// Products come from vmull_s8 (int16 lanes) and are widened into int32 with vpadalq_s16
// right after, so the result is exact int32 for any bytes (bound below). Tiling: one weight
// row against four activation rows, so each weight vector is loaded once per four dots.
#include <arm_neon.h>

#include <cstring>

#include "kernels/neon/impl.h"

namespace tern::kernels::neon {
namespace {

constexpr int kTileJ = 4;

// d[t] = sum_k w[k] * x_t[k]. int16 bound: each lane holds ONE product, |w*x| <= 128*128
// = 16384, before vpadalq_s16 adds lane pairs into int32. Two products per lane (vmlal)
// would still fit for the contract's x in [-127, 127] (2*128*127 = 32512) but wrap at
// w = x = -128 (32768), so the fallback stays exact for any input instead.
template <int NJ>
inline void DotI8(const int8_t* wr, int64_t k, const int8_t* x, int64_t ldx, int32_t* d) {
  int32x4_t acc[NJ];
  for (int t = 0; t < NJ; ++t) acc[t] = vdupq_n_s32(0);
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const int8x16_t wv = vld1q_s8(wr + i);
    for (int t = 0; t < NJ; ++t) {
      const int8x16_t xv = vld1q_s8(x + t * ldx + i);
      acc[t] = vpadalq_s16(acc[t], vmull_s8(vget_low_s8(wv), vget_low_s8(xv)));
      acc[t] = vpadalq_s16(acc[t], vmull_s8(vget_high_s8(wv), vget_high_s8(xv)));
    }
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

size_t I8PackedBytes(int64_t k, int64_t n_rows) { return static_cast<size_t>(n_rows * k); }

void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  std::memcpy(packed, canonical, static_cast<size_t>(n_rows * k));
}

}  // namespace tern::kernels::neon
