// Regressions found by fuzz/segments_fuzz.cc in the tolerant JSON segment parser.
#include "engine/segments.h"

#include <gtest/gtest.h>

namespace tern::engine {
namespace {

// Non-finite times ("nan", "inf", overflowing exponents) are "no time" (-1), never NaN/inf
// (output formats would print them); a speaker outside int range is no speaker (the
// float->int cast was undefined behaviour, caught by UBSan).
TEST(SegmentsRegression, NonFiniteNumbersAreAbsent) {
  std::vector<Segment> s;
  ASSERT_TRUE(ParseJsonSegments(R"([{"Start":1e999,"End":"nan","Speaker":11e999,"Content":"a"},)"
                                R"({"Start":"-inf","End":"1e400","Speaker":-3e9,"Content":"b"},)"
                                R"({"Start":"2.5","End":3e0,"Speaker":"7","Content":"c"}])",
                                &s));
  ASSERT_EQ(s.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(s[i].start, -1) << i;
    EXPECT_EQ(s[i].end, -1) << i;
    EXPECT_EQ(s[i].speaker, -1) << i;
  }
  EXPECT_EQ(s[0].text, "a");
  EXPECT_EQ(s[1].text, "b");
  EXPECT_EQ(s[2].start, 2.5);
  EXPECT_EQ(s[2].end, 3.0);
  EXPECT_EQ(s[2].speaker, 7);
}

// A high surrogate not followed by a low one becomes U+FFFD and whatever follows is read
// on its own: before the fix the next escape was swallowed ("\uD800\u0041" lost its 'A')
// and a bad hex digit could leave a stray UTF-8 continuation byte in the text.
TEST(SegmentsRegression, LoneHighSurrogateKeepsWhatFollows) {
  std::vector<Segment> s;
  ASSERT_TRUE(ParseJsonSegments(R"([{"Content":"x\uD800\u0041y"}])", &s));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text,
            "x\xEF\xBF\xBD"
            "Ay");

  ASSERT_TRUE(ParseJsonSegments("[{\"Content\":\"ok\\uD83D\\uDE00\"}]", &s));
  EXPECT_EQ(s[0].text, "ok\xF0\x9F\x98\x80");

  // "\u12" then 'é' (C3 A9): the pair's second escape is bad; the text stays valid UTF-8.
  ASSERT_TRUE(
      ParseJsonSegments("[{\"Content\":\"a\"},{\"Content\":\"\\uD800\\u12\xC3\xA9\"}]", &s));
  for (const Segment& seg : s) {
    for (unsigned char c : seg.text) EXPECT_NE(c, 0xA9) << "stray continuation byte";
  }
  // Cut off right after the high surrogate's second "\u": a truncated last item.
  ASSERT_TRUE(ParseJsonSegments(R"([{"Content":"a\uD800\u)", &s));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "a\xEF\xBF\xBD");
}

}  // namespace
}  // namespace tern::engine
