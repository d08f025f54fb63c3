// The packed weight layouts, byte for byte against references written from the format text
// in packing.h (one output byte at a time, no shared helpers), over row counts and K around
// the 16-row group and the 4-k quad, with every 2-bit code including the unused 3.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/packing.h"

namespace tern::kernels::packing {
namespace {

// Code of element e of a canonical I2_S row: 128-element blocks of 32 bytes, byte p holding
// elements p, p+32, p+64, p+96 in bit pairs 7:6, 5:4, 3:2, 1:0; code 3 is read as 1.
int CanonicalCode(const uint8_t* row, int64_t e) {
  const int64_t blk = e / 128, w = e % 128;
  const int code = (row[blk * 32 + w % 32] >> (6 - 2 * (w / 32))) & 3;
  return code == 3 ? 1 : code;
}

std::vector<uint8_t> ReferenceI2s16(const std::vector<uint8_t>& canonical, int64_t k,
                                    int64_t n_rows) {
  const int64_t groups = (n_rows + 15) / 16;
  std::vector<uint8_t> out(static_cast<size_t>(groups * 16 * k / 4));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < k / 16; ++c)
      for (int i = 0; i < 16; ++i)
        for (int b = 0; b < 4; ++b) {
          const int64_t r = g * 16 + i;
          int byte = 0;
          for (int s = 0; s < 4; ++s) {
            const int code =
                r < n_rows ? CanonicalCode(&canonical[r * (k / 4)], 16 * c + 4 * s + b) : 1;
            byte |= code << (6 - 2 * s);
          }
          out[g * 16 * k / 4 + c * 64 + 4 * i + b] = static_cast<uint8_t>(byte);
        }
  return out;
}

std::vector<uint8_t> ReferenceI8x16(const std::vector<int8_t>& w, int64_t k, int64_t n_rows,
                                    uint8_t flip) {
  const int64_t groups = (n_rows + 15) / 16, k4 = (k + 3) / 4 * 4;
  std::vector<uint8_t> out(static_cast<size_t>(groups * 16 * k4));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t q = 0; q < k4 / 4; ++q)
      for (int i = 0; i < 16; ++i)
        for (int b = 0; b < 4; ++b) {
          const int64_t r = g * 16 + i, kk = 4 * q + b;
          const int8_t v = r < n_rows && kk < k ? w[r * k + kk] : 0;
          out[g * 16 * k4 + q * 64 + 4 * i + b] = static_cast<uint8_t>(v) ^ flip;
        }
  return out;
}

TEST(Packing, I2s16MatchesFormatText) {
  std::mt19937 rng(7);
  for (int64_t k : {128, 256, 640}) {
    for (int64_t n : {1, 3, 15, 16, 17, 31, 48, 50}) {
      std::vector<uint8_t> canonical(static_cast<size_t>(n * k / 4));
      for (auto& v : canonical) v = static_cast<uint8_t>(rng());  // codes 0..3 all present
      ASSERT_EQ(I2s16Bytes(k, n), ReferenceI2s16(canonical, k, n).size());
      // Poisoned output: every byte must be written.
      std::vector<uint8_t> packed(I2s16Bytes(k, n), 0xA7);
      PackI2s16(canonical.data(), k, n, packed.data());
      EXPECT_EQ(packed, ReferenceI2s16(canonical, k, n)) << "k=" << k << " n=" << n;
    }
  }
}

TEST(Packing, I8x16MatchesFormatText) {
  std::mt19937 rng(11);
  for (uint8_t flip : {uint8_t{0}, uint8_t{0x80}}) {
    for (int64_t k : {1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 67, 130}) {
      for (int64_t n : {1, 15, 16, 17, 33}) {
        std::vector<int8_t> w(static_cast<size_t>(n * k));
        for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
        std::vector<uint8_t> packed(I8x16Bytes(k, n), 0xA7);
        PackI8x16(w.data(), k, n, flip, packed.data());
        EXPECT_EQ(packed, ReferenceI8x16(w, k, n, flip))
            << "k=" << k << " n=" << n << " flip=" << int{flip};
      }
    }
  }
}

}  // namespace
}  // namespace tern::kernels::packing
