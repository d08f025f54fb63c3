// The JSON segment parser and the transcript writers.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/segments.h"
#include "tern/tern.h"

namespace tern::engine {
namespace {

TEST(Segments, WellFormed) {
  std::vector<Segment> s;
  ASSERT_TRUE(ParseJsonSegments(R"([{"Start":0,"End":1.5,"Speaker":0,"Content":"Hello there."},)"
                                R"({"Start":1.5,"End":3.25,"Speaker":1,"Content":"Hi!"}])",
                                &s));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].start, 0.0);
  EXPECT_DOUBLE_EQ(s[0].end, 1.5);
  EXPECT_EQ(s[0].speaker, 0);
  EXPECT_EQ(s[0].text, "Hello there.");
  EXPECT_DOUBLE_EQ(s[1].end, 3.25);
  EXPECT_EQ(s[1].speaker, 1);
  EXPECT_EQ(s[1].text, "Hi!");
}

TEST(Segments, MessyWhitespaceEscapesAndKeys) {
  std::vector<Segment> s;
  ASSERT_TRUE(ParseJsonSegments(
      "```json\n[ {  \"Start time\" : \"0.5\" ,\n \"End time\":2 , \"Speaker ID\": 3 ,"
      " \"Extra\": {\"a\": [1, 2]}, \"Content\" : \"say \\\"hi\\\" \\u00e9\\ud83d\\ude00\\n\" } "
      "]\n```",
      &s));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].start, 0.5);
  EXPECT_DOUBLE_EQ(s[0].end, 2.0);
  EXPECT_EQ(s[0].speaker, 3);
  EXPECT_EQ(s[0].text, "say \"hi\" \xC3\xA9\xF0\x9F\x98\x80\n");
}

TEST(Segments, TruncatedLastItemKeepsWhatWasWritten) {
  std::vector<Segment> s;
  ASSERT_TRUE(ParseJsonSegments(
      R"([{"Start":0,"End":1,"Speaker":0,"Content":"one"},{"Start":1,"End":2,"Speaker":0,"Content":"tw)",
      &s));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].text, "tw");
  // Cut before any Content: the partial object is dropped.
  ASSERT_TRUE(ParseJsonSegments(R"([{"Start":0,"Content":"a"},{"Start":1,"End")", &s));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "a");
}

TEST(Segments, PlainTextIsNotJson) {
  std::vector<Segment> s;
  EXPECT_FALSE(ParseJsonSegments("Concord returned to its place.", &s));
  EXPECT_FALSE(ParseJsonSegments("[not json at all", &s));
  EXPECT_FALSE(ParseJsonSegments("", &s));
  EXPECT_FALSE(ParseJsonSegments("[]", &s));
}

Transcript Sample() {
  Transcript t;
  t.duration_s = 4.0;
  t.structured = true;
  t.text = "ignored";
  t.segments = {{0.0, 1.5, 0, " Hello there. "}, {1.5, 3661.25, 1, "Bye."}};
  t.prompt_token_ids = {1, 2, 3};
  t.token_ids = {4, 5};
  t.isa = "scalar";
  t.threads = 2;
  return t;
}

TEST(Writers, Srt) {
  EXPECT_EQ(FormatTranscript(Sample(), OutputFormat::kSrt),
            "1\n00:00:00,000 --> 00:00:01,500\n[Speaker 0] Hello there.\n\n"
            "2\n00:00:01,500 --> 01:01:01,250\n[Speaker 1] Bye.\n\n");
}

TEST(Writers, Vtt) {
  EXPECT_EQ(FormatTranscript(Sample(), OutputFormat::kVtt),
            "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n<v Speaker 0>Hello there.\n\n"
            "00:00:01.500 --> 01:01:01.250\n<v Speaker 1>Bye.\n\n");
}

// --max-cue-chars: long cues become several at word boundaries, a break after punctuation
// preferred once the piece is half full; the pieces tile the cue's time in proportion to
// their bytes; a word longer than the limit stays whole; short cues are untouched.
TEST(Writers, LongCuesSplitAtWordBoundaries) {
  Transcript t;
  t.duration_s = 20;
  t.structured = true;
  //            0         1         2         3         4         5         6
  //            0123456789012345678901234567890123456789012345678901234567890123
  const std::string text = "Good morning everyone, thanks for coming. Today we talk tunes.";
  t.segments = {{2.0, 8.4, 1, " " + text + " "}, {9.0, 10.0, 1, "Short."}};
  FormatOptions o;
  o.max_cue_chars = 30;
  ASSERT_TRUE(o.Validate().ok());
  const double per = 6.4 / static_cast<double>(text.size());  // seconds per byte
  auto ts = [](double s) {
    const long long ms = std::llround(s * 1000);
    char b[32];
    std::snprintf(b, sizeof b, "00:00:%02lld,%03lld", ms / 1000, ms % 1000);
    return std::string(b);
  };
  // "Good morning everyone," (22 bytes, a comma past half of 30) beats the fuller "Good
  // morning everyone, thanks" (29); then "thanks for coming." (18, a period past half)
  // beats "thanks for coming. Today we" (27); then the rest (20).
  const std::string want = "1\n00:00:02,000 --> " + ts(2.0 + 22 * per) +
                           "\n[Speaker 1] Good morning everyone,\n\n" + "2\n" + ts(2.0 + 22 * per) +
                           " --> " + ts(2.0 + 41 * per) + "\n[Speaker 1] thanks for coming.\n\n" +
                           "3\n" + ts(2.0 + 41 * per) +
                           " --> 00:00:08,400\n[Speaker 1] Today we talk tunes.\n\n" +
                           "4\n00:00:09,000 --> 00:00:10,000\n[Speaker 1] Short.\n\n";
  EXPECT_EQ(FormatTranscript(t, OutputFormat::kSrt, o), want);
  // the same cues in WebVTT; json keeps the model's segments
  const std::string vtt = FormatTranscript(t, OutputFormat::kVtt, o);
  EXPECT_NE(vtt.find("<v Speaker 1>thanks for coming.\n"), std::string::npos) << vtt;
  EXPECT_EQ(nlohmann::json::parse(FormatTranscript(t, OutputFormat::kJson, o))["segments"].size(),
            2u);
  // a word longer than the limit stays whole; off (0) leaves the cue alone
  t.segments = {{0.0, 3.0, -1, "a Pneumonoultramicroscopicsilicovolcanoconiosis b"}};
  o.max_cue_chars = 8;
  EXPECT_EQ(FormatTranscript(t, OutputFormat::kSrt, o),  // 49 bytes in 3 s: ends at 1 and 47
            "1\n00:00:00,000 --> 00:00:00,061\na\n\n"
            "2\n00:00:00,061 --> 00:00:02,878\nPneumonoultramicroscopicsilicovolcanoconiosis\n\n"
            "3\n00:00:02,878 --> 00:00:03,000\nb\n\n");
  EXPECT_EQ(FormatTranscript(t, OutputFormat::kSrt), FormatTranscript(t, OutputFormat::kSrt, {}));
  o.max_cue_chars = 7;
  EXPECT_FALSE(o.Validate().ok());
  o.max_cue_chars = -1;
  EXPECT_FALSE(o.Validate().ok());
}

TEST(Writers, PlainTranscriptSpansTheClip) {
  Transcript t;
  t.duration_s = 2.5;
  t.text = " Concord returned. ";
  t.segments = {{-1, -1, -1, t.text}};
  EXPECT_EQ(FormatTranscript(t, OutputFormat::kTxt), "Concord returned.\n");
  EXPECT_EQ(FormatTranscript(t, OutputFormat::kSrt),
            "1\n00:00:00,000 --> 00:00:02,500\nConcord returned.\n\n");
}

TEST(Writers, JsonAndVerboseJson) {
  auto j = nlohmann::json::parse(FormatTranscript(Sample(), OutputFormat::kJson));
  ASSERT_EQ(j["segments"].size(), 2u);
  EXPECT_EQ(j["segments"][0]["text"], "Hello there.");
  EXPECT_EQ(j["segments"][1]["speaker"], 1);
  auto v = nlohmann::json::parse(FormatTranscript(Sample(), OutputFormat::kVerboseJson));
  EXPECT_EQ(v["prompt_token_ids"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(v["token_ids"], nlohmann::json({4, 5}));
  EXPECT_EQ(v["isa"], "scalar");
  EXPECT_EQ(v["threads"], 2);
  EXPECT_TRUE(v["timings_ms"].contains("decode_per_token"));
}

TEST(Writers, FormatNames) {
  EXPECT_EQ(*OutputFormatFromName("srt"), OutputFormat::kSrt);
  EXPECT_EQ(*OutputFormatFromName("verbose_json"), OutputFormat::kVerboseJson);
  Result<OutputFormat> bad = OutputFormatFromName("docx");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("docx"), std::string::npos);
}

// Every format its own extension (one input's files side by side in one directory), and
// the "file" field only in the JSON writers and only when asked.
TEST(Writers, ExtensionsAreDistinctAndJsonCanNameTheFile) {
  std::set<std::string> seen;
  for (OutputFormat f : {OutputFormat::kTxt, OutputFormat::kJson, OutputFormat::kVerboseJson,
                         OutputFormat::kSrt, OutputFormat::kVtt}) {
    EXPECT_TRUE(seen.insert(OutputFormatExtension(f)).second) << OutputFormatExtension(f);
  }
  EXPECT_STREQ(OutputFormatExtension(OutputFormat::kVerboseJson), ".verbose.json");
  FormatOptions named;
  named.file_name = "a/b.wav";
  for (OutputFormat f : {OutputFormat::kJson, OutputFormat::kVerboseJson}) {
    EXPECT_EQ(nlohmann::json::parse(FormatTranscript(Sample(), f, named))["file"], "a/b.wav");
    EXPECT_FALSE(nlohmann::json::parse(FormatTranscript(Sample(), f)).contains("file"));
  }
  EXPECT_EQ(FormatTranscript(Sample(), OutputFormat::kTxt, named),
            FormatTranscript(Sample(), OutputFormat::kTxt));
}

// One parser for --head in every tool (transcribe, bench e2e, server).
TEST(Options, HeadPrecisionNames) {
  EXPECT_EQ(*HeadPrecisionFromName("f16"), HeadPrecision::kF16);
  EXPECT_EQ(*HeadPrecisionFromName("int8"), HeadPrecision::kInt8);
  for (const char* name : {"", "INT8", "q8", "f16 "}) {
    Result<HeadPrecision> bad = HeadPrecisionFromName(name);
    ASSERT_FALSE(bad.ok()) << "'" << name << "'";
    EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(
        bad.status().message().find("--head must be f16 or int8, not '" + std::string(name) + "'"),
        std::string::npos)
        << bad.status().message();
  }
}

}  // namespace
}  // namespace tern::engine
