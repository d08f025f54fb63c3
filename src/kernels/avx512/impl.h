// AVX-512 (F, BW, VL, DQ, VNNI) kernels; 256-bit helpers may use AVX2.
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels::avx512 {

#include "kernels/isa_entry_points.inc"

}  // namespace tern::kernels::avx512
