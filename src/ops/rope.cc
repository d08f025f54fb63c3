#include "ops/rope.h"

#include <cmath>

#include "base/check.h"
#include "ops/parallel.h"

namespace tern::ops {

void RopeAngles(int32_t pos, int64_t head_dim, float base, float* cos_out, float* sin_out) {
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(head_dim));
  float theta = static_cast<float>(pos);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    cos_out[i] = std::cos(theta);
    sin_out[i] = std::sin(theta);
    theta *= theta_scale;
  }
}

void RopeNeox(ThreadPool& pool, float* x, int64_t rows, int64_t n_heads, int64_t head_dim,
              int64_t ldx, const int32_t* pos, float base) {
  TERN_CHECK(head_dim % 2 == 0 && head_dim <= kMaxRopeDims);
  const int64_t half = head_dim / 2;
  ParallelRanges(pool, rows, 1, rows * (n_heads * head_dim + half * 40), [&](int64_t b, int64_t e) {
    float cs[kMaxRopeDims / 2], sn[kMaxRopeDims / 2];
    for (int64_t r = b; r < e; ++r) {
      RopeAngles(pos[r], head_dim, base, cs, sn);
      for (int64_t h = 0; h < n_heads; ++h) {
        float* v = x + r * ldx + h * head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const float x0 = v[i], x1 = v[i + half];
          v[i] = x0 * cs[i] - x1 * sn[i];
          v[i + half] = x0 * sn[i] + x1 * cs[i];
        }
      }
    }
  });
}

}  // namespace tern::ops
