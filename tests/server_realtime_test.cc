// tern-server's realtime WebSocket through the built binary (the bundled model): a Beast
// WebSocket client streams four sentences at 4x real time on
// GET /v1/realtime?intent=transcription and gets OpenAI's transcription events with the
// live engine's finals; the route's HTTP errors, the session bound, and a SIGTERM with a
// session open.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <functional>
#include <random>

#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "realtime_test_audio.h"
#include "server_harness.h"
#include "tern/tern.h"

namespace tern {
namespace {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using json = nlohmann::json;
using tern::realtime_test::Append;
using tern::realtime_test::StreamPcm;
using tern::testing::Request;
using tern::testing::Server;

struct Client {
  net::io_context io;
  websocket::stream<net::ip::tcp::socket> ws{io};
  int status = 0;        // the handshake's HTTP status
  std::string protocol;  // the handshake's Sec-WebSocket-Protocol answer
  // `protocols`, `authorization`: the handshake's Sec-WebSocket-Protocol and Authorization
  // headers, when not empty.
  beast::error_code Connect(int port, const std::string& protocols = "",
                            const std::string& authorization = "") {
    beast::error_code ec;
    ws.next_layer().connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)},
                            ec);
    if (ec) return ec;
    ws.set_option(websocket::stream_base::decorator([=](websocket::request_type& req) {
      if (!protocols.empty()) req.set(beast::http::field::sec_websocket_protocol, protocols);
      if (!authorization.empty()) req.set(beast::http::field::authorization, authorization);
    }));
    websocket::response_type r;
    ws.handshake(r, "127.0.0.1", "/v1/realtime?intent=transcription", ec);
    status = static_cast<int>(r.result_int());
    protocol = std::string(r[beast::http::field::sec_websocket_protocol]);
    return ec;
  }
  // The next event; null once the connection ends (*ec_out says how).
  json Next(beast::error_code* ec_out = nullptr) {
    beast::flat_buffer b;
    beast::error_code ec;
    ws.read(b, ec);
    if (ec_out) *ec_out = ec;
    if (ec) return nullptr;
    return json::parse(beast::buffers_to_string(b.data()));
  }
};

TEST(ServerRealtime, ClipAtFourTimesRealTime) {
  const std::vector<int16_t> pcm = StreamPcm();
  // the engine's finals for the same samples
  ModelOptions mo;
  mo.model_dir = TERN_SOURCE_DIR "/models/tiny-en";
  auto model = Model::Load(mo);
  ASSERT_TRUE(model.ok());
  Session s(*model, 1);
  auto live = s.StartLive(LiveOptions{});
  ASSERT_TRUE(live.ok());
  std::vector<float> x(pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) x[i] = static_cast<float>(pcm[i]) / 32768.0f;
  std::vector<LiveEvent> ev;
  ASSERT_TRUE((*live)->Feed(x.data(), x.size(), &ev).ok());
  ASSERT_TRUE((*live)->Finish(&ev).ok());
  std::vector<std::string> expected;
  for (const LiveEvent& e : ev)
    if (e.kind == LiveEvent::Kind::kFinal) expected.push_back(e.text);
  ASSERT_EQ(expected.size(), 4u);

  Server server({"--realtime-sessions", "1", "--shutdown-grace", "2"});
  ASSERT_GT(server.port(), 0);
  // the route's HTTP answers
  auto r = Request(server.port(), "GET", "/v1/realtime?intent=transcription");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("WebSocket"), std::string::npos) << r->body;
  r = Request(server.port(), "GET", "/v1/realtime?model=gpt-4o-realtime-preview");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("intent=transcription"), std::string::npos) << r->body;

  Client c;
  ASSERT_FALSE(c.Connect(server.port()));
  EXPECT_EQ(c.Next()["type"], "transcription_session.created");
  {
    Client second;  // --realtime-sessions 1
    EXPECT_TRUE(second.Connect(server.port()));
    EXPECT_EQ(second.status, 503);
  }
  c.ws.write(net::buffer(std::string(
      R"({"type":"transcription_session.update","session":{"input_audio_format":"pcm16","turn_detection":{"type":"server_vad","silence_duration_ms":500}}})")));
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
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0, k = 0; i < pcm.size(); i += 2400, ++k) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(25 * k));
    const size_t n = std::min<size_t>(2400, pcm.size() - i);
    c.ws.write(net::buffer(Append(pcm.data() + i, n)));
  }
  reader.join();
  std::vector<std::string> types, completed;
  size_t deltas = 0;
  for (const json& e : events) {
    const std::string t = e["type"];
    if (t == "conversation.item.input_audio_transcription.completed")
      completed.push_back(e["transcript"]);
    if (t == "conversation.item.input_audio_transcription.delta")
      ++deltas;
    else
      types.push_back(t);
  }
  EXPECT_EQ(completed, expected);
  EXPECT_GT(deltas, 0u);
  std::vector<std::string> want = {"transcription_session.updated"};
  for (size_t i = 0; i < expected.size(); ++i)
    for (const char* t :
         {"input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
          "input_audio_buffer.committed", "conversation.item.input_audio_transcription.completed"})
      want.push_back(t);
  EXPECT_EQ(types, want);
  EXPECT_NE(server.LogWith(" 101 ").find("/v1/realtime"), std::string::npos) << server.Log();
  // SIGTERM with the session still open: the server still stops cleanly
  EXPECT_EQ(server.Stop(20), 0) << server.Log();
}

// SIGTERM with two realtime sessions open, one with audio being transcribed and one idle: each
// gets an error event (code server_shutting_down) and then a close frame with 1001 (going
// away) at once, not at the end of the grace; the server then exits 0 well within it. With no
// grace (0) too: the sessions are cut off only a quarter second after the signal.
class SigtermClosesOpenSessions : public ::testing::TestWithParam<double> {};

TEST_P(SigtermClosesOpenSessions, WithAnErrorEventAndGoingAway) {
  const double grace = GetParam();
  Server server({"--realtime-sessions", "2", "--shutdown-grace", std::to_string(grace)});
  ASSERT_GT(server.port(), 0);
  Client busy, idle;
  ASSERT_FALSE(busy.Connect(server.port()));
  ASSERT_FALSE(idle.Connect(server.port()));
  EXPECT_EQ(busy.Next()["type"], "transcription_session.created");
  EXPECT_EQ(idle.Next()["type"], "transcription_session.created");
  const std::vector<int16_t> pcm = StreamPcm();
  for (size_t i = 0; i < 72000; i += 2400)  // 3 s of speech
    busy.ws.write(net::buffer(Append(pcm.data() + i, 2400)));
  struct Seen {
    json error;               // the last error event
    std::string after_error;  // the type of any event after it
    beast::error_code end;
    int close_code = 0;
    double closed_at = -1;  // seconds after the signal
  };
  Seen seen[2];
  const auto t0 = std::chrono::steady_clock::now();
  auto read = [&](Client& c, Seen& s) {
    for (;;) {
      beast::error_code ec;
      json e = c.Next(&ec);
      if (e.is_null()) {
        s.end = ec;
        s.close_code = c.ws.reason().code;
        s.closed_at = tern::testing::Seconds(t0);
        return;
      }
      if (e["type"] == "error")
        s.error = e;
      else if (!s.error.is_null())
        s.after_error = e["type"];
    }
  };
  std::thread rb(read, std::ref(busy), std::ref(seen[0]));
  std::thread ri(read, std::ref(idle), std::ref(seen[1]));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // transcribing
  const auto signalled = std::chrono::steady_clock::now();
  kill(server.pid(), SIGTERM);
  const int rc = server.Wait(grace + 2);  // beyond: killed, which also ends the readers
  const double exited = tern::testing::Seconds(signalled);
  rb.join();
  ri.join();
  EXPECT_EQ(rc, 0) << server.Log();
  EXPECT_LT(exited, std::max(grace, 0.25) + 1);
  if (grace > 1) {
    EXPECT_LT(exited, grace) << "the sessions held the server to the grace's end";
  }
  const double signal_at = std::chrono::duration<double>(signalled - t0).count();
  for (const Seen& s : seen) {
    ASSERT_FALSE(s.error.is_null()) << "no error event before the close";
    EXPECT_EQ(s.error["error"]["code"], "server_shutting_down") << s.error.dump();
    EXPECT_EQ(s.error["error"]["type"], "server_error") << s.error.dump();
    EXPECT_EQ(s.after_error, "") << "an event after the shutdown's error";
    EXPECT_EQ(s.end, websocket::error::closed) << s.end.message();
    EXPECT_EQ(s.close_code, static_cast<int>(websocket::close_code::going_away));
    EXPECT_LT(s.closed_at - signal_at, std::max(grace / 2, 0.25));
  }
  std::printf(
      "[figure] SIGTERM with 2 realtime sessions: closed after %.0f and %.0f ms, "
      "exit after %.0f ms (grace %.0f s)\n",
      (seen[0].closed_at - signal_at) * 1000, (seen[1].closed_at - signal_at) * 1000, exited * 1000,
      grace);
}

INSTANTIATE_TEST_SUITE_P(ServerRealtime, SigtermClosesOpenSessions, ::testing::Values(3.0, 0.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                           return std::string(p.param > 0 ? "Grace3s" : "NoGrace");
                         });

// --api-key: a browser's WebSocket cannot send Authorization, so the key is also taken from
// the subprotocols OpenAI's browser clients offer ("realtime, openai-insecure-api-key.KEY"),
// and the answer picks "realtime" (a browser drops a handshake that picks none).
TEST(ServerRealtime, ApiKeyAsSubprotocol) {
  Server server({"--api-key", "s3cret", "--realtime-sessions", "2"});
  ASSERT_GT(server.port(), 0);
  {
    Client none;
    EXPECT_TRUE(none.Connect(server.port()));
    EXPECT_EQ(none.status, 401);
  }
  {
    Client wrong;
    EXPECT_TRUE(wrong.Connect(server.port(), "realtime, openai-insecure-api-key.s3cre"));
    EXPECT_EQ(wrong.status, 401);
  }
  {
    Client header;  // the ordinary way, from clients that can set headers
    ASSERT_FALSE(header.Connect(server.port(), "", "Bearer s3cret"));
    EXPECT_EQ(header.protocol, "");  // none offered, none picked
    EXPECT_EQ(header.Next()["type"], "transcription_session.created");
  }
  // The key as a subprotocol counts on /v1/realtime only.
  auto r = tern::testing::Get(server.port(), "/v1/models",
                              {{"Sec-WebSocket-Protocol", "openai-insecure-api-key.s3cret"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  Client c;  // the session above may still hold its slot: --realtime-sessions 2
  const beast::error_code ec =
      c.Connect(server.port(), "realtime,openai-insecure-api-key.s3cret, openai-beta.realtime-v1");
  ASSERT_FALSE(ec) << c.status;
  EXPECT_EQ(c.status, 101);
  EXPECT_EQ(c.protocol, "realtime");
  EXPECT_EQ(c.Next()["type"], "transcription_session.created");
}

}  // namespace
}  // namespace tern
