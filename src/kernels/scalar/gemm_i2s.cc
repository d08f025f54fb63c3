// Scalar ternary I2_S x int8 GEMM on the canonical layout (spec 2.2.2, 2.3): the oracle.
#include "kernels/scalar/impl.h"

namespace tern::kernels::scalar {

// Code of element k of a row in canonical I2_S: 128-element blocks of 32 bytes; byte p of a
// block holds elements p, p+32, p+64, p+96 in bit pairs 7:6, 5:4, 3:2, 1:0. The unused code 3
// is read as 1 (weight 0), as the dequantizer does; packed ISAs remap it once at load.
static inline int32_t Code(const uint8_t* row, int64_t k) {
  const int64_t j = k % 128;
  const int32_t c = (row[k / 128 * 32 + j % 32] >> (6 - 2 * (j / 32))) & 3;
  return c == 3 ? 1 : c;
}

// out[j*ldo + r] = ((float)(D - sums[j]) / scale[j]) * w_scale, D = sum_k code[r][k] * q[j][k].
void GemmI2sI8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
               float w_scale, const int8_t* q, int64_t ldq, const float* scale, const int32_t* sums,
               int64_t n, float* out, int64_t ldo) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = w + r * (k / 4);
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* qj = q + j * ldq;
      int32_t d = 0;
      for (int64_t i = 0; i < k; ++i) d += Code(row, i) * qj[i];
      out[j * ldo + r] = (static_cast<float>(d - sums[j]) / scale[j]) * w_scale;
    }
  }
}

size_t I2sPackedBytes(int64_t k, int64_t n_rows) { return static_cast<size_t>(n_rows * k / 4); }

void PackI2s(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  const int64_t bytes = n_rows * k / 4;
  for (int64_t i = 0; i < bytes; ++i) packed[i] = canonical[i];
}

}  // namespace tern::kernels::scalar
