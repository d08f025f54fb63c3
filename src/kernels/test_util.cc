#include "kernels/test_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "base/check.h"

namespace tern::kernels::ktest {

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t body = (bytes + page - 1) / page * page;
  map_bytes_ = body + 2 * page;
  void* m = mmap(nullptr, map_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  TERN_CHECK(m != MAP_FAILED);
  map_ = static_cast<uint8_t*>(m);
  if (body > 0) TERN_CHECK(mprotect(map_ + page, body, PROT_READ | PROT_WRITE) == 0);
  // End flush against the trailing guard page; the data start is then generally unaligned
  // and, when bytes is a page multiple, flush against the leading guard page too.
  data_ = map_ + page + body - bytes;
}

GuardedBuffer::~GuardedBuffer() { munmap(map_, map_bytes_); }

bool Reduced() {
  const char* v = std::getenv("TERN_KERNELS_TEST_REDUCED");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

std::vector<const KernelTable*> SimdTables() {
  std::vector<const KernelTable*> out;
  // scripts/test-isas runs this binary once per forced TERN_ISA: then only that table is
  // compared with the oracle (and an unavailable forced ISA fails the IsaEnv tests).
  if (const char* env = std::getenv("TERN_ISA"); env != nullptr && env[0] != '\0') {
    Result<Isa> isa = IsaFromName(env);
    if (isa.ok() && *isa != Isa::kScalar) {
      if (Result<const KernelTable*> t = TableFor(*isa); t.ok()) out.push_back(*t);
    }
    return out;
  }
  size_t n = 0;
  const Isa* isas = AvailableIsas(&n);
  for (size_t i = 0; i < n; ++i) {
    if (isas[i] == Isa::kScalar) continue;
    Result<const KernelTable*> t = TableFor(isas[i]);
    TERN_CHECK(t.ok());
    out.push_back(*t);
  }
  return out;
}

const KernelTable& Scalar() {
  Result<const KernelTable*> t = TableFor(Isa::kScalar);
  TERN_CHECK(t.ok());
  return **t;
}

GuardedBuffer* PackI2s(const KernelTable& t, const uint8_t* canonical, int64_t k, int64_t n) {
  auto* b = new GuardedBuffer(t.i2s_packed_bytes(k, n));
  t.pack_i2s(canonical, k, n, b->as<uint8_t>());
  return b;
}

GuardedBuffer* PackI8(const KernelTable& t, const int8_t* canonical, int64_t k, int64_t n,
                      bool u8) {
  auto* b = new GuardedBuffer(t.i8_packed_bytes(k, n));
  (u8 ? t.pack_u8_i8 : t.pack_i8)(canonical, k, n, b->as<uint8_t>());
  return b;
}

// Written from the spec text (2.2.2), independently of any kernel: element j of a 128-block
// goes to byte j % 32, bit pair 6 - 2 * (j / 32).
std::vector<uint8_t> EncodeI2s(const std::vector<uint8_t>& codes, int64_t k, int64_t n) {
  std::vector<uint8_t> out(static_cast<size_t>(n * k / 4), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < k; ++i) {
      const int64_t flat = r * k + i;
      const int64_t block = flat / 128, j = flat % 128;
      out[block * 32 + j % 32] |= static_cast<uint8_t>(codes[flat] << (6 - 2 * (j / 32)));
    }
  }
  return out;
}

}  // namespace tern::kernels::ktest
