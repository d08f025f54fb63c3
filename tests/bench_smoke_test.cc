// tern-bench runs that must complete (never timed assertions): `limits` prints positive
// figures of the documented keys, rejects an unknown ISA by name, and `decoder --streams` on the
// tiny synthetic LM prints one consistent record per stream count with its read-bandwidth ratio.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct CmdRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CmdRun RunBench(const std::string& env, const std::string& args) {
  const std::string err_path =
      ::testing::TempDir() + "/bench_smoke_err_" + std::to_string(getpid());
  const std::string cmd = env + " '" TERN_BENCH_BINARY "' " + args + " 2>'" + err_path + "'";
  CmdRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* e = std::fopen(err_path.c_str(), "rb")) {
    while ((n = fread(buf, 1, sizeof(buf), e)) > 0) r.err.append(buf, n);
    std::fclose(e);
  }
  unlink(err_path.c_str());
  return r;
}

TEST(BenchSmoke, LimitsPrintsPositiveFiguresOfEveryKey) {
  for (const char* isa : {"", "--isa scalar"}) {
    SCOPED_TRACE(isa);
    const CmdRun r = RunBench("", std::string("limits --json --threads 2 ") + isa);
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
  const CmdRun r = RunBench("", "limits --isa sse9");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("sse9"), std::string::npos) << r.err;
}

TEST(BenchSmoke, StreamsOutsideTheDecoderSuiteIsAUsageError) {
  const CmdRun r = RunBench("", "kernels --streams 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--streams"), std::string::npos) << r.err;
}

TEST(BenchSmoke, DecoderStreamsPrintsOneRecordPerStreamCount) {
  const std::string lm = std::string(TERN_SYNTH_DIR) + "/published/vibeasr-lm-i2_s-embed-q6_k.gguf";
  const CmdRun r =
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
