// Hotword biasing: words the caller expects (names, jargon) made more likely at decode time
// by adding a fixed amount to the logits of the tokens that spell them. VibeASR's only
// built-in hint is the prompt context; biasing the decoder as well is what users of other
// engines ask for, and stays safe at small boosts (a few logits) because it only tips
// close decisions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "text/tokenizer.h"

namespace tern::engine {

class HotwordBias {
 public:
  HotwordBias() = default;
  // Token sequences to favour, each boosted by `boost`: `anywhere` at every step, `start`
  // only where a text starts: the first content token, or after one of the `openers`
  // (tokens ending in a quote or a newline: a JSON answer's "Content":"). Empty and
  // duplicate sequences are dropped.
  HotwordBias(std::vector<std::vector<int32_t>> anywhere, std::vector<std::vector<int32_t>> start,
              std::vector<int32_t> openers, float boost);

  // The sequences that spell each word (surrounding whitespace dropped) as the model writes
  // it: after a space (as given), and where a text starts without one (as given and with
  // its first letter upper-cased); the openers from the vocabulary. A spelling whose first
  // token is only whitespace is left out (boosting a bare space would tip every word
  // boundary). An error names a word the tokenizer cannot encode.
  static Result<HotwordBias> FromWords(const text::Tokenizer& tok,
                                       const std::vector<std::string>& words, float boost);

  bool empty() const { return anywhere_.empty() && start_.empty(); }
  const std::vector<std::vector<int32_t>>& anywhere() const { return anywhere_; }
  const std::vector<std::vector<int32_t>>& start() const { return start_; }

  // `content`: the reply so far, after the model's own header. Adds the boost to logits[t]
  // for each token t that begins a sequence (a `start` one only where a text starts; not
  // one content already holds, so a boost cannot feed a loop of the word), or
  // continues one whose first m >= 1 tokens are the last m of content (the longest such
  // m). A token that several sequences favour gets the boost once. Each changed entry's
  // original value is appended to `saved` (id, value), so the caller can restore the
  // model's logits.
  void Apply(std::span<const int32_t> content, float* logits, int64_t vocab,
             std::vector<std::pair<int32_t, float>>* saved) const;

 private:
  std::vector<std::vector<int32_t>> anywhere_, start_;
  std::vector<int32_t> openers_;  // sorted
  float boost_ = 0;
};

// Puts back the values Apply saved.
void RestoreLogits(const std::vector<std::pair<int32_t, float>>& saved, float* logits);

}  // namespace tern::engine
