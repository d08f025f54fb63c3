// Scalar F16 x F32 GEMM and weighted rows: the oracle (float accumulation in k order).
#include "kernels/scalar/impl.h"
#include "tensor/quant_ref.h"

namespace tern::kernels::scalar {

// out[j*ldo + r] = sum_k f32(W[r][k]) * x[j][k].
void GemmF16F32(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1, const float* x,
                int64_t ldx, int64_t n, float* out, int64_t ldo) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* row = w + r * ldw;
    for (int64_t j = 0; j < n; ++j) {
      const float* xj = x + j * ldx;
      float s = 0.0f;
      for (int64_t i = 0; i < k; ++i) s += tern::F16ToF32(row[i], F16Nan::kQuiet) * xj[i];
      out[j * ldo + r] = s;
    }
  }
}

// The weighted sum one row of values at a time, each term a multiply then an add, never
// fused, so every ISA agrees bit for bit.
void WeightedRowsF16(const float* p, int64_t ldp, int64_t heads, const uint16_t* v, int64_t ldv,
                     int64_t rows, int64_t n, float* out, int64_t ldo) {
  for (int64_t h = 0; h < heads; ++h) {
    float* o = out + h * ldo;
    for (int64_t i = 0; i < n; ++i) o[i] = 0.0f;
    for (int64_t j = 0; j < rows; ++j) {
      const float a = p[h * ldp + j];
      for (int64_t i = 0; i < n; ++i)
        o[i] = o[i] + a * tern::F16ToF32(v[j * ldv + i], F16Nan::kQuiet);
    }
  }
}

}  // namespace tern::kernels::scalar
