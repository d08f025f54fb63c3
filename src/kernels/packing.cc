// Packed weight layouts shared by the AVX2 and AVX-512 kernels (format: packing.h).
#include "kernels/packing.h"

#include <cstring>

namespace tern::kernels::packing {
namespace {

// Canonical I2_S code of (row, k): 128-element blocks, byte p of a block holds elements
// p, p+32, p+64, p+96 in bit pairs 7:6, 5:4, 3:2, 1:0. 3 is read as 1 (weight 0).
inline uint8_t CanonicalCode(const uint8_t* row, int64_t k) {
  const int64_t j = k % 128;
  const uint8_t c = (row[k / 128 * 32 + j % 32] >> (6 - 2 * (j / 32))) & 3;
  return c == 3 ? 1 : c;
}

}  // namespace

size_t I2s16Bytes(int64_t k, int64_t n_rows) {
  return static_cast<size_t>(RowGroups(n_rows) * kRowGroup * k / 4);
}

void PackI2s16(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  const int64_t groups = RowGroups(n_rows);
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* dst = packed + g * kRowGroup * k / 4;
    for (int64_t c = 0; c < k / 16; ++c) {
      for (int i = 0; i < kRowGroup; ++i) {
        const int64_t r = g * kRowGroup + i;
        for (int b = 0; b < 4; ++b) {
          uint8_t byte = 0;
          for (int s = 0; s < 4; ++s) {
            const uint8_t code =
                r < n_rows ? CanonicalCode(canonical + r * (k / 4), 16 * c + 4 * s + b) : 1;
            byte |= static_cast<uint8_t>(code << (6 - 2 * s));
          }
          dst[c * 64 + 4 * i + b] = byte;
        }
      }
    }
  }
}

size_t I8x16Bytes(int64_t k, int64_t n_rows) {
  return static_cast<size_t>(RowGroups(n_rows) * kRowGroup * I8K4(k));
}

void PackI8x16(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t flip,
               uint8_t* packed) {
  const int64_t groups = RowGroups(n_rows), k4 = I8K4(k);
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* dst = packed + g * kRowGroup * k4;
    for (int64_t q = 0; q < k4 / 4; ++q) {
      for (int i = 0; i < kRowGroup; ++i) {
        const int64_t r = g * kRowGroup + i;
        for (int b = 0; b < 4; ++b) {
          const int64_t kk = 4 * q + b;
          const int8_t w = (r < n_rows && kk < k) ? canonical[r * k + kk] : 0;
          dst[q * 64 + 4 * i + b] = static_cast<uint8_t>(static_cast<uint8_t>(w) ^ flip);
        }
      }
    }
  }
}

}  // namespace tern::kernels::packing
