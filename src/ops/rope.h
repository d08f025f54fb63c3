// Rotary position embedding, NEOX variant (Qwen2; spec 4.2, audit 8a).
//
// For a head of d = head_dim values at position p, pair i (i < d/2) is (x[i], x[i + d/2]):
//   theta_0 = (float)p, theta_{i+1} = theta_i * theta_scale,  theta_scale = powf(base, -2/d)
//   (built iteratively in float exactly like ggml's rope cache, not as powf per pair)
//   x[i]       = x0*cos(theta_i) - x1*sin(theta_i)
//   x[i + d/2] = x0*sin(theta_i) + x1*cos(theta_i)
// No YaRN, no frequency factors, attention factor 1 (what qwen2 uses).
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"

namespace tern::ops {

inline constexpr int64_t kMaxRopeDims = 1024;

// cos/sin of the d/2 angles of position `pos` (cos_out/sin_out hold d/2 floats).
void RopeAngles(int32_t pos, int64_t head_dim, float base, float* cos_out, float* sin_out);

// Rotates, in place, `rows` rows of n_heads heads (row stride ldx, heads contiguous with
// stride head_dim); row r uses position pos[r]. head_dim even and <= kMaxRopeDims.
void RopeNeox(ThreadPool& pool, float* x, int64_t rows, int64_t n_heads, int64_t head_dim,
              int64_t ldx, const int32_t* pos, float base);

}  // namespace tern::ops
