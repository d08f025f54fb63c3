// tern-bench runs that must complete (never timed assertions): `limits` prints positive
// figures of the documented keys, rejects an unknown ISA by name, and `decoder --streams` on the
// tiny synthetic LM prints one consistent record per stream count with its read-bandwidth ratio.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/test_util.h"

namespace {

using tern::testutil::CommandRun;

CommandRun RunBench(const std::string& env, const std::string& args) {
  return tern::testutil::RunCommand(env + " '" TERN_BENCH_BINARY "' " + args);
}

TEST(BenchSmoke, LimitsPrintsPositiveFiguresOfEveryKey) {
  for (const char* isa : {"", "--isa scalar"}) {
    SCOPED_TRACE(isa);
    const CommandRun r = RunBench("", std::string("limits --json --threads 2 ") + isa);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const char* key :
         {"int8_gops_1t", "int8_gops_all", "read_gbs_1t", "read_gbs_all", "seconds"}) {
      ASSERT_TRUE(j.contains(key)) << key;
      EXPECT_GT(j[key].get<double>(), 0) << key;
    }
    EXPECT_EQ(j["threads_all"], 2);
    EXPECT_FALSE(j["dot_probe"].get<std::string>().empty());
    if (*isa) {
      EXPECT_EQ(j["isa"], "scalar");
    }
  }
}

TEST(BenchSmoke, LimitsRejectsAnUnknownIsaByName) {
  const CommandRun r = RunBench("", "limits --isa sse9");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("sse9"), std::string::npos) << r.err;
}

TEST(BenchSmoke, StreamsOutsideTheDecoderSuiteIsAUsageError) {
  const CommandRun r = RunBench("", "kernels --streams 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--streams"), std::string::npos) << r.err;
}

TEST(BenchSmoke, DecoderStreamsPrintsOneRecordPerStreamCount) {
  const std::string lm = std::string(TERN_SYNTH_DIR) + "/published/vibeasr-lm-i2_s-embed-q6_k.gguf";
  const CommandRun r =
      RunBench("TERN_BENCH_LM='" + lm + "'", "decoder --streams 1,3 --threads 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u) << r.out;
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& rec = j[i];
    const int streams = i == 0 ? 1 : 3;
    EXPECT_EQ(rec["streams"], streams);
    EXPECT_EQ(rec["kernel"], "decoder/streams/int8");
    const double ms = rec["ms_per_step"], tps = rec["tokens_per_s"];
    EXPECT_GT(ms, 0);
    EXPECT_NEAR(tps * ms / 1e3, streams, 1e-6 * streams);
    EXPECT_GT(rec["weight_gbs"].get<double>(), 0);
    EXPECT_EQ(rec["ratio_to"], "read_bw");
    EXPECT_NEAR(rec["ratio"].get<double>(),
                rec["weight_gbs"].get<double>() / rec["limit"].get<double>(), 1e-9);
  }
}

}  // namespace
