#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include <thread>

#include "text/qwen2_vocab_for_test.h"
#include "text/special_tokens.h"
#include "text/unicode.h"

namespace tern::text {
namespace {

using Ids = std::vector<int32_t>;

const Tokenizer& Qwen(PreTokenizerType pre) {
  std::string error;
  const Tokenizer* t = testing::Qwen2Tokenizer(pre, &error);
  if (t == nullptr) {
    ADD_FAILURE() << error;
    std::abort();
  }
  return *t;
}

Ids Enc(const Tokenizer& t, std::string_view s) {
  auto r = t.Encode(s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Ids{};
}

// Spec 5.3: the exact ids of the prompt's text segments (identical for both pre-tokenizers).
TEST(QwenTokenizer, PromptSegmentsMatchSpec) {
  for (auto pre : {PreTokenizerType::kQwen2, PreTokenizerType::kDefault}) {
    const Tokenizer& t = Qwen(pre);
    EXPECT_EQ(t.vocab_size(), 151665u);
    EXPECT_EQ(Enc(t,
                  "system\nYou are a helpful assistant that transcribes audio input into text "
                  "output in JSON format."),
              (Ids{8948, 198, 2610, 525, 264, 10950, 17847, 429, 1356, 55136, 7699, 1946, 1119,
                   1467, 2550, 304, 4718, 3561, 13}));
    EXPECT_EQ(Enc(t, "\n"), (Ids{198}));
    EXPECT_EQ(Enc(t, "user\n"), (Ids{872, 198}));
    EXPECT_EQ(Enc(t, "\nThis is a 11.00 seconds audio, please transcribe it."),
              (Ids{198, 1986, 374, 264, 220, 16, 16, 13, 15, 15, 6486, 7699, 11, 4486, 1356, 3114,
                   432, 13}));
    EXPECT_EQ(
        Enc(t, " please transcribe it with these keys: Start, End, Speaker, Content"),
        (Ids{4486, 1356, 3114, 432, 448, 1493, 6894, 25, 5145, 11, 3972, 11, 29073, 11, 8883}));
    EXPECT_EQ(Enc(t, "assistant"), (Ids{77091}));
    EXPECT_EQ(Enc(t, ""), Ids{});
  }
}

struct Golden {
  const char* text;
  Ids qwen2, dflt;
};

// Derived with tests/data/text/qwen2_bpe_reference.py (an independent Python
// implementation: regexes over unicodedata classes, classic GPT-2 merge loop).
const std::vector<Golden>& Goldens() {
  static const std::vector<Golden> g = {
      {"Hello world", {9707, 1879}, {9707, 1879}},
      {"I'm here, they'LL go; don't.",
       {40, 2776, 1588, 11, 807, 6, 4086, 728, 26, 1513, 944, 13},
       {40, 6, 76, 1588, 11, 807, 6, 4086, 728, 26, 1513, 6, 83, 13}},
      {"12345 678.9",
       {16, 17, 18, 19, 20, 220, 21, 22, 23, 13, 24},
       {16, 17, 18, 19, 20, 220, 21, 22, 23, 13, 24}},
      {"\nThis is a 11.00 seconds audio, with extra info: Names: Zoë, Björn\n\nPlease transcribe "
       "it.",
       {198, 1986,  374, 264,   220,   16, 16,    13,   15, 15,  6486, 7699, 11,   448, 4960, 3546,
        25,  34875, 25,  44803, 12179, 11, 68741, 9416, 77, 271, 5501, 1356, 3114, 432, 13},
       {198, 1986,  374, 264,   220,   16, 16,    13,   15, 15,  6486, 7699, 11,   448,  4960, 3546,
        25,  34875, 25,  44803, 12179, 11, 68741, 9416, 77, 198, 198,  5501, 1356, 3114, 432,  13}},
      {"café naïve 中文 日本語 한국어",
       {924, 58858, 94880, 586, 72858, 16744, 75402, 21894, 102819, 130092, 31079},
       {924, 58858, 94880, 586, 72858, 16744, 75402, 21894, 102819, 130092, 31079}},
      {"emoji 🙂👍🏽 done",
       {37523, 27484, 144349, 145375, 2814},
       {37523, 27484, 144349, 145375, 2814}},
      {"tabs\tand  spaces   end  ",
       {30993, 52477, 220, 12621, 256, 835, 256},
       {30993, 197, 437, 220, 12621, 256, 835, 256}},
      {"(hi)!!\n\nx — “quoted” …",
       {3203, 72, 8, 24796, 87, 1959, 1036, 63725, 854, 4593},
       {7, 6023, 8, 2928, 198, 198, 87, 220, 2293, 220, 2073, 63725, 854, 220, 1940}},
      {"Ελληνικά и русский",
       {144674, 33486, 33486, 41424, 33269, 29762, 67337, 74134, 7587, 18108, 43055, 126302},
       {144674, 33486, 33486, 41424, 33269, 29762, 67337, 74134, 7587, 18108, 43055, 126302}},
      {"$5 + 3 = 8 ~ ^ | <tag> `code`",
       {3, 20, 488, 220, 18, 284, 220, 23, 3968, 6306, 760, 366, 4578, 29, 1565, 1851, 63},
       {3,   20, 220, 10, 220, 18, 220,  28, 220,  23,   220, 93,
        220, 61, 220, 91, 220, 27, 4578, 29, 1565, 1851, 63}},
      {"\n\n", {271}, {271}},
      {"x\n\nPlease", {87, 271, 5501}, {87, 198, 198, 5501}},
  };
  return g;
}

TEST(QwenTokenizer, GoldensBothPreTokenizers) {
  for (const Golden& g : Goldens()) {
    EXPECT_EQ(Enc(Qwen(PreTokenizerType::kQwen2), g.text), g.qwen2) << "qwen2: " << g.text;
    EXPECT_EQ(Enc(Qwen(PreTokenizerType::kDefault), g.text), g.dflt) << "default: " << g.text;
  }
}

TEST(QwenTokenizer, DecodeInvertsEncode) {
  const std::vector<std::string> texts = {"Hello, world!",
                                          "  leading and trailing  ",
                                          "\t\r\n mixed \n\n\n whitespace",
                                          "Zoë Björn façade — “quotes” … ½ ⅞",
                                          "中文，日本語、한국어。",
                                          "🙂👍🏽🏳️‍🌈 zwj",
                                          "a\xC2\xA0"
                                          "b\xE2\x80\xA8"
                                          "c",
                                          "don't WON'T y'all ''",
                                          "0123456789 ٠١٢٣ ١٢٣٤",
                                          "$100.00 + 5% = ?",
                                          "\x01\x02\x7F control",
                                          "e\xCC\x81 combining",
                                          "\xF4\x8F\xBF\xBF max"};
  for (auto pre : {PreTokenizerType::kQwen2, PreTokenizerType::kDefault}) {
    const Tokenizer& t = Qwen(pre);
    for (const auto& s : texts) {
      const Ids ids = Enc(t, s);
      EXPECT_EQ(t.Decode(ids), s);
      // Streaming gives the same text and never a partial character.
      StreamingDecoder dec(t);
      std::string streamed;
      for (int32_t id : ids) {
        const std::string piece = dec.Push(id);
        std::vector<uint32_t> cpts;
        EXPECT_TRUE(DecodeUtf8(piece, &cpts, nullptr));
        streamed += piece;
      }
      EXPECT_EQ(streamed + dec.Flush(), s);
    }
  }
}

TEST(QwenTokenizer, LongWordsEncode) {
  // One 100 000-letter word: the merge queue keeps this O(n log n).
  std::string word;
  for (int i = 0; i < 20000; ++i) word += "abcde";
  for (auto pre : {PreTokenizerType::kQwen2, PreTokenizerType::kDefault}) {
    const Tokenizer& t = Qwen(pre);
    const Ids ids = Enc(t, word);
    EXPECT_LT(ids.size(), word.size() / 2);
    EXPECT_EQ(t.Decode(ids), word);
  }
}

TEST(QwenTokenizer, SplitCharacterDecodesAcrossTokens) {
  const Tokenizer& t = Qwen(PreTokenizerType::kQwen2);
  // U+20000 has no single token: its 4 bytes span 3 tokens (golden from the reference).
  const Ids ids = Enc(t, "\xF0\xA0\x80\x80");
  ASSERT_EQ(ids, (Ids{172, 63219, 222}));
  StreamingDecoder dec(t);
  for (size_t i = 0; i + 1 < ids.size(); ++i) EXPECT_EQ(dec.Push(ids[i]), "");
  EXPECT_EQ(dec.Push(ids.back()), "\xF0\xA0\x80\x80");
  // Ending mid-character gives the replacement character, not raw bytes.
  StreamingDecoder cut(t);
  cut.Push(ids[0]);
  EXPECT_EQ(cut.Flush(), "\xEF\xBF\xBD");
}

TEST(QwenTokenizer, ControlTokensDecodeToNothing) {
  const Tokenizer& t = Qwen(PreTokenizerType::kQwen2);
  EXPECT_EQ(t.Find("<|im_start|>"), 151644);
  EXPECT_EQ(t.type(151644), TokenType::kControl);
  EXPECT_EQ(t.Piece(151644), "");
  EXPECT_EQ(t.PieceWithSpecial(151644), "<|im_start|>");
  EXPECT_EQ(t.Decode(Ids{151644, 77091, 198, 9707, 151645}), "assistant\nHello");
  EXPECT_EQ(t.Piece(-1), "");
  EXPECT_EQ(t.Piece(1 << 30), "");
  // Special-token text is ordinary text to Encode.
  const Ids ids = Enc(t, "<|im_end|>");
  EXPECT_GT(ids.size(), 1u);
  for (int32_t id : ids) EXPECT_NE(id, 151645);
}

TEST(QwenTokenizer, InvalidUtf8IsAnError) {
  auto r = Qwen(PreTokenizerType::kQwen2).Encode("ok \xC3(");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("offset 3"), std::string::npos) << r.status().message();
}

TEST(QwenTokenizer, ThreadSafeEncoding) {
  for (auto pre : {PreTokenizerType::kQwen2, PreTokenizerType::kDefault}) {
    const Tokenizer& t = Qwen(pre);
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int k = 0; k < 4; ++k) {
      threads.emplace_back([&, k] {
        for (int rep = 0; rep < 20; ++rep) {
          for (const Golden& g : Goldens()) {
            auto r = t.Encode(g.text);
            const Ids& want = pre == PreTokenizerType::kQwen2 ? g.qwen2 : g.dflt;
            if (!r.ok() || *r != want) ++failures[k];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int k = 0; k < 4; ++k) EXPECT_EQ(failures[k], 0) << "thread " << k;
  }
}

TEST(QwenTokenizer, SpecialTokensUseTheVibeAsrMapping) {
  auto s = FindSpecialTokens(Qwen(PreTokenizerType::kQwen2));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->endoftext, 151643);
  EXPECT_EQ(s->im_start, 151644);
  EXPECT_EQ(s->im_end, 151645);
  EXPECT_EQ(s->speech_start, 151646);
  EXPECT_EQ(s->speech_end, 151647);
  EXPECT_EQ(s->speech_pad, 151648);
  EXPECT_TRUE(s->qwen_mapping);
  EXPECT_TRUE(s->IsStop(151645));
  EXPECT_TRUE(s->IsStop(151643));
  EXPECT_FALSE(s->IsStop(151644));
}

// A tiny vocabulary: bytes of "abc " plus merges, to check merge order exactly.
std::unique_ptr<Tokenizer> Tiny(std::vector<std::string> extra_tokens = {},
                                std::vector<TokenType> extra_types = {}) {
  std::vector<std::string> tokens = {"a",
                                     "b",
                                     "c",
                                     "\xC4\xA0" /* Ġ */,
                                     "ab",
                                     "bc",
                                     "abc",
                                     "\xC4\xA0"
                                     "a"};
  std::vector<TokenType> types(tokens.size(), TokenType::kNormal);
  tokens.insert(tokens.end(), extra_tokens.begin(), extra_tokens.end());
  if (extra_types.empty()) extra_types.assign(extra_tokens.size(), TokenType::kNormal);
  types.insert(types.end(), extra_types.begin(), extra_types.end());
  // Rank 0: "b c" beats "a b", so "abc" -> a + bc, and "a bc" is not a merge: no "abc".
  auto t = Tokenizer::Create(tokens, {"b c", "a b", "ab c", "\xC4\xA0 a"}, types,
                             PreTokenizerType::kQwen2, "tiny");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(*t) : nullptr;
}

TEST(TinyTokenizer, MergesByRankThenLeftmost) {
  auto t = Tiny();
  EXPECT_EQ(Enc(*t, "abc"), (Ids{0, 5}));  // a + bc (rank 0 first)
  EXPECT_EQ(Enc(*t, "ab"), (Ids{4}));
  EXPECT_EQ(Enc(*t, "abab"), (Ids{4, 4}));
  EXPECT_EQ(Enc(*t, "bbb"), (Ids{1, 1, 1}));
  EXPECT_EQ(Enc(*t, "abc a"), (Ids{0, 5, 7}));  // " a" is one word, then merged
  EXPECT_EQ(Enc(*t, "bcbc"), (Ids{5, 5}));
}

TEST(TinyTokenizer, MissingSymbolIsAnError) {
  auto t = Tiny();
  auto r = t->Encode("abd");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tiny"), std::string::npos);
  EXPECT_NE(r.status().message().find("'d'"), std::string::npos) << r.status().message();
}

TEST(TinyTokenizer, BadInputsAreErrors) {
  EXPECT_FALSE(Tokenizer::Create({}, {}, {}, PreTokenizerType::kQwen2).ok());
  EXPECT_FALSE(Tokenizer::Create({"a"}, {}, {TokenType::kNormal, TokenType::kNormal},
                                 PreTokenizerType::kQwen2)
                   .ok());
  auto bad_merge = Tokenizer::Create({"a", "b"}, {"ab"}, {}, PreTokenizerType::kQwen2, "m.gguf");
  ASSERT_FALSE(bad_merge.ok());
  EXPECT_NE(bad_merge.status().message().find("merge 0"), std::string::npos);
}

TEST(TinyTokenizer, SpecialTokensByName) {
  auto t = Tiny({"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|speech_start|>",
                 "<|speech_end|>", "<|speech_pad|>", "<u>"},
                {TokenType::kControl, TokenType::kControl, TokenType::kControl, TokenType::kControl,
                 TokenType::kControl, TokenType::kControl, TokenType::kUserDefined});
  auto s = FindSpecialTokens(*t);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->endoftext, 8);
  EXPECT_EQ(s->im_start, 9);
  EXPECT_EQ(s->im_end, 10);
  EXPECT_EQ(s->speech_start, 11);
  EXPECT_EQ(s->speech_end, 12);
  EXPECT_EQ(s->speech_pad, 13);
  EXPECT_FALSE(s->qwen_mapping);
  EXPECT_EQ(t->Piece(11), "");
  EXPECT_EQ(t->Piece(14), "<u>");  // user-defined: verbatim
  EXPECT_EQ(t->Piece(3), " ");     // Ġ is a space
}

TEST(TinyTokenizer, MissingSpecialTokensAreNamed) {
  auto t = Tiny({"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|speech_pad|>"});
  auto s = FindSpecialTokens(*t);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("<|speech_start|>, <|speech_end|>"), std::string::npos)
      << s.status().message();
  EXPECT_EQ(s.status().message().find("<|im_end|>"), std::string::npos);
}

}  // namespace
}  // namespace tern::text
