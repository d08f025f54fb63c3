#include "ops/norm.h"

#include <cmath>

#include "ops/parallel.h"

namespace tern::ops {

void RmsNormRow(const float* x, int64_t n, const float* w, float eps, float* y) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float r = 1.0f / std::sqrt(mean + eps);
  if (w) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * r) * w[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * r;
  }
}

void RmsNorm(ThreadPool& pool, const float* x, int64_t rows, int64_t n, int64_t ldx, const float* w,
             float eps, float* y, int64_t ldy) {
  ParallelRanges(pool, rows, 1, rows * n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) RmsNormRow(x + r * ldx, n, w, eps, y + r * ldy);
  });
}

}  // namespace tern::ops
