// aarch64 baseline NEON probe: 128-bit streaming loads.
#include <arm_neon.h>

#include "probes.h"

namespace tern::cli::bench::limits {

int64_t ReadSumNeon(const int64_t* p, size_t n) {
  int64x2_t a0 = vdupq_n_s64(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (size_t i = 0; i < n; i += 16) {
    a0 = vaddq_s64(a0, vld1q_s64(p + i + 0));
    a1 = vaddq_s64(a1, vld1q_s64(p + i + 2));
    a2 = vaddq_s64(a2, vld1q_s64(p + i + 4));
    a3 = vaddq_s64(a3, vld1q_s64(p + i + 6));
    a4 = vaddq_s64(a4, vld1q_s64(p + i + 8));
    a5 = vaddq_s64(a5, vld1q_s64(p + i + 10));
    a6 = vaddq_s64(a6, vld1q_s64(p + i + 12));
    a7 = vaddq_s64(a7, vld1q_s64(p + i + 14));
  }
  a0 = vaddq_s64(vaddq_s64(vaddq_s64(a0, a1), vaddq_s64(a2, a3)),
                 vaddq_s64(vaddq_s64(a4, a5), vaddq_s64(a6, a7)));
  return vgetq_lane_s64(a0, 0) + vgetq_lane_s64(a0, 1);
}

}  // namespace tern::cli::bench::limits
