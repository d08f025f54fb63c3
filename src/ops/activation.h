// Elementwise activations, the softmax and the residual add.
//   swiglu    = silu(gate) * up, silu(x) = x / (1 + exp(-x))   (Qwen2 FFN; the kernel table's
//               silu_mul_f32, whose exp is a fixed polynomial: the same bits on every ISA)
//   softmax   = exp(x - max) / sum, the sum accumulated in double in index order (as ggml),
//               then every value multiplied by (float)(1 / sum)
// Threaded by rows; every row is computed by one thread in index order.
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"

namespace tern::ops {

// out[r*ldo + i] = silu(gate[r*ldg + i]) * up[r*ldu + i]; out may alias gate or up.
void SwiGlu(ThreadPool& pool, const float* gate, int64_t ldg, const float* up, int64_t ldu,
            int64_t rows, int64_t n, float* out, int64_t ldo);

void SoftmaxRow(float* x, int64_t n);
void Softmax(ThreadPool& pool, float* x, int64_t rows, int64_t n, int64_t ldx);

// x[r*ldx + i] += y[r*ldy + i] (the residual connection).
void AddInPlace(ThreadPool& pool, float* x, int64_t ldx, const float* y, int64_t ldy, int64_t rows,
                int64_t n);

}  // namespace tern::ops
