// Packed weight layouts for the x86 SIMD kernels (AVX2 and AVX-512 share them), built once at
// load time from the canonical on-disk bytes. ISA-neutral: plain C++, no intrinsics.
//
// Both layouts interleave 16 weight rows so that one 64-byte vector holds 4 consecutive k of
// 16 rows: 32-bit lane i (bytes 4i..4i+3) belongs to row i, so vpdpbusd/maddubs reduce the 4
// k of a lane into that row's int32 sum and a block of rows needs no horizontal reduction.
// AVX2 reads the same 64 bytes as two 8-row halves. Rows past N (up to the next multiple
// of 16) are padding with weight 0.
//
// I2S16 (ternary): row group g (16 rows) at byte g*16*K/4. Inside a group, chunk c (k in
// [16c, 16c+16)) is 64 bytes at c*64; byte 4i+b holds row i's codes for
//   k = 16c + b (bits 7:6), 16c + 4 + b (5:4), 16c + 8 + b (3:2), 16c + 12 + b (1:0),
// so (byte >> (6 - 2s)) & 3 is "quad s" of the chunk: 16 rows x 4 k. K % 128 == 0.
// Code 3 (unused by the format, weight 0 for the dequantizer) is stored as 1; padding rows
// are code 1.
//
// I8x16 (int8): row group g at byte g*16*K4 with K4 = K rounded up to a multiple of 4; quad q
// (k in [4q, 4q+4)) is 64 bytes at q*64, byte 4i+b = W[16g+i][4q+b] XOR `flip`, with k >= K and
// padding rows holding weight 0. flip = 0x80 stores w + 128 as an unsigned byte (AVX-512
// VNNI: unsigned weights times signed activations); flip = 0 keeps signed weights (AVX2).
//
// The helpers below are `static inline` on purpose: the AVX2/AVX-512 TUs include this header,
// and an inline function with external linkage compiled there could be emitted as a weak
// symbol with AVX code that the linker then shares with baseline callers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern::kernels::packing {

inline constexpr int64_t kRowGroup = 16;

static inline int64_t RowGroups(int64_t n_rows) { return (n_rows + kRowGroup - 1) / kRowGroup; }

size_t I2s16Bytes(int64_t k, int64_t n_rows);
void PackI2s16(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);

static inline int64_t I8K4(int64_t k) { return (k + 3) / 4 * 4; }
size_t I8x16Bytes(int64_t k, int64_t n_rows);
void PackI8x16(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t flip, uint8_t* packed);

}  // namespace tern::kernels::packing

namespace tern::kernels::packing {

// Activation rows per chunk for the register-tiled GEMMs: about 256 KiB of k-byte rows (so
// a chunk stays in L2 while every weight tile of a row range sweeps over it), but at least
// 64 rows (the weights are re-read once per chunk: fewer rows would make that dominate),
// rounded down to a multiple of the tile height `rx`.
static inline int64_t ChunkRows(int64_t k, int64_t rx) {
  int64_t rows = (int64_t{256} << 10) / (k > 0 ? k : 1);
  rows = rows > 64 ? rows : 64;
  return rows / rx * rx;
}

// Decode GEMV tiles read `groups` consecutive row groups as that many streams, group_bytes
// apart, and prefetch each kStreamPrefetch bytes ahead (about one DRAM latency). Where that
// runs past a stream's end it would land in the next group, which this tile is already
// reading; StreamAhead sends it to the head of the same stream of the next tile instead.
// `at` is the offset being read in the stream; the result is the offset to prefetch, both
// relative to the stream's start. Without the redirect every tile but the first starts all
// streams but one cold: a quarter of the bytes at K = 1536.
inline constexpr int64_t kStreamPrefetch = 2048;
static inline int64_t StreamAhead(int64_t at, int64_t group_bytes, int64_t groups) {
  const int64_t pos = at + kStreamPrefetch;
  return pos < group_bytes ? pos : pos + (groups - 1) * group_bytes;
}

}  // namespace tern::kernels::packing
