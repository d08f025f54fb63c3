// Scalar activation quantization (spec 2.3, 2.4): the oracle for every ISA.
#include <cmath>

#include "kernels/scalar/impl.h"

namespace tern::kernels::scalar {

// Per row: amax = max(1e-5, max|x|) in double; s = (float)(127 / amax);
// q = clamp(round_half_even(fl(x * s)), -128, 127); sums = sum(q).
// fl(x * s) is rounded to float before rounding to int (the build has -ffp-contract=off, so
// no fused multiply-add can round the exact product instead).
void QuantizeRowsI8(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q, int64_t ldq,
                    float* scale, int32_t* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    int8_t* qr = q + r * ldq;
    double amax = 1e-5;
    for (int64_t i = 0; i < k; ++i) amax = std::fmax(amax, std::fabs(static_cast<double>(xr[i])));
    const float s = static_cast<float>(127.0 / amax);
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const float p = xr[i] * s;
      float v = std::nearbyint(p);  // half to even under the default rounding mode
      v = v > 127.0f ? 127.0f : (v < -128.0f ? -128.0f : v);
      qr[i] = static_cast<int8_t>(v);
      sum += qr[i];
    }
    scale[r] = s;
    sums[r] = sum;
  }
}

float AbsmaxF32(const float* x, int64_t n) {
  float m = 0.0f;
  for (int64_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(x[i]));
  return m;
}

// q = round(clamp(x * inv, -127, 127)): clamp first, then round (spec 2.4).
void RequantF32I8(const float* x, int64_t n, float inv, Round mode, int8_t* q) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] * inv;
    v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : v);
    q[i] = static_cast<int8_t>(mode == Round::kHalfEven ? std::nearbyint(v) : std::round(v));
  }
}

}  // namespace tern::kernels::scalar
