// The I8_S matrix ops: mul_mat_add(_relu), the causal strided conv built on it, and a
// two-layer MLP (mul_mat_add_relu then mul_mat_add) with bounded memory (spec 3.3, 3.4).
//
// Arithmetic of one output element (weight row r, input column t; scales are multipliers):
//   acc = sum_k W[r][k] * x[t][k]                    exact int32 (kernels gemm_i8_i8)
//   c   = w.scale * x.scale                          (upstream: w_s / x_s with a divisor)
//   y   = (float)acc * c + bias[r]                   two roundings, in this order
//   G   = max |y| over the whole output (for the ReLU op: of y BEFORE the ReLU)
//   q   = round_half_away(clamp(y * (127/G), -127, 127)); ReLU op: q < 0 -> 0
//   out.scale = G / 127                              (0 and all q = 0 when G == 0)
// (float)acc is converted (RNE) before the multiply: |acc| can exceed 2^24 (audit
// omission 4). Upstream's FMA builds compute fmaf((float)acc, c, bias) instead (audit X1);
// tern does not, because shared code carries no FMA flag and a software fmaf per output
// costs more than the whole epilogue. The difference is at most one rounding of y, below
// the tolerance at which tern and upstream can agree anyway (the scale conventions differ
// in the last bit, seed 002 "Parity").
//
// Each op runs in two parallel regions: (1) the int32 sums from the kernel, kept, and their
// per-row min and max, from which G follows exactly (y is monotone in acc: i8s_matmul.cc);
// (2) y and its requantization with the global G in one fused kernel pass, so the float y
// is never stored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/i8s_tensor.h"
#include "runtime/thread_pool.h"

namespace tern::ops {

// out{N, T} = mul_mat_add(W, x{K, T}, bias) (relu: mul_mat_add_relu). `bias` has N floats
// (may be null). `y_scratch` holds T*N 4-byte values (it receives the int32 sums).
// out->q holds T*N bytes.
void MulMatAdd(ThreadPool& pool, const I8sMatrix& w, const float* bias, const I8sTensor& x,
               bool relu, float* y_scratch, I8sTensor* out);

// A 1-D convolution as im2col_asym + mul_mat_add, on a CHANNEL-MAJOR input x{IC, IW} (one
// row of IC channels per time step). The weight is packed with its K taps outermost
// (PackConv1d reorders the stored {K, IC, OC} rows from ic*K+k to k*IC+ic), so the im2col
// column of output t is the contiguous window of x rows t*stride-lp .. t*stride-lp+K-1 and
// the kernel reads it in place; only the few columns that reach into the padding are built
// in scratch. Integer sums do not depend on the order of terms, so this is bit-identical to
// ggml's im2col (column ic*K+k) followed by mul_mat_add.
struct I8sConv1d {
  I8sMatrix w;  // N = OC rows of K*IC values, tap-major
  int64_t kernel = 0, in_ch = 0, out_ch = 0;
  int64_t stride = 1, lp = 0, rp = 0;
};

// `stored` is the file tensor {K, IC, OC}: element (k, ic, oc) at k + K*(ic + IC*oc).
// Leading taps that are zero throughout are dropped (kernel and lp shrink alike; up to lp
// of them), which changes neither the output length nor any sum. `u8`: as PackI8sMatrix's.
I8sConv1d PackConv1d(const int8_t* stored, int64_t kernel, int64_t in_ch, int64_t out_ch,
                     float scale, int64_t stride, int64_t lp, int64_t rp, bool u8 = false);

struct Conv1dScratch {
  size_t y_bytes = 0;    // the int32 sums: OW*OC values
  size_t col_bytes = 0;  // padded edge columns
};
Conv1dScratch Conv1dScratchBytes(const I8sConv1d& conv, int64_t in_len);

// out{OC, OW} = requant(conv(x) + bias), rounding and absmax as MulMatAdd.
void Conv1dAdd(ThreadPool& pool, const I8sConv1d& conv, const float* bias, const I8sTensor& x,
               float* y_scratch, int8_t* col_scratch, I8sTensor* out);

// out{C, T} = mul_mat_add(W2, mul_mat_add_relu(W1, x{C, T}, b1), b2): bit-identical to the two
// ops in sequence. Pass A learns the hidden absmax from W1's int32 sums; pass B, a token
// block at a time, requantizes the hidden block (ReLU) into L1 and multiplies it by W2 at
// once, so the int8 hidden tensor is never materialized. The sums themselves are stored
// in pass A when their T*H*4 bytes fit `store_budget`; otherwise pass B recomputes them
// (one extra W1 product, memory O(T*C) instead of O(T*H)).
struct MlpScratch {
  bool store = false;
  size_t bytes = 0;  // total scratch the op needs
};
MlpScratch MlpScratchBytes(int64_t tokens, int64_t c, int64_t h, int n_threads,
                           size_t store_budget);

void MlpReluI8s(ThreadPool& pool, const I8sMatrix& w1, const float* b1, const I8sMatrix& w2,
                const float* b2, const I8sTensor& x, size_t store_budget, void* scratch,
                size_t scratch_bytes, I8sTensor* out);

}  // namespace tern::ops
