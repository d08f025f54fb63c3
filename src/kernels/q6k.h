// Q6_K block layout (spec 2.5; ggml's block_q6_K), shared by every ISA's dequantizer.
// 256 values per 210-byte block:
//   ql[128]   low 4 bits of each 6-bit code
//   qh[64]    high 2 bits
//   scales[16] int8 sub-block scales (16 values each)
//   d         F16 super-block scale
// value = d * scales[is] * (q - 32), q = low | high << 4, in ggml's interleave
// (see scalar/convert.cc).
#pragma once

#include <cstdint>

namespace tern::kernels {

struct BlockQ6K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6K) == 210, "Q6_K block is 210 bytes");

inline constexpr int64_t kQ6KBlockElems = 256;

}  // namespace tern::kernels
