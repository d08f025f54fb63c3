// The access log: one line per request on stderr,
//   2026-01-02T03:04:05.678Z 127.0.0.1:41234 POST /v1/audio/transcriptions 200 1234 2.30 456 "note"
// time (UTC), peer, method, target, status, response bytes, audio seconds, milliseconds from
// the request's first byte to its last response byte, and a quoted note when there is one
// (why it failed). Anything else written to stderr while the server runs (the MP3 decoder's
// complaints about a client's file, say) is captured and logged as `- stderr "line"`, so a
// client's bytes never reach stderr except through this log. --quiet drops all of it. On a
// fatal signal, whatever is still in the capture goes to the real stderr unformatted.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tern::server {

struct LogEntry {
  std::string peer = "-";
  std::string method = "-";
  std::string target = "-";
  int status = 0;
  size_t bytes = 0;
  double audio_seconds = 0;
  double ms = 0;
  std::string note;
};

class AccessLog {
 public:
  explicit AccessLog(bool quiet);
  ~AccessLog();  // puts stderr back
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // From now on, whatever the process writes to file descriptor 2 goes through Note().
  bool CaptureStderr();
  void Request(const LogEntry& e);
  void Note(std::string_view source, std::string_view text);
  // The real stderr, for the server's own messages (startup, shutdown).
  std::FILE* out() const { return out_; }

 private:
  void Write(const std::string& line);

  bool quiet_;
  std::FILE* out_ = stderr;
  int saved_fd_ = -1;  // the original fd 2 while captured
  int pipe_read_ = -1;
  std::thread reader_;
  std::mutex mu_;
};

}  // namespace tern::server
