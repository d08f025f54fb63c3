// Row decoding and embedding lookup: bit-exact vs the reference dequantizers of
// tensor/quant_ref.h for every supported row type, byte-identical at 1, 2 and 4 threads.
#include "ops/embedding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tensor/quant_ref.h"

namespace tern::ops {
namespace {

std::vector<uint8_t> MakeTable(DType type, int64_t dim, int64_t rows) {
  std::mt19937 rng(static_cast<uint32_t>(dim + rows));
  std::normal_distribution<float> d(0.0f, 0.3f);
  std::vector<float> x(static_cast<size_t>(dim * rows));
  for (auto& v : x) v = d(rng);
  const int64_t rb = RowBytes(type, dim);
  std::vector<uint8_t> bytes(static_cast<size_t>(rb * rows));
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = bytes.data() + r * rb;
    if (type == DType::kF32) {
      std::memcpy(row, x.data() + r * dim, static_cast<size_t>(dim) * 4);
    } else if (type == DType::kF16) {
      for (int64_t i = 0; i < dim; ++i) {
        const uint16_t h = F32ToF16(x[r * dim + i]);
        std::memcpy(row + 2 * i, &h, 2);
      }
    } else {
      QuantizeRef(type, x.data() + r * dim, dim, row);
    }
  }
  return bytes;
}

TEST(EmbeddingTest, LookupMatchesReferenceForEveryRowType) {
  const int64_t dim = 512, rows = 50;
  for (DType type : {DType::kF32, DType::kF16, DType::kQ8_0, DType::kQ6_K}) {
    ASSERT_TRUE(RowDecodeSupported(type));
    const auto bytes = MakeTable(type, dim, rows);
    const EmbeddingTable table{type, bytes.data(), dim, rows, RowBytes(type, dim)};
    const std::vector<int32_t> ids = {0, 49, 7, 7, 23, 1, 48, 2, 30};
    const int64_t n = static_cast<int64_t>(ids.size()), ldo = dim + 3;
    std::vector<float> first;
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      std::vector<float> out(static_cast<size_t>(n * ldo), 0.0f);
      EmbeddingLookup(pool, table, ids.data(), n, out.data(), ldo);
      if (first.empty()) {
        for (int64_t i = 0; i < n; ++i) {
          std::vector<float> ref(static_cast<size_t>(dim));
          const uint8_t* row = bytes.data() + ids[i] * table.row_bytes;
          if (type == DType::kF32) {
            std::memcpy(ref.data(), row, static_cast<size_t>(dim) * 4);
          } else {
            DequantizeRef(type, row, dim, ref.data());
          }
          ASSERT_EQ(std::memcmp(ref.data(), out.data() + i * ldo, dim * 4), 0)
              << DTypeName(type) << " id " << ids[i];
        }
        first = out;
      } else {
        ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0);
      }
    }
  }
  EXPECT_FALSE(RowDecodeSupported(DType::kI2_S));
  EXPECT_FALSE(RowDecodeSupported(DType::kI8_S));
}

}  // namespace
}  // namespace tern::ops
