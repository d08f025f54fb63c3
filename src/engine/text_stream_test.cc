#include "engine/text_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/segments.h"
#include "text/utf8.h"

namespace tern::engine {
namespace {

// Checked with the text module's decoder, not the rule under test: for valid UTF-8 input,
// a delta cut inside a character would not decode.
bool ValidUtf8(const std::string& d) {
  std::vector<uint32_t> cpts;
  size_t bad = 0;
  return text::DecodeUtf8(d, &cpts, &bad);
}

struct Collected {
  std::vector<std::string> deltas;
  std::string joined() const {
    std::string s;
    for (const auto& d : deltas) s += d;
    return s;
  }
};

TextStream::Sink Collect(Collected* c) {
  return [c](std::string_view d) {
    EXPECT_FALSE(d.empty());
    c->deltas.emplace_back(d);
    return true;
  };
}

// Feeds `text` in chunks cut at every position of `cuts` (byte offsets).
void Feed(TextStream& s, const std::string& text, const std::vector<size_t>& cuts) {
  size_t at = 0;
  for (size_t c : cuts) {
    ASSERT_TRUE(s.Append(text.substr(at, c - at)));
    at = c;
  }
  ASSERT_TRUE(s.Append(text.substr(at)));
}

TEST(TextStream, OnePieceJoinsToTheTrimmedTextAndEndsOnCharacters) {
  // "é" is C3 A9, "€" E2 82 AC, "𝄞" F0 9D 84 9E: cut inside each of them, and byte by byte.
  const std::string text = " caf\xC3\xA9 5\xE2\x82\xAC \xF0\x9D\x84\x9E ok\n";
  std::vector<std::vector<size_t>> cut_sets = {{}, {5}, {9, 10}, {13, 15, 16}};
  std::vector<size_t> every;
  for (size_t i = 1; i < text.size(); ++i) every.push_back(i);
  cut_sets.push_back(every);
  for (const auto& cuts : cut_sets) {
    Collected c;
    TextStream s(Collect(&c));
    Feed(s, text, cuts);
    ASSERT_TRUE(s.EndPiece());
    EXPECT_EQ(c.joined(), TrimText(text));
    for (const auto& d : c.deltas) EXPECT_TRUE(ValidUtf8(d)) << d;
  }
}

TEST(TextStream, UnfinishedAndInvalidBytesPassAtTheEnd) {
  Collected c;
  TextStream s(Collect(&c));
  ASSERT_TRUE(s.Append("ab\xE2\x82"));  // a character the model has not finished yet
  EXPECT_EQ(c.joined(), "ab");
  ASSERT_TRUE(s.EndPiece());  // ... nor ever will
  EXPECT_EQ(c.joined(), "ab\xE2\x82");
  ASSERT_TRUE(s.Append("\x80\x80 x"));  // stray continuation bytes pass as they are
  ASSERT_TRUE(s.EndPiece());
  EXPECT_EQ(c.joined(), "ab\xE2\x82 \x80\x80 x");
}

TEST(TextStream, PiecesAreTrimmedAndJoinedAsTheTranscriptIs) {
  // AppendPiece's rule: TrimText each piece, join the non-empty ones with one space.
  const std::vector<std::string> pieces = {"  Hello there. \n", " \t", "\nSecond  piece\t", "",
                                           "x\xC3\xA9  "};
  std::string want;
  for (const auto& p : pieces) {
    const std::string t = TrimText(p);
    if (!t.empty()) want += (want.empty() ? "" : " ") + t;
  }
  for (bool byte_by_byte : {false, true}) {
    Collected c;
    TextStream s(Collect(&c));
    for (const auto& p : pieces) {
      if (byte_by_byte) {
        for (char ch : p) ASSERT_TRUE(s.Append(std::string(1, ch)));
      } else {
        ASSERT_TRUE(s.Append(p));
      }
      ASSERT_TRUE(s.EndPiece());
    }
    EXPECT_EQ(c.joined(), want);
    for (const auto& d : c.deltas) EXPECT_TRUE(ValidUtf8(d));
  }
}

TEST(TextStream, TrailingBlanksWaitForTheTextAfterThem) {
  Collected c;
  TextStream s(Collect(&c));
  ASSERT_TRUE(s.Append("one "));
  EXPECT_EQ(c.joined(), "one");
  ASSERT_TRUE(s.Append(" two"));
  EXPECT_EQ(c.joined(), "one  two");
  ASSERT_TRUE(s.Append("  "));
  ASSERT_TRUE(s.EndPiece());
  EXPECT_EQ(c.joined(), "one  two");
}

TEST(TextStream, ASinkThatRefusesStopsTheStream) {
  int calls = 0;
  TextStream s([&calls](std::string_view) { return ++calls < 2; });
  EXPECT_TRUE(s.Append("a"));
  EXPECT_FALSE(s.Append("b"));
  EXPECT_TRUE(s.stopped());
  EXPECT_FALSE(s.Append("c"));
  EXPECT_FALSE(s.EndPiece());
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace tern::engine
