#include "ops/linear.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "kernels/kernels.h"
#include "ops/activation.h"
#include "ops/embedding.h"
#include "ops/parallel.h"

namespace tern::ops {

void QuantizeRows(ThreadPool& pool, const float* x, int64_t rows, int64_t k, int64_t ldx,
                  QuantizedRows* out) {
  TERN_CHECK(out->q && out->scale && out->sums && out->ldq >= k);
  out->rows = rows;
  out->k = k;
  const auto& kt = kernels::Kernels();
  ParallelRanges(pool, rows, 1, rows * k, [&](int64_t b, int64_t e) {
    kt.quantize_rows_i8(x + b * ldx, e - b, k, ldx, out->q + b * out->ldq, out->ldq, out->scale + b,
                        out->sums + b);
  });
}

size_t I2SPackedBytes(int64_t k, int64_t n) { return kernels::Kernels().i2s_packed_bytes(k, n); }

void PackI2S(const uint8_t* canonical, int64_t k, int64_t n, uint8_t* packed) {
  kernels::Kernels().pack_i2s(canonical, k, n, packed);
}

void LinearI2S(ThreadPool& pool, const QuantizedRows& x, const I2SProjection* proj, int n_proj) {
  const auto& kt = kernels::Kernels();
  const int64_t align = std::max<int64_t>(1, kt.i2s_row_align);
  // Concatenate the projections' output rows into one index space; each starts at a multiple
  // of `align` so every thread's sub-range of a matrix starts on a kernel row block.
  constexpr int kMaxProj = 8;
  TERN_CHECK(n_proj >= 1 && n_proj <= kMaxProj);
  int64_t offset[kMaxProj + 1];
  offset[0] = 0;
  for (int p = 0; p < n_proj; ++p) {
    TERN_CHECK(proj[p].w->k == x.k);
    offset[p + 1] = offset[p] + (proj[p].w->n + align - 1) / align * align;
  }
  const int64_t total = offset[n_proj];
  auto run = [&](int64_t b, int64_t e) {
    for (int p = 0; p < n_proj; ++p) {
      const I2SProjection& pr = proj[p];
      const int64_t r0 = std::max(b, offset[p]) - offset[p];
      const int64_t r1 = std::min({e, offset[p + 1]}) - offset[p];
      const int64_t r1c = std::min(r1, pr.w->n);
      if (r0 >= r1c) continue;
      kt.gemm_i2s_i8(pr.w->packed, x.k, pr.w->n, r0, r1c, pr.w->scale, x.q, x.ldq, x.scale, x.sums,
                     x.rows, pr.out, pr.ldo);
      if (pr.bias) {
        for (int64_t j = 0; j < x.rows; ++j) {
          float* o = pr.out + j * pr.ldo;
          for (int64_t r = r0; r < r1c; ++r) o[r] += pr.bias[r];
        }
      }
    }
  };
  ParallelRanges(pool, total, align, total * x.k * std::max<int64_t>(1, x.rows) / 16, run);
}

void LinearI2SSwiGlu(ThreadPool& pool, const QuantizedRows& x, const I2SMatrix& gate,
                     const I2SMatrix& up, float* out, float* up_scratch, int64_t ldo) {
  TERN_CHECK(gate.k == x.k && up.k == x.k && gate.n == up.n);
  const auto& kt = kernels::Kernels();
  const int64_t align = std::max<int64_t>(1, kt.i2s_row_align);
  auto run = [&](int64_t r0, int64_t r1) {
    kt.gemm_i2s_i8(gate.packed, x.k, gate.n, r0, r1, gate.scale, x.q, x.ldq, x.scale, x.sums,
                   x.rows, out, ldo);
    kt.gemm_i2s_i8(up.packed, x.k, up.n, r0, r1, up.scale, x.q, x.ldq, x.scale, x.sums, x.rows,
                   up_scratch, ldo);
    for (int64_t j = 0; j < x.rows; ++j) {
      float* o = out + j * ldo + r0;
      kt.silu_mul_f32(o, up_scratch + j * ldo + r0, r1 - r0, o);
    }
  };
  ParallelRanges(pool, gate.n, align, 2 * gate.n * x.k * std::max<int64_t>(1, x.rows) / 16, run);
}

Result<I8Matrix> QuantizeWeightsI8(DType type, const uint8_t* data, int64_t k, int64_t n,
                                   ThreadPool* pool, const RowsConsumed& consumed) {
  if (!RowDecodeSupported(type)) {
    return UnsupportedError("W8A8 weights: cannot decode %s rows (F32/F16/Q8_0/Q6_K only)",
                            DTypeName(type));
  }
  if (!RowLengthValid(type, k)) {
    return InvalidArgumentError(
        "W8A8 weights: row length %lld is not a whole number of %s "
        "blocks",
        static_cast<long long>(k), DTypeName(type));
  }
  const auto& kt = kernels::Kernels();
  const int64_t row_bytes = RowBytes(type, k);
  I8Matrix m;
  m.k = k;
  m.n = n;
  m.scale.resize(static_cast<size_t>(n));
  const size_t packed_bytes = kt.i8_packed_bytes(k, n);
  m.packed = HugeBuffer::Allocate(packed_bytes);
  if (m.packed.size() != packed_bytes) {
    return ResourceExhaustedError(
        "W8A8 weights: cannot allocate %zu MB for %lld x %lld int8 "
        "rows",
        packed_bytes >> 20, static_cast<long long>(n), static_cast<long long>(k));
  }
  // Blocks of whole row groups (packs are separable by aligned row blocks, kernels.h): the
  // int8 rows of one block live in a per-task buffer, never the whole matrix at once.
  const int64_t block = kt.i8_row_align * std::max<int64_t>(1, 256 / kt.i8_row_align);
  const int64_t n_blocks = (n + block - 1) / block;
  auto quantize = [&](int64_t b0, int64_t b1) {
    std::vector<float> row(static_cast<size_t>(k));
    std::vector<int8_t> q(static_cast<size_t>(block * k));
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t r0 = blk * block, r1 = std::min(n, r0 + block);
      for (int64_t r = r0; r < r1; ++r) {
        DequantizeRow(type, data + r * row_bytes, k, row.data());
        const float amax = kt.absmax_f32(row.data(), k);
        const float s = amax / 127.0f;
        m.scale[r] = s;
        int8_t* qr = q.data() + (r - r0) * k;
        if (s == 0) {  // an all-zero row
          std::fill(qr, qr + k, int8_t{0});
          continue;
        }
        for (int64_t i = 0; i < k; ++i) {
          // Round half to even of x/s, |x/s| <= 127: adding 1.5 * 2^23 leaves no fraction
          // bits (as nearbyint, which is a libm call per element on baseline x86-64).
          const float v = (row[i] / s + 0x1.8p23f) - 0x1.8p23f;
          qr[i] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        }
      }
      kt.pack_i8(q.data(), k, r1 - r0, m.packed.data() + kt.i8_packed_bytes(k, r0));
      if (consumed) consumed(r0, r1);
    }
  };
  if (pool) {
    pool->ParallelFor(n_blocks, 1, quantize);
  } else {
    quantize(0, n_blocks);
  }
  return m;
}

void LinearW8A8(ThreadPool& pool, const I8Matrix& w, const QuantizedRows& x, float* out,
                int64_t ldo) {
  TERN_CHECK(w.k == x.k);
  const auto& kt = kernels::Kernels();
  const int64_t align = std::max<int64_t>(1, kt.i8_row_align);
  // The int32 accumulators live in a per-call stack block: the kernel runs over chunks of rows
  // small enough that chunk * x.rows accumulators fit, then the epilogue converts them.
  constexpr int64_t kAccElems = 4096;
  int64_t rows_per_call = std::max<int64_t>(1, kAccElems / std::max<int64_t>(1, x.rows));
  rows_per_call = std::max(align, rows_per_call / align * align);
  TERN_CHECK(rows_per_call <= kAccElems);
  auto run = [&](int64_t b, int64_t e) {
    int32_t acc[kAccElems];
    for (int64_t r0 = b; r0 < e; r0 += rows_per_call) {
      const int64_t r1 = std::min(e, r0 + rows_per_call);
      // Token blocks keep (r1 - r0) * tokens within the stack block.
      const int64_t tok_block = std::max<int64_t>(1, kAccElems / (r1 - r0));
      for (int64_t j0 = 0; j0 < x.rows; j0 += tok_block) {
        const int64_t nj = std::min(tok_block, x.rows - j0);
        // The kernel writes acc_base[j*ldo + r] for r in [r0, r1): shift the base by r0 so
        // the block lands at acc[0].
        int32_t* acc_base = acc - r0;
        kt.gemm_i8_i8(w.packed.data(), w.k, w.n, r0, r1, x.q + j0 * x.ldq, x.ldq, nj, acc_base,
                      r1 - r0);
        for (int64_t j = 0; j < nj; ++j) {
          const float s = x.scale[j0 + j];
          const int32_t* a = acc + j * (r1 - r0);
          float* o = out + (j0 + j) * ldo;
          for (int64_t r = r0; r < r1; ++r) {
            o[r] = (static_cast<float>(a[r - r0]) / s) * w.scale[r];
          }
        }
      }
    }
  };
  ParallelRanges(pool, w.n, align, w.n * w.k * x.rows / 16, run);
}

void LinearF16(ThreadPool& pool, const uint16_t* w, int64_t k, int64_t ldw, int64_t n_rows,
               const float* x, int64_t rows, int64_t ldx, float* out, int64_t ldo) {
  const auto& kt = kernels::Kernels();
  // 16-row blocks: a thread boundary never splits a kernel's row block, so the per-row
  // reduction order is the same at every thread count.
  ParallelRanges(pool, n_rows, 16, n_rows * k * rows / 16, [&](int64_t b, int64_t e) {
    kt.gemm_f16_f32(w, k, ldw, b, e, x, ldx, rows, out, ldo);
  });
}

}  // namespace tern::ops
