// The realtime WebSocket in process: an Asio acceptor hands each upgrade request to
// StartRealtime, and Beast WebSocket clients stream a clip at 4x real time, send bad
// messages, open too many sessions, go silent, or vanish.
#include "realtime_ws.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "realtime_test_audio.h"

namespace tern::server {
namespace {

using realtime_test::Append;
using realtime_test::StreamPcm;
using realtime_test::TinyModel;

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using json = nlohmann::json;

// A server on 127.0.0.1: every connection's first request goes to StartRealtime.
class Server {
 public:
  explicit Server(RealtimeContext& ctx)
      : ctx_(ctx), acceptor_(io_, {net::ip::make_address("127.0.0.1"), 0}) {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Server() {
    io_.stop();
    thread_.join();
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec) return;
      auto sock = std::make_shared<tcp::socket>(std::move(s));
      auto buf = std::make_shared<beast::flat_buffer>();
      auto req = std::make_shared<http::request<http::string_body>>();
      http::async_read(*sock, *buf, *req, [this, sock, buf, req](beast::error_code ec2, size_t) {
        if (!ec2) StartRealtime(std::move(*sock), *req, ctx_);
      });
      Accept();
    });
  }
  RealtimeContext& ctx_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

struct Client {
  net::io_context io;
  websocket::stream<tcp::socket> ws{io};
  beast::error_code Connect(unsigned short port, http::response<http::string_body>* res = nullptr) {
    beast::error_code ec;
    ws.next_layer().connect({net::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return ec;
    websocket::response_type r;
    ws.handshake(r, "127.0.0.1", "/v1/realtime?intent=transcription", ec);
    if (res) res->result(r.result());
    return ec;
  }
  void Send(const std::string& s) { ws.write(net::buffer(s)); }
  // The next event, or null after `timeout_s` or when the connection closed.
  json Next(beast::error_code* ec_out = nullptr) {
    beast::flat_buffer b;
    beast::error_code ec;
    ws.read(b, ec);
    if (ec_out) *ec_out = ec;
    if (ec) return nullptr;
    return json::parse(beast::buffers_to_string(b.data()));
  }
};

RealtimeContext& Context() {
  static RealtimeContext ctx;
  ctx.model = TinyModel();
  ctx.model_name = "tiny-en";
  return ctx;
}

void WaitForSessions(RealtimeContext& ctx, int n) {
  for (int i = 0; i < 500 && ctx.sessions.load() != n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

TEST(RealtimeWs, ClipAtFourTimesRealTimeGivesTheLiveFinals) {
  ASSERT_TRUE(TinyModel());
  RealtimeContext& ctx = Context();
  Server server(ctx);
  const std::vector<int16_t> pcm = StreamPcm();
  std::vector<float> x(pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) x[i] = static_cast<float>(pcm[i]) / 32768.0f;
  Session s(TinyModel(), 1);
  auto live = s.StartLive(LiveOptions{});
  ASSERT_TRUE(live.ok());
  std::vector<LiveEvent> ev;
  ASSERT_TRUE((*live)->Feed(x.data(), x.size(), &ev).ok());
  ASSERT_TRUE((*live)->Finish(&ev).ok());
  std::vector<std::string> expected;
  for (const LiveEvent& e : ev)
    if (e.kind == LiveEvent::Kind::kFinal) expected.push_back(e.text);
  ASSERT_EQ(expected.size(), 4u);

  Client c;
  ASSERT_FALSE(c.Connect(server.port()));
  json created = c.Next();
  EXPECT_EQ(created["type"], "transcription_session.created");
  c.Send(
      R"({"type":"transcription_session.update","session":{"input_audio_format":"pcm16","turn_detection":{"type":"server_vad","silence_duration_ms":500}}})");
  std::vector<json> events;
  std::thread reader([&] {
    size_t completed = 0;
    while (completed < expected.size()) {
      json e = c.Next();
      if (e.is_null()) break;
      completed += e["type"] == "conversation.item.input_audio_transcription.completed";
      events.push_back(std::move(e));
    }
  });
  // 100 ms messages every 25 ms: four times real time
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0, k = 0; i < pcm.size(); i += 2400, ++k) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(25 * k));
    c.Send(Append(pcm.data() + i, std::min<size_t>(2400, pcm.size() - i)));
  }
  reader.join();
  std::vector<std::string> types, completed;
  for (const json& e : events) {
    const std::string t = e["type"];
    if (t == "conversation.item.input_audio_transcription.completed")
      completed.push_back(e["transcript"]);
    if (t != "conversation.item.input_audio_transcription.delta") types.push_back(t);
  }
  EXPECT_EQ(completed, expected);
  std::vector<std::string> want = {"transcription_session.updated"};
  for (size_t i = 0; i < expected.size(); ++i) {
    for (const char* t :
         {"input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
          "input_audio_buffer.committed", "conversation.item.input_audio_transcription.completed"})
      want.push_back(t);
  }
  EXPECT_EQ(types, want);
  c.ws.close(websocket::close_code::normal);
  WaitForSessions(ctx, 0);
  EXPECT_EQ(ctx.sessions.load(), 0);
}

TEST(RealtimeWs, BadMessagesGetErrorsAndOversizeMessagesClose) {
  ASSERT_TRUE(TinyModel());
  RealtimeContext& ctx = Context();
  ctx.max_message_bytes = 64 * 1024;
  ctx.limits.max_append_bytes = 16 * 1024;
  Server server(ctx);
  Client c;
  ASSERT_FALSE(c.Connect(server.port()));
  EXPECT_EQ(c.Next()["type"], "transcription_session.created");
  c.Send("{oops");
  json e = c.Next();
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["code"], "invalid_json");
  c.ws.binary(true);
  c.Send("\x01\x02");
  c.ws.binary(false);
  e = c.Next();
  EXPECT_EQ(e["error"]["code"], "invalid_event");
  c.Send(R"({"type":"transcription_session.update","session":{"input_audio_format":"g711_alaw"}})");
  e = c.Next();
  EXPECT_EQ(e["error"]["param"], "session.input_audio_format");
  // an append over the per-append bound: an error event, the connection stays
  c.Send(json{{"type", "input_audio_buffer.append"}, {"audio", std::string(20000, 'A')}}.dump());
  e = c.Next();
  EXPECT_EQ(e["error"]["code"], "input_audio_buffer_append_too_large");
  // a message over the message bound: closed with 1009
  c.Send(json{{"type", "input_audio_buffer.append"}, {"audio", std::string(100000, 'A')}}.dump());
  beast::error_code ec;
  e = c.Next(&ec);
  EXPECT_TRUE(e.is_null());
  EXPECT_TRUE(ec);
  // the server's close frame (1009) arrives unless the client's own write of the rest of
  // its message ran into the closed socket first
  if (ec == websocket::error::closed) {
    EXPECT_EQ(c.ws.reason().code, websocket::close_code::too_big);
  }
  WaitForSessions(ctx, 0);
  EXPECT_EQ(ctx.sessions.load(), 0);
  ctx.max_message_bytes = 4 << 20;
  ctx.limits = RealtimeLimits{};
}

TEST(RealtimeWs, SessionsAreBoundedIdleOnesCloseAndVanishedClientsAreFreed) {
  ASSERT_TRUE(TinyModel());
  RealtimeContext& ctx = Context();
  ctx.max_sessions = 1;
  ctx.idle_timeout_s = 0.5;
  Server server(ctx);
  {
    Client a;
    ASSERT_FALSE(a.Connect(server.port()));
    EXPECT_EQ(a.Next()["type"], "transcription_session.created");
    Client b;
    http::response<http::string_body> res;
    const beast::error_code ec = b.Connect(server.port(), &res);
    EXPECT_TRUE(ec) << "a realtime session beyond the limit was accepted";
    EXPECT_EQ(res.result(), http::status::service_unavailable);
    // `a` says nothing: an idle-timeout error, then the close
    json e = a.Next();
    EXPECT_EQ(e["type"], "error");
    EXPECT_EQ(e["error"]["code"], "idle_timeout");
    beast::error_code ec2;
    EXPECT_TRUE(a.Next(&ec2).is_null());
    EXPECT_EQ(a.ws.reason().code, websocket::close_code::policy_error);
  }
  WaitForSessions(ctx, 0);
  EXPECT_EQ(ctx.sessions.load(), 0);
  ctx.idle_timeout_s = 60;
  {
    // a client that streams and vanishes mid-sentence (no close frame)
    Client v;
    ASSERT_FALSE(v.Connect(server.port()));
    const std::vector<int16_t> pcm = StreamPcm();
    for (size_t i = 0; i < 48000; i += 2400) v.Send(Append(pcm.data() + i, 2400));
    v.ws.next_layer().close();
  }
  WaitForSessions(ctx, 0);
  EXPECT_EQ(ctx.sessions.load(), 0) << "the vanished client's session was not freed";
  Client again;
  EXPECT_FALSE(again.Connect(server.port())) << "the only session slot is free again";
  ctx.max_sessions = 4;
}

// A client that sends but never reads: the server's events (errors that echo a 1 MB event
// type) pile up past the bound (max_pending_bytes, 2 MB here) while one is still being
// written (its async_write waits for the client to read), and the connection closes. The event in flight must stay
// alive until its write ends (freeing it crashed the server). The session is freed and the
// next client is served.
TEST(RealtimeWs, AClientThatDoesNotReadIsClosedAtTheEventBound) {
  ASSERT_TRUE(TinyModel());
  RealtimeContext& ctx = Context();
  ctx.max_pending_bytes = 2 << 20;
  Server server(ctx);
  {
    Client c;
    ASSERT_FALSE(c.Connect(server.port()));
    const std::string big = json{{"type", std::string(1 << 20, 'x')}}.dump();
    beast::error_code ec;
    int sent = 0;
    for (; sent < 64 && !ec; ++sent) c.ws.write(net::buffer(big), ec);
    EXPECT_TRUE(ec) << "the server took " << sent << " MB from a client that reads nothing";
    WaitForSessions(ctx, 0);
    EXPECT_EQ(ctx.sessions.load(), 0);
    std::printf("[figure] a client reading nothing was closed after %d MB sent\n", sent);
  }
  Client again;
  ASSERT_FALSE(again.Connect(server.port()));
  EXPECT_EQ(again.Next()["type"], "transcription_session.created");
  ctx.max_pending_bytes = 4 << 20;
}

// The API key a browser sends as a subprotocol (it cannot set Authorization on a WebSocket).
TEST(RealtimeWs, SubprotocolsCarryTheApiKey) {
  EXPECT_EQ(AuthorizationFromSubprotocols("realtime, openai-insecure-api-key.k3y"), "Bearer k3y");
  EXPECT_EQ(AuthorizationFromSubprotocols("openai-insecure-api-key.a,openai-insecure-api-key.b"),
            "Bearer a");  // the first one
  EXPECT_EQ(AuthorizationFromSubprotocols(" \topenai-insecure-api-key.k3y\t ,realtime"),
            "Bearer k3y");
  EXPECT_EQ(AuthorizationFromSubprotocols("realtime, openai-beta.realtime-v1"), "");
  EXPECT_EQ(AuthorizationFromSubprotocols("x-openai-insecure-api-key.k3y"), "");
  EXPECT_EQ(AuthorizationFromSubprotocols(""), "");
  EXPECT_TRUE(OffersSubprotocol("openai-insecure-api-key.k, realtime", "realtime"));
  EXPECT_TRUE(OffersSubprotocol("realtime", "realtime"));
  EXPECT_FALSE(OffersSubprotocol("realtime-v1, xrealtime", "realtime"));
  EXPECT_FALSE(OffersSubprotocol(",,", "realtime"));
  EXPECT_FALSE(OffersSubprotocol("", "realtime"));
}

}  // namespace
}  // namespace tern::server
