// Packed weight layouts shared by the AVX2 and AVX-512 kernels (format: packing.h).
#include "kernels/packing.h"

#include <cstring>
#include <vector>

namespace tern::kernels::packing {
namespace {

// One canonical I2_S row (128-element blocks; byte p of a block holds elements p, p+32, p+64,
// p+96 in bit pairs 7:6, 5:4, 3:2, 1:0) as one code per element, 3 read as 1 (weight 0).
void UnpackCanonicalRow(const uint8_t* row, int64_t k, uint8_t* codes) {
  static constexpr uint8_t kCode[4] = {0, 1, 2, 1};
  for (int64_t blk = 0; blk < k / 128; ++blk) {
    const uint8_t* src = row + blk * 32;
    uint8_t* dst = codes + blk * 128;
    for (int p = 0; p < 32; ++p) {
      const uint8_t v = src[p];
      dst[p] = kCode[v >> 6];
      dst[32 + p] = kCode[(v >> 4) & 3];
      dst[64 + p] = kCode[(v >> 2) & 3];
      dst[96 + p] = kCode[v & 3];
    }
  }
}

}  // namespace

size_t I2s16Bytes(int64_t k, int64_t n_rows) {
  return static_cast<size_t>(RowGroups(n_rows) * kRowGroup * k / 4);
}

void PackI2s16(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  // Unpack the group's 16 rows to one code per byte first, then assemble: no per-code
  // division or shift arithmetic (load time packs ~1.3 G weights for the published model).
  std::vector<uint8_t> codes(static_cast<size_t>(kRowGroup * k));
  const int64_t groups = RowGroups(n_rows);
  for (int64_t g = 0; g < groups; ++g) {
    for (int i = 0; i < kRowGroup; ++i) {
      const int64_t r = g * kRowGroup + i;
      uint8_t* cr = codes.data() + i * k;
      if (r < n_rows) {
        UnpackCanonicalRow(canonical + r * (k / 4), k, cr);
      } else {
        std::memset(cr, 1, static_cast<size_t>(k));  // padding rows: weight 0
      }
    }
    uint8_t* dst = packed + g * kRowGroup * k / 4;
    for (int64_t c = 0; c < k / 16; ++c) {
      for (int i = 0; i < kRowGroup; ++i) {
        const uint8_t* q = codes.data() + i * k + 16 * c;
        for (int b = 0; b < 4; ++b) {
          dst[c * 64 + 4 * i + b] =
              static_cast<uint8_t>(q[b] << 6 | q[4 + b] << 4 | q[8 + b] << 2 | q[12 + b]);
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
