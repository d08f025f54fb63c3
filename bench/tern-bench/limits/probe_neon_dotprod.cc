// aarch64 sdot probe (compiled with +dotprod only; called only where HWCAP_ASIMDDP is set).
#include "probes.h"

namespace tern::cli::bench::limits {

void DotNeonSdot(long iters) {
#define TERN_I(r) "sdot v" #r ".4s, v12.16b, v13.16b\n\t"
  for (long i = 0; i < iters; ++i) {
    __asm__ volatile(TERN_I(0) TERN_I(1) TERN_I(2) TERN_I(3) TERN_I(4) TERN_I(5) TERN_I(6) TERN_I(7)
                         TERN_I(8) TERN_I(9) TERN_I(10) TERN_I(11)::
                             : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
                               "v11");
  }
#undef TERN_I
}

}  // namespace tern::cli::bench::limits
