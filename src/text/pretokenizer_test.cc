#include "text/pretokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "text/unicode.h"

namespace tern::text {
namespace {

std::vector<std::string> Words(PreTokenizerType type, std::string_view text) {
  auto pre = PreTokenizer::Create(type);
  EXPECT_TRUE(pre.ok()) << pre.status().ToString();
  std::vector<std::string> out;
  auto words = pre->Split(text);
  EXPECT_TRUE(words.ok()) << words.status().ToString();
  if (words.ok())
    for (auto w : *words) out.emplace_back(w);
  return out;
}

using V = std::vector<std::string>;

TEST(PreTokenizer, Qwen2Splits) {
  const auto Q = PreTokenizerType::kQwen2;
  EXPECT_EQ(Words(Q, "Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(Words(Q, "I'm here, they'LL go"), (V{"I", "'m", " here", ",", " they", "'LL", " go"}));
  EXPECT_EQ(Words(Q, "11.00 s"), (V{"1", "1", ".", "0", "0", " s"}));
  EXPECT_EQ(Words(Q, "x\n\nPlease"), (V{"x", "\n\n", "Please"}));
  EXPECT_EQ(Words(Q, "a  b"), (V{"a", " ", " b"}));
  EXPECT_EQ(Words(Q, "end.  \n"), (V{"end", ".", "  \n"}));
  EXPECT_EQ(Words(Q, "(hi)!!\n\nx"), (V{"(hi", ")!!\n\n", "x"}));
  EXPECT_EQ(Words(Q, "\xE4\xB8\xAD\xE6\x96\x87 ok"), (V{"\xE4\xB8\xAD\xE6\x96\x87", " ok"}));
  EXPECT_EQ(Words(Q, ""), V{});
}

TEST(PreTokenizer, DefaultSplits) {
  const auto D = PreTokenizerType::kDefault;
  EXPECT_EQ(Words(D, "Hello world"), (V{"Hello", " world"}));
  // Step 1 cuts punctuation out first, so "'m" is no longer a contraction.
  EXPECT_EQ(Words(D, "I'm here"), (V{"I", "'", "m", " here"}));
  EXPECT_EQ(Words(D, "x\n\nPlease"), (V{"x", "\n", "\n", "Please"}));
  EXPECT_EQ(Words(D, "a\n\n"), (V{"a", "\n\n"}));  // a final run stays whole
  EXPECT_EQ(Words(D, "12345 678"), (V{"123", "45", " ", "678"}));
  EXPECT_EQ(Words(D, "11.00 s"), (V{"11", ".", "00", " s"}));
  EXPECT_EQ(Words(D, "a+b=c"), (V{"a", "+", "b", "=", "c"}));
  EXPECT_EQ(Words(D, "x `y`"), (V{"x", " `", "y", "`"}));  // backtick is \p{Sk}, not step 1
  EXPECT_EQ(Words(D, ""), V{});
}

TEST(PreTokenizer, UnknownNameIsAnError) {
  auto r = PreTokenizerFromName("llama3");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'llama3'"), std::string::npos);
  EXPECT_EQ(*PreTokenizerFromName("qwen2"), PreTokenizerType::kQwen2);
  EXPECT_EQ(*PreTokenizerFromName("default"), PreTokenizerType::kDefault);
}

// The hand-written GPT-2 splitter must agree with the GPT-2 regex run by PCRE2 (matches
// plus kept unmatched spans) on every fragment; random strings over an alphabet that
// exercises each branch, including fragment edges.
TEST(PreTokenizer, Gpt2SplitterEqualsRegex) {
  const std::string ws = WhitespaceClassBody();
  auto re = Regex::Compile("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + ws +
                           "\\p{L}\\p{N}]+|[" + ws + "]+(?![^" + ws + "])|[" + ws + "]+");
  ASSERT_TRUE(re.ok());
  const std::vector<std::string> alphabet = {" ",
                                             " ",
                                             "\n",
                                             "\t",
                                             "'",
                                             "s",
                                             "t",
                                             "r",
                                             "e",
                                             "l",
                                             "v",
                                             "A",
                                             "\xC3\xA9",
                                             "\xE4\xB8\xAD",
                                             "1",
                                             "\xD9\xA1",
                                             "!",
                                             ".",
                                             "\xE2\x80\x94",
                                             "\xF0\x9F\x99\x82",
                                             "\xC2\xA0",
                                             "\xE2\x80\xA8",
                                             "\xCC\x81",
                                             "$"};
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    const int len = 1 + static_cast<int>(rng() % 24);
    for (int i = 0; i < len; ++i) text += alphabet[rng() % alphabet.size()];
    // Cut into 1..3 fragments at character boundaries.
    std::vector<Span> frags;
    std::vector<size_t> cuts = {0};
    for (size_t p = 0; p < text.size();) {
      size_t n = 1;
      while (p + n < text.size() && (static_cast<uint8_t>(text[p + n]) & 0xC0) == 0x80) ++n;
      p += n;
      if (p < text.size() && rng() % 10 == 0) cuts.push_back(p);
    }
    cuts.push_back(text.size());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) frags.emplace_back(cuts[i], cuts[i + 1]);

    std::vector<Span> expect, matches;
    for (const Span& f : frags) {
      size_t cur = f.first;
      ASSERT_TRUE(
          re->FindAll(std::string_view(text).substr(f.first, f.second - f.first), &matches).ok());
      for (auto [b, e] : matches) {
        if (f.first + b > cur) expect.emplace_back(cur, f.first + b);
        expect.emplace_back(f.first + b, f.first + e);
        cur = f.first + e;
      }
      if (cur < f.second) expect.emplace_back(cur, f.second);
    }
    ASSERT_EQ(SplitGpt2(text, frags), expect) << "text: '" << text << "'";
  }
}

// Long runs must not hit a PCRE2 resource limit (backtracking in \s+(?!\S) and friends).
TEST(PreTokenizer, LongRunsSplitWithoutLimits) {
  const std::string spaces(200000, ' '), letters(200000, 'a'), digits(200000, '7');
  for (auto type : {PreTokenizerType::kQwen2, PreTokenizerType::kDefault}) {
    auto pre = PreTokenizer::Create(type);
    ASSERT_TRUE(pre.ok());
    const std::string text = spaces + "x " + letters + "\n\n" + digits + "!?" + spaces;
    auto w = pre->Split(text);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    size_t total = 0;
    for (auto s : *w) total += s.size();
    EXPECT_EQ(total, text.size());
    EXPECT_EQ((*w)[0].size(), 199999u);  // all but the last space, which joins "x"
    EXPECT_EQ((*w)[1], " x");
  }
}

}  // namespace
}  // namespace tern::text
