// The block formats' structs (layouts: quant_ref.h), in a header of plain data only: the
// per-ISA kernels include it, and a header they include must not carry inline code that
// would be compiled with one ISA's flags and linked into another's callers.
#pragma once

#include <cstdint>

namespace tern {

inline constexpr int kQ8_0BlockElems = 32;
struct BlockQ8_0 {
  uint16_t d;  // f16
  int8_t qs[kQ8_0BlockElems];
};
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block is 34 bytes on disk");

inline constexpr int kQ6_KBlockElems = 256;
struct BlockQ6_K {
  uint8_t ql[128];    // low 4 bits of the 6-bit quants
  uint8_t qh[64];     // high 2 bits
  int8_t scales[16];  // one per 16 values
  uint16_t d;         // f16 super-block scale
};
static_assert(sizeof(BlockQ6_K) == 210, "Q6_K block is 210 bytes on disk");

}  // namespace tern
