#include "engine/hotwords.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tern/tern.h"
#include "text/qwen2_vocab_for_test.h"

namespace tern::engine {
namespace {

using Seqs = std::vector<std::vector<int32_t>>;

// Which entries Apply raised, and by how much, on zero logits.
std::vector<float> Boosted(const HotwordBias& b, std::vector<int32_t> content, int64_t vocab = 16) {
  std::vector<float> logits(static_cast<size_t>(vocab), 0.0f);
  std::vector<std::pair<int32_t, float>> saved;
  b.Apply(content, logits.data(), vocab, &saved);
  return logits;
}

TEST(Hotwords, BoostsBeginningsAndTheLongestContinuation) {
  // anywhere: 5 6 7 and 9; start-only: 11 12
  const HotwordBias b(Seqs{{5, 6, 7}, {9}, {}, {5, 6, 7}}, Seqs{{11, 12}}, {14}, 2.5f);
  EXPECT_EQ(b.anywhere().size(), 2u);  // empty and duplicate dropped
  std::vector<float> want(16, 0.0f);
  want[5] = want[9] = want[11] = 2.5f;  // reply empty: every beginning, start ones included
  EXPECT_EQ(Boosted(b, {}), want);
  want[11] = 0;
  EXPECT_EQ(Boosted(b, {1, 2}), want);  // no match: anywhere beginnings only
  want[6] = 2.5f;
  EXPECT_EQ(Boosted(b, {1, 5}), want);  // "5" matched: its continuation too
  want[6] = 0;
  want[7] = 2.5f;
  EXPECT_EQ(Boosted(b, {5, 6}), want);  // the longest match wins: 7, not 6
  want[7] = 0;
  want[5] = 0;
  EXPECT_EQ(Boosted(b, {5, 6, 7}), want);  // just completed: not begun again at once
  want[5] = 2.5f;
  want[9] = 0;
  EXPECT_EQ(Boosted(b, {9}), want);  // the same for a one-token word
  // a start sequence continues after its first token even though it only begins at 0
  std::vector<float> after_start(16, 0.0f);
  after_start[5] = after_start[9] = after_start[12] = 2.5f;
  EXPECT_EQ(Boosted(b, {11}), after_start);
  // after an opener (a token ending in a quote: JSON's "Content":") a text starts again
  std::vector<float> after_opener(16, 0.0f);
  after_opener[5] = after_opener[9] = after_opener[11] = 2.5f;
  EXPECT_EQ(Boosted(b, {1, 2, 14}), after_opener);
}

TEST(Hotwords, OncePerTokenAndRestoredExactly) {
  // 3 begins two sequences and continues a third: still one boost.
  const HotwordBias b(Seqs{{3, 4}, {3, 8}, {2, 3}}, Seqs{}, {}, 1.0f);
  std::vector<float> logits = {0.1f, -7.3f, 0.7f, 1e-8f, 2.2f, 0, 0, 0, 0.3f};
  const std::vector<float> model = logits;
  std::vector<std::pair<int32_t, float>> saved;
  const std::vector<int32_t> content = {2};
  b.Apply(content, logits.data(), 9, &saved);
  EXPECT_EQ(saved.size(), 2u);  // 2 (a beginning) and 3
  EXPECT_EQ(logits[3], 1e-8f + 1.0f);
  EXPECT_EQ(logits[2], 0.7f + 1.0f);
  RestoreLogits(saved, logits.data());
  EXPECT_EQ(logits, model);  // bit for bit, not by subtraction
  // ids outside the vocabulary are ignored, not written
  const HotwordBias wide(Seqs{{40}}, Seqs{}, {}, 1.0f);
  saved.clear();
  wide.Apply(content, logits.data(), 9, &saved);
  EXPECT_TRUE(saved.empty());
}

TEST(Hotwords, SpellingsWithTheRealVocabulary) {
  std::string error;
  const std::unique_ptr<text::Tokenizer> tok =
      text::testing::LoadQwen2Tokenizer(text::PreTokenizerType::kQwen2, &error);
  ASSERT_TRUE(tok) << error;
  Result<HotwordBias> b = HotwordBias::FromWords(*tok, {"Xochimilco", " ticket\t", ""}, 2.0f);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  auto enc = [&](const std::string& s) { return *tok->Encode(s); };
  EXPECT_EQ(b->anywhere(), (Seqs{enc(" Xochimilco"), enc(" ticket")}));
  // sentence starts: as given and capitalized (one spelling when they are the same)
  EXPECT_EQ(b->start(), (Seqs{enc("Xochimilco"), enc("ticket"), enc("Ticket")}));
  EXPECT_GT(enc(" Xochimilco").size(), 1u);  // the continuation logic is exercised for real
  // a JSON answer's segment text starts after "Content":" : the unspaced spelling begins there
  const std::vector<int32_t> json = enc("[{\"Start\":0,\"Speaker\":0,\"Content\":\"");
  const int64_t vocab = static_cast<int64_t>(tok->vocab_size());
  std::vector<float> logits(static_cast<size_t>(vocab), 0.0f);
  std::vector<std::pair<int32_t, float>> saved;
  b->Apply(json, logits.data(), vocab, &saved);
  EXPECT_EQ(logits[static_cast<size_t>(enc("Xochimilco")[0])], 2.0f);
  EXPECT_EQ(logits[static_cast<size_t>(enc("Ticket")[0])], 2.0f);
  saved.clear();
  std::fill(logits.begin(), logits.end(), 0.0f);
  b->Apply(enc("[{\"Start\":0"), logits.data(), vocab, &saved);  // not after a number
  EXPECT_EQ(logits[static_cast<size_t>(enc("Ticket")[0])], 0.0f);
  EXPECT_FALSE(HotwordBias::FromWords(*tok, {"bad\xff"}, 2.0f).ok());
}

TEST(Hotwords, SplitHotwords) {
  Result<std::vector<std::string>> w = tern::SplitHotwords(" ticket ,bedroom,New York ");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, (std::vector<std::string>{"ticket", "bedroom", "New York"}));
  EXPECT_EQ(*tern::SplitHotwords("one"), std::vector<std::string>{"one"});
  for (const char* bad : {"", "a,,b", "a, ,b", "a,", ",a"}) {
    Result<std::vector<std::string>> r = tern::SplitHotwords(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), std::string("an empty word in '") + bad + "'");
  }
}

TEST(Hotwords, OptionsAreValidated) {
  tern::DecodingOptions d;
  d.hotwords = {"fine"};
  EXPECT_TRUE(d.Validate().ok());
  d.hotword_boost = 21;
  EXPECT_NE(d.Validate().message().find("hotword boost"), std::string::npos);
  d.hotword_boost = -1;
  EXPECT_FALSE(d.Validate().ok());
  d.hotword_boost = 2;
  d.hotwords = {" "};
  EXPECT_NE(d.Validate().message().find("empty"), std::string::npos);
  d.hotwords = {std::string(101, 'a')};
  EXPECT_NE(d.Validate().message().find("101 bytes"), std::string::npos);
  d.hotwords.assign(1001, "w");
  EXPECT_NE(d.Validate().message().find("1001 hotwords"), std::string::npos);
}

}  // namespace
}  // namespace tern::engine
