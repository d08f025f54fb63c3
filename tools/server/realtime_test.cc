// The realtime protocol on the bundled model, without the network: client events in as
// JSON text, server events out; a stream of four sentences appended in 100 ms messages must
// give one item per sentence, in OpenAI's event order, with the LiveSession's finals.
#include "realtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "realtime_test_audio.h"

namespace tern::server {
namespace {

using realtime_test::Append;
using realtime_test::StreamPcm;
using realtime_test::TinyModel;

using json = nlohmann::json;

class Collector {
 public:
  RealtimeConnection::Send Sink() {
    return [this](std::string e) {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(json::parse(e));
      cv_.notify_all();
    };
  }
  // Waits (up to 60 s) until `n` events of `type` arrived; all events so far.
  std::vector<json> WaitFor(const std::string& type, size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return Count(type) >= n; });
    return events_;
  }
  std::vector<json> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  size_t Count(const std::string& type) const {
    size_t n = 0;
    for (const json& e : events_) n += e["type"] == type;
    return n;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<json> events_;
};

TEST(Realtime, Base64DecodesStrictly) {
  std::string out;
  EXPECT_TRUE(DecodeBase64("Zm9vYg==", &out));
  EXPECT_EQ(out, "foob");
  EXPECT_TRUE(DecodeBase64("Zm9vYmE=", &out));
  EXPECT_EQ(out, "fooba");
  EXPECT_TRUE(DecodeBase64("", &out));
  EXPECT_FALSE(DecodeBase64("Zm9", &out));
  EXPECT_FALSE(DecodeBase64("Zm=v", &out));
  EXPECT_FALSE(DecodeBase64("Zm9v!A==", &out));
  // The tests' encoder against the server's decoder, every padding case and every byte.
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{256}}) {
    ASSERT_TRUE(DecodeBase64(realtime_test::Base64(all.substr(0, n)), &out)) << n;
    EXPECT_EQ(out, all.substr(0, n));
  }
  EXPECT_EQ(realtime_test::Base64("foob"), "Zm9vYg==");
}

TEST(Realtime, StreamOfSentencesGivesOneCompletedItemEach) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  const std::vector<int16_t> pcm = StreamPcm();
  // what the engine gives for the same samples
  std::vector<float> x(pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) x[i] = static_cast<float>(pcm[i]) / 32768.0f;
  Session s(model, 1);
  LiveOptions lo;
  lo.pause_seconds = 0.6;
  auto live = s.StartLive(lo);
  ASSERT_TRUE(live.ok());
  std::vector<LiveEvent> ev;
  ASSERT_TRUE((*live)->Feed(x.data(), x.size(), &ev).ok());
  ASSERT_TRUE((*live)->Finish(&ev).ok());
  std::vector<std::string> expected;
  for (const LiveEvent& e : ev)
    if (e.kind == LiveEvent::Kind::kFinal) expected.push_back(e.text);
  ASSERT_EQ(expected.size(), 4u);

  Collector c;
  RealtimeConnection conn(model, "tiny-en", TranscribeOptions{}, RealtimeLimits{}, c.Sink());
  conn.Start();
  conn.OnText(R"({"type":"transcription_session.update","session":{"input_audio_format":"pcm16",
      "input_audio_transcription":{"model":"whisper-1","prompt":""},
      "turn_detection":{"type":"server_vad","silence_duration_ms":600}}})");
  for (size_t i = 0; i < pcm.size(); i += 2400)
    conn.OnText(Append(pcm.data() + i, std::min<size_t>(2400, pcm.size() - i)));
  const std::vector<json> events =
      c.WaitFor("conversation.item.input_audio_transcription.completed", 4);

  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "transcription_session.created");
  EXPECT_EQ(events[0]["session"]["input_audio_format"], "pcm16");
  EXPECT_EQ(events[1]["type"], "transcription_session.updated");
  EXPECT_EQ(events[1]["session"]["turn_detection"]["silence_duration_ms"], 600);
  // per item: speech_started, deltas, speech_stopped, committed, completed, in this order
  std::vector<std::string> completed;
  std::string item, previous;
  int stage = 0;  // 0 none, 1 started, 2 stopped, 3 committed
  int64_t last_ms = -1;
  for (size_t i = 2; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string type = e["type"];
    ASSERT_TRUE(e["event_id"].is_string());
    if (type == "input_audio_buffer.speech_started") {
      EXPECT_EQ(stage, 0) << e.dump();
      item = e["item_id"];
      EXPECT_GT(e["audio_start_ms"].get<int64_t>(), last_ms);
      stage = 1;
    } else if (type == "conversation.item.input_audio_transcription.delta") {
      EXPECT_EQ(stage, 1) << e.dump();
      EXPECT_EQ(e["item_id"], item);
      EXPECT_FALSE(e["delta"].get<std::string>().empty());
    } else if (type == "input_audio_buffer.speech_stopped") {
      EXPECT_EQ(stage, 1) << e.dump();
      EXPECT_EQ(e["item_id"], item);
      last_ms = e["audio_end_ms"];
      stage = 2;
    } else if (type == "input_audio_buffer.committed") {
      EXPECT_EQ(stage, 2) << e.dump();
      EXPECT_EQ(e["item_id"], item);
      if (previous.empty())
        EXPECT_TRUE(e["previous_item_id"].is_null());
      else
        EXPECT_EQ(e["previous_item_id"], previous);
      stage = 3;
    } else if (type == "conversation.item.input_audio_transcription.completed") {
      EXPECT_EQ(stage, 3) << e.dump();
      EXPECT_EQ(e["item_id"], item);
      EXPECT_EQ(e["content_index"], 0);
      completed.push_back(e["transcript"]);
      previous = item;
      stage = 0;
    } else {
      ADD_FAILURE() << "unexpected event " << e.dump();
    }
  }
  EXPECT_EQ(completed, expected);
}

TEST(Realtime, BadClientEventsGetErrorEvents) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  Collector c;
  RealtimeLimits limits;
  limits.max_append_bytes = 4000;
  RealtimeConnection conn(model, "tiny-en", TranscribeOptions{}, limits, c.Sink());
  conn.Start();
  struct Case {
    std::string message, code, param;
  };
  const std::vector<Case> cases = {
      {"{not json", "invalid_json", ""},
      {R"({"event_id":"e1","type":"response.create"})", "invalid_event", "type"},
      {R"([1,2])", "invalid_event", "type"},
      {R"({"type":"transcription_session.update","session":{"input_audio_format":"g711_ulaw"}})",
       "invalid_value", "session.input_audio_format"},
      {R"({"type":"session.update","session":{"turn_detection":{"type":"semantic_vad"}}})",
       "invalid_value", "session.turn_detection.type"},
      {R"({"type":"transcription_session.update","session":{"turn_detection":{"silence_duration_ms":5}}})",
       "invalid_value", "session.turn_detection.silence_duration_ms"},
      {R"({"type":"input_audio_buffer.append"})", "missing_required_parameter", "audio"},
      {R"({"type":"input_audio_buffer.append","audio":"AAA*"})", "invalid_value", "audio"},
      {R"({"type":"input_audio_buffer.append","audio":"AA=="})", "invalid_value", "audio"},
      {json{{"type", "input_audio_buffer.append"}, {"audio", std::string(4004, 'A')}}.dump(),
       "input_audio_buffer_append_too_large", "audio"},
      {R"({"event_id":"e9","type":"input_audio_buffer.commit"})", "input_audio_buffer_commit_empty",
       ""},
  };
  for (const Case& k : cases) conn.OnText(k.message);
  conn.OnUnexpected("a binary message");
  const std::vector<json> events = c.WaitFor("error", cases.size() + 1);
  std::vector<json> errors;
  for (const json& e : events)
    if (e["type"] == "error") errors.push_back(e["error"]);
  ASSERT_EQ(errors.size(), cases.size() + 1);
  // in order, except the commit's (the worker's) and the binary message's, which may swap
  for (size_t i = 0; i + 1 < cases.size(); ++i) {
    EXPECT_EQ(errors[i]["code"], cases[i].code) << cases[i].message;
    if (cases[i].param.empty())
      EXPECT_TRUE(errors[i]["param"].is_null()) << cases[i].message;
    else
      EXPECT_EQ(errors[i]["param"], cases[i].param) << cases[i].message;
    EXPECT_FALSE(errors[i]["message"].get<std::string>().empty());
    EXPECT_EQ(errors[i]["type"], "invalid_request_error");
  }
  EXPECT_EQ(errors[1]["event_id"], "e1");
  std::vector<std::string> last = {errors[cases.size() - 1]["code"], errors[cases.size()]["code"]};
  std::sort(last.begin(), last.end());
  EXPECT_EQ(last, (std::vector<std::string>{"input_audio_buffer_commit_empty", "invalid_event"}));
  for (const json& e : errors) {
    if (e["code"] == "input_audio_buffer_commit_empty") {
      EXPECT_EQ(e["event_id"], "e9");
    }
  }
  // nothing else happened: no session.updated for the refused updates
  for (const json& e : events) EXPECT_NE(e["type"], "transcription_session.updated") << e.dump();
}

// --realtime-max-buffered: the audio waiting to be transcribed is bounded. An append that
// would take it over the bound (here 1 s; this one is 1.5 s on its own, whatever the worker
// has done) is dropped with an input_audio_buffer_full error; one that fits is taken.
TEST(Realtime, BufferedAudioIsBounded) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  Collector c;
  RealtimeLimits limits;
  limits.max_buffered_seconds = 1;
  RealtimeConnection conn(model, "tiny-en", TranscribeOptions{}, limits, c.Sink());
  conn.Start();
  const std::vector<int16_t> pcm = StreamPcm();
  conn.OnText(Append(pcm.data(), 36000));
  conn.OnText(Append(pcm.data(), 12000));  // 0.5 s
  c.WaitFor("error", 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // no second error comes
  std::vector<json> errors;
  for (const json& e : c.All())
    if (e["type"] == "error") errors.push_back(e["error"]);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["code"], "input_audio_buffer_full");
  EXPECT_EQ(errors[0]["param"], "audio");
}

TEST(Realtime, CommitTranscribesWithoutTurnDetectionAndClearDiscards) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  const std::vector<int16_t> pcm = StreamPcm();
  Collector c;
  RealtimeConnection conn(model, "tiny-en", TranscribeOptions{}, RealtimeLimits{}, c.Sink());
  conn.Start();
  conn.OnText(R"({"type":"transcription_session.update","session":{"turn_detection":null}})");
  const size_t first = 24000 * 3;  // the first sentence and its pause
  std::vector<float> x(first);
  for (size_t i = 0; i < first; ++i) x[i] = static_cast<float>(pcm[i]) / 32768.0f;
  Session s(model, 1);
  LiveOptions lo;
  lo.pause_seconds = 10;  // no turn detection: the piece ends at the commit
  auto live = s.StartLive(lo);
  ASSERT_TRUE(live.ok());
  std::vector<LiveEvent> ev;
  ASSERT_TRUE((*live)->Feed(x.data(), x.size(), &ev).ok());
  ASSERT_TRUE((*live)->Finish(&ev).ok());
  ASSERT_FALSE(ev.empty());
  ASSERT_EQ(ev.back().kind, LiveEvent::Kind::kFinal);
  const std::string expected = ev.back().text;
  conn.OnText(Append(pcm.data(), first));
  conn.OnText(R"({"type":"input_audio_buffer.commit"})");
  conn.OnText(Append(pcm.data() + first, 24000));
  conn.OnText(R"({"type":"input_audio_buffer.clear"})");
  conn.OnText(R"({"type":"input_audio_buffer.commit"})");  // nothing since the clear
  std::vector<json> events = c.WaitFor("error", 1);
  std::vector<std::string> types;
  for (const json& e : events) types.push_back(e["type"]);
  const std::vector<std::string> want = {
      "transcription_session.created", "transcription_session.updated",
      "input_audio_buffer.committed",  "conversation.item.input_audio_transcription.completed",
      "input_audio_buffer.cleared",    "error"};
  // partial deltas may come before the commit; nothing else
  std::vector<std::string> main_types;
  for (const std::string& t : types)
    if (t != "conversation.item.input_audio_transcription.delta") main_types.push_back(t);
  EXPECT_EQ(main_types, want);
  for (const json& e : events) {
    if (e["type"] == "conversation.item.input_audio_transcription.completed") {
      EXPECT_EQ(e["transcript"], expected);
    }
  }
}

TEST(Realtime, CloseWhileTranscribingReturnsPromptly) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  const std::vector<int16_t> pcm = StreamPcm();
  Collector c;
  const auto t0 = std::chrono::steady_clock::now();
  {
    RealtimeConnection conn(model, "tiny-en", TranscribeOptions{}, RealtimeLimits{}, c.Sink());
    conn.Start();
    for (size_t i = 0; i < pcm.size(); i += 2400)
      conn.OnText(Append(pcm.data() + i, std::min<size_t>(2400, pcm.size() - i)));
    conn.Close();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

}  // namespace
}  // namespace tern::server
