// TERN_UNROLL: unroll the next loop completely (loops over a register tile's rows/columns).
//
// gcc 12 unrolls such nested loops only in part when the tile is large: it then keeps the
// accumulator array on the stack or rotates it through scratch registers, e.g. 32 register
// moves per 16 vpdpbusd in the AVX-512 int8 2 x 8 tile, a large slowdown.
// Put it before every loop over a tile's registers (init, loads, products, epilogue).
#pragma once

#define TERN_UNROLL _Pragma("GCC unroll 16")
