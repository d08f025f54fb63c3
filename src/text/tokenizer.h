// Byte-level BPE tokenizer (GPT-2 / Qwen2 family) as stored in a GGUF:
//   tokenizer.ggml.model       "gpt2" (the only model supported)
//   tokenizer.ggml.tokens      string[n_vocab]  token text in the byte<->unicode alphabet
//                              (unicode.h), e.g. "Ġthe" is " the"
//   tokenizer.ggml.merges      string[]  "left right", rank = index (lower merges first)
//   tokenizer.ggml.token_type  i32[n_vocab] 1 normal, 2 unknown, 3 control,
//                              4 user-defined, 5 unused, 6 byte (optional: all normal)
//   tokenizer.ggml.pre         pre-tokenizer name (optional; absent = "default", as in
//                              llama.cpp; see pretokenizer.h)
//
// Encode: pre-tokenize, map each word's bytes to their stand-in code points, then merge
// adjacent symbols by lowest merge rank (ties: leftmost first) until no pair has a rank;
// each final symbol must be a token. Special/control tokens are never produced from text
// (no "<|im_start|>" parsing): callers insert their ids directly.
// Decode (llama.cpp's token_to_piece with special=false): normal and byte tokens map their
// code points back to bytes; user-defined tokens are copied verbatim; control, unknown and
// unused tokens produce nothing. Pieces are bytes: a character can span tokens.
//
// Immutable after construction; every method is const and safe to call from many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "text/pretokenizer.h"
#include "text/utf8.h"

namespace tern::gguf {
class File;
}

namespace tern::text {

enum class TokenType : uint8_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

class Tokenizer {
 public:
  // `types` may be empty (every token normal) or have one entry per token. `name` is used
  // in error messages (a file path). Duplicate token texts: the lowest id wins for lookup.
  static Result<std::unique_ptr<Tokenizer>> Create(std::vector<std::string> tokens,
                                                   const std::vector<std::string>& merges,
                                                   std::vector<TokenType> types,
                                                   PreTokenizerType pre,
                                                   const std::string& name = "tokenizer");
  // Reads the keys listed above from a GGUF file.
  static Result<std::unique_ptr<Tokenizer>> FromGguf(const gguf::File& file);

  // Encodes valid UTF-8 text (invalid UTF-8 is an InvalidArgument error naming the byte
  // offset). Empty text gives no tokens.
  Result<std::vector<int32_t>> Encode(std::string_view text) const;

  // Bytes of one token as decoded with special=false (empty for control tokens).
  std::string_view Piece(int32_t id) const;
  // As llama.cpp renders with special=true: control tokens give their text.
  std::string_view PieceWithSpecial(int32_t id) const;
  // Concatenated pieces, raw bytes (possibly invalid UTF-8 if the ids end mid-character).
  std::string Decode(std::span<const int32_t> ids) const;

  // Id of the token whose stored text is exactly `text`, or -1.
  int32_t Find(std::string_view text) const;
  size_t vocab_size() const { return tokens_.size(); }
  bool valid_id(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < tokens_.size(); }
  const std::string& token_text(int32_t id) const { return tokens_[id]; }
  TokenType type(int32_t id) const { return types_[id]; }
  PreTokenizerType pre() const { return pre_.type(); }
  const std::string& name() const { return name_; }

 private:
  Tokenizer() = default;
  Status EncodeWord(std::string_view word, std::vector<int32_t>* out) const;

  std::string name_;
  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  std::vector<std::string> pieces_;  // decoded bytes per token (special=false)
  std::unordered_map<std::string_view, int32_t> token_to_id_;  // views into tokens_
  std::unordered_map<std::string, int32_t> merge_rank_;        // "left right" -> rank
  PreTokenizer pre_;
};

// Turns generated ids into text as they arrive, emitting only complete UTF-8 characters
// (a character split across tokens is held back until its last byte arrives).
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tok) : tok_(tok) {}
  std::string Push(int32_t id) { return utf8_.Push(tok_.Piece(id)); }
  // End of stream: an unfinished character becomes U+FFFD.
  std::string Flush() { return utf8_.Flush(); }

 private:
  const Tokenizer& tok_;
  Utf8Assembler utf8_;
};

}  // namespace tern::text
