#include "ops/activation.h"

#include <cmath>

#include "kernels/kernels.h"
#include "ops/parallel.h"

namespace tern::ops {

void SwiGlu(ThreadPool& pool, const float* gate, int64_t ldg, const float* up, int64_t ldu,
            int64_t rows, int64_t n, float* out, int64_t ldo) {
  const auto& kt = kernels::Kernels();
  // Split the columns too when there is a single row (decode): 8960 exps are worth a thread.
  if (rows == 1) {
    ParallelRanges(pool, n, 64, n * 4, [&](int64_t b, int64_t e) {
      kt.silu_mul_f32(gate + b, up + b, e - b, out + b);
    });
    return;
  }
  ParallelRanges(pool, rows, 1, rows * n * 4, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) kt.silu_mul_f32(gate + r * ldg, up + r * ldu, n, out + r * ldo);
  });
}

void SoftmaxRow(float* x, int64_t n) {
  if (n <= 0) return;
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = std::fmax(mx, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void Softmax(ThreadPool& pool, float* x, int64_t rows, int64_t n, int64_t ldx) {
  ParallelRanges(pool, rows, 1, rows * n * 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) SoftmaxRow(x + r * ldx, n);
  });
}

void AddInPlace(ThreadPool& pool, float* x, int64_t ldx, const float* y, int64_t ldy, int64_t rows,
                int64_t n) {
  ParallelRanges(pool, rows, 1, rows * n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float* xr = x + r * ldx;
      const float* yr = y + r * ldy;
      for (int64_t i = 0; i < n; ++i) xr[i] += yr[i];
    }
  });
}

}  // namespace tern::ops
