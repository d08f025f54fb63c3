// The two NEON kernel tables. This TU is baseline (-march=armv8-a): naming the dotprod
// functions here executes none of them, so both tables can be built on any aarch64 CPU;
// dispatch hands out kNeonDotTable only when HWCAP_ASIMDDP is set.
#include "kernels/neon/dotprod/impl.h"
#include "kernels/neon/impl.h"
#include "kernels/scalar/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {
namespace neon {
// The encoder fills, SiLU and the int32 requantization: scalar's plain loops, which the
// compiler vectorizes for NEON.
using scalar::Dw8I8I32;
using scalar::I32AffineF32;
using scalar::I32MinMax;
using scalar::I32RequantI8;
using scalar::I8AddScaledF32;
using scalar::I8RmsFactors;
using scalar::I8ScaleMulF32;
using scalar::I8ToF32;
using scalar::SiluMulF32;
#include "kernels/table.inc"
}  // namespace neon

// Plain ARMv8.0 Advanced SIMD: int8 products through vmull_s8 + vpadalq_s16.
constexpr KernelTable kNeonBase = neon::MakeTable(Isa::kNeon, 1);
const KernelTable kNeonTable = kNeonBase;

// The same table with the SDOT GEMMs; packed layouts are shared with kNeonTable.
constexpr KernelTable WithDotprod(KernelTable t) {
  t.gemm_i2s_i8 = neon_dotprod::GemmI2sI8;
  t.gemm_i8_i8 = neon_dotprod::GemmI8I8;
  return t;
}
const KernelTable kNeonDotTable = WithDotprod(kNeonBase);

}  // namespace tern::kernels
