// This machine's own limits, measured in the same run as the figures they are read against:
// the int8 dot-product peak (1 thread and all CPUs) and the streaming-read bandwidth (1 thread
// and all CPUs), the way the research limits.c measures them, with the probes of the kernel
// ISA in use (limits/probes.h). Every suite prints its figures as ratios to these.
#pragma once

#include <string>

#include "kernels/kernels.h"

namespace tern::cli::bench {

struct MachineLimits {
  std::string isa;                             // kernel ISA whose probes ran
  std::string dot_probe;                       // the instruction sequence timed for the int8 peak
  std::string read_probe;                      // the loads timed for the bandwidth
  int threads_all = 1;                         // "all CPUs": the threads the process may run on
  double int8_gops_1t = 0, int8_gops_all = 0;  // 1 MAC = 2 ops
  double read_gbs_1t = 0, read_gbs_all = 0;    // 1e9 bytes/s
  double seconds = 0;                          // time the probes took

  // The limit for a run on `threads` threads: the per-core figure times the threads, at most
  // the all-CPU one (more threads than CPUs add nothing).
  double Int8Gops(int threads) const;
  // 1 thread: the 1-thread figure; more: the all-CPU one.
  double ReadGbs(int threads) const;
};

// Runs the probes (about a second). `threads_all` <= 0: the CPUs this process may use.
MachineLimits MeasureLimits(kernels::Isa isa, int threads_all = 0);

}  // namespace tern::cli::bench
