// The AVX2 kernel table. Packed weights interleave 16 rows (kernels/packing.h).
#include "kernels/avx2/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {
namespace avx2 {
#include "kernels/table.inc"
}  // namespace avx2

const KernelTable kAvx2Table = avx2::MakeTable(Isa::kAvx2, 16);

}  // namespace tern::kernels
