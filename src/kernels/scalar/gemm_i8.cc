// Scalar int8 x int8 GEMM on canonical row-major weights: the oracle.
#include "kernels/scalar/impl.h"

namespace tern::kernels::scalar {

// acc[j*ldo + r] = sum_k W[r][k] * x[j][k], exact int32.
void GemmI8I8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo) {
  const int8_t* ws = reinterpret_cast<const int8_t*>(w);
  for (int64_t r = r0; r < r1; ++r) {
    const int8_t* row = ws + r * k;
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* xj = x + j * ldx;
      int32_t d = 0;
      for (int64_t i = 0; i < k; ++i) d += static_cast<int32_t>(row[i]) * xj[i];
      acc[j * ldo + r] = d;
    }
  }
}

size_t I8PackedBytes(int64_t k, int64_t n_rows) { return static_cast<size_t>(n_rows * k); }

void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  for (int64_t i = 0; i < n_rows * k; ++i) packed[i] = static_cast<uint8_t>(canonical[i]);
}

}  // namespace tern::kernels::scalar
