#include <cstdio>

#include "base/cpu_features.h"
#include "commands.h"
#include "kernels/kernels.h"

namespace tern::cli {

int PrintSystemInfo() {
  std::printf("cpu features: %s\n", GetCpuFeatures().ToString().c_str());
  size_t n = 0;
  const kernels::Isa* isas = kernels::AvailableIsas(&n);
  std::printf("available isas:");
  for (size_t i = 0; i < n; ++i) std::printf(" %s", kernels::IsaName(isas[i]));
  std::printf("\n");
  Result<kernels::Isa> chosen = kernels::SelectIsa();
  if (!chosen.ok()) {
    std::fprintf(stderr, "tern: %s\n", chosen.status().ToString().c_str());
    return 1;
  }
  std::printf("chosen isa: %s\n", kernels::IsaName(*chosen));
  return 0;
}

}  // namespace tern::cli
