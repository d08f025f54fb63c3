// tern-server end to end: the built binary on a free port with the bundled model, driven
// over HTTP by a Beast client (server_harness.h). Answers must be the library's, byte for byte; bad
// requests must get JSON errors naming the field; limits must hold; concurrent requests
// must get the answers they get alone; SIGTERM must stop the server cleanly.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "server_harness.h"
#include "tern/tern.h"

namespace tern {
namespace {

using testing::ClipForm;
using testing::Form;
using testing::Get;
using testing::kClips;
using testing::kRoot;
using testing::LongWav;
using testing::PostForm;
using testing::Server;

const std::string kPath = "/v1/audio/transcriptions";

// The library's answer for a clip, as the server should give it.
Result<Transcript> Library(const std::string& clip, const TranscribeOptions& o = {}) {
  ModelOptions mo;
  mo.model_dir = kRoot + "/models/tiny-en";
  TERN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> m, Model::Load(mo));
  TERN_ASSIGN_OR_RETURN(Audio a, LoadAudio(kClips + clip));
  Session s(m, 1);
  TranscribeOptions greedy = o;  // the server decodes greedily unless a request asks for a beam
  if (greedy.decoding.beam == 0) greedy.decoding.beam = 1;
  return s.Transcribe(a, greedy);
}

TEST(Server, HealthAndModels) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  auto h = Get(srv.port(), "/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->body, R"({"status":"ok"})");
  auto m = Get(srv.port(), "/v1/models");
  ASSERT_TRUE(m);
  const nlohmann::json j = nlohmann::json::parse(m->body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][0]["id"], "tern tiny-en");  // the LM file's general.name
  EXPECT_EQ(srv.Stop(), 0);                       // SIGTERM: a clean exit
}

TEST(Server, AnswersAreTheLibrarys) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  Result<Transcript> want = Library("008.wav");
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (auto [name, format, type] :
       {std::tuple{"json", OutputFormat::kJson, "application/json"},
        std::tuple{"text", OutputFormat::kTxt, "text/plain; charset=utf-8"},
        std::tuple{"srt", OutputFormat::kSrt, "text/plain; charset=utf-8"},
        std::tuple{"vtt", OutputFormat::kVtt, "text/vtt; charset=utf-8"}}) {
    auto r = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", name},
                                                       {"model", "whisper-1"},
                                                       {"language", "en"},
                                                       {"stream", "false"}}));
    ASSERT_TRUE(r) << name;
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->body, FormatTranscript(*want, format)) << name;
    EXPECT_EQ(r->header("content-type"), type) << name;
  }
  auto v = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "verbose_json"}}));
  ASSERT_TRUE(v);
  const nlohmann::json j = nlohmann::json::parse(v->body);
  EXPECT_EQ(j["text"], want->text);
  EXPECT_EQ(j["token_ids"].get<std::vector<int32_t>>(), want->token_ids);
  auto d = PostForm(srv.port(), ClipForm("008.wav", {}));  // default: json
  ASSERT_TRUE(d);
  EXPECT_EQ(d->body, FormatTranscript(*want, OutputFormat::kJson));
}

// stream=true: server-sent events, text deltas as decoded that join to the done event's
// text, which is the text of the json answer.
TEST(Server, StreamSendsTextEvents) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  Result<Transcript> want = Library("008.wav");
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const nlohmann::json answer = nlohmann::json::parse(FormatTranscript(*want, OutputFormat::kJson));
  for (const char* format : {"json", "text"}) {
    auto r = PostForm(srv.port(),
                      ClipForm("008.wav", {{"stream", "true"}, {"response_format", format}}));
    ASSERT_TRUE(r) << format;
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->header("content-type"), "text/event-stream");
    std::vector<nlohmann::json> events;
    for (size_t at = 0; at < r->body.size();) {
      const size_t end = r->body.find("\n\n", at);
      ASSERT_NE(end, std::string::npos) << r->body;
      const std::string event = r->body.substr(at, end - at);
      ASSERT_EQ(event.rfind("data: ", 0), 0u) << event;
      events.push_back(nlohmann::json::parse(event.substr(6)));
      at = end + 2;
    }
    ASSERT_GE(events.size(), 4u) << r->body;  // several deltas, then done
    std::string joined;
    for (size_t i = 0; i + 1 < events.size(); ++i) {
      EXPECT_EQ(events[i]["type"], "transcript.text.delta") << events[i];
      joined += events[i]["delta"].get<std::string>();
    }
    EXPECT_EQ(events.back()["type"], "transcript.text.done");
    EXPECT_EQ(events.back()["text"], joined);
    EXPECT_EQ(joined, answer["text"].get<std::string>());
  }
  // What the transcription itself refuses comes once the stream has begun: an error event
  // of the type its HTTP status would have had (here 413: no room left for the audio).
  auto e =
      PostForm(srv.port(), ClipForm("008.wav", {{"stream", "true"}, {"max_tokens", "100000"}}));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 200);
  ASSERT_EQ(e->body.rfind("data: ", 0), 0u) << e->body;
  const nlohmann::json err = nlohmann::json::parse(e->body.substr(6));
  EXPECT_EQ(err["type"], "error") << e->body;
  EXPECT_EQ(err["error"]["type"], "invalid_request_error") << e->body;
  EXPECT_NE(err["error"]["message"].get<std::string>().find("max-tokens"), std::string::npos)
      << e->body;
}

TEST(Server, FormFieldsReachTheEngine) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  // Without the hotwords the bundled model hears "Add cookies and lemons to the list."
  auto r = PostForm(srv.port(), ClipForm("002.wav", {{"response_format", "text"},
                                                     {"hotwords", " coffee, lemons"},
                                                     {"hotword_boost", "3"}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "Add coffee and lemons to the list.\n");
  TranscribeOptions o;
  o.context = "a lost ticket";
  o.decoding.beam = 2;
  o.decoding.max_tokens = 9;
  Result<Transcript> want = Library("008.wav", o);
  ASSERT_TRUE(want.ok());
  auto p = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "verbose_json"},
                                                     {"prompt", o.context},
                                                     {"beam", "2"},
                                                     {"max_tokens", "9"},
                                                     {"temperature", "0"}}));
  ASSERT_TRUE(p);
  const nlohmann::json j = nlohmann::json::parse(p->body);
  EXPECT_EQ(j["token_ids"].get<std::vector<int32_t>>(), want->token_ids);
  EXPECT_EQ(j["prompt_token_ids"].get<std::vector<int32_t>>(), want->prompt_token_ids);
  auto s = PostForm(srv.port(),
                    ClipForm("008.wav", {{"response_format", "srt"}, {"max_cue_chars", "10"}}));
  ASSERT_TRUE(s);
  EXPECT_NE(s->body.find("\n3\n"), std::string::npos) << s->body;  // split into 3+ cues
}

// What a model declares (tern.trained.*; here the bundled one declaring 6.5 s clips, no
// context, no JSON prompt) reaches a client: a prompt the model was not trained with is
// dropped and said so, and chunking_strategy uses the engine's pieces for the declared length.
TEST(Server, ModelDeclarationsReachTheClient) {
  Server srv({}, true, TERN_DECLARED_DIR);
  ASSERT_GT(srv.port(), 0);
  auto p = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "verbose_json"},
                                                     {"prompt", "a lost ticket"}}));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body;
  EXPECT_NE(nlohmann::json::parse(p->body)["warnings"].dump().find("not trained with context"),
            std::string::npos)
      << p->body;
  // chunking_strategy on 8 s, longer than the 6.5 s declared: the engine's own pieces for it
  // (no warning), not 30 s ones (a warning suggesting 4 s).
  std::vector<float> tone(8 * 24000);
  for (size_t i = 0; i < tone.size(); ++i) tone[i] = 0.09f * std::sin(0.05f * i);
  const std::string wav = LongWav(tone, 1, 1);  // 8-bit, 24 kHz
  Form long_form{{"file", wav, "tone.wav", "audio/wav"},
                 {"response_format", "verbose_json", "", ""},
                 {"chunking_strategy", "auto", "", ""}};
  auto l = PostForm(srv.port(), long_form);
  ASSERT_TRUE(l);
  ASSERT_EQ(l->status, 200) << l->body;
  EXPECT_EQ(l->body.find("trained on clips"), std::string::npos) << l->body;
  EXPECT_GE(nlohmann::json::parse(l->body)["pieces"].size(), 2u) << l->body;
}

TEST(Server, BadRequestsGetJsonErrorsNamingTheField) {
  Server srv({});
  ASSERT_GT(srv.port(), 0);
  auto expect = [&](const std::optional<testing::Response>& r, int status, const std::string& param,
                    const std::string& words) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    const nlohmann::json j = nlohmann::json::parse(r->body);
    if (param.empty())
      EXPECT_TRUE(j["error"]["param"].is_null()) << r->body;
    else
      EXPECT_EQ(j["error"]["param"], param) << r->body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find(words), std::string::npos) << r->body;
    EXPECT_EQ(j["error"]["type"],
              status == 404 || status < 500 ? "invalid_request_error" : "server_error");
  };
  expect(PostForm(srv.port(), ClipForm("", {{"response_format", "json"}})), 400, "file",
         "'file' is missing");
  expect(testing::Request(srv.port(), "POST", kPath, "x=1", "application/x-www-form-urlencoded"),
         400, "", "multipart");
  Form junk = {{"file", "definitely not audio", "a.wav", "audio/wav"}};
  expect(PostForm(srv.port(), junk), 400, "file", "a.wav: not a readable audio file");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "xml"}})), 400,
         "response_format", "'xml' is not json, text, srt, vtt or verbose_json");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"temperature", "warm"}})), 400, "temperature",
         "'warm' is not a number");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"temperature", "nan"}})), 400, "temperature",
         "not finite");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"beam", "99"}})), 400, "",
         "beam must be in [1, 16]");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"hotwords", "a,,b"}})), 400, "hotwords",
         "an empty word");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"colour", "blue"}})), 400, "colour",
         "unknown form field");
  expect(PostForm(srv.port(), ClipForm("008.wav", {{"stream", "yes"}})), 400, "stream",
         "not true or false");
  expect(
      PostForm(srv.port(), ClipForm("008.wav", {{"stream", "true"}, {"response_format", "srt"}})),
      400, "response_format", "stream=true sends text events");
  // what the client sent is quoted, shortened, and invalid UTF-8 in it does not break JSON
  expect(PostForm(srv.port(),
                  ClipForm("008.wav", {{"response_format", "\xff\xfe" + std::string(500, 'x')}})),
         400, "response_format", "is not json, text");
  Form odd = {{"file", "RIFF", "\xc3(.wav", "audio/wav"}};
  expect(PostForm(srv.port(), odd), 400, "file", "not a readable audio file");
  Form two = ClipForm("008.wav", {});
  two.push_back(two.front());
  expect(PostForm(srv.port(), two), 400, "file", "'file' is given twice");
  auto g = Get(srv.port(), "/v2/nothing");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->status, 404);
  EXPECT_NE(g->body.find("no route GET /v2/nothing"), std::string::npos) << g->body;
}

TEST(Server, LimitsHold) {
  Server srv({"--max-upload-mb", "0.5", "--max-audio-seconds", "1"});
  ASSERT_GT(srv.port(), 0);
  auto a = PostForm(srv.port(), ClipForm("008.wav", {}));  // 2.3 s of audio
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 413) << a->body;
  EXPECT_NE(a->body.find("--max-audio-seconds"), std::string::npos) << a->body;
  Form big = {{"file", std::string(600 * 1024, 'x'), "b.wav", ""}};
  auto b = PostForm(srv.port(), big);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->status, 413);
  EXPECT_NE(b->body.find("--max-upload-mb"), std::string::npos) << b->body;
}

// --api-key: /v1/ routes want the bearer token, /health does not.
TEST(Server, ApiKey) {
  Server srv({"--api-key", "s3cret"});
  ASSERT_GT(srv.port(), 0);
  auto open = Get(srv.port(), "/health");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->status, 200);
  for (const char* header : {"", "Bearer wrong", "Bearer s3cre", "Bearer s3cretX", "s3cret"}) {
    testing::Headers h;
    if (*header) h.emplace_back("Authorization", header);
    auto r = PostForm(srv.port(), ClipForm("008.wav", {}), h);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << header;
    EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["type"], "authentication_error");
    auto m = Get(srv.port(), "/v1/models", h);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, 401) << header;
  }
  auto ok = PostForm(srv.port(), ClipForm("008.wav", {{"response_format", "text"}}),
                     {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

// Six clients at once, on two sessions of one lane, and on one session whose four lanes
// decode together: everyone gets the answer the clip gets alone.
class ServerConcurrency : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(ServerConcurrency, RequestsGetTheirOwnAnswers) {
  Server srv(GetParam());
  ASSERT_GT(srv.port(), 0);
  const std::vector<std::string> clips = {"000.wav", "001.wav", "002.wav",
                                          "003.wav", "004.wav", "005.wav"};
  std::vector<std::string> want, got(clips.size());
  for (const std::string& clip : clips) {
    Result<Transcript> t = Library(clip);
    ASSERT_TRUE(t.ok());
    want.push_back(FormatTranscript(*t, OutputFormat::kTxt));
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < clips.size(); ++i) {
    threads.emplace_back([&, i] {
      auto r = PostForm(srv.port(), ClipForm(clips[i], {{"response_format", "text"}}));
      if (r && r->status == 200) got[i] = r->body;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Lanes, ServerConcurrency,
                         ::testing::Values(std::vector<std::string>{"--sessions", "2",
                                                                    "--max-batch", "1"},
                                           std::vector<std::string>{"--max-batch", "4"}));

}  // namespace
}  // namespace tern
