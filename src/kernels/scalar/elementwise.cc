// Encoder fills, plain loops: the oracle for the SIMD versions, and the NEON table's own
// (this TU keeps loop vectorization on aarch64; only quantize.cc needs it off).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/expf_poly.h"
#include "kernels/scalar/impl.h"

namespace tern::kernels::scalar {

void I32AffineF32(const int32_t* acc, int64_t n, float c, const float* bias, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    int32_t a;
    std::memcpy(&a, acc + i, sizeof a);  // out may alias acc
    float v = static_cast<float>(a) * c;
    if (bias) v = v + bias[i];
    std::memcpy(out + i, &v, sizeof v);
  }
}

void I8ToF32(const int8_t* q, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(q[i]);
}

void I8AddScaledF32(const int8_t* a, float sa, const float* g, const int8_t* b, float sb,
                    int64_t rows, int64_t n, float* out) {
  for (int64_t j = 0; j < rows; ++j) {
    const int64_t o = j * n;
    if (g) {
      for (int64_t i = 0; i < n; ++i)
        out[o + i] = (static_cast<float>(a[o + i]) * sa) * g[i] + static_cast<float>(b[o + i]) * sb;
    } else {
      for (int64_t i = 0; i < n; ++i)
        out[o + i] = static_cast<float>(a[o + i]) * sa + static_cast<float>(b[o + i]) * sb;
    }
  }
}

void I8RmsFactors(const int8_t* q, int64_t rows, int64_t n, float eps, float* s) {
  for (int64_t j = 0; j < rows; ++j, q += n) {
    int32_t ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += int32_t{q[i]} * int32_t{q[i]};
    s[j] = 1.0f / std::sqrt(static_cast<float>(ss) / static_cast<float>(n) + eps);
  }
}

void I8ScaleMulF32(const int8_t* q, int64_t rows, int64_t n, const float* s, const float* g,
                   float* out) {
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t i = 0; i < n; ++i)
      out[j * n + i] = (static_cast<float>(q[j * n + i]) * s[j]) * g[i];
}

void Dw8I8I32(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows, int64_t n,
              int32_t* out, int64_t ldo) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) {
      int32_t s = 0;
      for (int64_t t = 0; t < 8; ++t) s += int32_t{w[t * ldw + i]} * x[(r + t) * ldx + i];
      out[r * ldo + i] = s;
    }
}

// By definition: the two entries in sequence, then ReLU on the int8 results.
void I32RequantI8(const int32_t* acc, int64_t rows, int64_t n, float c, const float* bias,
                  float inv, Round mode, bool relu, int8_t* q) {
  constexpr int64_t kChunk = 256;
  float y[kChunk];
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t len = n - i < kChunk ? n - i : kChunk;
      I32AffineF32(acc + j * n + i, len, c, bias ? bias + i : nullptr, y);
      int8_t* qi = q + j * n + i;
      RequantF32I8(y, len, inv, mode, qi);
      if (relu)
        for (int64_t k = 0; k < len; ++k) qi[k] = qi[k] < 0 ? int8_t{0} : qi[k];
    }
  }
}

void I32MinMax(const int32_t* x, int64_t rows, int64_t n, int64_t ld, int32_t* mn, int32_t* mx) {
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const int32_t v = x[j * ld + i];
      mn[i] = v < mn[i] ? v : mn[i];
      mx[i] = v > mx[i] ? v : mx[i];
    }
}

void SiluMulF32(const float* g, const float* u, int64_t n, float* out) {
  using namespace expf_poly;
  for (int64_t i = 0; i < n; ++i) {
    const float x = g[i];
    float t = -x;
    t = t < kExpMin ? kExpMin : t;
    t = t > kExpMax ? kExpMax : t;
    const float nf = (t * kLog2e + kRoundMagic) - kRoundMagic;
    const float r = (t - nf * kLn2Hi) - nf * kLn2Lo;
    float p = kP0 * r + kP1;
    p = p * r + kP2;
    p = p * r + kP3;
    p = p * r + kP4;
    p = p * r + kP5;
    const int32_t bits = (static_cast<int32_t>(nf) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    const float e = (((p * (r * r)) + r) + 1.0f) * scale;
    out[i] = (x / (1.0f + e)) * u[i];
  }
}

}  // namespace tern::kernels::scalar
