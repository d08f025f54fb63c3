// Scalar kernels: plain loops, the oracle every other ISA is tested against.
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels::scalar {

#include "kernels/isa_entry_points.inc"

// One-value conversions (IEEE binary16, round to nearest even; NaN stays NaN with the quiet
// bit set, as F16C does), used by the loops above.
uint16_t F32ToF16One(float f);
float F16ToF32One(uint16_t h);

}  // namespace tern::kernels::scalar
