#include "realtime_ws.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket.hpp>

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

}  // namespace

class RealtimeWs : public std::enable_shared_from_this<RealtimeWs> {
 public:
  RealtimeWs(tcp::socket&& socket, RealtimeContext& ctx)
      : ctx_(ctx), ws_(beast::tcp_stream(std::move(socket))), idle_(ws_.get_executor()) {}

  ~RealtimeWs() {
    if (conn_) conn_->Close();
    conn_.reset();  // joins the worker (it stops at its next token)
    {
      std::lock_guard<std::mutex> lock(ctx_.mu);
      ctx_.open.erase(id_);
    }
    --ctx_.sessions;
  }

  void Start(const http::request<http::string_body>& req) {
    {
      std::lock_guard<std::mutex> lock(ctx_.mu);
      id_ = ++ctx_.next_id;
      ctx_.open[id_] = weak_from_this();
    }
    ws_.read_message_max(ctx_.max_message_bytes);
    websocket::stream_base::timeout t =
        websocket::stream_base::timeout::suggested(beast::role_type::server);
    t.idle_timeout = websocket::stream_base::none();  // ours: idle_, with an error event
    ws_.set_option(t);
    // A client that offers subprotocols (a browser sending its API key that way) fails the
    // handshake unless the answer picks one; "realtime" is the one OpenAI's clients offer.
    const bool realtime = OffersSubprotocol(req[http::field::sec_websocket_protocol], "realtime");
    ws_.set_option(websocket::stream_base::decorator([realtime](websocket::response_type& res) {
      res.set(http::field::server, "tern-server");
      if (realtime) res.set(http::field::sec_websocket_protocol, "realtime");
    }));
    ws_.async_accept(req,
                     [self = shared_from_this()](beast::error_code ec) { self->OnAccept(ec); });
  }

  // SIGTERM (any thread): the error event, then the close handshake with 1001 (going away).
  // A realtime session has no natural end to wait for, so it is told at once rather than at
  // the end of the grace; the grace bounds the handshake (Abort).
  void Shutdown() {
    net::post(ws_.get_executor(), [self = shared_from_this()] {
      if (self->closing_ || self->closed_) return;
      if (!self->accepted_) return self->Abort();  // still in its handshake
      self->QueueError("server_error", "server_shutting_down", "the server is shutting down");
      self->CloseAfterWrites(websocket::close_code::going_away);
    });
  }

  // The grace is over (any thread): the socket closes, whatever the client does.
  void Cut() {
    net::post(ws_.get_executor(), [self = shared_from_this()] { self->Abort(); });
  }

 private:
  void Abort() {
    closing_ = true;
    closed_ = true;
    idle_.cancel();
    if (conn_) conn_->Close();
    beast::get_lowest_layer(ws_).close();  // what is pending ends with an error
  }

  void OnAccept(beast::error_code ec) {
    if (ec) return;  // not a WebSocket handshake after all, or cut off: the socket closes
    if (closed_) return;
    accepted_ = true;
    std::weak_ptr<RealtimeWs> weak = weak_from_this();
    auto executor = ws_.get_executor();
    conn_ = std::make_unique<RealtimeConnection>(
        ctx_.model, ctx_.model_name, ctx_.defaults, ctx_.limits,
        [weak, executor](std::string event) {
          net::post(executor, [weak, e = std::move(event)]() mutable {
            if (auto self = weak.lock()) self->Queue(std::move(e));
          });
        });
    conn_->Start();
    ArmIdle();
    Read();
  }

  void ArmIdle() {
    idle_.expires_after(Seconds(ctx_.idle_timeout_s));
    idle_.async_wait([weak = weak_from_this()](beast::error_code ec) {
      if (ec) return;  // re-armed or cancelled
      auto self = weak.lock();
      if (!self || self->closing_) return;
      self->QueueError("invalid_request_error", "idle_timeout",
                       "no client event for --realtime-idle-timeout seconds");
      self->CloseAfterWrites(websocket::close_code::policy_error);
    });
  }

  void Read() {
    ws_.async_read(buffer_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      // closed by the client, gone, or a message over read_message_max (Beast closes with
      // 1009): the session ends; the worker stops.
      closing_ = true;
      idle_.cancel();
      if (conn_) conn_->Close();
      return;
    }
    if (closing_) return;
    ArmIdle();
    const std::string message = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (ws_.got_text())
      conn_->OnText(message);
    else
      conn_->OnUnexpected("a binary message");
    Read();
  }

  // An error event of the connection's own (the protocol's errors come from conn_); queued
  // here, in order before a close that follows it.
  void QueueError(const std::string& type, const std::string& code, const std::string& message) {
    Queue(R"({"type":"error","event_id":"event_tern_)" + code + R"(","error":{"type":")" + type +
          R"(","code":")" + code + R"(","message":")" + message +
          R"(","param":null,"event_id":null}})");
  }

  void Queue(std::string event) {
    if (closed_ || close_after_writes_) return;  // nothing after the last event before a close
    if (pending_bytes_ + event.size() > ctx_.max_pending_bytes) return Overflow();
    pending_bytes_ += event.size();
    out_.push_back(std::move(event));
    if (!writing_) Write();
  }

  // The client does not read its events: stop transcribing for it and close the socket.
  // The event being written (the front, while writing_) stays queued: async_write still
  // reads its bytes, and its handler pops it when the close aborts it.
  void Overflow() {
    out_.erase(out_.begin() + (writing_ && !out_.empty() ? 1 : 0), out_.end());
    pending_bytes_ = out_.empty() ? 0 : out_.front().size();
    Abort();
  }

  void Write() {
    if (out_.empty()) {
      writing_ = false;
      if (close_after_writes_) DoClose();
      return;
    }
    writing_ = true;
    ws_.text(true);
    ws_.async_write(net::buffer(out_.front()),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->pending_bytes_ -= self->out_.front().size();
                      self->out_.pop_front();
                      if (ec) {
                        self->closed_ = true;
                        self->out_.clear();
                        if (self->conn_) self->conn_->Close();
                        return;
                      }
                      self->Write();
                    });
  }

  void CloseAfterWrites(websocket::close_code code) {
    closing_ = true;
    close_code_ = code;
    if (conn_) conn_->Close();
    close_after_writes_ = true;
    if (!writing_) DoClose();
  }

  void DoClose() {
    if (closed_) return;
    closed_ = true;
    ws_.async_close(close_code_, [self = shared_from_this()](beast::error_code) {});
  }

  RealtimeContext& ctx_;
  uint64_t id_ = 0;  // in ctx_.open
  websocket::stream<beast::tcp_stream> ws_;
  net::steady_timer idle_;
  beast::flat_buffer buffer_;
  std::unique_ptr<RealtimeConnection> conn_;
  std::deque<std::string> out_;
  size_t pending_bytes_ = 0;
  bool writing_ = false;
  bool accepted_ = false;  // the handshake is done
  bool closing_ = false;
  bool closed_ = false;
  bool close_after_writes_ = false;
  websocket::close_code close_code_ = websocket::close_code::normal;
};

namespace {

// Calls f(token) for each comma-separated, space-trimmed token of a header value.
template <typename F>
void ForEachToken(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    std::string_view token = list.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t'))
      token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (!token.empty()) f(token);
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
}

}  // namespace

std::string AuthorizationFromSubprotocols(std::string_view offered) {
  constexpr std::string_view kPrefix = "openai-insecure-api-key.";
  std::string authorization;
  ForEachToken(offered, [&](std::string_view token) {
    if (authorization.empty() && token.substr(0, kPrefix.size()) == kPrefix)
      authorization = "Bearer " + std::string(token.substr(kPrefix.size()));
  });
  return authorization;
}

bool OffersSubprotocol(std::string_view offered, std::string_view name) {
  bool found = false;
  ForEachToken(offered, [&](std::string_view token) { found = found || token == name; });
  return found;
}

void StartRealtime(tcp::socket socket, const http::request<http::string_body>& req,
                   RealtimeContext& ctx) {
  if (++ctx.sessions > ctx.max_sessions) {
    --ctx.sessions;
    // Refused before the upgrade, as an HTTP answer the client's handshake reports.
    auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
    auto res = std::make_shared<http::response<http::string_body>>(
        http::status::service_unavailable, req.version());
    res->set(http::field::content_type, "application/json");
    res->set(http::field::retry_after, "5");
    res->keep_alive(false);
    res->body() =
        R"({"error":{"message":"every realtime session (--realtime-sessions) is in use; retry later","type":"server_error","param":null,"code":null}})";
    res->prepare_payload();
    stream->expires_after(std::chrono::seconds(10));
    http::async_write(*stream, *res, [stream, res](beast::error_code, size_t) {
      beast::error_code ec;
      stream->socket().shutdown(tcp::socket::shutdown_both, ec);
    });
    return;
  }
  std::make_shared<RealtimeWs>(std::move(socket), ctx)->Start(req);
}

namespace {

template <typename F>
void ForEachOpen(RealtimeContext& ctx, F f) {
  std::vector<std::shared_ptr<RealtimeWs>> live;
  {
    std::lock_guard<std::mutex> lock(ctx.mu);
    for (auto& [id, w] : ctx.open)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) f(*s);
}

}  // namespace

void ShutdownRealtime(RealtimeContext& ctx) {
  ForEachOpen(ctx, [](RealtimeWs& s) { s.Shutdown(); });
}

void AbortRealtime(RealtimeContext& ctx) {
  ForEachOpen(ctx, [](RealtimeWs& s) { s.Cut(); });
}

}  // namespace tern::server
