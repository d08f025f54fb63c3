// The machine-limit probes (bench/tern-bench/machine_limits.h) run before every tern-bench
// suite, in the same process: they must leave the caller's CPU affinity as they found it,
// or the suite's thread pools (which inherit it) would all run on one CPU.
#include "machine_limits.h"

#include <sched.h>

#include <gtest/gtest.h>

namespace tern::cli::bench {
namespace {

TEST(MachineLimits, ProbesLeaveTheCallersAffinityAlone) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const MachineLimits m = MeasureLimits(kernels::BestIsa(), 2);
  EXPECT_GT(m.int8_gops_1t, 0);
  EXPECT_GT(m.read_gbs_all, 0);
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after))
      << CPU_COUNT(&before) << " CPUs allowed before the probes, " << CPU_COUNT(&after) << " after";
}

}  // namespace
}  // namespace tern::cli::bench
