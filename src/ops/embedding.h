// Row decoding and embedding lookup.
//
// A table is `rows` rows of `dim` values of one storage type, row r at data + r*row_bytes
// (ggml order: ne = {dim, rows}). Supported row types and their decoding (formats in
// tensor/quant_ref.h):
//   F32  copied;  F16  converted exactly;  Q8_0  d * q;  Q6_K  spec 2.5 via the kernel table
//   (bit-identical to the reference dequantizer).
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"
#include "tensor/dtype.h"

namespace tern::ops {

// True for the types DequantizeRow handles.
bool RowDecodeSupported(DType type);

// Decodes one row of k values (k a whole number of blocks; the caller checked).
void DequantizeRow(DType type, const uint8_t* row, int64_t k, float* out);

struct EmbeddingTable {
  DType type = DType::kF32;
  const uint8_t* data = nullptr;
  int64_t dim = 0;
  int64_t rows = 0;
  int64_t row_bytes = 0;  // RowBytes(type, dim)
};

// out[i*ldo .. +dim) = row ids[i] of the table, for i < n. Ids must be in [0, rows) (checked
// by the caller: a user-visible error belongs there). Threaded over ids.
void EmbeddingLookup(ThreadPool& pool, const EmbeddingTable& table, const int32_t* ids, int64_t n,
                     float* out, int64_t ldo);

}  // namespace tern::ops
