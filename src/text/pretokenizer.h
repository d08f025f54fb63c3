// Pre-tokenizers: split text into the "words" that byte-level BPE encodes one by one.
//
// Chosen by the GGUF key `tokenizer.ggml.pre` (llama.cpp names):
//   "qwen2"            one regex (Qwen2's tokenizer.json, case-insensitive contractions
//                      spelled out as [sS] etc. so no Unicode case folding applies):
//     (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|
//     \p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   "default" / absent llama.cpp's DEFAULT list, applied as sequential refinement: each
//                      step splits every fragment left by the previous step into its
//                      matches and the unmatched spans between them (both kept):
//     1. [\p{P}\$\+<=>\^~\|]+
//     2. GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//        run by a hand-written splitter (as llama.cpp does), see SplitGpt2.
//     3. \p{N}+
//     4. [0-9][0-9][0-9]
// \s means the Unicode White_Space set in every step (unicode.h). Lookaheads never see
// past the fragment being split. Any other name is an error.
//
// Why it matters: the VibeASR GGUF very probably has no `tokenizer.ggml.pre`, so
// upstream used DEFAULT; it differs from QWEN2 on e.g. "\n\n" (QWEN2: one word -> 271,
// DEFAULT: "\n" "\n" -> 198 198) and on apostrophes and punctuation runs.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "text/regex.h"

namespace tern::text {

enum class PreTokenizerType { kDefault, kQwen2 };
const char* PreTokenizerName(PreTokenizerType t);
// "default" or "qwen2"; anything else is an Unsupported error naming the value.
Result<PreTokenizerType> PreTokenizerFromName(std::string_view name);

using Span = std::pair<size_t, size_t>;  // byte range [first, second)

// The GPT-2 splitter of step 2, on each fragment of `fragments` (byte ranges covering
// parts of `text`, valid UTF-8). Exposed for tests.
std::vector<Span> SplitGpt2(std::string_view text, const std::vector<Span>& fragments);

class PreTokenizer {
 public:
  static Result<PreTokenizer> Create(PreTokenizerType type);

  // Splits valid UTF-8 `text` (not re-checked) into consecutive words that cover it.
  // Fails only if PCRE2 hits a resource limit.
  Result<std::vector<std::string_view>> Split(std::string_view text) const;
  PreTokenizerType type() const { return type_; }

 private:
  struct Step {
    bool gpt2 = false;  // the custom splitter instead of `regex`
    Regex regex;
  };
  PreTokenizerType type_ = PreTokenizerType::kDefault;
  std::vector<Step> steps_;
};

}  // namespace tern::text
