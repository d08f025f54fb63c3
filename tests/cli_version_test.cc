// `--version` on every binary: one line, "tern X.Y.Z (git HASH) isas: ISA...", exactly the
// library's VersionString(), exit 0, nothing on stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>

#include "tern/tern.h"

namespace {

struct CmdRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CmdRun RunBinary(const std::string& binary, const std::string& args) {
  const std::string err_path =
      ::testing::TempDir() + "/cli_version_err_" + std::to_string(getpid());
  const std::string cmd = "'" + binary + "' " + args + " 2>'" + err_path + "'";
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
    const CmdRun r = RunBinary(binary, "--version");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, tern::VersionString() + "\n");
    EXPECT_EQ(r.err, "");
  }
}

TEST(CliVersion, HelpMentionsIt) {
  const CmdRun tern = RunBinary(TERN_BINARY, "--help");
  EXPECT_EQ(tern.exit_code, 0);
  EXPECT_NE(tern.out.find("--version"), std::string::npos) << tern.out;
  const CmdRun dev = RunBinary(TERN_DEV_BINARY, "--help");
  EXPECT_EQ(dev.exit_code, 0);
  EXPECT_NE(dev.out.find("--version"), std::string::npos) << dev.out;
}

}  // namespace
