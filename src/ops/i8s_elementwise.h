// The I8_S ops that touch each value a few times: rms_norm_scaled, add_scaled and the
// depthwise causal conv (the depthwise branch of mul_mat_add). Spec 3.4, in tern's
// multiplier convention (value = q * scale).
//
// Pass 1 computes every output value and the absmax; pass 2 requantizes with the global G.
// With `y_scratch` (ne0*ne1 floats) pass 1 keeps the values and pass 2 is one kernel-table
// requantization; without it (nullptr) pass 2 recomputes each value with the same code into
// an L1 tile (no memory, twice the arithmetic). Both give the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/i8s_tensor.h"
#include "runtime/thread_pool.h"

namespace tern::ops {

// RMSNorm over ne0 (channels) of every row of x{C, T}, straight from int8 (spec 3.4):
//   eps' = (float)(eps / ((double)x.scale * (double)x.scale))   (upstream: eps*x_s*x_s
//          with its divisor x_s = 1/scale; the input scale cancels out of the result)
//   SS   = sum_i q_i^2 (exact integer)
//   r    = 1.0f / sqrtf((float)SS / (float)C + eps')
//   y_i  = ((float)q_i * r) * gamma_i
//   q    = round_half_even(clamp(y * 127/G, -127, 127)), out.scale = G/127.
// A zero-scale input gives an all-zero output with scale 0. `row_scratch` holds T floats.
// out may alias x (each row is read before it is written, by one thread).
void RmsNormScaled(ThreadPool& pool, const I8sTensor& x, const float* gamma, float eps,
                   float* row_scratch, I8sTensor* out, float* y_scratch = nullptr);

// y = ((float)a * a.scale) * gamma[i % ne0] + (float)b * b.scale, RNE requant (spec 3.4
// add_scaled with multipliers). gamma may be null (then y = a*sa + b*sb). One formula for
// every element, so unlike upstream the bytes do not depend on the thread count. out may
// alias a or b.
void AddScaled(ThreadPool& pool, const I8sTensor& a, const I8sTensor& b, const float* gamma,
               I8sTensor* out, float* y_scratch = nullptr);

// Depthwise causal conv on channel-major x{C, T} (the depthwise branch of mul_mat_add after
// im2col_asym with lp = K-1, stride 1; spec 3.3.1 step 3):
//   acc[t][c] = sum_{k<K, t+k-(K-1) >= 0} w[c][k] * x[t+k-(K-1)][c]   (exact int32)
//   y = (float)acc * (w.scale * x.scale) + bias[c];  round half away, as mul_mat_add.
// Computed vectorized over channels with the taps transposed at load, in float: every
// product is an integer of magnitude <= 127*127 and every partial sum of K <= kMaxDepthwise
// taps stays below 2^24, so the float sum IS the int32 sum, exactly, in any order.
inline constexpr int64_t kMaxDepthwiseKernel = 32;  // also bounds a stack tile
struct I8sDepthwise {
  std::vector<int8_t> w;  // [k][c]
  int64_t kernel = 0, channels = 0;
  float scale = 0;
};
// `stored` is the file tensor {K, 1, C}: tap k of channel c at c*K + k. K <= kMaxDepthwiseKernel.
I8sDepthwise PackDepthwise(const int8_t* stored, int64_t kernel, int64_t channels, float scale);

// out must not alias x. out->q holds C*T bytes.
void DepthwiseConvAdd(ThreadPool& pool, const I8sDepthwise& w, const float* bias,
                      const I8sTensor& x, I8sTensor* out, float* y_scratch = nullptr);

}  // namespace tern::ops
