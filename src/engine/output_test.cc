// The JSON segment parser and the transcript writers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/segments.h"
#include "tern/tern.h"

namespace tern::engine {
namespace {

TEST(Segments, WellFormed) {
  std::vector<Segment> s;
  ASSERT_TRUE(ParseJsonSegments(
      R"([{"Start":0,"End":1.5,"Speaker":0,"Content":"Hello there."},)"
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
      " \"Extra\": {\"a\": [1, 2]}, \"Content\" : \"say \\\"hi\\\" \\u00e9\\ud83d\\ude00\\n\" } ]\n```",
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

}  // namespace
}  // namespace tern::engine
