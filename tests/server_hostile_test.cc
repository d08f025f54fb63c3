// tern-server against hostile, slow and vanishing clients, on loopback: every bound of
// tools/server/bounds.h holds, /health keeps answering, disconnects cancel work, SIGTERM
// ends within the grace, pipelined requests are answered in order, and the access log,
// CORS and --version do what docs/server.md says. Deadlines are shortened by options so
// each case takes seconds.
#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server_harness.h"
#include "tern/tern.h"

namespace tern {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

const std::string kPath = "/v1/audio/transcriptions";

// Under AddressSanitizer (scripts/test-sanitize) the server runs several times slower and
// keeps freed memory in quarantine: time and memory bounds get this much headroom.
#ifdef __SANITIZE_ADDRESS__
constexpr double kSlack = 5;
#else
constexpr double kSlack = 1;
#endif

std::vector<float> Clip(const std::string& name) {
  Result<Audio> a = LoadAudio(kClips + name);
  return a.ok() ? a->samples : std::vector<float>{};
}

// About `minutes` of speech in 8-bit PCM: a request that keeps a session busy for seconds
// (cut in 30 s pieces with chunking_strategy=auto, so a cancel lands between them). At
// 24 kHz it decodes at once; at 8 kHz it is a third of the bytes but needs resampling,
// which takes seconds and cannot be interrupted.
std::string LongUpload(double minutes, int decimate = 1) {
  const std::vector<float> clip = Clip("008.wav");
  const int repeats = static_cast<int>(minutes * 60 / (clip.size() / 24000.0)) + 1;
  return LongWav(clip, repeats, decimate);
}

std::string RawPost(const std::string& body_form, const std::string& boundary) {
  return "POST " + kPath +
         " HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=" + boundary +
         "\r\nContent-Length: " + std::to_string(body_form.size()) + "\r\n\r\n" + body_form;
}

// /health answered with 200; the latency in seconds (a large value when it failed).
double HealthLatency(int port) {
  const auto t0 = Clock::now();
  auto r = Get(port, "/health");
  return r && r->status == 200 ? Seconds(t0) : 1e9;
}

// One connection sends "GET /" and then `total` bytes with no newline (or a header line
// that never ends): the server must close it after --max-header-bytes, without its memory
// growing with what is sent.
TEST(ServerHostile, EndlessHeaderLineIsCutOff) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  ASSERT_TRUE(Get(srv.port(), "/health"));
  const size_t before = srv.Rss();
  for (const std::string start : {"GET /", "GET / HTTP/1.1\r\nX-A: "}) {
    RawConn c(srv.port());
    ASSERT_TRUE(c.ok());
    const std::string chunk(1 << 20, 'a');
    size_t sent = 0;
    bool refused = !c.Send(start);
    while (!refused && sent < (size_t{256} << 20)) {
      if (!c.Send(chunk))
        refused = true;
      else
        sent += chunk.size();
    }
    EXPECT_TRUE(refused) << start << ": the server took all " << sent << " bytes";
    EXPECT_LT(sent, size_t{32} << 20) << start;  // 16 KiB of header, then a bounded linger
    const size_t after = srv.Rss();
    EXPECT_LT(after, before + static_cast<size_t>(kSlack * (16 << 20)))
        << start << ": RSS " << before << " -> " << after;
    std::printf("[figure] %s...: server took %zu MB before closing; RSS %zu -> %zu MB\n",
                start.substr(0, 5).c_str(), sent >> 20, before >> 20, after >> 20);
  }
  EXPECT_LT(HealthLatency(srv.port()), 1.0);
  EXPECT_NE(srv.LogWith(" 431 ").find(" 431 "), std::string::npos) << srv.Log();
}

// 64 clients each send a byte a second. /health and a transcription still answer at once,
// and each slow client is closed at the read deadline.
TEST(ServerHostile, SlowClientsDoNotStarveTheServer) {
  Server srv({"--read-timeout", "3", "--idle-timeout", "3"});
  ASSERT_GT(srv.port(), 0);
  std::vector<std::unique_ptr<RawConn>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<RawConn>(srv.port()));
    ASSERT_TRUE(slow.back()->ok());
  }
  const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: yes\r\n\r\n";
  std::vector<double> health;
  const auto t0 = Clock::now();
  bool transcribed = false;
  for (size_t byte = 0; Seconds(t0) < 2.5; ++byte) {
    for (auto& c : slow) c->Send(std::string(1, request[byte % request.size()]));
    const auto tick = Clock::now();
    for (int i = 0; i < 5; ++i) health.push_back(HealthLatency(srv.port()));
    if (!transcribed) {
      auto r = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "text"}}));
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 200) << r->body;
      EXPECT_EQ(r->body, "I left my ticket in the bedroom.\n");
      transcribed = true;
    }
    std::this_thread::sleep_until(tick + std::chrono::seconds(1));
  }
  double worst = 0;
  for (double h : health) worst = std::max(worst, h);
  std::printf("[figure] /health under 64 slow clients: worst %.1f ms of %zu\n", worst * 1000,
              health.size());
  EXPECT_LT(worst, 0.5);  // 100 ms is the aim; a shared CI machine gets headroom
  // The deadline (3 s from each client's first byte) closes them all.
  int closed = 0;
  for (auto& c : slow) {
    bool was_closed = false;
    c->ReadUntilClose(3.0, &was_closed);
    closed += was_closed;
  }
  EXPECT_EQ(closed, 64);
  EXPECT_NE(srv.LogWith(" 408 ").find(" 408 "), std::string::npos);
}

// Half a body, then silence: closed at the read deadline, the server unharmed.
TEST(ServerHostile, HalfBodyThenSilence) {
  Server srv({"--read-timeout", "1"});
  ASSERT_GT(srv.port(), 0);
  const std::string boundary = "b0undary";
  const std::string full = RawPost(MultipartBody(ClipForm("008.wav", {}), boundary), boundary);
  RawConn c(srv.port());
  ASSERT_TRUE(c.Send(full.substr(0, full.size() / 2)));
  const auto t0 = Clock::now();
  bool closed = false;
  c.ReadUntilClose(5.0, &closed);
  EXPECT_TRUE(closed);
  EXPECT_LT(Seconds(t0), 2.5);
  EXPECT_NE(srv.LogWith(" 408 ").find(" 408 "), std::string::npos) << srv.Log();
  EXPECT_LT(HealthLatency(srv.port()), 1.0);
  // A negative or impossible Content-Length is a 400 at once, not a wait.
  RawConn n(srv.port());
  ASSERT_TRUE(n.Send("POST " + kPath + " HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"));
  const std::string answer = n.ReadUntilClose(2.0);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
}

// `Expect: 100-continue` and then nothing: the 100 Continue goes out, and the read deadline
// (from the request's first byte) still closes the connection. Writing the 100 arms the
// stream's timers with --write-timeout; the body's read must not inherit that.
TEST(ServerHostile, ExpectContinueThenSilence) {
  Server srv({"--read-timeout", "1", "--write-timeout", "30"});
  ASSERT_GT(srv.port(), 0);
  RawConn c(srv.port());
  const auto t0 = Clock::now();
  ASSERT_TRUE(c.Send("POST " + kPath +
                     " HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                     "Content-Length: 100000\r\nExpect: 100-continue\r\n\r\n"));
  bool closed = false;
  const std::string got = c.ReadUntilClose(10.0, &closed);
  const double took = Seconds(t0);
  EXPECT_EQ(got, "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_TRUE(closed) << "still open after 10 s";
  EXPECT_GT(took, 0.9);
  EXPECT_LT(took, 1.0 + kSlack);
  EXPECT_NE(srv.LogWith(" 408 ").find(" 408 "), std::string::npos) << srv.Log();
  EXPECT_LT(HealthLatency(srv.port()), 1.0);
}

// --idle-timeout: a keep-alive connection reused within it is served each time (the wait
// starts again after each answer); left idle, it is closed by the server, and so is a
// connection that never sends a request.
TEST(ServerHostile, IdleKeepAliveTimeout) {
  Server srv({"--idle-timeout", "1", "--read-timeout", "30"});
  ASSERT_GT(srv.port(), 0);
  RawConn silent(srv.port());
  const auto opened = Clock::now();
  RawConn c(srv.port());
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  auto sent = Clock::now();
  for (int i = 0; i < 4; ++i) {  // 0.5 s apart: 2 s in all, each wait under the timeout
    sent = Clock::now();
    ASSERT_TRUE(c.Send(health)) << i;
    bool closed = false;
    const std::string got = c.ReadUntilClose(0.5, &closed);
    EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << i << ": " << got;
    EXPECT_FALSE(closed) << i;
  }
  bool closed = false;
  EXPECT_EQ(c.ReadUntilClose(5.0, &closed), "");
  const double idle = Seconds(sent);
  EXPECT_TRUE(closed);
  EXPECT_GT(idle, 0.9);
  EXPECT_LT(idle, 1.0 + kSlack);
  closed = false;
  silent.ReadUntilClose(1.0, &closed);
  EXPECT_TRUE(closed) << "a connection without a request is open after " << Seconds(opened) << " s";
}

// --write-timeout: a client that pipelines requests for the page (15 KB each) and never
// reads the answers fills the socket buffers; the write that then waits is given up after
// the timeout, the connection closes, and the log says why.
TEST(ServerHostile, WriteTimeoutClosesAClientThatDoesNotRead) {
  Server srv({"--write-timeout", "1"});
  ASSERT_GT(srv.port(), 0);
  RawConn c(srv.port());
  std::string requests;
  for (int i = 0; i < 1000; ++i) requests += "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(c.Send(requests));  // 28 KB, 15 MB of answers
  const auto t0 = Clock::now();
  const std::string log = srv.LogWith("writing the response failed", 10);
  const double took = Seconds(t0);
  EXPECT_NE(log.find("writing the response failed"), std::string::npos) << log.substr(0, 2000);
  EXPECT_GT(took, 0.9);
  EXPECT_LT(HealthLatency(srv.port()), 1.0);
}

// --max-header-bytes: a request whose headers are over it gets 431 and the connection closes;
// one under it is served. Out of its range the option is refused at startup (exit 2).
TEST(ServerHostile, MaxHeaderBytesOption) {
  Server srv({"--max-header-bytes", "2048"});
  ASSERT_GT(srv.port(), 0);
  auto under = Get(srv.port(), "/health", {{"X-Pad", std::string(1500, 'p')}});
  ASSERT_TRUE(under);
  EXPECT_EQ(under->status, 200);
  RawConn c(srv.port());
  ASSERT_TRUE(
      c.Send("GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(3000, 'p') + "\r\n\r\n"));
  bool closed = false;
  const std::string over = c.ReadUntilClose(3.0, &closed);
  EXPECT_EQ(over.rfind("HTTP/1.1 431", 0), 0u) << over;
  EXPECT_NE(over.find("--max-header-bytes (2048)"), std::string::npos) << over;
  EXPECT_TRUE(closed);
  EXPECT_LT(HealthLatency(srv.port()), 1.0);
  const std::string bad = std::string(TERN_SERVER_BINARY) + " --model " + kRoot +
                          "/models/tiny-en --port 0 --max-header-bytes 100 2>/dev/null";
  const int st = std::system(bad.c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << st;
}

// Over --max-connections: a 503 with Retry-After, then closed; free again once one leaves.
TEST(ServerHostile, MaxConnections) {
  Server srv({"--max-connections", "4"});
  ASSERT_GT(srv.port(), 0);
  std::vector<std::unique_ptr<RawConn>> held;
  for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<RawConn>(srv.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  RawConn extra(srv.port());
  const std::string refused = extra.ReadUntilClose(2.0);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;
  EXPECT_NE(refused.find("server_busy"), std::string::npos) << refused;
  held.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LT(HealthLatency(srv.port()), 1.0);
}

// Several requests written at once on one connection are all answered, in order.
TEST(ServerHostile, PipelinedRequestsAreAnsweredInOrder) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context ioc;
  beast::tcp_stream s(ioc);
  s.expires_after(std::chrono::seconds(60));
  s.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(srv.port())));
  const std::string boundary = "p1pe";
  const std::string post = RawPost(
      MultipartBody(ClipForm("008.wav", {{"response_format", "text"}}), boundary), boundary);
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string models = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  boost::asio::write(s, boost::asio::buffer(health + post + models + post + health));
  beast::flat_buffer buffer;
  std::vector<std::string> bodies;
  for (int i = 0; i < 5; ++i) {
    http::response<http::string_body> res;
    beast::error_code ec;
    http::read(s, buffer, res, ec);
    ASSERT_FALSE(ec) << "response " << i << ": " << ec.message();
    EXPECT_EQ(res.result_int(), 200u) << i;
    bodies.push_back(res.body());
  }
  EXPECT_EQ(bodies[0], R"({"status":"ok"})");
  EXPECT_EQ(bodies[1], "I left my ticket in the bedroom.\n");
  EXPECT_NE(bodies[2].find("\"object\":\"list\""), std::string::npos);
  EXPECT_EQ(bodies[3], bodies[1]);
  EXPECT_EQ(bodies[4], bodies[0]);
}

// One lane and no wait list: while a transcription runs, any other request gets 503.
const std::vector<std::string> kOneLane = {"--max-batch",         "1",   "--max-waiting", "0",
                                           "--max-audio-seconds", "1900"};

// Half an hour at 24 kHz (86 MB; no resampling, so its decoding is quick) sent on a raw
// connection, cut in 30 s pieces (a cancel lands between them): still running after the
// checks that follow on a fast machine (the bundled model transcribes a few hundred times
// faster than real time). Null if the server did not take it.
std::unique_ptr<RawConn> SendLongTranscription(int port, bool stream) {
  const std::string boundary = "l0ng";
  Form form = {{"file", LongUpload(30), "long.wav", "audio/wav"},
               {"chunking_strategy", "auto", "", ""}};
  if (stream) form.push_back({"stream", "true", "", ""});
  auto c = std::make_unique<RawConn>(port);
  if (!c->ok() || !c->Send(RawPost(MultipartBody(form, boundary), boundary))) return nullptr;
  return c;
}

// What a stream's connection receives up to its first text delta (past the upload's decoding,
// into the transcription), or all it got in `timeout_s` without one.
std::string UntilFirstDelta(RawConn& c, double timeout_s = 30 * kSlack) {
  std::string got;
  const auto t0 = Clock::now();
  while (got.find("transcript.text.delta") == std::string::npos && Seconds(t0) < timeout_s)
    got += c.ReadUntilClose(0.05);
  return got;
}

// After a client hung up on the only lane: seconds until a fresh request is answered with
// 200 (trying for `limit_s`); *status is the last answer's status (-1: none).
double SecondsUntilServed(int port, double limit_s, int* status) {
  const auto t0 = Clock::now();
  *status = 0;
  while (Seconds(t0) < limit_s) {
    auto r = PostForm(port, ClipForm("008.wav", {{"response_format", "text"}}));
    *status = r ? r->status : -1;
    if (*status == 200) break;
  }
  return Seconds(t0);
}

// Under AddressSanitizer the upload's decoding and each encoder piece (neither of which a
// cancel interrupts) take many times longer: there the tests only check the cancel lands.
// Elsewhere the piece being encoded ends (a cancel lands between pieces), then a fresh
// request runs: a second or so on a loaded machine, against the half hour's minutes of work.
void ExpectTheLaneFreedSoon(const Server& srv, const char* what) {
  int status = 0;
  const double freed = SecondsUntilServed(srv.port(), 5 * kSlack * kSlack, &status);
  std::printf("[figure] %s: session free %.0f ms after the client hung up\n", what, freed * 1000);
  EXPECT_EQ(status, 200) << what;
  if (kSlack == 1) {
    EXPECT_LT(freed, 3.0) << what << "\n" << srv.Log();
  }
}

// A client that hangs up during a long non-streaming transcription frees its session at
// once (the next request gets a session, not 503), and the log says why.
TEST(ServerHostile, DisconnectCancelsTheTranscription) {
  Server srv(kOneLane);
  ASSERT_GT(srv.port(), 0);
  std::unique_ptr<RawConn> c = SendLongTranscription(srv.port(), false);
  ASSERT_TRUE(c);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // read, parsed, submitted
  // Busy: a second request is refused while the long one runs.
  bool busy = false;
  for (int i = 0; i < 100 && !busy; ++i) {
    auto r = PostForm(srv.port(), ClipForm("008.wav", {}));
    busy = r && r->status == 503;
    if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(busy) << "the long request never held the session\n" << srv.Log();
  // Past the upload's parsing and decoding (86 MB; not interruptible), into the
  // transcription.
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(2500 * kSlack)));
  c->Close();
  ExpectTheLaneFreedSoon(srv, "non-streaming");
  EXPECT_NE(srv.LogWith(" 499 ").find(" 499 "), std::string::npos) << srv.Log();
  EXPECT_NE(srv.Log().find("transcription cancelled"), std::string::npos) << srv.Log();
}

// The same for a stream (stream=true): the client hangs up after its first delta, mid-stream;
// the transcription is cancelled and the only lane serves the next request at once.
TEST(ServerHostile, StreamDisconnectCancelsTheTranscription) {
  Server srv(kOneLane);
  ASSERT_GT(srv.port(), 0);
  std::unique_ptr<RawConn> c = SendLongTranscription(srv.port(), true);
  ASSERT_TRUE(c);
  const std::string got = UntilFirstDelta(*c);
  ASSERT_NE(got.find("transcript.text.delta"), std::string::npos) << got << srv.Log();
  auto busy = PostForm(srv.port(), ClipForm("008.wav", {}));
  ASSERT_TRUE(busy);
  ASSERT_EQ(busy->status, 503) << "the stream does not hold the only lane";
  c->Close();
  ExpectTheLaneFreedSoon(srv, "stream");
  // Noticed by the peer watch, or by the next event's write failing: either cancels.
  const std::regex why("transcription cancelled|writing the response failed");
  EXPECT_TRUE(std::regex_search(srv.LogWith("POST " + kPath + " 200"), why)) << srv.Log();
}

// Waiting requests hold their upload, never decoded audio: four long uploads queued behind
// a busy session leave the server's memory nearly where it was.
TEST(ServerHostile, WaitingRequestsHoldNoDecodedAudio) {
  Server srv({"--max-batch", "1", "--max-waiting", "4", "--max-audio-seconds", "7300"});
  ASSERT_GT(srv.port(), 0);
  // The waiting ones: 20 minutes at 8 kHz, 8-bit: 9.6 MB uploaded, 115 MB once decoded to
  // 24 kHz floats. The running one decodes at once, so the memory measured before the
  // others arrive already holds its samples; it is two hours long, so it is still running
  // when the wait list is checked, however fast or loaded the machine.
  const std::string boundary = "w41t";
  auto request = [&](const std::string& upload) {
    return RawPost(MultipartBody({{"file", upload, "long.wav", "audio/wav"},
                                  {"chunking_strategy", "auto", "", ""}},
                                 boundary),
                   boundary);
  };
  const std::string waiter = request(LongUpload(20, 3));
  RawConn running(srv.port());
  const size_t idle = srv.Rss();
  ASSERT_TRUE(running.Send(request(LongUpload(120, 3))));
  // Decoded (2 h: 691 MB of floats) and transcribing: the memory has grown and holds still
  // (five readings 100 ms apart within 4 MB).
  size_t before = 0;
  int still = 0;
  for (const auto t0 = Clock::now(); Seconds(t0) < 30 * kSlack;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const size_t now = srv.Rss();
    still = now > idle + (600 << 20) && now < before + (4 << 20) && before < now + (4 << 20)
                ? still + 1
                : 0;
    before = now;
    if (still == 4) break;
  }
  ASSERT_GT(before, idle + (600 << 20)) << "the running request never decoded";
  std::vector<std::unique_ptr<RawConn>> waiting;
  for (int i = 0; i < 4; ++i) {
    waiting.push_back(std::make_unique<RawConn>(srv.port()));
    ASSERT_TRUE(waiting.back()->Send(waiter));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const size_t after = srv.Rss();
  std::printf("[figure] 4 waiting 20-min uploads: RSS %zu -> %zu MB\n", before >> 20, after >> 20);
  // Their uploads (4 x 9.6 MB, each held while read and once parsed) and buffers: well
  // under the 4 x 115 MB of samples they would hold decoded.
  EXPECT_LT(after, before + static_cast<size_t>(kSlack * (160 << 20)));
  auto r = PostForm(srv.port(), ClipForm("008.wav", {}));  // the wait list is full
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->header("retry-after"), "1");
  running.Close();
  waiting.clear();  // all gone: cancelled, the session free soon
  const auto t0 = Clock::now();
  int status = 0;
  // The running job stops at its next cancel check (a decoding step, an encoder run's end):
  // longer under the sanitizers, with other tests beside it.
  while (Seconds(t0) < 5 * kSlack && status != 200) {
    auto ok = PostForm(srv.port(), ClipForm("008.wav", {}));
    status = ok ? ok->status : -1;
  }
  EXPECT_EQ(status, 200);
}

// --max-uploads-mb bounds the bodies held at once across connections: with one 6.9 MB upload
// being transcribed, a second is refused (503) before its body is read, a small one still
// gets in, and the budget comes back when the first is done.
TEST(ServerHostile, UploadBytesAreBounded) {
  Server srv({"--max-uploads-mb", "10", "--max-upload-mb", "8", "--max-batch", "1"});
  ASSERT_GT(srv.port(), 0);
  const std::string boundary = "upl0ad";
  const std::string big = RawPost(MultipartBody({{"file", LongUpload(5), "long.wav", "audio/wav"},
                                                 {"chunking_strategy", "auto", "", ""},
                                                 {"response_format", "text", "", ""}},
                                                boundary),
                                  boundary);
  ASSERT_GT(big.size(), size_t{6} << 20);
  RawConn first(srv.port());
  ASSERT_TRUE(first.Send(big));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  RawConn second(srv.port());
  second.Send(big.substr(0, 4096));  // its header: refused before the body
  const std::string refused = second.ReadUntilClose(3.0);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("--max-uploads-mb"), std::string::npos) << refused;
  auto small = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "text"}}));
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  first.Close();  // cancelled: its body and its share of the budget are freed
  const auto t0 = Clock::now();
  bool accepted = false;
  while (Seconds(t0) < 10 && !accepted) {
    RawConn again(srv.port());
    again.Send(big);
    // A refusal comes at once; an accepted upload is being transcribed (then hung up on).
    accepted = again.ReadUntilClose(1.0).rfind("HTTP/1.1 503", 0) != 0;
  }
  EXPECT_TRUE(accepted);
}

// SIGTERM or SIGINT while one client trickles bytes: stops accepting and exits 0 within the
// grace plus a second.
class StopSignal : public ::testing::TestWithParam<int> {};

TEST_P(StopSignal, WithATricklingClient) {
  Server srv({"--shutdown-grace", "1", "--read-timeout", "60"});
  ASSERT_GT(srv.port(), 0);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    RawConn c(srv.port());
    const std::string req = "GET /health HTTP/1.1\r\nHost: x\r\n";
    for (size_t i = 0; !stop; ++i) {
      if (!c.Send(std::string(1, req[i % req.size()]))) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const auto t0 = Clock::now();
  kill(srv.pid(), GetParam());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const bool refused = !RawConn(srv.port()).ok();  // the listening socket is closed
  const int rc = srv.Wait(10);
  const double took = Seconds(t0);
  stop = true;
  trickle.join();
  std::printf("[figure] %s with a trickling client: exit %d after %.2f s (grace 1 s)\n",
              GetParam() == SIGTERM ? "SIGTERM" : "SIGINT", rc, took);
  EXPECT_EQ(rc, 0);
  EXPECT_LT(took, 1.0 + kSlack);
  EXPECT_TRUE(refused) << "a new connection was accepted during the grace";
}

INSTANTIATE_TEST_SUITE_P(ServerHostile, StopSignal, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(p.param == SIGTERM ? "Sigterm" : "Sigint");
                         });

// SIGTERM with one lane busy on a long stream and another stream waiting for it: at the end
// of the grace the running stream gets an error event and the end of its chunked body, and
// the waiting one, which never began, a whole 503 with Retry-After (not a 200 whose body is
// cut off); the server exits 0 within the grace plus a second.
TEST(ServerHostile, SigtermWhileAStreamWaits) {
  Server srv({"--max-batch", "1", "--max-waiting", "1", "--max-audio-seconds", "1900",
              "--shutdown-grace", "1"});
  ASSERT_GT(srv.port(), 0);
  std::unique_ptr<RawConn> running = SendLongTranscription(srv.port(), true);
  ASSERT_TRUE(running);
  const std::string first = UntilFirstDelta(*running);
  ASSERT_NE(first.find("transcript.text.delta"), std::string::npos) << first << srv.Log();
  const std::string boundary = "wa1t";
  RawConn waiting(srv.port());
  ASSERT_TRUE(waiting.Send(
      RawPost(MultipartBody(ClipForm("008.wav", {{"stream", "true"}, {"response_format", "text"}}),
                            boundary),
              boundary)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // read and queued
  const auto t0 = Clock::now();
  kill(srv.pid(), SIGTERM);
  bool closed = false;
  const std::string answer = waiting.ReadUntilClose(5.0, &closed);
  const std::string rest = running->ReadUntilClose(5.0);
  const int rc = srv.Wait(5);
  const double took = Seconds(t0);
  std::printf("[figure] SIGTERM with a stream waiting (grace 1 s): exit %d after %.2f s\n", rc,
              took);
  EXPECT_EQ(rc, 0);
  EXPECT_LT(took, 2.0 + kSlack);
  EXPECT_TRUE(closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  EXPECT_NE(answer.find("Retry-After: 1\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos) << answer;
  // The whole body its Content-Length announces: a JSON error saying why.
  const size_t head_end = answer.find("\r\n\r\n");
  const std::smatch length = [&] {
    std::smatch m;
    std::regex_search(answer, m, std::regex("Content-Length: (\\d+)"));
    return m;
  }();
  ASSERT_FALSE(length.empty()) << answer;
  ASSERT_NE(head_end, std::string::npos);
  const std::string body = answer.substr(head_end + 4);
  EXPECT_EQ(body.size(), std::stoul(length[1].str())) << answer;
  EXPECT_NE(body.find("shutting down"), std::string::npos) << body;
  EXPECT_NE(rest.find("\"type\":\"error\""), std::string::npos) << rest;
  ASSERT_GE(rest.size(), 5u);
  EXPECT_EQ(rest.substr(rest.size() - 5), "0\r\n\r\n");  // the chunked body's end
}

// SIGTERM with a stream in flight and no grace: the stream ends with an error event and a
// proper end of the chunked body; the server exits 0 at once.
TEST(ServerHostile, SigtermSendsStreamsAnErrorEvent) {
  Server srv({"--shutdown-grace", "0"});
  ASSERT_GT(srv.port(), 0);
  const std::string boundary = "s7ream";
  Form form = {{"file", LongUpload(5), "long.wav", "audio/wav"},
               {"chunking_strategy", "auto", "", ""},
               {"stream", "true", "", ""}};
  RawConn c(srv.port());
  ASSERT_TRUE(c.Send(RawPost(MultipartBody(form, boundary), boundary)));
  // Wait for the first delta, then stop the server.
  std::string got;
  const auto t0 = Clock::now();
  while (got.find("transcript.text.delta") == std::string::npos && Seconds(t0) < 30)
    got += c.ReadUntilClose(0.05);
  ASSERT_NE(got.find("transcript.text.delta"), std::string::npos) << got;
  const auto t1 = Clock::now();
  kill(srv.pid(), SIGTERM);
  bool closed = false;
  got += c.ReadUntilClose(5.0, &closed);
  const int rc = srv.Wait(5);
  std::printf("[figure] SIGTERM mid-stream (grace 0): exit %d after %.2f s\n", rc, Seconds(t1));
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(closed);
  EXPECT_NE(got.find("\"type\":\"error\""), std::string::npos)
      << got.substr(got.size() > 400 ? got.size() - 400 : 0);
  EXPECT_NE(got.find("shutting down"), std::string::npos);
  EXPECT_EQ(got.substr(got.size() - 5), "0\r\n\r\n");  // the chunked body's end
}

TEST(ServerHostile, CorsHeaders) {
  {
    Server srv({"--cors-origin", "https://app.example"});
    ASSERT_GT(srv.port(), 0);
    auto h = Get(srv.port(), "/health");
    ASSERT_TRUE(h);
    EXPECT_EQ(h->header("access-control-allow-origin"), "https://app.example");
    EXPECT_EQ(h->header("vary"), "Origin");
    auto pre =
        Request(srv.port(), "OPTIONS", kPath, "", "",
                {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}});
    ASSERT_TRUE(pre);
    EXPECT_EQ(pre->status, 204);
    EXPECT_NE(pre->header("access-control-allow-methods").find("POST"), std::string::npos);
    EXPECT_NE(pre->header("access-control-allow-headers").find("Authorization"), std::string::npos);
    auto t = PostForm(srv.port(), ClipForm("008.wav", {{"stream", "true"}}));
    ASSERT_TRUE(t);
    EXPECT_EQ(t->header("access-control-allow-origin"), "https://app.example");
  }
  Server plain({});
  ASSERT_GT(plain.port(), 0);
  auto h = Get(plain.port(), "/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->header("access-control-allow-origin"), "");
}

// One line per request on stderr, in the documented form; --quiet silences it; and nothing
// else reaches stderr while the server runs.
TEST(ServerHostile, AccessLog) {
  std::string log;
  {
    Server srv({});
    ASSERT_GT(srv.port(), 0);
    auto r = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "text"}}));
    ASSERT_TRUE(r);
    PostForm(srv.port(), {{"file", "ID3\x03junk that is not an mp3 frame at all", "x.mp3", ""}});
    Get(srv.port(), "/nothing");
    EXPECT_EQ(srv.Stop(), 0);
    log = srv.Log();
  }
  const std::regex line(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1:\d+ POST /v1/audio/transcriptions 200 33 2\.27 \d+)");
  EXPECT_TRUE(std::regex_search(log, line)) << log;
  EXPECT_NE(log.find("GET /nothing 404 "), std::string::npos) << log;
  std::istringstream lines(log);
  for (std::string l; std::getline(lines, l);)  // every line is the log's own
    EXPECT_TRUE(std::regex_match(l, std::regex(R"(\d{4}-\d\d-\d\dT\S+Z \S+ .*)"))) << l;
  Server quiet({"--quiet"});
  ASSERT_GT(quiet.port(), 0);
  ASSERT_TRUE(Get(quiet.port(), "/health"));
  EXPECT_EQ(quiet.Stop(), 0);
  EXPECT_EQ(quiet.Log(), "");
}

// Errors carry no server paths; temperature follows OpenAI's range; verbose_json has
// OpenAI's fields; chunking_strategy is checked.
TEST(ServerHostile, OpenAiParityAndNoPaths) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  // Hotwords are tokenized with the model file's vocabulary, whose error names the file.
  auto bad = PostForm(srv.port(), ClipForm("008.wav", {{"hotwords", "\xff\xfe\xfd"}}));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_EQ(bad->body.find(kRoot), std::string::npos) << bad->body;
  auto hot = PostForm(srv.port(), ClipForm("008.wav", {{"temperature", "1.5"}}));
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->status, 400);
  EXPECT_NE(hot->body.find("not in [0, 1]"), std::string::npos) << hot->body;
  auto v = PostForm(srv.port(),
                    ClipForm("008.wav", {{"response_format", "verbose_json"}, {"language", "en"}}));
  ASSERT_TRUE(v);
  const nlohmann::json j = nlohmann::json::parse(v->body);
  EXPECT_EQ(j["task"], "transcribe");
  EXPECT_EQ(j["language"], "en");
  EXPECT_NEAR(j["duration"].get<double>(), 2.27, 0.01);
  ASSERT_EQ(j["segments"].size(), 1u);
  EXPECT_EQ(j["segments"][0]["id"], 0);
  EXPECT_EQ(j["segments"][0]["text"], "I left my ticket in the bedroom.");
  EXPECT_LT(j["avg_logprob"].get<double>(), 0);
  EXPECT_EQ(j["segments"][0]["avg_logprob"], j["avg_logprob"]);
  EXPECT_EQ(j["token_logprobs"].size(), j["token_ids"].size());
  EXPECT_FALSE(j.contains("peak_rss_bytes"));
  EXPECT_FALSE(j.contains("isa"));
  for (const char* ok : {"auto", R"({"type":"server_vad","silence_duration_ms":500})"}) {
    auto c = PostForm(
        srv.port(), ClipForm("008.wav", {{"chunking_strategy", ok}, {"response_format", "text"}}));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 200) << ok << c->body;
    EXPECT_EQ(c->body, "I left my ticket in the bedroom.\n");
  }
  auto c = PostForm(srv.port(), ClipForm("008.wav", {{"chunking_strategy", "sometimes"}}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 400);
  auto page = Get(srv.port(), "/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("v1/audio/transcriptions"), std::string::npos);
}

TEST(ServerHostile, Version) {
  FILE* p = popen((std::string(TERN_SERVER_BINARY) + " --version").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512] = {0};
  const size_t n = fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(pclose(p), 0);
  // The git hash is the one each binary was built from: the rest must be the library's.
  const std::regex hash(R"(\(git [^)]*\))");
  EXPECT_EQ(std::regex_replace(std::string(buf, n), hash, "(git)"),
            std::regex_replace("tern-server: " + VersionString() + "\n", hash, "(git)"));
  EXPECT_NE(std::string(buf, n).find("(git "), std::string::npos);
}

}  // namespace
}  // namespace tern
