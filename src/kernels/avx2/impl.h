// AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c only).
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels::avx2 {

#include "kernels/isa_entry_points.inc"

}  // namespace tern::kernels::avx2
