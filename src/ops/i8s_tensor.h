// I8_S activations: int8 values with ONE per-tensor scale (spec 2.1, 2.4).
//
// Scale convention (the only one inside tern): the scale is a DEQUANTIZING MULTIPLIER,
//   value = q * scale.
// The published file stores I8_S weights this way already (amax/127). Upstream stores
// activations as the reciprocal 127/amax; tern converts at the boundary (QuantizeSignal
// keeps upstream's 127/amax arithmetic and stores 1/s). An all-zero tensor has scale 0,
// dequantizes to zeros, and every op treats it as zeros (never divides by it).
//
// Layout: a tensor {ne0, ne1} holds ne0*ne1 int8 with ne0 contiguous (ggml order). The
// encoder keeps activations channel-major, {C, T}: one row of C channels per time step.
//
// Ops in src/ops/i8s_*.h never allocate: the caller owns `q` (ne0*ne1 bytes) and any
// scratch, sized by the *ScratchBytes helpers. Every op splits its output across the
// ThreadPool so that each element is computed by exactly one thread with one formula, and
// the per-tensor absmax is a max (order independent): results are byte-identical for any
// thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "base/huge_buffer.h"
#include "runtime/thread_pool.h"

namespace tern::ops {

struct I8sTensor {
  int8_t* q = nullptr;  // ne0 * ne1 values, ne0 contiguous
  int64_t ne0 = 0;
  int64_t ne1 = 0;
  float scale = 0;  // dequantizing multiplier; 0 for an all-zero tensor
  int64_t size() const { return ne0 * ne1; }
};

// An I8_S weight matrix of N rows of K values (ggml ne {K, N}), in the active kernel
// table's packed layout (kernels::KernelTable::pack_i8), with its per-tensor multiplier.
// With `u8` it is packed for unsigned activations instead (pack_u8_i8, gemm_u8_i8), and
// corr[r] = 128 * sum_k W[r][k] takes the flip of signed ones back out (i8s_matmul.cc).
struct I8sMatrix {
  HugeBuffer packed;
  int64_t k = 0;
  int64_t n = 0;
  float scale = 0;
  bool u8 = false;
  std::vector<int32_t> corr;
};

// Packs N canonical rows of K int8 (row r at rows + r*K). Load time only (allocates).
// `u8`: for unsigned activations where the kernel table has gemm_u8_i8 (else as without):
// the encoder's linear and conv matrices, whose products then need no activation row sums.
I8sMatrix PackI8sMatrix(const int8_t* rows, int64_t k, int64_t n, float scale, bool u8 = false);

// The waveform quantizer (spec 3.3 step 1), kept in upstream's arithmetic:
//   amax = max(1e-5f, max|x|) (float);  s = 127.0f / amax;
//   q = clamp((int)roundf(x * s), -128, 127);  scale = 1.0f / s  (multiplier).
// out->q holds n bytes; out becomes {n, 1} (with one channel {T,1} and {1,T} coincide).
void QuantizeSignal(ThreadPool& pool, const float* x, int64_t n, I8sTensor* out);

// out[i] = (float)q[i] * scale.
void DequantizeI8s(const I8sTensor& x, float* out);

// cont(permute(1,0)): {ne0, ne1} -> {ne1, ne0}, the scale carried. out->q must not alias x.q.
void TransposeI8s(ThreadPool& pool, const I8sTensor& x, I8sTensor* out);

// im2col with independent left/right padding (ggml_im2col_asym, spec 3.3 step 2a).
// x is {IW, C} (time contiguous, one row per channel); out is {C*K, OW} with
//   out[t*(C*K) + c*K + k] = x[c*IW + t*stride + k - lp]   (0 outside [0, IW)),
//   OW = Conv1dOutLen(IW, K, stride, lp, rp); the scale is copied unchanged.
void Im2colAsym(ThreadPool& pool, const I8sTensor& x, int64_t kernel, int64_t stride, int64_t lp,
                int64_t rp, I8sTensor* out);

// ggml's output length with C truncation: OW = (IW + lp + rp - K) / stride + 1. With
// lp = K - stride and rp = 0 this is floor(IW/stride) for IW >= stride and 1 for
// 0 < IW < stride (spec 3.1). Returns 0 when the formula gives <= 0.
int64_t Conv1dOutLen(int64_t in_len, int64_t kernel, int64_t stride, int64_t lp, int64_t rp);

}  // namespace tern::ops
