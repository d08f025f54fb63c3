// Scalar conversions: IEEE binary16 <-> float32 (bit manipulation, no F16C) and Q6_K rows.
#include <cstring>

#include "kernels/q6k.h"
#include "kernels/scalar/impl.h"

namespace tern::kernels::scalar {

// Round to nearest even, subnormal halves included; |f| >= 65520 becomes inf; NaN keeps the
// top 10 payload bits and gets the quiet bit (what vcvtps2ph does).
uint16_t F32ToF16One(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {
    if (x > 0x7f800000u) return sign | 0x7e00 | ((x >> 13) & 0x3ff);
    return sign | 0x7c00;
  }
  if (x >= 0x477ff000u) return sign | 0x7c00;  // 65520 and up round to inf
  if (x < 0x38800000u) {                       // below 2^-14: a subnormal half or zero
    const uint32_t e = x >> 23;
    if (e < 102) return sign;  // below 2^-25 (half the smallest subnormal): zero
    const uint32_t m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // value / 2^-24 = m >> shift
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (((x >> 23) - 112) << 10) | ((x >> 13) & 0x3ff);
  const uint32_t rem = x & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | h);
}

float F16ToF32One(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t e = (h >> 10) & 0x1f;
  const uint32_t m = h & 0x3ff;
  uint32_t x;
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    std::memcpy(&x, &v, 4);
    x |= sign;
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m != 0 ? (0x400000u | (m << 13)) : 0u);
  } else {
    x = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void F32ToF16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = F32ToF16One(x[i]);
}

void F16ToF32(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = F16ToF32One(x[i]);
}

// Spec 2.5 / ggml dequantize_row_q6_K: per 128-value half of a block, l < 32,
//   q1 = ql[l] & 15 | (qh[l] >> 0 & 3) << 4     -> y[l]      scale sc[l/16 + 0]
//   q2 = ql[l+32] & 15 | (qh[l] >> 2 & 3) << 4  -> y[l + 32] scale sc[l/16 + 2]
//   q3 = ql[l] >> 4 | (qh[l] >> 4 & 3) << 4     -> y[l + 64] scale sc[l/16 + 4]
//   q4 = ql[l+32] >> 4 | (qh[l] >> 6 & 3) << 4  -> y[l + 96] scale sc[l/16 + 6]
// y = (d * sc) * (q - 32), evaluated in that order in float.
void DequantRowQ6K(const void* blocks, int64_t k, float* out) {
  const BlockQ6K* b = static_cast<const BlockQ6K*>(blocks);
  for (int64_t i = 0; i < k / kQ6KBlockElems; ++i) {
    const float d = F16ToF32One(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    float* y = out + i * kQ6KBlockElems;
    for (int half = 0; half < 2; ++half) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 15) | ((qh[l] >> 0 & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 15) | ((qh[l] >> 2 & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

}  // namespace tern::kernels::scalar
