// NEON + dotprod (ARMv8.2-A SDOT) ternary I2_S x int8 GEMM, on the NEON packed layout
// (canonical with code 3 rewritten to 1; see kernels/neon/gemm_i2s.cc).
//
// Only the dotprod TUs are built with -march=armv8.2-a+dotprod, and dispatch reaches them
// only after HWCAP_ASIMDDP was seen: GCC may hoist an SDOT out of a runtime `if`, so the
// flag must never reach code that could run before that check. Hence no library includes
// with inline code here, only <arm_neon.h> and file-local functions.
//
// vdotq_s32 adds four int8 x int8 products straight into each int32 lane: no int16 stage.
// Codes {0,1,2} are valid signed int8, so SDOT on the raw codes gives D = sum code*q and
// the epilogue subtracts S exactly like scalar.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/neon/dotprod/impl.h"

namespace tern::kernels::neon_dotprod {
namespace {

constexpr int kTileJ = 4;

// Same decoding as the baseline TU (kernels/neon/gemm_i2s.cc): c[i] pairs with activation
// bytes [16i, 16i+16) of the 128-value block.
inline void DecodeI2sBlock(const uint8_t* wb, int8x16_t c[8]) {
  const uint8x16_t lo = vld1q_u8(wb), hi = vld1q_u8(wb + 16);
  const uint8x16_t m3 = vdupq_n_u8(3);
  c[0] = vreinterpretq_s8_u8(vshrq_n_u8(lo, 6));
  c[1] = vreinterpretq_s8_u8(vshrq_n_u8(hi, 6));
  c[2] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(lo, 4), m3));
  c[3] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(hi, 4), m3));
  c[4] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(lo, 2), m3));
  c[5] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(hi, 2), m3));
  c[6] = vreinterpretq_s8_u8(vandq_u8(lo, m3));
  c[7] = vreinterpretq_s8_u8(vandq_u8(hi, m3));
}

// int32 bound: |D| <= 2 * 128 * K, far inside int32 for any K below 8 million.
template <int NJ>
inline void DotI2s(const uint8_t* wr, int64_t blocks, const int8_t* q, int64_t ldq, int32_t* d) {
  int32x4_t acc[NJ];
  for (int t = 0; t < NJ; ++t) acc[t] = vdupq_n_s32(0);
  for (int64_t b = 0; b < blocks; ++b) {
    int8x16_t c[8];
    DecodeI2sBlock(wr + 32 * b, c);
    for (int t = 0; t < NJ; ++t) {
      const int8_t* qb = q + t * ldq + 128 * b;
      int32x4_t a0 = acc[t], a1 = vdupq_n_s32(0);
      for (int i = 0; i < 8; i += 2) {
        a0 = vdotq_s32(a0, c[i], vld1q_s8(qb + 16 * i));
        a1 = vdotq_s32(a1, c[i + 1], vld1q_s8(qb + 16 * i + 16));
      }
      acc[t] = vaddq_s32(a0, a1);
    }
  }
  for (int t = 0; t < NJ; ++t) d[t] = vaddvq_s32(acc[t]);
}

}  // namespace

void GemmI2sI8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
               float w_scale, const int8_t* q, int64_t ldq, const float* scale, const int32_t* sums,
               int64_t n, float* out, int64_t ldo) {
  const int64_t blocks = k / 128;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* wr = w + r * (k / 4);
    int32_t d[kTileJ];
    for (int64_t j = 0; j < n; j += kTileJ) {
      const int64_t nj = n - j < kTileJ ? n - j : kTileJ;
      if (nj == kTileJ) {
        DotI2s<kTileJ>(wr, blocks, q + j * ldq, ldq, d);
      } else {
        for (int64_t t = 0; t < nj; ++t) DotI2s<1>(wr, blocks, q + (j + t) * ldq, ldq, d + t);
      }
      // The epilogue of spec 2.3, in this order, in float.
      for (int64_t t = 0; t < nj; ++t) {
        out[(j + t) * ldo + r] = (static_cast<float>(d[t] - sums[j + t]) / scale[j + t]) * w_scale;
      }
    }
  }
}

}  // namespace tern::kernels::neon_dotprod
