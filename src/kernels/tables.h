// The per-ISA kernel tables this build contains (internal to src/kernels; ISA-neutral).
// Each is defined in <isa>/table.cc from kernels/table.inc, included into the ISA's
// namespace tern::kernels::<isa>.
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels {

extern const KernelTable kScalarTable;
#if defined(__x86_64__)
extern const KernelTable kAvx2Table;
extern const KernelTable kAvx512Table;
#endif
#if defined(__aarch64__)
// Both in kernels/neon/table.cc. kNeonTable: plain ASIMD (vmull/vpadal); kNeonDotTable: the
// same with the dotprod extension's GEMMs (sdot).
extern const KernelTable kNeonTable;
extern const KernelTable kNeonDotTable;
#endif

}  // namespace tern::kernels
