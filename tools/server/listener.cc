#include "listener.h"

#include <csignal>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

namespace tern::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Listener::Impl {
  explicit Impl(ServerContext& c)
      : ctx(c), acceptor(ioc), signals(ioc, SIGINT, SIGTERM), timer(ioc) {}

  void Accept() {
    acceptor.async_accept(net::make_strand(ioc),
                          [this](boost::system::error_code ec, tcp::socket socket) {
                            if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
                            if (!ec) {
                              if (ctx.connections.load() >= ctx.limits.max_connections)
                                Refuse(std::move(socket), *ctx.log);
                              else
                                std::make_shared<HttpSession>(std::move(socket), ctx)->Start();
                            }
                            Accept();
                          });
  }

  // Over --max-connections: one small write into the empty send buffer of a fresh socket
  // (it cannot block), then close, so the refusal costs no thread and no waiting.
  static void Refuse(tcp::socket socket, AccessLog& log) {
    static const std::string kBusy = [] {
      const std::string body =
          R"({"error":{"message":"the server has --max-connections connections open; retry )"
          R"(later","type":"server_busy","param":null,"code":null}})";
      return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
             "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body;
    }();
    boost::system::error_code ec;
    socket.non_blocking(true, ec);
    socket.send(net::buffer(kBusy), 0, ec);  // no SIGPIPE: Asio sends with MSG_NOSIGNAL
    LogEntry e;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (!ec) e.peer = peer.address().to_string() + ":" + std::to_string(peer.port());
    e.status = 503;
    e.note = "over --max-connections";
    log.Request(e);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    socket.close(ec);
  }

  template <typename F>
  void ForEachSession(F f) {
    std::vector<std::shared_ptr<HttpSession>> live;
    {
      std::lock_guard<std::mutex> lock(ctx.mu);
      for (auto& [id, w] : ctx.sessions)
        if (auto s = w.lock()) live.push_back(std::move(s));
    }
    for (auto& s : live) f(*s);
  }

  void OnSignal() {
    ctx.log->Note("server",
                  "stopping: no new connections; in-flight requests have --shutdown-grace");
    ctx.draining = true;
    boost::system::error_code ec;
    acceptor.close(ec);
    ForEachSession([](HttpSession& s) { s.Drain(); });
    if (ctx.realtime) ShutdownRealtime(*ctx.realtime);
    grace_end = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(ctx.limits.shutdown_grace_s));
    Poll();
  }

  // Every 20 ms: done once no connection is left; at the end of the grace, cancel what
  // remains; half a second later, stop regardless. Realtime sessions, told at the signal,
  // are cut off a quarter second after the grace: with no grace, their error event and
  // close frame still go out to a client that reads them.
  void Poll() {
    const auto now = std::chrono::steady_clock::now();
    const int realtime = ctx.realtime ? ctx.realtime->sessions.load() : 0;
    if (ctx.connections.load() == 0 && realtime == 0) return ioc.stop();
    if (now >= grace_end + std::chrono::milliseconds(500)) {
      ctx.log->Note("server", "grace over: closing the remaining connections");
      return ioc.stop();
    }
    if (now >= grace_end && !aborted) {
      aborted = true;
      ForEachSession([](HttpSession& s) { s.Abort(); });
    }
    if (now >= grace_end + std::chrono::milliseconds(250) && !realtime_aborted && ctx.realtime) {
      realtime_aborted = true;
      AbortRealtime(*ctx.realtime);
    }
    timer.expires_after(std::chrono::milliseconds(20));
    timer.async_wait([this](boost::system::error_code) { Poll(); });
  }

  ServerContext& ctx;
  net::io_context ioc;
  tcp::acceptor acceptor;
  net::signal_set signals;
  net::steady_timer timer;
  std::chrono::steady_clock::time_point grace_end;
  bool aborted = false;
  bool realtime_aborted = false;
};

Listener::Listener(ServerContext& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
Listener::~Listener() = default;

Status Listener::Bind(const std::string& host, int port, int* bound) {
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  if (ec) return InvalidArgumentError("--host '%s' is not an IP address", host.c_str());
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  tcp::acceptor& a = impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Status(ErrorCode::kIo, StrFormat("cannot listen on %s:%d: %s", host.c_str(), port,
                                            ec.message().c_str()));
  *bound = a.local_endpoint().port();
  return Status::Ok();
}

void Listener::Run() {
  Impl& m = *impl_;
  m.signals.async_wait([&m](boost::system::error_code ec, int) {
    if (!ec) m.OnSignal();
  });
  m.Accept();
  std::vector<std::thread> threads;
  for (int i = 1; i < m.ctx.limits.io_threads; ++i) threads.emplace_back([&m] { m.ioc.run(); });
  m.ioc.run();
  for (std::thread& t : threads) t.join();
}

}  // namespace tern::server
