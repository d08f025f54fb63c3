#include "ops/embedding.h"

#include <cstring>

#include "base/check.h"
#include "kernels/kernels.h"
#include "ops/parallel.h"
#include "tensor/quant_ref.h"

namespace tern::ops {

bool RowDecodeSupported(DType type) {
  return type == DType::kF32 || type == DType::kF16 || type == DType::kQ8_0 || type == DType::kQ6_K;
}

void DequantizeRow(DType type, const uint8_t* row, int64_t k, float* out) {
  TERN_CHECK(RowLengthValid(type, k));
  switch (type) {
    case DType::kF32:
      std::memcpy(out, row, static_cast<size_t>(k) * sizeof(float));
      return;
    case DType::kF16:
      kernels::Kernels().f16_to_f32(reinterpret_cast<const uint16_t*>(row), k, out);
      return;
    case DType::kQ8_0:
      DequantizeQ8_0(reinterpret_cast<const BlockQ8_0*>(row), k, out);
      return;
    case DType::kQ6_K:
      kernels::Kernels().dequant_row_q6k(row, k, out);
      return;
    default:
      TERN_CHECK(false && "DequantizeRow: unsupported type");
  }
}

void EmbeddingLookup(ThreadPool& pool, const EmbeddingTable& table, const int32_t* ids, int64_t n,
                     float* out, int64_t ldo) {
  ParallelRanges(pool, n, 1, n * table.dim * 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      TERN_CHECK(ids[i] >= 0 && ids[i] < table.rows);
      DequantizeRow(table.type, table.data + ids[i] * table.row_bytes, table.dim, out + i * ldo);
    }
  });
}

}  // namespace tern::ops
