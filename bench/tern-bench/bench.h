// `tern-bench <suite>`: a registry of benchmark suites. Each suite lives in its own
// <name>.cc and registers itself with TERN_REGISTER_BENCH; main.cc parses the
// shared flags, resolves the kernel ISA and prints the records (table or JSON).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/kernels.h"
#include "machine_limits.h"

namespace tern::cli::bench {

struct Options {
  int threads = 1;
  const kernels::KernelTable* table = nullptr;  // TERN_ISA / --isa, already validated
  std::string mode = "auto";  // weights: "hot" (reused), "cold" (> L3 of copies), "auto"
  std::string filter;         // only cases whose kernel name contains this
  // "wall": elapsed time. "cpu": process CPU time / threads, for a shared, oversubscribed
  // machine where time slicing dominates wall time (assumes the threads are not starved
  // of memory bandwidth by the neighbours, which CPU time cannot see).
  std::string clock = "wall";
  double min_seconds = 0.3;  // per case: at least this long and at least `min_reps` reps
  int min_reps = 5;
  int busy = 0;  // --busy: competing threads (BusyThreads) during the suite
  const MachineLimits* limits = nullptr;  // measured at the start of the run
  std::vector<int> streams;               // decoder: --streams B,... (batched decode steps)
};

// `--busy N`: N threads spinning on arithmetic for as long as the object lives, standing in
// for another process's threads on a shared machine, so the engine's behaviour with more
// runnable threads than cores can be measured on purpose rather than by accident.
class BusyThreads {
 public:
  explicit BusyThreads(int n);
  ~BusyThreads();
  BusyThreads(const BusyThreads&) = delete;
  BusyThreads& operator=(const BusyThreads&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// What a record's ratio is read against (the machine's limits, measured in the same run):
//   kInt8Peak:  gops / int8 peak at the record's threads (GEMMs, prefill)
//   kReadBw:    weight_gbs / streaming-read bandwidth (GEMVs, decode steps)
//   kInt8Floor: time / (MACs / int8 peak) = peak / gops, >= 1 (the encoder)
enum class RatioTo { kNone, kInt8Peak, kReadBw, kInt8Floor };
const char* RatioToName(RatioTo r);  // "", "int8_peak", "read_bw", "int8_floor"

// One measured case. gops = 2*K*N*n / time; weight_gbs = weight bytes read / time.
struct Record {
  std::string kernel;
  std::string isa;
  int64_t k = 0, n_rows = 0, n = 0;
  int threads = 1;
  std::string mode;
  std::string clock;
  int reps = 0;
  double median_us = 0, gops = 0, weight_gbs = 0;
  RatioTo ratio_to = RatioTo::kNone;
  double limit = 0, ratio = 0;  // filled by Sink::Emit from Options::limits
  int streams = 0;              // decoder --streams: sequences advanced per step
};

// Suites call Emit() for each finished case (the table prints as it goes).
struct Sink {
  std::vector<Record> records;
  std::function<void(const Record&)> on_record;
  const MachineLimits* limits = nullptr;
  void Emit(Record r);
};

// Runs the suite, emitting records; returns 0 or an exit code after printing an error.
using SuiteFn = int (*)(const Options&, Sink*);

// A suite with flags of its own (models, audio) takes the command line after its name
// instead: `tern-bench e2e --model DIR ...`.
using MainFn = int (*)(int argc, char** argv);

struct Suite {
  const char* name;
  const char* help;
  SuiteFn run;
  MainFn main = nullptr;
};

std::vector<Suite>& Registry();

// One line naming the limits and the probes that measured them.
void PrintLimits(FILE* f, const MachineLimits& m);

struct Registrar {
  explicit Registrar(const Suite& s) { Registry().push_back(s); }
};

#define TERN_REGISTER_BENCH(var, name, help, fn) \
  static ::tern::cli::bench::Registrar var({name, help, fn})
#define TERN_REGISTER_BENCH_MAIN(var, name, help, main_fn) \
  static ::tern::cli::bench::Registrar var({name, help, nullptr, main_fn})

}  // namespace tern::cli::bench
