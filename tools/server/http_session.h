// One client connection: reads requests with Beast under the bounds of bounds.h, answers
// them through routes.h, and hands transcriptions to the SessionPool's workers so that no
// I/O thread ever transcribes or waits for a session. Requests on a connection are answered
// in order (keep-alive and pipelining); while a transcription runs, the connection watches
// its socket and cancels the work when the client goes away.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "access_log.h"
#include "bounds.h"
#include "realtime_ws.h"
#include "routes.h"
#include "session_pool.h"

namespace tern::server {

class HttpSession;

// The request bodies held at once, across connections (--max-uploads-mb): each request
// reserves its Content-Length (or --max-upload-mb when chunked) before its body is read,
// and gives it back when the body is freed (its transcription done).
class UploadBudget {
 public:
  explicit UploadBudget(size_t limit) : limit_(limit) {}
  // A reservation of n bytes, or null when it does not fit.
  std::shared_ptr<void> Take(size_t n) {
    size_t used = used_.load();
    do {
      if (used + n > limit_) return nullptr;
    } while (!used_.compare_exchange_weak(used, used + n));
    // (non-null, owning nothing: the deleter only gives the bytes back)
    return std::shared_ptr<void>(static_cast<void*>(this), [this, n](void*) { used_ -= n; });
  }
  size_t used() const { return used_.load(); }

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
};

// What every connection shares.
struct ServerContext {
  Limits limits;
  ServerConfig config;
  std::string cors_origin;  // empty: no CORS headers
  SessionPool* pool = nullptr;
  AccessLog* log = nullptr;
  std::atomic<bool> draining{false};  // SIGTERM: finish what is in flight, take nothing new
  std::atomic<int> connections{0};
  std::unique_ptr<UploadBudget> uploads;
  RealtimeContext* realtime = nullptr;  // GET /v1/realtime (realtime_ws.h)

  // The open connections, for shutdown.
  std::mutex mu;
  uint64_t next_id = 0;
  std::map<uint64_t, std::weak_ptr<HttpSession>> sessions;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(boost::asio::ip::tcp::socket&& socket, ServerContext& ctx);
  ~HttpSession();
  void Start();
  // SIGTERM: close now if waiting for a request, else answer the current one and close.
  void Drain();
  // The grace is over: cancel the work (a stream gets an error event) and close.
  void Abort();

 private:
  struct Job {
    std::atomic<bool> cancel{false};
    std::atomic<bool> gone{false};  // the client went away
  };
  enum class State { kIdle, kReading, kBusy, kWriting, kClosed };

  void WaitForRequest();
  void ReadHeader();
  void OnHeader(boost::beast::error_code ec);
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  void ReadFailed(boost::beast::error_code ec);
  void Dispatch();
  void StartTranscription();
  void StartRealtimeSession();
  void WatchPeer();
  void OnPeerReadable(boost::beast::error_code ec, uint64_t generation);
  void FinishJob(const Job* job, Outcome out);
  void BeginStream();
  void SendChunk(const std::string& data);
  void Respond(Reply reply);
  void Send(std::string bytes);
  void DoWrite();
  void RequestDone();
  void Close();
  void Linger();
  void LingerRead(size_t total);
  void AddCors(std::string* head) const;

  ServerContext& ctx_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  uint64_t id_ = 0;
  State state_ = State::kIdle;
  bool keep_alive_ = true;
  bool linger_ = false;    // close by Linger(): the request was not read to its end
  bool received_ = false;  // some bytes of the current request arrived
  std::deque<std::string> out_;
  bool writing_ = false;
  bool chunked_ = true;  // a stream's body is chunked (HTTP/1.1)
  bool done_after_write_ = false;
  uint64_t watch_generation_ = 0;
  std::shared_ptr<Job> job_;
  std::shared_ptr<void> upload_;  // this request's share of the UploadBudget
  LogEntry entry_;
  std::chrono::steady_clock::time_point started_;
  // started_ + --read-timeout: the header and the body share it (see ReadBody)
  std::chrono::steady_clock::time_point read_deadline_;
};

}  // namespace tern::server
