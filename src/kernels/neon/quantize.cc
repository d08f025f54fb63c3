// NEON (ARMv8.0) activation quantization, absmax and requantization.
//
// Bit-exact with the scalar kernels: max|x| is exact in any order, every product is one
// float multiply (vmulq_f32; this TU is built with -ffp-contract=off, so nothing fuses),
// vcvtnq_s32_f32 rounds half to even and vcvtaq_s32_f32 half away from zero, exactly like
// nearbyint/roundf. Tails go through a zero-padded vector so there is one rounding path.
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/neon/impl.h"

namespace tern::kernels::neon {
namespace {

// max |x| over n floats; NaNs are skipped (vmaxnm), matching a `m = max(m, |x|)` loop.
float Absmax(const float* x, int64_t n) {
  float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    m0 = vmaxnmq_f32(m0, vabsq_f32(vld1q_f32(x + i)));
    m1 = vmaxnmq_f32(m1, vabsq_f32(vld1q_f32(x + i + 4)));
  }
  for (; i + 4 <= n; i += 4) m0 = vmaxnmq_f32(m0, vabsq_f32(vld1q_f32(x + i)));
  float m = vmaxnmvq_f32(vmaxnmq_f32(m0, m1));
  for (; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// Four float32x4 -> int8x16 with round(v) done by `cvt`, saturating to [-128, 127].
template <int32x4_t (*Cvt)(float32x4_t)>
inline int8x16_t ToI8(float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d) {
  const int16x8_t lo = vcombine_s16(vqmovn_s32(Cvt(a)), vqmovn_s32(Cvt(b)));
  const int16x8_t hi = vcombine_s16(vqmovn_s32(Cvt(c)), vqmovn_s32(Cvt(d)));
  return vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi));
}

inline int32x4_t CvtHalfEven(float32x4_t v) { return vcvtnq_s32_f32(v); }
inline int32x4_t CvtHalfAway(float32x4_t v) { return vcvtaq_s32_f32(v); }

// q[0..16) = clamp(round_half_even(x * s), -128, 127); returns the int8 vector.
inline int8x16_t Quantize16(const float* x, float32x4_t s) {
  return ToI8<CvtHalfEven>(vmulq_f32(vld1q_f32(x), s), vmulq_f32(vld1q_f32(x + 4), s),
                           vmulq_f32(vld1q_f32(x + 8), s), vmulq_f32(vld1q_f32(x + 12), s));
}

// q[0..16) = round(clamp(x * inv, -127, 127)).
template <int32x4_t (*Cvt)(float32x4_t)>
inline int8x16_t Requant16(const float* x, float32x4_t inv) {
  const float32x4_t lo = vdupq_n_f32(-127.0f), hi = vdupq_n_f32(127.0f);
  auto clamp = [&](const float* p) {
    return vminq_f32(vmaxq_f32(vmulq_f32(vld1q_f32(p), inv), lo), hi);
  };
  return ToI8<Cvt>(clamp(x), clamp(x + 4), clamp(x + 8), clamp(x + 12));
}

template <int32x4_t (*Cvt)(float32x4_t)>
void Requant(const float* x, int64_t n, float inv, int8_t* q) {
  const float32x4_t vinv = vdupq_n_f32(inv);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) vst1q_s8(q + i, Requant16<Cvt>(x + i, vinv));
  if (i < n) {
    float pad[16] = {};
    int8_t out[16];
    std::memcpy(pad, x + i, (n - i) * sizeof(float));
    vst1q_s8(out, Requant16<Cvt>(pad, vinv));
    std::memcpy(q + i, out, n - i);
  }
}

}  // namespace

float AbsmaxF32(const float* x, int64_t n) { return Absmax(x, n); }

void QuantizeRowsI8(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q, int64_t ldq,
                    float* scale, int32_t* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    int8_t* qr = q + r * ldq;
    // The float max converts to double exactly, so this equals a max taken in double.
    const double amax = std::max(1e-5, static_cast<double>(Absmax(xr, k)));
    const float s = static_cast<float>(127.0 / amax);
    const float32x4_t vs = vdupq_n_f32(s);
    int32x4_t acc = vdupq_n_s32(0);
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
      const int8x16_t v = Quantize16(xr + i, vs);
      vst1q_s8(qr + i, v);
      acc = vpadalq_s16(acc, vpaddlq_s8(v));  // |lane| <= 256 before widening: exact
    }
    if (i < k) {
      // Zero padding quantizes to 0 and adds nothing to the sum.
      float pad[16] = {};
      int8_t out[16];
      std::memcpy(pad, xr + i, (k - i) * sizeof(float));
      const int8x16_t v = Quantize16(pad, vs);
      vst1q_s8(out, v);
      std::memcpy(qr + i, out, k - i);
      acc = vpadalq_s16(acc, vpaddlq_s8(v));
    }
    scale[r] = s;
    sums[r] = vaddvq_s32(acc);
  }
}

void RequantF32I8(const float* x, int64_t n, float inv, Round mode, int8_t* q) {
  if (mode == Round::kHalfEven) {
    Requant<CvtHalfEven>(x, n, inv, q);
  } else {
    Requant<CvtHalfAway>(x, n, inv, q);
  }
}

}  // namespace tern::kernels::neon
