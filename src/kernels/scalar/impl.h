// Scalar kernels: plain loops, the oracle every other ISA is tested against.
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels::scalar {

#include "kernels/isa_entry_points.inc"

}  // namespace tern::kernels::scalar
