// NEON (ARMv8.0) conversions: F32 <-> F16 and Q6_K rows to F32.
//
// FCVTL/FCVTN are IEEE binary16 conversions in the base ISA: round to nearest even under the
// default FPCR, subnormals kept, NaNs quieted with their top payload bits, which is exactly
// what the scalar oracle (and F16C) produce. Tails go through zero-padded vectors.
//
// Q6_K (spec 2.5, layout in tensor/quant_ref.h), per 128-value half of a block, l < 32,
// is = l / 16:
//   y[l]    = d*sc[is+0]*((ql[l]    & 15 | (qh[l] >> 0 & 3) << 4) - 32)
//   y[l+32] = d*sc[is+2]*((ql[l+32] & 15 | (qh[l] >> 2 & 3) << 4) - 32)
//   y[l+64] = d*sc[is+4]*((ql[l]    >> 4 | (qh[l] >> 4 & 3) << 4) - 32)
//   y[l+96] = d*sc[is+6]*((ql[l+32] >> 4 | (qh[l] >> 6 & 3) << 4) - 32)
// then ql += 64, qh += 32, sc += 8. Sixteen consecutive l share one scale, so one vector
// of 16 codes takes one broadcast (d*sc). Every product is exact in float (d has 11
// significant bits, |sc*(q-32)| <= 4096 at most 12), so the result equals scalar exactly.
#include <arm_neon.h>

#include <cstring>

#include "kernels/neon/impl.h"
#include "tensor/blocks.h"

namespace tern::kernels::neon {
namespace {

inline float32x4_t LoF16(uint16x8_t h) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(h)));
}
inline float32x4_t HiF16(uint16x8_t h) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(h)));
}

// y[0..16) = float(v) * ds for 16 int8 values.
inline void Store16(int8x16_t v, float ds, float* y) {
  const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_s8(vget_high_s8(v));
  const float32x4_t s = vdupq_n_f32(ds);
  vst1q_f32(y, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), s));
  vst1q_f32(y + 4, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo))), s));
  vst1q_f32(y + 8, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), s));
  vst1q_f32(y + 12, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi))), s));
}

}  // namespace

void F32ToF16(const float* x, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x4_t lo = vcvt_f16_f32(vld1q_f32(x + i));
    const float16x8_t h = vcvt_high_f16_f32(lo, vld1q_f32(x + i + 4));
    vst1q_u16(out + i, vreinterpretq_u16_f16(h));
  }
  if (i < n) {
    float xpad[8] = {};
    uint16_t opad[8];
    std::memcpy(xpad, x + i, (n - i) * sizeof(float));
    const float16x4_t lo = vcvt_f16_f32(vld1q_f32(xpad));
    vst1q_u16(opad, vreinterpretq_u16_f16(vcvt_high_f16_f32(lo, vld1q_f32(xpad + 4))));
    std::memcpy(out + i, opad, (n - i) * sizeof(uint16_t));
  }
}

void F16ToF32(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t h = vld1q_u16(x + i);
    vst1q_f32(out + i, LoF16(h));
    vst1q_f32(out + i + 4, HiF16(h));
  }
  if (i < n) {
    uint16_t xpad[8] = {};
    float opad[8];
    std::memcpy(xpad, x + i, (n - i) * sizeof(uint16_t));
    const uint16x8_t h = vld1q_u16(xpad);
    vst1q_f32(opad, LoF16(h));
    vst1q_f32(opad + 4, HiF16(h));
    std::memcpy(out + i, opad, (n - i) * sizeof(float));
  }
}

void DequantRowQ6K(const void* blocks, int64_t k, float* out) {
  const BlockQ6_K* blk = static_cast<const BlockQ6_K*>(blocks);
  const uint8x16_t m4 = vdupq_n_u8(15), m3 = vdupq_n_u8(3);
  const int8x16_t bias = vdupq_n_s8(32);
  for (int64_t b = 0; b < k / kQ6_KBlockElems; ++b) {
    const uint8_t* ql = blk[b].ql;
    const uint8_t* qh = blk[b].qh;
    const int8_t* sc = blk[b].scales;
    const float d = vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(blk[b].d))), 0);
    float* y = out + b * kQ6_KBlockElems;
    for (int half = 0; half < 2; ++half) {
      for (int l = 0; l < 32; l += 16) {
        const int is = l / 16;
        const uint8x16_t a = vld1q_u8(ql + l), c = vld1q_u8(ql + l + 32);
        const uint8x16_t h = vld1q_u8(qh + l);
        const uint8x16_t q1 = vorrq_u8(vandq_u8(a, m4), vshlq_n_u8(vandq_u8(h, m3), 4));
        const uint8x16_t q2 =
            vorrq_u8(vandq_u8(c, m4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 2), m3), 4));
        const uint8x16_t q3 =
            vorrq_u8(vshrq_n_u8(a, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 4), m3), 4));
        const uint8x16_t q4 = vorrq_u8(vshrq_n_u8(c, 4), vshlq_n_u8(vshrq_n_u8(h, 6), 4));
        Store16(vsubq_s8(vreinterpretq_s8_u8(q1), bias), d * sc[is + 0], y + l);
        Store16(vsubq_s8(vreinterpretq_s8_u8(q2), bias), d * sc[is + 2], y + l + 32);
        Store16(vsubq_s8(vreinterpretq_s8_u8(q3), bias), d * sc[is + 4], y + l + 64);
        Store16(vsubq_s8(vreinterpretq_s8_u8(q4), bias), d * sc[is + 6], y + l + 96);
      }
      ql += 64;
      qh += 32;
      sc += 8;
      y += 128;
    }
  }
}

}  // namespace tern::kernels::neon
