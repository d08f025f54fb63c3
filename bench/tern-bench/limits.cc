// `tern-bench limits [--threads N] [--isa X] [--json]`: this machine's int8 dot-product peak
// and streaming-read bandwidth at 1 thread and at N (default: every CPU the process may use),
// with the probes of the kernel ISA in use (machine_limits.h). Every other suite measures the
// same limits at its start and prints its figures as ratios to them.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "bench.h"
#include "machine_limits.h"

namespace tern::cli::bench {
namespace {

int LimitsMain(int argc, char** argv) {
  CLI::App app("This machine's int8 dot-product peak and streaming-read bandwidth",
               "tern-bench limits");
  int threads = 0;
  bool json = false;
  std::string isa_name;
  app.add_option("--threads", threads, "the 'all threads' count (default: every usable CPU)")
      ->check(CLI::Range(1, 256));
  app.add_option("--isa", isa_name, "whose probes (default: TERN_ISA or the best available)");
  app.add_flag("--json", json, "one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  Result<kernels::Isa> isa =
      isa_name.empty() ? kernels::SelectIsa() : kernels::IsaFromName(isa_name);
  if (isa.ok()) {
    if (Result<const kernels::KernelTable*> t = kernels::TableFor(*isa); !t.ok()) {
      isa = t.status();
    }
  }
  if (!isa.ok()) {
    std::fprintf(stderr, "tern-bench limits: %s\n", isa.status().ToString().c_str());
    return 1;
  }
  const MachineLimits m = MeasureLimits(*isa, threads);
  if (json) {
    const nlohmann::json j = {{"bench", "limits"},
                              {"isa", m.isa},
                              {"dot_probe", m.dot_probe},
                              {"read_probe", m.read_probe},
                              {"threads_all", m.threads_all},
                              {"int8_gops_1t", m.int8_gops_1t},
                              {"int8_gops_all", m.int8_gops_all},
                              {"read_gbs_1t", m.read_gbs_1t},
                              {"read_gbs_all", m.read_gbs_all},
                              {"seconds", m.seconds}};
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
  }
  std::printf("isa %s, all = %d threads (probes took %.1f s)\n", m.isa.c_str(), m.threads_all,
              m.seconds);
  std::printf("  int8 dot peak   [%s]: %8.1f GOPS at 1 thread, %8.1f GOPS at %d threads\n",
              m.dot_probe.c_str(), m.int8_gops_1t, m.int8_gops_all, m.threads_all);
  std::printf(
      "  streaming read  [%s, 256 MiB]: %6.1f GB/s at 1 thread, %6.1f GB/s at %d "
      "threads\n",
      m.read_probe.c_str(), m.read_gbs_1t, m.read_gbs_all, m.threads_all);
  return 0;
}

}  // namespace

TERN_REGISTER_BENCH_MAIN(kLimitsSuite, "limits",
                         "this machine's int8 dot peak and streaming-read bandwidth, 1 thread "
                         "and all (--threads N, --isa X, --json)",
                         LimitsMain);

}  // namespace tern::cli::bench
