// Packed weight layouts shared by the AVX2 and AVX-512 kernels (format: packing.h).
#include "kernels/packing.h"

#include <cstring>

namespace tern::kernels::packing {
namespace {

// Loads and stores through memcpy (the rows are byte arrays at any offset); every target we
// build is little-endian, so byte b of a word is byte b in memory.
uint32_t Load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t Load64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void Store32(void* p, uint32_t v) { std::memcpy(p, &v, 4); }

constexpr uint32_t kBytes01 = 0x01010101u;
constexpr uint64_t kBytes01x8 = 0x0101010101010101u;

// Bit pair `shift`..`shift`+1 of each byte of w, moved to bits 1:0, with code 3 (unused by
// the format, weight 0 for the dequantizer) read as 1. The shift moves bits of byte b+1 into
// byte b's top; the mask drops them.
uint64_t CodesAt(uint64_t w, int shift) {
  const uint64_t f = (w >> shift) & (3 * kBytes01x8);
  return f & ~((f & (f >> 1) & kBytes01x8) << 1);
}

}  // namespace

size_t I2s16Bytes(int64_t k, int64_t n_rows) {
  return static_cast<size_t>(RowGroups(n_rows) * kRowGroup * k / 4);
}

// Word arithmetic, four output bytes at a time: load time packs ~1.3 G weights for the
// published model. Chunk c = 8 * blk + cc of a canonical 128-element block holds elements
// e = 16 cc + 4 s + b (s, b in 0..3); all sixteen sit in bit pair 6 - 2 (cc / 2) of canonical
// bytes 16 (cc % 2) + 4 s + b, so field s of the output word (bit pair 6 - 2 s of each byte)
// is one shift and mask of bytes 4 s..4 s + 3 of that 16-byte half.
void PackI2s16(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  const int64_t groups = RowGroups(n_rows), chunks = k / 16;
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* dst = packed + g * kRowGroup * k / 4;
    for (int i = 0; i < kRowGroup; ++i) {
      const int64_t r = g * kRowGroup + i;
      uint8_t* d = dst + 4 * i;
      if (r >= n_rows) {  // padding rows: code 1 (weight 0) in every pair
        for (int64_t c = 0; c < chunks; ++c) Store32(d + c * 64, 0x55 * kBytes01);
        continue;
      }
      const uint8_t* row = canonical + r * (k / 4);
      for (int64_t c = 0; c < chunks; ++c) {
        // Two 64-bit loads hold fields s = 0, 1 (lo) and 2, 3 (hi) in their 32-bit halves.
        const uint8_t* src = row + (c / 8) * 32 + 16 * (c % 2);
        const int shift = 6 - 2 * static_cast<int>((c % 8) / 2);
        const uint64_t pairs = CodesAt(Load64(src), shift) << 6 | CodesAt(Load64(src + 8), shift)
                                                                      << 2;
        Store32(d + c * 64, static_cast<uint32_t>(pairs) | static_cast<uint32_t>(pairs >> 34));
      }
    }
  }
}

size_t I8x16Bytes(int64_t k, int64_t n_rows) {
  return static_cast<size_t>(RowGroups(n_rows) * kRowGroup * I8K4(k));
}

// One 32-bit copy per row and quad (the VAE's ~700 M weights at load time); only a row's
// last quad, when K % 4 != 0, goes byte by byte.
void PackI8x16(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t flip, uint8_t* packed) {
  const int64_t groups = RowGroups(n_rows), k4 = I8K4(k), full = k / 4;
  const uint32_t flip4 = flip * kBytes01;
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* dst = packed + g * kRowGroup * k4;
    for (int i = 0; i < kRowGroup; ++i) {
      const int64_t r = g * kRowGroup + i;
      uint8_t* d = dst + 4 * i;
      if (r >= n_rows) {  // padding rows: weight 0
        for (int64_t q = 0; q < k4 / 4; ++q) Store32(d + q * 64, flip4);
        continue;
      }
      const int8_t* row = canonical + r * k;
      for (int64_t q = 0; q < full; ++q) Store32(d + q * 64, Load32(row + 4 * q) ^ flip4);
      if (full < k4 / 4) {
        for (int b = 0; b < 4; ++b) {
          const int64_t kk = 4 * full + b;
          const uint8_t w = kk < k ? static_cast<uint8_t>(row[kk]) : 0;
          d[full * 64 + b] = static_cast<uint8_t>(w ^ flip);
        }
      }
    }
  }
}

}  // namespace tern::kernels::packing
