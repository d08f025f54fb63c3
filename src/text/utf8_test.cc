#include "text/utf8.h"

#include <gtest/gtest.h>

#include <set>

#include "text/unicode.h"

namespace tern::text {
namespace {

TEST(Utf8, SequenceLengthAcceptsOnlyWellFormed) {
  EXPECT_EQ(ValidUtf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(ValidUtf8SequenceLength("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(ValidUtf8SequenceLength("\xE4\xB8\xAD", 0), 3u);      // 中
  EXPECT_EQ(ValidUtf8SequenceLength("\xF0\x9F\x99\x82", 0), 4u);  // 🙂
  EXPECT_EQ(ValidUtf8SequenceLength("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF
  EXPECT_EQ(ValidUtf8SequenceLength("\xC0\x80", 0), 0u);          // overlong NUL
  EXPECT_EQ(ValidUtf8SequenceLength("\xC1\xBF", 0), 0u);          // overlong
  EXPECT_EQ(ValidUtf8SequenceLength("\xE0\x80\x80", 0), 0u);      // overlong
  EXPECT_EQ(ValidUtf8SequenceLength("\xF0\x80\x80\x80", 0), 0u);  // overlong
  EXPECT_EQ(ValidUtf8SequenceLength("\xED\xA0\x80", 0), 0u);      // surrogate U+D800
  EXPECT_EQ(ValidUtf8SequenceLength("\xF4\x90\x80\x80", 0), 0u);  // U+110000
  EXPECT_EQ(ValidUtf8SequenceLength("\xE4\xB8", 0), 0u);          // cut off
  EXPECT_EQ(ValidUtf8SequenceLength("\x80", 0), 0u);              // stray continuation
  EXPECT_EQ(ValidUtf8SequenceLength("\xFF", 0), 0u);
}

TEST(Utf8, EncodeDecodeRoundTripsEveryScalarValue) {
  std::string all;
  std::vector<uint32_t> expect;
  for (uint32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    AppendUtf8(c, &all);
    expect.push_back(c);
  }
  std::vector<uint32_t> got;
  size_t bad = 99;
  ASSERT_TRUE(DecodeUtf8(all, &got, &bad));
  EXPECT_EQ(got, expect);
  EXPECT_FALSE(DecodeUtf8("ab\xC3", &got, &bad));
  EXPECT_EQ(bad, 2u);
}

TEST(Utf8, AssemblerHoldsIncompleteCharacters) {
  Utf8Assembler a;
  const std::string text = "h\xC3\xA9 \xE4\xB8\xAD\xF0\x9F\x99\x82!";  // "hé 中🙂!"
  std::string out;
  for (char c : text) {
    const std::string piece = a.Push(std::string_view(&c, 1));
    std::vector<uint32_t> cpts;
    EXPECT_TRUE(DecodeUtf8(piece, &cpts, nullptr)) << "partial character emitted";
    out += piece;
  }
  EXPECT_FALSE(a.has_pending());
  EXPECT_EQ(out + a.Flush(), text);
}

TEST(Utf8, AssemblerReplacesBadBytes) {
  Utf8Assembler a;
  EXPECT_EQ(a.Push("a\xFF"
                   "b"),
            "a\xEF\xBF\xBD"
            "b");
  // E2 82 is a valid prefix; 'A' breaks it: one U+FFFD for the two bytes, then 'A'.
  EXPECT_EQ(a.Push("\xE2\x82"), "");
  EXPECT_TRUE(a.has_pending());
  EXPECT_EQ(a.Push("A"),
            "\xEF\xBF\xBD"
            "A");
  EXPECT_EQ(a.Push("\xF0\x9F"), "");
  EXPECT_EQ(a.Flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(a.Flush(), "");
}

TEST(ByteMap, IsTheGpt2Bijection) {
  EXPECT_EQ(ByteToUnicode(' '), "\xC4\xA0");   // Ġ U+0120
  EXPECT_EQ(ByteToUnicode('\n'), "\xC4\x8A");  // Ċ U+010A
  EXPECT_EQ(ByteToUnicode('a'), "a");
  EXPECT_EQ(ByteToUnicode(0xAD), "\xC5\x83");  // the 68th stand-in, U+0143
  std::set<std::string> seen;
  for (int b = 0; b < 256; ++b) {
    const std::string& u = ByteToUnicode(static_cast<uint8_t>(b));
    std::vector<uint32_t> cpts;
    ASSERT_TRUE(DecodeUtf8(u, &cpts, nullptr));
    ASSERT_EQ(cpts.size(), 1u);
    EXPECT_EQ(UnicodeToByte(cpts[0]), b);
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(UnicodeToByte(0x20), -1);  // a raw space is not a stand-in
  EXPECT_EQ(UnicodeToByte(0x4E2D), -1);
}

TEST(CodepointClass, MatchesUnicodeCategories) {
  EXPECT_EQ(CodepointClass('a'), kCpLetter);
  EXPECT_EQ(CodepointClass(0x4E2D), kCpLetter);  // 中
  EXPECT_EQ(CodepointClass(0x00E9), kCpLetter);  // é
  EXPECT_EQ(CodepointClass('7'), kCpNumber);
  EXPECT_EQ(CodepointClass(0x0661), kCpNumber);  // Arabic-Indic one (Nd)
  EXPECT_EQ(CodepointClass(0x00BD), kCpNumber);  // ½ (No)
  EXPECT_EQ(CodepointClass(0x2167), kCpNumber);  // Roman numeral eight (Nl)
  EXPECT_EQ(CodepointClass(' '), kCpWhitespace);
  EXPECT_EQ(CodepointClass(0x3000), kCpWhitespace);
  EXPECT_EQ(CodepointClass(0x0085), kCpWhitespace);
  EXPECT_EQ(CodepointClass(0x200B), 0);  // zero-width space is not White_Space
  EXPECT_EQ(CodepointClass('!'), 0);
  EXPECT_EQ(CodepointClass(0x0301), 0);   // combining acute (Mn)
  EXPECT_EQ(CodepointClass(0x1F642), 0);  // 🙂 (So)
  EXPECT_EQ(CodepointClass(0x110000), 0);
}

}  // namespace
}  // namespace tern::text
