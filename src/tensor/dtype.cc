#include "tensor/dtype.h"

#include "base/check.h"

namespace tern {
namespace {

constexpr DTypeTraits kTraits[kNumDTypes] = {
    {"F32", 1, 4, 0},      {"F16", 1, 2, 0},   {"BF16", 1, 2, 0},     {"Q8_0", 32, 34, 0},
    {"Q6_K", 256, 210, 0}, {"I8_S", 1, 1, 32}, {"I2_S", 128, 32, 32},
};

}  // namespace

const DTypeTraits& Traits(DType t) {
  const int i = static_cast<int>(t);
  TERN_CHECK(i >= 0 && i < kNumDTypes);
  return kTraits[i];
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == kTraits[i].name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

bool RowLengthValid(DType t, int64_t n) { return n >= 0 && n % Traits(t).block_elems == 0; }

int64_t RowBytes(DType t, int64_t n) {
  const DTypeTraits& tr = Traits(t);
  return n / tr.block_elems * tr.block_bytes;
}

int64_t StoredBytes(DType t, int64_t n) { return RowBytes(t, n) + Traits(t).tensor_tail; }

}  // namespace tern
