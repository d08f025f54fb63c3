// Test helpers for tern-server: start the built binary on a free loopback port, talk HTTP to
// it with Boost.Beast (one connection per request), or write raw bytes as a hostile client
// would.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace tern::testing {

inline const std::string kRoot = TERN_SOURCE_DIR;
inline const std::string kClips = kRoot + "/tests/data/heldout/";

inline std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// A running tern-server; stopped (SIGTERM) and reaped by the destructor. Its stderr (the
// access log) goes to a file the test can read.
class Server {
 public:
  explicit Server(const std::vector<std::string>& extra, bool default_threads = true,
                  const std::string& model_dir = kRoot + "/models/tiny-en") {
    std::vector<std::string> args = {TERN_SERVER_BINARY, "--model", model_dir, "--port", "0"};
    if (default_threads) args.insert(args.end(), {"-t", "1"});
    args.insert(args.end(), extra.begin(), extra.end());
    char name[] = "/tmp/tern-server-log-XXXXXX";
    const int log = mkstemp(name);
    log_path_ = name;
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(log, 2);
      close(out[0]);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(log);
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[512] = {0};
    if (f && std::fgets(line, sizeof line, f)) {
      const std::string s = line;
      const size_t p = s.find("127.0.0.1:");
      if (p != std::string::npos) port_ = std::atoi(s.c_str() + p + 10);
    }
    if (f) std::fclose(f);
  }
  ~Server() {
    if (pid_ > 0 && !stopped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!log_path_.empty()) unlink(log_path_.c_str());
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string Log() const { return ReadAll(log_path_); }
  // The log once it contains `needle` (a line is written just after the socket closes), or
  // as it is after `timeout_s`.
  std::string LogWith(const std::string& needle, double timeout_s = 2) const {
    const auto t0 = std::chrono::steady_clock::now();
    std::string log = Log();
    while (log.find(needle) == std::string::npos && Seconds(t0) < timeout_s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      log = Log();
    }
    return log;
  }
  // SIGTERM; the exit status (0 for a clean stop), -1 if it did not exit within `limit_s`
  // (then it is killed).
  int Stop(double limit_s = 60) {
    kill(pid_, SIGTERM);
    return Wait(limit_s);
  }
  int Wait(double limit_s) {
    stopped_ = true;
    const auto t0 = std::chrono::steady_clock::now();
    int st = 0;
    while (waitpid(pid_, &st, WNOHANG) == 0) {
      if (Seconds(t0) > limit_s) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // Resident memory, bytes (VmRSS).
  size_t Rss() const {
    std::ifstream f("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
    return 0;
  }

 private:
  pid_t pid_ = -1;
  int port_ = -1;
  bool stopped_ = false;
  std::string log_path_;
};

struct Response {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct FormItem {
  std::string name, content, filename, content_type;
};
using Form = std::vector<FormItem>;
using Headers = std::vector<std::pair<std::string, std::string>>;

inline std::string MultipartBody(const Form& items, const std::string& boundary) {
  std::string b;
  for (const FormItem& i : items) {
    b += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + i.name + "\"";
    if (!i.filename.empty()) b += "; filename=\"" + i.filename + "\"";
    b += "\r\n";
    if (!i.content_type.empty()) b += "Content-Type: " + i.content_type + "\r\n";
    b += "\r\n" + i.content + "\r\n";
  }
  return b + "--" + boundary + "--\r\n";
}

// One request on a new connection; nullopt when the connection failed or timed out.
inline std::optional<Response> Request(int port, const std::string& method,
                                       const std::string& target, const std::string& body = "",
                                       const std::string& type = "", const Headers& headers = {},
                                       double timeout_s = 120) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  try {
    boost::asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::milliseconds(static_cast<int>(timeout_s * 1000)));
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                  static_cast<unsigned short>(port)));
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!type.empty()) req.set(http::field::content_type, type);
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    if (!body.empty() || method == "POST") req.prepare_payload();
    stream.expires_after(std::chrono::milliseconds(static_cast<int>(timeout_s * 1000)));
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1u << 30);
    http::read(stream, buffer, parser);
    Response r;
    r.status = static_cast<int>(parser.get().result_int());
    r.body = parser.get().body();
    for (const auto& f : parser.get()) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = std::string(f.value());
    }
    beast::error_code ec;
    stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

inline std::optional<Response> Get(int port, const std::string& target, const Headers& h = {}) {
  return Request(port, "GET", target, "", "", h);
}

inline std::optional<Response> PostForm(int port, const Form& form, const Headers& h = {},
                                        const std::string& target = "/v1/audio/transcriptions") {
  const std::string boundary = "tern-test-boundary-7d1f";
  return Request(port, "POST", target, MultipartBody(form, boundary),
                 "multipart/form-data; boundary=" + boundary, h);
}

inline Form ClipForm(const std::string& clip,
                     const std::vector<std::pair<std::string, std::string>>& fields) {
  Form items;
  if (!clip.empty()) items.push_back({"file", ReadAll(kClips + clip), clip, "audio/wav"});
  for (const auto& [k, v] : fields) items.push_back({k, v, "", ""});
  return items;
}

// A raw TCP connection for hostile clients: bytes in, bytes out, nothing parsed.
class RawConn {
 public:
  explicit RawConn(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~RawConn() { Close(); }
  bool ok() const { return fd_ >= 0; }
  // All of `data`, or false once the peer stops taking it (closed, reset).
  bool Send(const std::string& data) {
    size_t at = 0;
    while (at < data.size()) {
      const ssize_t n = send(fd_, data.data() + at, data.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until the peer closes or `timeout_s` passes; *closed says which.
  std::string ReadUntilClose(double timeout_s, bool* closed = nullptr) {
    std::string out;
    const auto t0 = std::chrono::steady_clock::now();
    if (closed) *closed = false;
    while (Seconds(t0) < timeout_s) {
      timeval tv{0, 20000};
      setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char buf[65536];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0)
        out.append(buf, static_cast<size_t>(n));
      else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        if (closed) *closed = true;
        break;
      }
    }
    return out;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace tern::testing

namespace tern::testing {

// A mono WAV of `clip` (24 kHz samples) repeated `repeats` times, at 24000 / `decimate` Hz
// in unsigned 8-bit PCM: long audio in few bytes, for requests that keep a session busy.
inline std::string LongWav(const std::vector<float>& clip, int repeats, int decimate = 3) {
  std::string data;
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < clip.size(); i += static_cast<size_t>(decimate)) {
      const float x = std::max(-1.0f, std::min(1.0f, clip[i]));
      data.push_back(static_cast<char>(static_cast<uint8_t>(128 + static_cast<int>(x * 127))));
    }
  auto u32 = [](uint32_t v) {
    return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)};
  };
  auto u16 = [](uint16_t v) { return std::string{char(v), char(v >> 8)}; };
  const uint32_t rate = 24000u / static_cast<uint32_t>(decimate);
  return "RIFF" + u32(36 + static_cast<uint32_t>(data.size())) + "WAVEfmt " + u32(16) + u16(1) +
         u16(1) + u32(rate) + u32(rate) + u16(1) + u16(8) + "data" +
         u32(static_cast<uint32_t>(data.size())) + data;
}

}  // namespace tern::testing
