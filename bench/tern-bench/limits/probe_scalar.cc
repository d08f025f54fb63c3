// Baseline-ISA probes: what the scalar kernel table can reach (the compiler may vectorize these
// loops with the baseline ISA's vectors, as it does the scalar kernels).
#include <cstdint>

#include "probes.h"

namespace tern::cli::bench::limits {

int64_t ReadSumScalar(const int64_t* p, size_t n) {
  int64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  for (size_t i = 0; i < n; i += 8) {
    a0 += p[i + 0];
    a1 += p[i + 1];
    a2 += p[i + 2];
    a3 += p[i + 3];
    a4 += p[i + 4];
    a5 += p[i + 5];
    a6 += p[i + 6];
    a7 += p[i + 7];
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

void DotScalar(long iters) {
  // 64 int8 MACs per iteration into 64 int32 lanes; the operands change every iteration
  // through an opaque barrier so the loop cannot be folded away.
  alignas(64) int8_t a[64], b[64];
  alignas(64) int32_t acc[64] = {};
  for (int i = 0; i < 64; ++i) {
    a[i] = static_cast<int8_t>(i * 7 + 3);
    b[i] = static_cast<int8_t>(i * 5 - 100);
  }
  for (long it = 0; it < iters; ++it) {
    for (int i = 0; i < 64; ++i) acc[i] += static_cast<int32_t>(a[i]) * b[i];
    __asm__ volatile("" : : "r"(acc), "r"(a), "r"(b) : "memory");
  }
}

}  // namespace tern::cli::bench::limits
