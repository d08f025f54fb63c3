#include "engine/prompt.h"

#include <gtest/gtest.h>

#include "text/qwen2_vocab_for_test.h"

namespace tern::engine {
namespace {

using Ids = std::vector<int32_t>;
using text::PreTokenizerType;

struct Vocab {
  const text::Tokenizer* tok;
  text::SpecialTokens special;
};

Vocab Qwen(PreTokenizerType pre = PreTokenizerType::kDefault) {
  std::string error;
  const text::Tokenizer* t = text::testing::Qwen2Tokenizer(pre, &error);
  if (t == nullptr) {
    ADD_FAILURE() << error;
    std::abort();
  }
  auto s = text::FindSpecialTokens(*t);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return {t, *s};
}

const Ids kSystemIds = {8948, 198,  2610, 525,  264,  10950, 17847, 429,  1356, 55136,
                        7699, 1946, 1119, 1467, 2550, 304,   4718,  3561, 13};
const Ids kPrefix11s = {198, 1986, 374, 264, 220, 16, 16, 13, 15, 15, 6486, 7699, 11};

Ids Head() {
  Ids ids = {151644};
  ids.insert(ids.end(), kSystemIds.begin(), kSystemIds.end());
  ids.insert(ids.end(), {151645, 198, 151644, 872, 198, 151646});
  return ids;
}

Ids Full(int n_pads, const Ids& suffix) {
  Ids ids = Head();
  ids.insert(ids.end(), static_cast<size_t>(n_pads), 151648);
  ids.push_back(151647);
  ids.insert(ids.end(), suffix.begin(), suffix.end());
  ids.insert(ids.end(), {151645, 198});
  return ids;
}

// The JFK clip: 11.00 s = 264000 samples -> 130 tokens, N = 83 pads at P = 26, 82 frames.
TEST(Prompt, JfkTextPromptIsExact) {
  for (auto pre : {PreTokenizerType::kDefault, PreTokenizerType::kQwen2}) {
    const Vocab v = Qwen(pre);
    auto p = BuildPrompt(*v.tok, v.special, 264000, PromptFormat::kText, "");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    Ids suffix = kPrefix11s;
    suffix.insert(suffix.end(), {4486, 1356, 3114, 432, 13});
    EXPECT_EQ(p->tokens, Full(83, suffix));
    EXPECT_EQ(p->tokens.size(), 130u);
    EXPECT_EQ(p->pad_start, 26);
    EXPECT_EQ(p->pad_count, 83);
    EXPECT_EQ(p->n_frames, 82);
    EXPECT_EQ(p->duration, "11.00");
  }
}

TEST(Prompt, JfkJsonPromptIsExact) {
  const Vocab v = Qwen();
  auto p = BuildPrompt(*v.tok, v.special, 264000, PromptFormat::kJson, "");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Ids suffix = kPrefix11s;
  suffix.insert(suffix.end(),
                {4486, 1356, 3114, 432, 448, 1493, 6894, 25, 5145, 11, 3972, 11, 29073, 11, 8883});
  EXPECT_EQ(p->tokens, Full(83, suffix));
  EXPECT_EQ(p->tokens.size(), 140u);  // spec: 55 + N + k, k = 2 integer digits
}

TEST(Prompt, ContextDependsOnThePreTokenizer) {
  const std::string ctx = "Names: Zo\xC3\xAB, Bj\xC3\xB6rn";
  const Ids ctx_ids = {448, 4960, 3546, 25, 34875, 25, 44803, 12179, 11, 68741, 9416, 77};
  for (auto pre : {PreTokenizerType::kDefault, PreTokenizerType::kQwen2}) {
    const Vocab v = Qwen(pre);
    auto p = BuildPrompt(*v.tok, v.special, 264000, PromptFormat::kText, ctx);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    Ids suffix = kPrefix11s;
    suffix.insert(suffix.end(), ctx_ids.begin(), ctx_ids.end());
    if (pre == PreTokenizerType::kQwen2) {
      suffix.push_back(271);  // "\n\n" is one word
    } else {
      suffix.insert(suffix.end(), {198, 198});
    }
    suffix.insert(suffix.end(), {5501, 1356, 3114, 432, 13});  // "Please transcribe it."
    EXPECT_EQ(p->tokens, Full(83, suffix)) << text::PreTokenizerName(pre);

    auto j = BuildPrompt(*v.tok, v.special, 264000, PromptFormat::kJson, ctx);
    ASSERT_TRUE(j.ok());
    suffix.resize(suffix.size() - 1);  // no final period; the key list instead
    suffix.insert(suffix.end(), {448, 1493, 6894, 25, 5145, 11, 3972, 11, 29073, 11, 8883});
    EXPECT_EQ(j->tokens, Full(83, suffix)) << text::PreTokenizerName(pre);
  }
}

TEST(Prompt, PadAndFrameCounts) {
  struct Case {
    int64_t n, pads, frames;
  };
  for (const Case& c : std::vector<Case>{{1, 1, 1},
                                         {3199, 1, 1},
                                         {3200, 1, 1},
                                         {3201, 2, 1},
                                         {6399, 2, 1},
                                         {6400, 2, 2},
                                         {264000, 83, 82},
                                         {24000LL * 3600, 27000, 27000}}) {
    EXPECT_EQ(PadCount(c.n), c.pads) << c.n;
    EXPECT_EQ(FrameCount(c.n), c.frames) << c.n;
  }
  // Length formula of spec 5.3: 45 + N + k tokens in text mode.
  const Vocab v = Qwen();
  for (int64_t n : {1LL, 3201LL, 240120LL, 24000LL * 123 + 7}) {
    auto p = BuildPrompt(*v.tok, v.special, n, PromptFormat::kText, "");
    ASSERT_TRUE(p.ok());
    const size_t k = p->duration.find('.');
    EXPECT_EQ(p->tokens.size(), 45 + static_cast<size_t>(PadCount(n)) + k) << n;
    EXPECT_EQ(p->pad_start, 26);
    for (int i = 0; i < p->pad_count; ++i) EXPECT_EQ(p->tokens[26 + i], 151648);
    EXPECT_EQ(p->tokens[26 + p->pad_count], 151647);
  }
}

TEST(Prompt, DurationUsesFloatDivision) {
  const Vocab v = Qwen();
  // 1080/24000 is 0.045: float gives 0.0450000018 -> "0.05"; double would print "0.04".
  auto p = BuildPrompt(*v.tok, v.special, 1080, PromptFormat::kText, "");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->duration, "0.05");
  p = BuildPrompt(*v.tok, v.special, 120, PromptFormat::kText, "");
  EXPECT_EQ(p->duration, "0.00");  // double: "0.01"
  p = BuildPrompt(*v.tok, v.special, 240120, PromptFormat::kText, "");
  EXPECT_EQ(p->duration, "10.01");
}

TEST(Prompt, Errors) {
  const Vocab v = Qwen();
  EXPECT_FALSE(BuildPrompt(*v.tok, v.special, 0, PromptFormat::kText, "").ok());
  auto bad = BuildPrompt(*v.tok, v.special, 100, PromptFormat::kText, "bad \xFF utf8");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("UTF-8"), std::string::npos);
}

TEST(Prompt, StripAssistantHeader) {
  const Vocab v = Qwen();
  struct Case {
    Ids gen;
    size_t begin, end;
  };
  for (const Case& c :
       std::vector<Case>{{{151644, 77091, 198, 9707, 151645}, 3, 4},
                         {{151644, 77091, 198, 9707}, 3, 4},
                         {{151644, 77091, 9707, 151643}, 2, 3},  // no "\n": only 2 skipped
                         {{151644, 9707, 198, 151645}, 1, 3},    // no "assistant": "\n" kept
                         {{151644, 77091, 198}, 3, 3},
                         {{151644, 77091, 151645}, 2, 2},
                         {{151644, 77091}, 0, 2},  // fewer than 3: nothing stripped
                         {{9707, 151645}, 0, 1},
                         {{151645}, 0, 0},
                         {{}, 0, 0}}) {
    const ContentRange r = StripAssistantHeader(*v.tok, v.special, c.gen);
    EXPECT_EQ(r.begin, c.begin) << ::testing::PrintToString(c.gen);
    EXPECT_EQ(r.end, c.end) << ::testing::PrintToString(c.gen);
  }
}

}  // namespace
}  // namespace tern::engine
