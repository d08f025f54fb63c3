// tern-bench <suite> [--threads N] [--json] [--isa X] [--mode hot|cold|auto] [--clock wall|cpu]
//                   [--filter S] [--min-seconds S] [--min-reps N] [--busy N]
// Suites register themselves (bench.h); this file owns the shared flags and the output. The
// suites time kernels, ops and model stages directly, below the public API, which is why they
// are a binary of their own beside bench/ and not part of `tern` (tests/layering_test.cc).
// Exit codes: 0 ok, 1 a suite or the ISA selection failed, 2 usage.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "bench.h"
#include "common/cli.h"

namespace tern::cli {
namespace bench {

std::vector<Suite>& Registry() {
  static std::vector<Suite> suites;
  return suites;
}

const char* RatioToName(RatioTo r) {
  switch (r) {
    case RatioTo::kInt8Peak:
      return "int8_peak";
    case RatioTo::kReadBw:
      return "read_bw";
    case RatioTo::kInt8Floor:
      return "int8_floor";
    case RatioTo::kNone:
      break;
  }
  return "";
}

void Sink::Emit(Record r) {
  if (limits != nullptr) {
    switch (r.ratio_to) {
      case RatioTo::kInt8Peak:
        r.limit = limits->Int8Gops(r.threads);
        r.ratio = r.limit > 0 ? r.gops / r.limit : 0;
        break;
      case RatioTo::kReadBw:
        r.limit = limits->ReadGbs(r.threads);
        r.ratio = r.limit > 0 ? r.weight_gbs / r.limit : 0;
        break;
      case RatioTo::kInt8Floor:
        r.limit = limits->Int8Gops(r.threads);
        r.ratio = r.gops > 0 ? r.limit / r.gops : 0;
        break;
      case RatioTo::kNone:
        break;
    }
  }
  records.push_back(r);
  if (on_record) on_record(records.back());
}

void PrintLimits(FILE* f, const MachineLimits& m) {
  std::fprintf(f,
               "limits (%s, %.1f s): int8 peak %.1f GOPS/thread, %.1f GOPS at %d threads "
               "[%s]; streaming read %.1f GB/s at 1 thread, %.1f GB/s at %d [%s]\n",
               m.isa.c_str(), m.seconds, m.int8_gops_1t, m.int8_gops_all, m.threads_all,
               m.dot_probe.c_str(), m.read_gbs_1t, m.read_gbs_all, m.threads_all,
               m.read_probe.c_str());
  std::fflush(f);
}

BusyThreads::BusyThreads(int n) {
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back([this, i] {
      // A dependent multiply-add chain: keeps a core's integer units busy and its caches
      // nearly untouched, so what it takes from a benchmark is CPU time, not bandwidth.
      volatile uint64_t sink = 0;
      uint64_t x = 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i);
      while (!stop_.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 4096; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
        sink = x;
      }
      (void)sink;
    });
  }
}

BusyThreads::~BusyThreads() {
  stop_.store(true);
  for (auto& t : threads_) t.join();
}

}  // namespace bench

namespace {

void PrintHeader() {
  std::printf("%-16s %-7s %6s %7s %4s %3s %-4s %-4s %5s %12s %9s %9s %6s %s\n", "kernel", "isa",
              "K", "N", "n", "thr", "mode", "clk", "reps", "median_us", "GOPS", "wGB/s", "ratio",
              "of");
}

void PrintRow(const bench::Record& r) {
  {
    char ratio[16] = "-";
    if (r.ratio > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.ratio);
    std::printf("%-16s %-7s %6lld %7lld %4lld %3d %-4s %-4s %5d %12.1f %9.1f %9.2f %6s %s\n",
                r.kernel.c_str(), r.isa.c_str(), static_cast<long long>(r.k),
                static_cast<long long>(r.n_rows), static_cast<long long>(r.n), r.threads,
                r.mode.c_str(), r.clock.c_str(), r.reps, r.median_us, r.gops, r.weight_gbs, ratio,
                r.ratio > 0 ? bench::RatioToName(r.ratio_to) : "");
    std::fflush(stdout);
  }
}

void PrintJson(const std::vector<bench::Record>& recs) {
  nlohmann::json out = nlohmann::json::array();
  for (const bench::Record& r : recs) {
    out.push_back({{"kernel", r.kernel},
                   {"isa", r.isa},
                   {"K", r.k},
                   {"N", r.n_rows},
                   {"n", r.n},
                   {"threads", r.threads},
                   {"mode", r.mode},
                   {"clock", r.clock},
                   {"reps", r.reps},
                   {"median_us", r.median_us},
                   {"gops", r.gops},
                   {"weight_gbs", r.weight_gbs}});
    nlohmann::json& j = out.back();
    if (r.streams > 0) {
      j["streams"] = r.streams;
      j["ms_per_step"] = r.median_us / 1e3;
      j["tokens_per_s"] = r.streams / (r.median_us / 1e6);
    }
    if (r.ratio > 0) {
      j["ratio"] = r.ratio;
      j["ratio_to"] = bench::RatioToName(r.ratio_to);
      j["limit"] = r.limit;
    }
  }
  std::printf("%s\n", out.dump(1).c_str());
}

}  // namespace

int RunBench(int argc, char** argv) {
  std::string help_suites;
  for (const bench::Suite& s : bench::Registry()) {
    help_suites += std::string("\n  ") + s.name + ": " + s.help;
  }
  if (argc >= 2) {
    for (const bench::Suite& s : bench::Registry()) {
      if (s.main != nullptr && std::string(argv[1]) == s.name) return s.main(argc - 1, argv + 1);
    }
  }
  CLI::App app("Benchmarks. Suites:" + help_suites, "tern-bench");
  std::string suite_name, isa_name;
  bool json = false;
  bench::Options opt;
  app.add_option("suite", suite_name, "which suite to run")->required();
  app.add_option("--threads", opt.threads, "worker threads")->check(CLI::Range(1, 256));
  app.add_flag("--json", json, "print records as a JSON array");
  app.add_option("--isa", isa_name, "kernel ISA (default: TERN_ISA or the best available)");
  app.add_option("--mode", opt.mode, "weights hot (reused), cold (streamed from DRAM), auto")
      ->check(CLI::IsMember({"hot", "cold", "auto"}));
  app.add_option("--clock", opt.clock, "wall, or cpu = process CPU time / threads")
      ->check(CLI::IsMember({"wall", "cpu"}));
  app.add_option("--filter", opt.filter, "only cases whose kernel name contains this");
  app.add_option("--min-seconds", opt.min_seconds, "minimum time per case")
      ->check(CLI::Range(0.0, 600.0));
  app.add_option("--min-reps", opt.min_reps, "minimum repetitions per case")
      ->check(CLI::Range(1, 100000));
  app.add_option("--streams", opt.streams,
                 "decoder: sequences decoded together per step, e.g. 1,2,4,8,16 (one record "
                 "per count; int8 head)")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  app.add_option("--busy", opt.busy,
                 "run N competing busy threads during the suite (a shared machine on purpose)")
      ->check(CLI::Range(0, 256));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (!opt.streams.empty() && suite_name != "decoder") {
    std::fprintf(stderr, "tern-bench: --streams applies to the decoder suite only\n");
    return 2;
  }
  // Resolve the ISA up front so a bad TERN_ISA / --isa is reported, not aborted on.
  Result<kernels::Isa> isa =
      isa_name.empty() ? kernels::SelectIsa() : kernels::IsaFromName(isa_name);
  if (!isa.ok()) {
    std::fprintf(stderr, "tern-bench: %s\n", isa.status().ToString().c_str());
    return 1;
  }
  Result<const kernels::KernelTable*> table = kernels::TableFor(*isa);
  if (!table.ok()) {
    std::fprintf(stderr, "tern-bench: %s\n", table.status().ToString().c_str());
    return 1;
  }
  opt.table = *table;

  for (const bench::Suite& s : bench::Registry()) {
    if (suite_name != s.name || s.run == nullptr) continue;
    // The limits first, before any competing threads start, so the ratios read the suite
    // against what this machine does in the same run.
    const bench::MachineLimits limits = bench::MeasureLimits(opt.table->isa);
    bench::PrintLimits(json ? stderr : stdout, limits);
    opt.limits = &limits;
    bench::BusyThreads busy(opt.busy);
    bench::Sink sink;
    sink.limits = &limits;
    if (!json) {
      PrintHeader();
      sink.on_record = PrintRow;
    }
    const int rc = s.run(opt, &sink);
    if (json) PrintJson(sink.records);
    return rc;
  }
  std::fprintf(stderr, "tern-bench: unknown suite '%s' (known:%s)\n", suite_name.c_str(),
               help_suites.c_str());
  return 2;
}

}  // namespace tern::cli

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) return tern::cli::PrintVersion();
  try {
    return tern::cli::RunBench(argc, argv);
  } catch (const std::exception& e) {  // third-party exceptions stop here, at the tool edge
    std::fprintf(stderr, "tern-bench: %s\n", e.what());
    return 1;
  }
}
