// NEON (ARMv8.0) F16 x F32 GEMM and F16 axpy.
//
// vcvt_f32_f16 widens exactly. The GEMM accumulates with fused multiply-add in eight
// lanes, a summation order of its own: deterministic, compared to scalar with a tolerance.
// axpy is one multiply then one add per element (this TU is built with -ffp-contract=off),
// which is what scalar does, so it matches bit for bit.
#include <arm_neon.h>

#include <cstring>

#include "kernels/neon/impl.h"

namespace tern::kernels::neon {
namespace {

constexpr int kTileJ = 4;

inline float32x4_t LoF16(uint16x8_t h) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(h)));
}
inline float32x4_t HiF16(uint16x8_t h) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(h)));
}

// d[t] = sum_k f32(w[k]) * x_t[k] for NJ activation rows; the k % 8 tail goes through
// zero-padded copies (the padding adds 0 * 0).
template <int NJ>
inline void DotF16(const uint16_t* wr, int64_t k, const float* x, int64_t ldx, float* d) {
  float32x4_t a0[NJ], a1[NJ];
  for (int t = 0; t < NJ; ++t) a0[t] = a1[t] = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    const uint16x8_t h = vld1q_u16(wr + i);
    const float32x4_t w0 = LoF16(h), w1 = HiF16(h);
    for (int t = 0; t < NJ; ++t) {
      const float* xt = x + t * ldx + i;
      a0[t] = vfmaq_f32(a0[t], w0, vld1q_f32(xt));
      a1[t] = vfmaq_f32(a1[t], w1, vld1q_f32(xt + 4));
    }
  }
  if (i < k) {
    uint16_t wpad[8] = {};
    std::memcpy(wpad, wr + i, (k - i) * sizeof(uint16_t));
    const uint16x8_t h = vld1q_u16(wpad);
    const float32x4_t w0 = LoF16(h), w1 = HiF16(h);
    for (int t = 0; t < NJ; ++t) {
      float xpad[8] = {};
      std::memcpy(xpad, x + t * ldx + i, (k - i) * sizeof(float));
      a0[t] = vfmaq_f32(a0[t], w0, vld1q_f32(xpad));
      a1[t] = vfmaq_f32(a1[t], w1, vld1q_f32(xpad + 4));
    }
  }
  for (int t = 0; t < NJ; ++t) d[t] = vaddvq_f32(vaddq_f32(a0[t], a1[t]));
}

}  // namespace

void GemmF16F32(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1, const float* x,
                int64_t ldx, int64_t n, float* out, int64_t ldo) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* wr = w + r * ldw;
    float d[kTileJ];
    for (int64_t j = 0; j < n; j += kTileJ) {
      const int64_t nj = n - j < kTileJ ? n - j : kTileJ;
      if (nj == kTileJ) {
        DotF16<kTileJ>(wr, k, x + j * ldx, ldx, d);
      } else {
        for (int64_t t = 0; t < nj; ++t) DotF16<1>(wr, k, x + (j + t) * ldx, ldx, d + t);
      }
      for (int64_t t = 0; t < nj; ++t) out[(j + t) * ldo + r] = d[t];
    }
  }
}

namespace {

// out[i] = out[i] + a * f32(v[i]): a multiply then an add, as the oracle.
void AxpyF16(float a, const uint16_t* v, int64_t n, float* out) {
  const float32x4_t va = vdupq_n_f32(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t h = vld1q_u16(v + i);
    vst1q_f32(out + i, vaddq_f32(vld1q_f32(out + i), vmulq_f32(va, LoF16(h))));
    vst1q_f32(out + i + 4, vaddq_f32(vld1q_f32(out + i + 4), vmulq_f32(va, HiF16(h))));
  }
  if (i < n) {
    uint16_t vpad[8] = {};
    float opad[8] = {};
    std::memcpy(vpad, v + i, (n - i) * sizeof(uint16_t));
    std::memcpy(opad, out + i, (n - i) * sizeof(float));
    const uint16x8_t h = vld1q_u16(vpad);
    vst1q_f32(opad, vaddq_f32(vld1q_f32(opad), vmulq_f32(va, LoF16(h))));
    vst1q_f32(opad + 4, vaddq_f32(vld1q_f32(opad + 4), vmulq_f32(va, HiF16(h))));
    std::memcpy(out + i, opad, (n - i) * sizeof(float));
  }
}

}  // namespace

void WeightedRowsF16(const float* p, int64_t ldp, int64_t heads, const uint16_t* v, int64_t ldv,
                     int64_t rows, int64_t n, float* out, int64_t ldo) {
  for (int64_t h = 0; h < heads; ++h) {
    float* o = out + h * ldo;
    std::memset(o, 0, static_cast<size_t>(n) * sizeof(float));
    for (int64_t j = 0; j < rows; ++j) AxpyF16(p[h * ldp + j], v + j * ldv, n, o);
  }
}

}  // namespace tern::kernels::neon
