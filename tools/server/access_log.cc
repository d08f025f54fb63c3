#include "access_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>

namespace tern::server {
namespace {

std::string Now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

// Client-given text made safe for one log line: printable ASCII, quotes and backslashes
// escaped, at most `max` bytes.
std::string Clean(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (u < 0x20 || u >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else
      out += c;
  }
  if (s.size() > max) out += "...";
  return out;
}

// For a fatal signal (a failed internal check aborts): what is still in the pipe, the
// process's last words, goes straight to the real stderr before the process dies, since the
// reader thread dies with it. Only async-signal-safe calls.
int g_pipe_read = -1;
int g_saved_fd = -1;

void DrainOnFatalSignal(int sig) {
  if (g_pipe_read >= 0 && g_saved_fd >= 0) {
    fcntl(g_pipe_read, F_SETFL, O_NONBLOCK);
    char buf[4096];
    for (ssize_t n; (n = read(g_pipe_read, buf, sizeof buf)) > 0;)
      if (write(g_saved_fd, buf, static_cast<size_t>(n)) < 0) break;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

AccessLog::AccessLog(bool quiet) : quiet_(quiet) {}

AccessLog::~AccessLog() {
  if (saved_fd_ < 0) return;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  g_pipe_read = g_saved_fd = -1;
  std::fflush(stderr);
  dup2(saved_fd_, 2);  // closes the pipe's write end: the reader sees the end and stops
  if (reader_.joinable()) reader_.join();
  close(pipe_read_);
  close(saved_fd_);
  if (out_ != stderr) std::fclose(out_);
}

bool AccessLog::CaptureStderr() {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::fflush(stderr);
  saved_fd_ = dup(2);
  if (saved_fd_ < 0) return false;
  fcntl(saved_fd_, F_SETFD, FD_CLOEXEC);
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  out_ = fdopen(dup(saved_fd_), "w");
  if (out_ == nullptr) out_ = stderr;
  dup2(fds[1], 2);
  close(fds[1]);
  pipe_read_ = fds[0];
  g_pipe_read = pipe_read_;
  g_saved_fd = saved_fd_;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, DrainOnFatalSignal);
  reader_ = std::thread([this] {
    std::string pending;
    char buf[4096];
    for (;;) {
      const ssize_t n = read(pipe_read_, buf, sizeof buf);
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      for (size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
        Note("stderr", std::string_view(pending).substr(0, eol));
        pending.erase(0, eol + 1);
      }
      if (pending.size() > 4096) {  // a line that does not end: log it in pieces
        Note("stderr", pending);
        pending.clear();
      }
    }
    if (!pending.empty()) Note("stderr", pending);
  });
  return true;
}

void AccessLog::Write(const std::string& line) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void AccessLog::Request(const LogEntry& e) {
  char nums[96];
  std::snprintf(nums, sizeof nums, " %d %zu %.2f %.0f", e.status, e.bytes, e.audio_seconds, e.ms);
  std::string line =
      Now() + " " + e.peer + " " + Clean(e.method, 16) + " " + Clean(e.target, 200) + nums;
  if (!e.note.empty()) line += " \"" + Clean(e.note, 300) + "\"";
  Write(line + "\n");
}

void AccessLog::Note(std::string_view source, std::string_view text) {
  Write(Now() + " - " + std::string(source) + " \"" + Clean(text, 300) + "\"\n");
}

}  // namespace tern::server
