// The scalar kernel table.
#include "kernels/scalar/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {
namespace scalar {
#include "kernels/table.inc"
}  // namespace scalar

const KernelTable kScalarTable = scalar::MakeTable(Isa::kScalar, 1);

}  // namespace tern::kernels
