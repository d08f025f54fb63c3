#include "http_session.h"

#include <algorithm>
#include <sstream>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

namespace tern::server {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

// Pipelined bytes read ahead while a transcription runs stay in the connection's buffer up
// to this much; beyond it the client's data waits in the kernel (TCP flow control).
constexpr size_t kReadAhead = 64 * 1024;

}  // namespace

HttpSession::HttpSession(tcp::socket&& socket, ServerContext& ctx)
    : ctx_(ctx), stream_(std::move(socket)), buffer_(ctx.limits.max_header_bytes + kReadAhead) {
  beast::error_code ec;
  const tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
  if (!ec) entry_.peer = peer.address().to_string() + ":" + std::to_string(peer.port());
  stream_.socket().set_option(tcp::no_delay(true), ec);
  // Synchronous calls on the socket (the peer checks while a transcription runs) must never
  // block an I/O thread; asynchronous ones are unaffected.
  stream_.socket().non_blocking(true, ec);
  ++ctx_.connections;
}

HttpSession::~HttpSession() {
  {
    std::lock_guard<std::mutex> lock(ctx_.mu);
    ctx_.sessions.erase(id_);
  }
  --ctx_.connections;
}

void HttpSession::Start() {
  {
    std::lock_guard<std::mutex> lock(ctx_.mu);
    id_ = ++ctx_.next_id;
    ctx_.sessions[id_] = weak_from_this();
  }
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitForRequest(); });
}

void HttpSession::Drain() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->keep_alive_ = false;
    if (self->state_ == State::kIdle) self->Close();
  });
}

// The answer to a job cut off by the end of the grace is written here, on the connection's
// strand, not by the worker: a worker inside an encoder run may notice the cancel only after
// the shutdown has stopped waiting (half a second past the grace), and the client must still
// get a whole answer. What the worker posts afterwards is for a job no longer current.
void HttpSession::Abort() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (!self->job_ || self->state_ == State::kClosed) return self->Close();
    self->job_->gone = true;  // the worker's stream sink stops at once
    self->job_->cancel = true;
    self->job_.reset();
    self->keep_alive_ = false;
    self->entry_.note = "cut off by the shutdown (--shutdown-grace)";
    constexpr const char* kMessage = "the transcription was cancelled: the server is shutting down";
    if (self->entry_.status != 200) return self->Respond(JsonError(503, kMessage));
    self->SendChunk(ErrorEvent(kMessage, "server_error"));
    self->SendChunk("");  // the last chunk
    self->done_after_write_ = true;
  });
}

// Waiting for a request's first byte is the keep-alive idle time; from that byte on, the
// whole request (header and body) must arrive within the read deadline.
void HttpSession::WaitForRequest() {
  state_ = State::kIdle;
  received_ = false;
  if (ctx_.draining || !keep_alive_) return linger_ ? Linger() : Close();
  if (buffer_.size() > 0) return ReadHeader();  // pipelined: already here
  stream_.expires_after(Seconds(ctx_.limits.idle_timeout_s));
  stream_.async_read_some(buffer_.prepare(4096),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->buffer_.commit(n);
                            if (ec || n == 0)
                              return self->Close();  // idle too long, or the client closed
                            self->ReadHeader();
                          });
}

void HttpSession::ReadHeader() {
  state_ = State::kReading;
  received_ = true;
  started_ = std::chrono::steady_clock::now();
  const std::string peer = entry_.peer;
  entry_ = LogEntry();
  entry_.peer = peer;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(ctx_.limits.max_header_bytes));
  parser_->body_limit(ctx_.limits.max_body_bytes());
  read_deadline_ = started_ + Seconds(ctx_.limits.read_timeout_s);
  stream_.expires_at(read_deadline_);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

void HttpSession::OnHeader(beast::error_code ec) {
  if (ec) return ReadFailed(ec);
  const auto& req = parser_->get();
  entry_.method = std::string(req.method_string());
  entry_.target = std::string(req.target());
  keep_alive_ = keep_alive_ && req.keep_alive();
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  // --api-key: refused before the body is read (the connection closes: the body is unread).
  // A browser's WebSocket may carry the key as a subprotocol instead (realtime_ws.h).
  std::string authorization(req[http::field::authorization]);
  if (authorization.empty() && path == "/v1/realtime")
    authorization = AuthorizationFromSubprotocols(req[http::field::sec_websocket_protocol]);
  if (path.rfind("/v1/", 0) == 0 && req.method() != http::verb::options &&
      !Authorized(ctx_.config, authorization)) {
    if (!parser_->is_done()) keep_alive_ = false, linger_ = true;
    return Respond(JsonError(401, "missing or wrong API key (Authorization: Bearer <key>)"));
  }
  if (parser_->is_done()) return Dispatch();
  const auto length = parser_->content_length();
  upload_ =
      ctx_.uploads->Take(length ? static_cast<size_t>(*length) : ctx_.limits.max_body_bytes());
  if (!upload_) {
    keep_alive_ = false;
    linger_ = true;
    return Respond(
        JsonError(503, "the server holds --max-uploads-mb of request bodies already; retry later"));
  }
  if (beast::iequals(req[http::field::expect], "100-continue")) {
    // curl and others wait for this before sending a large body.
    Send("HTTP/1.1 100 Continue\r\n\r\n");
  }
  ReadBody();
}

// The body gets what is left of the request's deadline. It is set again here because the
// 100 Continue written just before re-arms the stream's timers with --write-timeout: a
// client that sends `Expect: 100-continue` and then nothing would otherwise hold the
// connection for the write timeout rather than the read deadline. (With that write still in
// flight, expires_at sets the read timer only.)
void HttpSession::ReadBody() {
  stream_.expires_at(read_deadline_);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
}

void HttpSession::OnBody(beast::error_code ec) {
  if (ec) return ReadFailed(ec);
  Dispatch();
}

void HttpSession::ReadFailed(beast::error_code ec) {
  keep_alive_ = false;
  linger_ = true;  // the rest of the request is unread
  if (ec == http::error::header_limit)
    return Respond(JsonError(431, "the request header is over --max-header-bytes (" +
                                      std::to_string(ctx_.limits.max_header_bytes) + ")"));
  if (ec == http::error::body_limit)
    return Respond(JsonError(413, "the request body is over --max-upload-mb"));
  if (ec == beast::error::timeout) {
    // Beast has closed the socket already: nothing can be sent.
    entry_.status = 408;
    entry_.note = "the request did not arrive within --read-timeout";
    RequestDone();
    return Close();
  }
  if (ec == http::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted ||
      ec == http::error::partial_message ||
      ec.category() != beast::error_code(http::error::bad_method).category()) {
    if (received_) {
      entry_.status = 400;
      entry_.note = "the connection closed mid-request: " + ec.message();
      RequestDone();
    }
    return Close();
  }
  Respond(JsonError(400, "malformed HTTP request: " + ec.message()));
}

void HttpSession::Dispatch() {
  auto& req = parser_->get();
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  if (ctx_.draining) keep_alive_ = false;
  if (req.method() == http::verb::options && !ctx_.cors_origin.empty()) {
    Reply r;  // a CORS preflight
    r.status = 204;
    r.content_type.clear();
    r.headers = {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                 {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
                 {"Access-Control-Max-Age", "600"}};
    return Respond(std::move(r));
  }
  if (req.method() == http::verb::get) {
    if (path == "/health") return Respond(HealthReply());
    if (path == "/v1/models") return Respond(ModelsReply(ctx_.config));
    if (path == "/" || path == "/index.html") return Respond(PageReply());
    if (path == "/v1/realtime") return StartRealtimeSession();
  }
  if (req.method() == http::verb::post && path == "/v1/audio/transcriptions")
    return StartTranscription();
  Respond(JsonError(404, "no route " + entry_.method + " " + std::string(path)));
}

// GET /v1/realtime?intent=transcription with a WebSocket upgrade: the connection leaves
// this HttpSession for a realtime session (realtime_ws.h), logged as 101.
void HttpSession::StartRealtimeSession() {
  auto& req = parser_->get();
  const std::string_view target = req.target();
  const size_t q = target.find('?');
  const std::string_view query = q == std::string_view::npos ? "" : target.substr(q + 1);
  bool transcription = false;
  for (size_t b = 0; b <= query.size();) {
    const size_t e = std::min(query.find('&', b), query.size());
    if (query.substr(b, e - b) == "intent=transcription") transcription = true;
    b = e + 1;
  }
  if (!transcription)
    return Respond(JsonError(400,
                             "only realtime transcription is served: "
                             "GET /v1/realtime?intent=transcription",
                             "intent"));
  if (!websocket::is_upgrade(req))
    return Respond(JsonError(400,
                             "GET /v1/realtime is a WebSocket endpoint: "
                             "send the upgrade headers (Connection: Upgrade, Upgrade: websocket)"));
  if (ctx_.draining || ctx_.realtime == nullptr)
    return Respond(JsonError(503, "the server is shutting down"));
  http::request<http::string_body> upgrade = parser_->release();
  entry_.status = 101;
  entry_.note = "websocket";
  RequestDone();
  state_ = State::kClosed;  // nothing here touches the connection again
  ++watch_generation_;
  tcp::socket socket = stream_.release_socket();
  StartRealtime(std::move(socket), upgrade, *ctx_.realtime);
}

void HttpSession::StartTranscription() {
  auto& req = parser_->get();
  auto body = std::make_shared<std::string>(std::move(req.body()));
  std::string field;
  Result<TranscriptionRequest> r =
      ParseTranscriptionForm(req[http::field::content_type], *body, ctx_.config, &field);
  if (!r.ok()) {
    entry_.note = r.status().message();
    return Respond(ErrorReply(ctx_.config, r.status(), field));
  }
  job_ = std::make_shared<Job>();
  state_ = State::kBusy;
  const bool stream = r->stream;
  auto work = [self = shared_from_this(), job = job_, body, upload = upload_,
               request = std::move(*r), stream](BatchSession& session) {
    const auto executor = self->stream_.get_executor();
    StreamSink sink;
    // (each post checks on the strand that the job is still the connection's: see Abort)
    sink.begin = [&] {
      net::post(executor, [self, job] {
        if (self->job_ == job) self->BeginStream();
      });
    };
    sink.send = [&](const std::string& event) {
      if (job->gone) return false;
      net::post(executor, [self, job, event] {
        if (self->job_ == job) self->SendChunk(event);
      });
      return !job->cancel;
    };
    Outcome out = RunTranscription(session, self->ctx_.config, request, job->cancel,
                                   stream ? &sink : nullptr);
    net::post(executor, [self, job, out = std::move(out)]() mutable {
      self->FinishJob(job.get(), std::move(out));
    });
  };
  const Status s = ctx_.pool->Submit(std::move(work));
  if (!s.ok()) {
    job_.reset();
    entry_.note = "busy";
    return Respond(JsonError(503, s.message()));
  }
  WatchPeer();
}

// While the transcription runs: if the socket turns readable with nothing to read, the
// client has closed (FIN or RST) and the work is cancelled. Bytes that do arrive are the
// next pipelined request, kept for later.
void HttpSession::WatchPeer() {
  stream_.socket().async_wait(tcp::socket::wait_read,
                              [self = shared_from_this(), g = ++watch_generation_](
                                  beast::error_code ec) { self->OnPeerReadable(ec, g); });
}

void HttpSession::OnPeerReadable(beast::error_code ec, uint64_t generation) {
  if (generation != watch_generation_ || state_ != State::kBusy || !job_) return;
  // Readiness may be reported without data (a wake-up for an edge already consumed): only
  // a peek that sees the end of the stream, or an error, means the client has gone.
  char byte;
  beast::error_code peek = ec;
  size_t n = 0;
  if (!peek) {  // the socket is in non-blocking mode for synchronous calls (see the constructor)
    n = stream_.socket().receive(net::buffer(&byte, 1), tcp::socket::message_peek, peek);
    if (peek == net::error::would_block || peek == net::error::try_again ||
        peek == net::error::interrupted)
      return WatchPeer();
  }
  if (peek || n == 0) {
    job_->gone = true;
    job_->cancel = true;
    entry_.note = "the client went away: transcription cancelled";
    return;
  }
  // The next pipelined request: keep it for later, up to kReadAhead, then stop watching.
  if (buffer_.size() >= kReadAhead) return;
  beast::error_code e;
  const size_t available = stream_.socket().available(e);
  const size_t got =
      e ? 0
        : stream_.socket().read_some(buffer_.prepare(std::max<size_t>(
                                         1, std::min(available, kReadAhead - buffer_.size()))),
                                     e);
  if (e) {
    job_->gone = true;
    job_->cancel = true;
    return;
  }
  buffer_.commit(got);
  WatchPeer();
}

void HttpSession::FinishJob(const Job* job, Outcome out) {
  if (job != job_.get()) return;  // answered already (Abort)
  ++watch_generation_;            // the peer watch, if still pending, is stale now
  const bool gone = job_ && job_->gone;
  job_.reset();
  entry_.audio_seconds = out.audio_seconds;
  if (!out.note.empty() && entry_.note.empty()) entry_.note = out.note;
  if (gone || state_ == State::kClosed) {
    entry_.status = out.streamed ? 200 : 499;  // 499: the client closed first (nginx's code)
    RequestDone();
    return Close();
  }
  if (out.streamed) {
    SendChunk("");  // the last chunk
    done_after_write_ = true;
    if (!writing_) {  // nothing left to write (HTTP/1.0)
      RequestDone();
      WaitForRequest();
    }
    return;
  }
  Respond(std::move(out.reply));
}

void HttpSession::AddCors(std::string* head) const {
  if (ctx_.cors_origin.empty()) return;
  *head += "Access-Control-Allow-Origin: " + ctx_.cors_origin + "\r\n";
  if (ctx_.cors_origin != "*") *head += "Vary: Origin\r\n";
}

void HttpSession::BeginStream() {
  if (state_ == State::kClosed) return;
  entry_.status = 200;
  // HTTP/1.0 has no chunked encoding: the body ends where the connection does.
  chunked_ = parser_->get().version() >= 11;
  if (!chunked_) keep_alive_ = false;
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
  if (chunked_) head += "Transfer-Encoding: chunked\r\n";
  AddCors(&head);
  if (!keep_alive_) head += "Connection: close\r\n";
  Send(head + "\r\n");
}

void HttpSession::SendChunk(const std::string& data) {
  if (state_ == State::kClosed) return;
  entry_.bytes += data.size();
  if (!chunked_) {
    if (!data.empty()) Send(data);
    return;
  }
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  Send(size + data + "\r\n");
}

void HttpSession::Respond(Reply r) {
  if (ctx_.draining) keep_alive_ = false;
  state_ = State::kWriting;
  http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
  if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) res.set(k, v);
  if (!ctx_.cors_origin.empty()) {
    res.set(http::field::access_control_allow_origin, ctx_.cors_origin);
    if (ctx_.cors_origin != "*") res.set(http::field::vary, "Origin");
  }
  res.keep_alive(keep_alive_);
  res.body() = std::move(r.body);
  res.prepare_payload();
  entry_.status = r.status;
  entry_.bytes = res.body().size();
  if (entry_.note.empty() && r.status >= 400 && r.status != 404) {
    // the message, for the log (JSON errors carry it)
    const size_t at = res.body().find("\"message\":\"");
    if (at != std::string::npos) entry_.note = res.body().substr(at + 11, 200);
  }
  std::ostringstream os;
  os << res;
  done_after_write_ = true;
  Send(os.str());
}

void HttpSession::Send(std::string bytes) {
  if (state_ == State::kClosed) return;
  out_.push_back(std::move(bytes));
  if (!writing_) DoWrite();
}

void HttpSession::DoWrite() {
  writing_ = true;
  stream_.expires_after(Seconds(ctx_.limits.write_timeout_s));
  net::async_write(stream_, net::buffer(out_.front()),
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->out_.pop_front();
                     self->writing_ = false;
                     if (ec) {
                       if (self->job_) self->job_->gone = true, self->job_->cancel = true;
                       self->entry_.note = "writing the response failed: " + ec.message();
                       if (!self->job_) self->RequestDone();
                       return self->Close();
                     }
                     if (!self->out_.empty()) return self->DoWrite();
                     if (self->done_after_write_ && !self->job_) {
                       self->RequestDone();
                       self->WaitForRequest();
                     }
                   });
}

void HttpSession::RequestDone() {
  done_after_write_ = false;
  upload_.reset();  // a job still running keeps its own share until it ends
  parser_.reset();  // and the body with it
  entry_.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_)
                  .count();
  if (entry_.status == 0) entry_.status = 400;
  ctx_.log->Request(entry_);
  entry_.status = 0;
}

void HttpSession::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  ++watch_generation_;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

// After an answer sent before the request was read to its end (413, 431, 401): stop
// sending, then read and drop what the client still sends, a bounded amount for a bounded
// time, so the answer is not lost to a reset (closing with unread data sends RST).
void HttpSession::Linger() {
  state_ = State::kWriting;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.expires_after(std::chrono::seconds(2));
  LingerRead(0);
}

void HttpSession::LingerRead(size_t total) {
  constexpr size_t kLingerBytes = 8 << 20;
  buffer_.clear();
  stream_.async_read_some(buffer_.prepare(std::min<size_t>(16384, buffer_.max_size())),
                          [self = shared_from_this(), total](beast::error_code ec, size_t n) {
                            if (ec || total + n >= kLingerBytes) return self->Close();
                            self->LingerRead(total + n);
                          });
}

}  // namespace tern::server
