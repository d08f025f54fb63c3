// Tokenizer::FromGguf: kept apart from tokenizer.cc so that users of the tokenizer that
// never read a GGUF (tests) do not pull in the GGUF reader.
#include "gguf/gguf.h"
#include "text/tokenizer.h"

namespace tern::text {

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const gguf::File& file) {
  const std::string& path = file.path();
  auto model = file.GetString("tokenizer.ggml.model");
  if (!model.ok()) return model.status();
  if (*model != "gpt2") {
    return UnsupportedError(
        "%s: tokenizer.ggml.model is '%s'; only byte-level BPE ('gpt2') "
        "is supported",
        path.c_str(), model->c_str());
  }
  auto tokens = file.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return tokens.status();
  auto merges = file.GetStringArray("tokenizer.ggml.merges");
  if (!merges.ok()) return merges.status();

  std::vector<TokenType> types;
  if (file.Find("tokenizer.ggml.token_type") != nullptr) {
    auto raw = file.GetIntArray("tokenizer.ggml.token_type");
    if (!raw.ok()) return raw.status();
    types.reserve(raw->size());
    for (size_t i = 0; i < raw->size(); ++i) {
      const int64_t v = (*raw)[i];
      if (v < 0 || v > static_cast<int64_t>(TokenType::kByte)) {
        return FormatError("%s: tokenizer.ggml.token_type[%zu] = %lld is not a token type",
                           path.c_str(), i, static_cast<long long>(v));
      }
      types.push_back(static_cast<TokenType>(v));
    }
  }

  // llama.cpp falls back to its DEFAULT pre-tokenizer when the key is absent; so do we.
  PreTokenizerType pre = PreTokenizerType::kDefault;
  if (file.Find("tokenizer.ggml.pre") != nullptr) {
    auto name = file.GetString("tokenizer.ggml.pre");
    if (!name.ok()) return name.status();
    auto p = PreTokenizerFromName(*name);
    if (!p.ok()) return p.status().WithPrefix(path);
    pre = *p;
  }
  return Tokenizer::Create(std::move(*tokens), *merges, std::move(types), pre, path);
}

}  // namespace tern::text
