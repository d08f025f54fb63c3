// `--version` on every binary: one line, "tern X.Y.Z (git HASH) isas: ISA...", exactly the
// library's VersionString(), exit 0, nothing on stderr.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "base/test_util.h"
#include "tern/tern.h"

namespace {

using tern::testutil::CommandRun;

CommandRun RunBinary(const std::string& binary, const std::string& args) {
  return tern::testutil::RunCommand("'" + binary + "' " + args);
}

TEST(CliVersion, LibraryStringHasTheDocumentedForm) {
  const std::string v = tern::VersionString();
  // The version is the project's; the hash a short git hash (or "unknown" outside a checkout);
  // at least the scalar kernels run everywhere, listed last.
  const std::regex form("tern " TERN_PROJECT_VERSION
                        " \\(git ([0-9a-f]{7,40}|unknown)\\) isas:( (avx512|avx2|neon|scalar))+");
  EXPECT_TRUE(std::regex_match(v, form)) << v;
  EXPECT_EQ(v.substr(v.size() - 7), " scalar") << v;
}

TEST(CliVersion, EveryBinaryPrintsTheLibraryString) {
  for (const char* binary : {TERN_BINARY, TERN_DEV_BINARY, TERN_BENCH_BINARY}) {
    SCOPED_TRACE(binary);
    const CommandRun r = RunBinary(binary, "--version");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, tern::VersionString() + "\n");
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliVersion, HelpMentionsIt) {
  const CommandRun tern = RunBinary(TERN_BINARY, "--help");
  EXPECT_EQ(tern.exit_code, 0);
  EXPECT_NE(tern.out.find("--version"), std::string::npos) << tern.out;
  const CommandRun dev = RunBinary(TERN_DEV_BINARY, "--help");
  EXPECT_EQ(dev.exit_code, 0);
  EXPECT_NE(dev.out.find("--version"), std::string::npos) << dev.out;
}

}  // namespace
