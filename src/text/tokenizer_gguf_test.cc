#include <gtest/gtest.h>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "text/tokenizer.h"

namespace tern::text {
namespace {

// Builds a GGUF image holding a tiny tokenizer and parses it back.
struct Image {
  std::string bytes;
  std::unique_ptr<gguf::File> file;
};

Image Make(const std::function<void(gguf::Writer&)>& edit) {
  gguf::Writer w;
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetStringArray("tokenizer.ggml.tokens",
                   {"a", "b", "ab", "\xC4\x8A", "\xC4\x8A\xC4\x8A", "<|c|>"});
  w.SetStringArray("tokenizer.ggml.merges", {"a b", "\xC4\x8A \xC4\x8A"});
  w.SetI32Array("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3});
  edit(w);
  Image img;
  img.bytes = w.Serialize();
  auto f = gguf::File::Parse(reinterpret_cast<const uint8_t*>(img.bytes.data()), img.bytes.size(),
                             "tok.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (f.ok()) img.file = std::move(*f);
  return img;
}

TEST(TokenizerGguf, ReadsTokensMergesTypesAndPre) {
  // Without tokenizer.ggml.pre the DEFAULT pre-tokenizer splits "\n\n" before a letter.
  Image plain = Make([](gguf::Writer&) {});
  auto t = Tokenizer::FromGguf(*plain.file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->pre(), PreTokenizerType::kDefault);
  EXPECT_EQ(*(*t)->Encode("ab\n\na"), (std::vector<int32_t>{2, 3, 3, 0}));
  EXPECT_EQ((*t)->Piece(5), "");  // control
  EXPECT_EQ((*t)->name(), "tok.gguf");

  Image qwen = Make([](gguf::Writer& w) { w.SetString("tokenizer.ggml.pre", "qwen2"); });
  auto q = Tokenizer::FromGguf(*qwen.file);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ((*q)->pre(), PreTokenizerType::kQwen2);
  EXPECT_EQ(*(*q)->Encode("ab\n\na"), (std::vector<int32_t>{2, 4, 0}));
}

TEST(TokenizerGguf, ErrorsNameTheFileAndKey) {
  Image pre = Make([](gguf::Writer& w) { w.SetString("tokenizer.ggml.pre", "llama-bpe"); });
  auto r = Tokenizer::FromGguf(*pre.file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tok.gguf"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'llama-bpe'"), std::string::npos) << r.status().message();

  Image model = Make([](gguf::Writer& w) { w.SetString("tokenizer.ggml.model", "llama"); });
  r = Tokenizer::FromGguf(*model.file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'llama'"), std::string::npos) << r.status().message();

  Image types = Make([](gguf::Writer& w) { w.SetI32Array("tokenizer.ggml.token_type", {1, 9}); });
  r = Tokenizer::FromGguf(*types.file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("token_type[1]"), std::string::npos) << r.status().message();

  Image count = Make([](gguf::Writer& w) { w.SetI32Array("tokenizer.ggml.token_type", {1, 1}); });
  EXPECT_FALSE(Tokenizer::FromGguf(*count.file).ok());

  gguf::Writer empty;
  const std::string bytes = empty.Serialize();
  auto f =
      gguf::File::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "e.gguf");
  ASSERT_TRUE(f.ok());
  r = Tokenizer::FromGguf(**f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tokenizer.ggml.model"), std::string::npos);
}

}  // namespace
}  // namespace tern::text
