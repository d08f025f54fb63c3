// RMSNorm as ggml computes it (spec 4.2), one row at a time:
//   mean = (float)(sum_i (double)(x_i * x_i) / n)      products in float, sum in double
//   r    = 1.0f / sqrtf(mean + eps)
//   y_i  = (x_i * r) * w_i                             (w may be null: no gain)
// Threaded by rows; each row is reduced by one thread in index order.
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"

namespace tern::ops {

void RmsNormRow(const float* x, int64_t n, const float* w, float eps, float* y);

void RmsNorm(ThreadPool& pool, const float* x, int64_t rows, int64_t n, int64_t ldx, const float* w,
             float eps, float* y, int64_t ldy);

}  // namespace tern::ops
