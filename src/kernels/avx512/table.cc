// The AVX-512 kernel table: the common entries plus the fused epilogues, the u8 x s8 GEMMs
// (vpdpbusd) and the fused encoder fill. Packed weights interleave 16 rows.
#include "kernels/avx512/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {
namespace avx512 {
#include "kernels/table.inc"

constexpr KernelTable Table() {
  KernelTable t = MakeTable(Isa::kAvx512, 16);
  t.gemm_i8_i8_ep = GemmI8I8Ep;
  t.gemm_u8_i8 = GemmU8I8;
  t.gemm_u8_i8_ep = GemmU8I8Ep;
  t.pack_u8_i8 = PackU8I8;
  t.i8_fill_fused = I8FillFused;
  t.dw8_i8_ep = Dw8I8Ep;
  return t;
}
}  // namespace avx512

const KernelTable kAvx512Table = avx512::Table();

}  // namespace tern::kernels
