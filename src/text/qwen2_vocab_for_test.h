// Test helper: the real Qwen2 tokenizer built from HF files (vocab.json, merges.txt,
// tokenizer_config.json's added tokens as control tokens), loaded once per process.
// Returns nullptr when the files are not there (the caller fails the test loudly).
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "text/tokenizer.h"

namespace tern::text::testing {

inline std::unique_ptr<Tokenizer> LoadQwen2Tokenizer(PreTokenizerType pre, std::string* error) {
  const std::string dir = TERN_QWEN2_TOKENIZER_DIR;
  std::ifstream vf(dir + "/vocab.json"), mf(dir + "/merges.txt"),
      cf(dir + "/tokenizer_config.json");
  if (!vf || !mf || !cf) {
    *error = "cannot read the Qwen2 tokenizer files in " + dir;
    return nullptr;
  }
  const nlohmann::json vocab = nlohmann::json::parse(vf);
  const nlohmann::json config = nlohmann::json::parse(cf);
  std::vector<std::string> tokens;
  std::vector<TokenType> types;
  auto put = [&](size_t id, const std::string& text, TokenType type) {
    if (tokens.size() <= id) {
      tokens.resize(id + 1);
      types.resize(id + 1, TokenType::kUnused);
    }
    tokens[id] = text;
    types[id] = type;
  };
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    put(it.value().get<size_t>(), it.key(), TokenType::kNormal);
  }
  for (auto it = config["added_tokens_decoder"].begin(); it != config["added_tokens_decoder"].end();
       ++it) {
    put(std::stoul(it.key()), it.value()["content"].get<std::string>(),
        it.value()["special"].get<bool>() ? TokenType::kControl : TokenType::kUserDefined);
  }
  std::vector<std::string> merges;
  std::string line;
  while (std::getline(mf, line)) {
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    merges.push_back(line);
  }
  auto t = Tokenizer::Create(std::move(tokens), merges, std::move(types), pre, dir);
  if (!t.ok()) {
    *error = t.status().ToString();
    return nullptr;
  }
  return std::move(*t);
}

// One shared instance per pre-tokenizer type, loaded on first use.
inline const Tokenizer* Qwen2Tokenizer(PreTokenizerType pre, std::string* error) {
  struct Loaded {
    std::string error;
    std::unique_ptr<Tokenizer> tok;
    explicit Loaded(PreTokenizerType p) : tok(LoadQwen2Tokenizer(p, &error)) {}
  };
  if (pre == PreTokenizerType::kQwen2) {
    static const Loaded q(PreTokenizerType::kQwen2);
    *error = q.error;
    return q.tok.get();
  }
  static const Loaded d(PreTokenizerType::kDefault);
  *error = d.error;
  return d.tok.get();
}

}  // namespace tern::text::testing
