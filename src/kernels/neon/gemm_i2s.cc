// NEON (ARMv8.0, no dotprod) ternary I2_S x int8 GEMM, and the NEON I2_S packing.
//
// Layout: canonical (spec 2.2.2) with code 3 rewritten to 1 at pack time. A 128-value
// block is 32 bytes; byte p holds block positions p, p+32, p+64, p+96 in bit pairs
// 7:6, 5:4, 3:2, 1:0. Decoding bytes [0,16) and [16,32) with shifts 6, 4, 2, 0 gives eight
// code vectors c[i] that line up with activation bytes [16i, 16i+16): no shuffles.
//
// Products come from vmull_s8/vmlal_s8 (int8 x int8 -> int16 lanes) and are widened into
// int32 with vpadalq_s16 after a bounded number of products per lane (bound below), so D
// is exact int32 and the float epilogue matches the scalar oracle bit for bit.
// Tiling: one weight row against four activation rows, so codes are decoded once per four
// dot products.
#include <arm_neon.h>

#include "kernels/neon/impl.h"

namespace tern::kernels::neon {
namespace {

constexpr int kTileJ = 4;

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

// d[t] = sum_k code[k] * q_t[k] for NJ activation rows q + t*ldq.
// int16 bound: per block each lane of p0 and of p1 takes 8 products code*q with code in
// [0,2] (packing removed 3) and q in [-128,127], so |lane| <= 8 * 2 * 128 = 2048 < 32767
// before vpadalq_s16 widens it into int32. (Even code 3 would only give 3072.)
template <int NJ>
inline void DotI2s(const uint8_t* wr, int64_t blocks, const int8_t* q, int64_t ldq, int32_t* d) {
  int32x4_t acc[NJ];
  for (int t = 0; t < NJ; ++t) acc[t] = vdupq_n_s32(0);
  for (int64_t b = 0; b < blocks; ++b) {
    int8x16_t c[8];
    DecodeI2sBlock(wr + 32 * b, c);
    for (int t = 0; t < NJ; ++t) {
      const int8_t* qb = q + t * ldq + 128 * b;
      int16x8_t p0 = vdupq_n_s16(0), p1 = vdupq_n_s16(0);
      for (int i = 0; i < 8; i += 2) {
        const int8x16_t x0 = vld1q_s8(qb + 16 * i), x1 = vld1q_s8(qb + 16 * i + 16);
        p0 = vmlal_s8(p0, vget_low_s8(c[i]), vget_low_s8(x0));
        p0 = vmlal_s8(p0, vget_high_s8(c[i]), vget_high_s8(x0));
        p1 = vmlal_s8(p1, vget_low_s8(c[i + 1]), vget_low_s8(x1));
        p1 = vmlal_s8(p1, vget_high_s8(c[i + 1]), vget_high_s8(x1));
      }
      acc[t] = vpadalq_s16(vpadalq_s16(acc[t], p0), p1);
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

size_t I2sPackedBytes(int64_t k, int64_t n_rows) { return static_cast<size_t>(n_rows * k / 4); }

// Canonical bytes with every code 3 (bits 11) turned into 1 (bits 01): clear the high bit
// of each pair whose low bit is also set.
void PackI2s(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  const int64_t bytes = n_rows * k / 4;
  const uint8x16_t hi_bits = vdupq_n_u8(0xaa), lo_bits = vdupq_n_u8(0x55);
  int64_t i = 0;
  for (; i + 16 <= bytes; i += 16) {
    const uint8x16_t v = vld1q_u8(canonical + i);
    const uint8x16_t both = vandq_u8(v, vshlq_n_u8(vandq_u8(v, lo_bits), 1));
    vst1q_u8(packed + i, veorq_u8(v, vandq_u8(both, hi_bits)));
  }
  for (; i < bytes; ++i) {
    const uint8_t v = canonical[i];
    packed[i] = static_cast<uint8_t>(v ^ (v & ((v & 0x55) << 1) & 0xaa));
  }
}

}  // namespace tern::kernels::neon
