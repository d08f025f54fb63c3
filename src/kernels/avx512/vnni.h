// vpdpbusd with the accumulator pinned to its register (AVX-512 TUs only).
//
// Through the intrinsic, gcc 12 often computes a tile's accumulator into a scratch register
// and copies it back (the I2_S 2 x 10 prefill tile: 33 moves and 11 stack accesses per 80
// products). The "+v" operand makes the update in place; the register tile then stays put.
// static: an inline function with external linkage compiled here could be shared with code
// built without AVX-512 (packing.h explains the hazard).
#pragma once

#include <immintrin.h>

namespace tern::kernels::avx512 {

// acc += sum over each 4-byte lane of u8 a * s8 b.
static inline void Dpbusd(__m512i& acc, __m512i a, __m512i b) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
}

}  // namespace tern::kernels::avx512
