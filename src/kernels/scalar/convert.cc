// Scalar conversions: IEEE binary16 <-> float32 and Q6_K rows, by the format's reference
// code (tensor/quant_ref.h) with NaNs quieted as F16C does.
#include "kernels/scalar/impl.h"
#include "tensor/quant_ref.h"

namespace tern::kernels::scalar {

void F32ToF16(const float* x, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = tern::F32ToF16(x[i], F16Nan::kQuiet);
}

void F16ToF32(const uint16_t* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = tern::F16ToF32(x[i], F16Nan::kQuiet);
}

// Q6_K rows are the format's own dequantizer (tensor/quant_ref.h); the SIMD ones follow its
// arithmetic exactly: y = (d * sc) * (q - 32), in that order in float.
void DequantRowQ6K(const void* blocks, int64_t k, float* out) {
  DequantizeQ6_K(static_cast<const BlockQ6_K*>(blocks), k, out);
}

}  // namespace tern::kernels::scalar
