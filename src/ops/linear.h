// Linear layers y = W x (+ bias) over the kernel table, threaded by output rows.
//
// Shapes (ggml order, as stored): W has N rows ("output features") of K values; x holds
// `rows` activation rows of K floats; y holds `rows` rows of N floats, y[j*ldo + r].
//
// Three weight formats:
//   * I2_S (ternary, spec 2.3): activations are quantized per row once (QuantizeRows) and the
//     same QuantizedRows feed every projection of that input (q/k/v, gate/up):
//       y = (((float)(D - S)) / s) * w_scale      D = sum code*q, S = sum q (exact int32)
//   * W8A8 (seed 003): weights quantized ONCE at load per output row, w_scale[r] = amax/127,
//     q = clamp(round_half_even(w / w_scale), -127, 127); activations the same per-row int8
//     as I2_S (amax/127 with the 1e-5 floor; |q| <= 127 always holds). Accumulate int32:
//       y = ((float)C / s) * w_scale[r]
//     (s is the quantizing multiplier 127/amax, so 1/s is seed 003's aScale.)
//   * F16 as stored (kernels gemm_f16_f32, float accumulation; x stays F32, where ggml would
//     round it to F16 first).
//
// Determinism: every output element is computed by exactly one thread by the same kernel call
// shape whatever the thread count (row ranges are multiples of the kernel's row_align, integer
// math is exact, float epilogues are fixed), so results are byte-identical at any thread count.
// Forward ops never allocate; the load-time helpers (PackI2S, QuantizeWeightsI8) do.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/huge_buffer.h"
#include "base/status.h"
#include "runtime/thread_pool.h"
#include "tensor/dtype.h"

namespace tern::ops {

// Per-row int8 activations (kernels quantize_rows_i8). Buffers are owned by the caller:
// q holds rows*ldq int8, scale and sums hold `rows` entries.
struct QuantizedRows {
  int8_t* q = nullptr;
  int64_t ldq = 0;
  float* scale = nullptr;   // s = 127/amax per row (x ~= q / s)
  int32_t* sums = nullptr;  // sum of q per row
  int64_t rows = 0;
  int64_t k = 0;
};

// Quantizes `rows` rows of k floats (stride ldx) into `out` (whose q/ldq/scale/sums are set by
// the caller; rows and k are filled in). Threaded by rows.
void QuantizeRows(ThreadPool& pool, const float* x, int64_t rows, int64_t k, int64_t ldx,
                  QuantizedRows* out);

// ---- I2_S ---------------------------------------------------------------------------------
// N x K ternary weights in the active kernel table's packed layout.
struct I2SMatrix {
  const uint8_t* packed = nullptr;
  int64_t k = 0;
  int64_t n = 0;
  float scale = 0;  // in-band dequantizing multiplier
};

// Packs canonical I2_S codes (N*K/4 bytes, the file layout) for the active kernel table
// into `packed`, which holds I2SPackedBytes(k, n) bytes.
size_t I2SPackedBytes(int64_t k, int64_t n);
void PackI2S(const uint8_t* canonical, int64_t k, int64_t n, uint8_t* packed);

// One projection of a shared QuantizedRows input. `bias` (N floats) may be null.
struct I2SProjection {
  const I2SMatrix* w = nullptr;
  const float* bias = nullptr;
  float* out = nullptr;
  int64_t ldo = 0;
};

// Runs several projections of the same activations in one parallel region: the output rows of
// all of them are split across the threads together (so q/k/v of a layer load-balance).
void LinearI2S(ThreadPool& pool, const QuantizedRows& x, const I2SProjection* proj, int n_proj);
inline void LinearI2S(ThreadPool& pool, const QuantizedRows& x, const I2SProjection& p) {
  LinearI2S(pool, x, &p, 1);
}

// The SwiGLU pair of an FFN: out = silu(gate x) * (up x). Each thread computes both
// projections and the product for its own output rows, in one parallel region (bytes equal
// to LinearI2S twice followed by SwiGlu). `up_scratch` holds x.rows * ldo floats.
void LinearI2SSwiGlu(ThreadPool& pool, const QuantizedRows& x, const I2SMatrix& gate,
                     const I2SMatrix& up, float* out, float* up_scratch, int64_t ldo);

// ---- W8A8 ---------------------------------------------------------------------------------
struct I8Matrix {
  HugeBuffer packed;         // kernel table's packed layout of the int8 rows
  std::vector<float> scale;  // per output row: amax/127 (0 for an all-zero row)
  int64_t k = 0;
  int64_t n = 0;
};

// Quantizes an N x K matrix stored as F32 / F16 / Q8_0 / Q6_K rows (the file layout, row r at
// data + r*RowBytes(type, k)) to per-row int8, block by block straight into the packed
// layout (no full-size intermediate). `pool` may be null (single thread). `consumed`, when
// set, is called (from worker threads, for disjoint ranges) once source rows [r0, r1) have
// been read for good, so a caller can release their pages as it goes. Errors on a type that
// has no row decoder.
using RowsConsumed = std::function<void(int64_t r0, int64_t r1)>;
Result<I8Matrix> QuantizeWeightsI8(DType type, const uint8_t* data, int64_t k, int64_t n,
                                   ThreadPool* pool, const RowsConsumed& consumed = nullptr);

void LinearW8A8(ThreadPool& pool, const I8Matrix& w, const QuantizedRows& x, float* out,
                int64_t ldo);

// ---- F16 ----------------------------------------------------------------------------------
// W: n_rows x k F16 (row stride ldw elements); x: rows x k floats (stride ldx).
void LinearF16(ThreadPool& pool, const uint16_t* w, int64_t k, int64_t ldw, int64_t n_rows,
               const float* x, int64_t rows, int64_t ldx, float* out, int64_t ldo);

}  // namespace tern::ops
