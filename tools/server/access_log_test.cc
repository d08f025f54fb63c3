#include "access_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace tern::server {
namespace {

// Runs `body` with fd 2 sent to a file; returns what reached it.
std::string StderrOf(const std::function<void()>& body) {
  char name[] = "/tmp/tern-access-log-XXXXXX";
  const int fd = mkstemp(name);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream f(name);
  std::stringstream s;
  s << f.rdbuf();
  unlink(name);
  return s.str();
}

TEST(AccessLog, RequestLineAndCapturedStderr) {
  const std::string out = StderrOf([] {
    AccessLog log(false);
    ASSERT_TRUE(log.CaptureStderr());
    LogEntry e;
    e.peer = "127.0.0.1:5000";
    e.method = "POST";
    e.target = "/v1/audio/transcriptions?x=\"1\"";
    e.status = 200;
    e.bytes = 33;
    e.audio_seconds = 2.2708;
    e.ms = 79.4;
    log.Request(e);
    // What a decoder library prints about a client's file, straight to fd 2.
    std::fprintf(stderr, "Note: Illegal Audio-MPEG-Header 0x00000000 at offset 1234.\n");
    const char raw[] = "[src/libmpg123/parse.c:1234] error: Giving up resync after 1024 bytes\n";
    ASSERT_EQ(write(2, raw, sizeof raw - 1), static_cast<ssize_t>(sizeof raw - 1));
  });  // the log's destructor drains the pipe before stderr is restored
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1:5000 POST )"
                      R"(/v1/audio/transcriptions\?x=\\"1\\" 200 33 2\.27 79\n)")))
      << out;
  EXPECT_NE(out.find(" - stderr \"Note: Illegal Audio-MPEG-Header 0x00000000 at offset 1234.\"\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" - stderr \"[src/libmpg123/parse.c:1234] error: Giving up resync"),
            std::string::npos)
      << out;
  // Every line is the log's: nothing reached stderr around it.
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);)
    EXPECT_TRUE(std::regex_match(l, std::regex(R"(\d{4}-\d\d-\d\dT\S+Z \S+ .*)"))) << l;
}

TEST(AccessLog, QuietDropsEverything) {
  const std::string out = StderrOf([] {
    AccessLog log(true);
    ASSERT_TRUE(log.CaptureStderr());
    log.Request(LogEntry{});
    std::fprintf(stderr, "decoder noise\n");
  });
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace tern::server
