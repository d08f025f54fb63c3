// libFuzzer target for the byte-level BPE tokenizer (text/tokenizer.h) and both
// pre-tokenizers (text/pretokenizer.h). Run with scripts/fuzz.
//
// The vocabulary is built once: the 256 byte stand-ins, merge chains spelling a few English
// words, numbers and multi-byte characters (so merges fire), and one control token.
// Oracles, for the "default" and the "qwen2" pre-tokenizer:
//   * invalid UTF-8 is an InvalidArgument error, never a crash or a partial encoding;
//   * valid UTF-8 always encodes (every byte is a token) and Decode(Encode(x)) == x, with
//     no control token produced from text;
//   * Split gives non-empty words that tile the input exactly, in order;
//   * the same input twice gives the same ids.
// Invalid inputs are also repaired (bad bytes -> U+FFFD) and run through the valid path, so
// most fuzzer inputs exercise the BPE merge loop and the regexes.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/pretokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace {

using tern::text::PreTokenizerType;
using tern::text::Tokenizer;
using tern::text::TokenType;

void Require(bool cond) {
  if (!cond) __builtin_trap();
}

// Byte-alphabet text of raw bytes ("Ġthe" for " the").
std::string Alpha(std::string_view bytes) {
  std::string s;
  for (char c : bytes) s += tern::text::ByteToUnicode(static_cast<uint8_t>(c));
  return s;
}

std::unique_ptr<Tokenizer> Build(PreTokenizerType pre) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.push_back(tern::text::ByteToUnicode(static_cast<uint8_t>(b)));
  std::vector<std::string> merges;
  // Left-to-right merge chains: "t h" -> "th", "th e" -> "the", ...
  const char* words[] = {" the",
                         "the",
                         " and",
                         "ing",
                         " transcribe",
                         "tion",
                         " Start",
                         " End",
                         " Speaker",
                         "Content",
                         "00",
                         "123",
                         "'s",
                         "\n\n",
                         "  ",
                         " \xC3\xA9t\xC3\xA9",
                         "\xE4\xB8\xAD\xE6\x96\x87",
                         "\xF0\x9F\x98\x80",
                         " hello",
                         " world"};
  for (const char* w : words) {
    const std::string a = Alpha(w);
    std::vector<std::string> syms;  // the byte stand-ins of w, one code point each
    for (size_t p = 0; p < a.size();) {
      const size_t n = tern::text::ValidUtf8SequenceLength(a, p);
      syms.push_back(a.substr(p, n));
      p += n;
    }
    std::string acc = syms[0];
    for (size_t k = 1; k < syms.size(); ++k) {
      merges.push_back(acc + " " + syms[k]);
      acc += syms[k];
      tokens.push_back(acc);
    }
  }
  tokens.push_back("<|endoftext|>");
  std::vector<TokenType> types(tokens.size(), TokenType::kNormal);
  types.back() = TokenType::kControl;
  auto t = Tokenizer::Create(std::move(tokens), merges, std::move(types), pre, "fuzz-vocab");
  if (!t.ok()) std::abort();
  return std::move(*t);
}

const Tokenizer& Get(PreTokenizerType pre) {
  static const std::unique_ptr<Tokenizer> dflt = Build(PreTokenizerType::kDefault);
  static const std::unique_ptr<Tokenizer> qwen2 = Build(PreTokenizerType::kQwen2);
  return pre == PreTokenizerType::kDefault ? *dflt : *qwen2;
}

const tern::text::PreTokenizer& GetPre(PreTokenizerType pre) {
  static const tern::text::PreTokenizer dflt =
      *tern::text::PreTokenizer::Create(PreTokenizerType::kDefault);
  static const tern::text::PreTokenizer qwen2 =
      *tern::text::PreTokenizer::Create(PreTokenizerType::kQwen2);
  return pre == PreTokenizerType::kDefault ? dflt : qwen2;
}

// Replaces every byte that does not start a valid sequence by U+FFFD.
std::string Repair(std::string_view s) {
  std::string out;
  for (size_t p = 0; p < s.size();) {
    const size_t n = tern::text::ValidUtf8SequenceLength(s, p);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++p;
    } else {
      out.append(s.substr(p, n));
      p += n;
    }
  }
  return out;
}

// Split's words, whether it returns them directly or (since PCRE2 resource limits became
// errors) in a Result; on a fuzz-sized input a resource error is a finding.
template <class T>
const std::vector<std::string_view>& Words(const T& split) {
  if constexpr (requires { split.ok(); }) {
    Require(split.ok());
    return *split;
  } else {
    return split;
  }
}

void CheckValid(std::string_view text) {
  for (auto pre : {PreTokenizerType::kDefault, PreTokenizerType::kQwen2}) {
    // Words tile the text: each starts where the previous ended, none is empty.
    size_t at = 0;
    const auto split = GetPre(pre).Split(text);
    for (std::string_view w : Words(split)) {
      Require(!w.empty());
      Require(w.data() == text.data() + at);
      at += w.size();
    }
    Require(at == text.size());

    const Tokenizer& tok = Get(pre);
    auto ids = tok.Encode(text);
    Require(ids.ok());
    Require(text.empty() == ids->empty());
    for (int32_t id : *ids) Require(tok.valid_id(id) && tok.type(id) != TokenType::kControl);
    Require(tok.Decode(*ids) == text);
    auto again = tok.Encode(text);
    Require(again.ok() && *again == *ids);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<uint32_t> cpts;
  size_t bad = 0;
  if (tern::text::DecodeUtf8(text, &cpts, &bad)) {
    CheckValid(text);
    return 0;
  }
  Require(bad < size);
  for (auto pre : {PreTokenizerType::kDefault, PreTokenizerType::kQwen2}) {
    auto ids = Get(pre).Encode(text);
    Require(!ids.ok() && ids.status().code() == tern::ErrorCode::kInvalidArgument);
  }
  CheckValid(Repair(text));
  return 0;
}
