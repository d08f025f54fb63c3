// The reply's content as decoding goes: where it starts (after the model's own
// "<|im_start|>assistant\n") and how it reaches a TextStream, one token behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "engine/prompt.h"
#include "engine/text_stream.h"
#include "text/special_tokens.h"
#include "text/tokenizer.h"

namespace tern::engine {

// Hotword boosts apply to the reply after the model's own "<|im_start|>assistant\n" (the
// header must not be tipped into a hotword). The content so far, or nullopt while the
// header is being written; where it begins is StripAssistantHeader's rule, so the boosted
// part is the transcript's part even when the model writes a malformed header.
std::optional<std::span<const int32_t>> Content(std::span<const int32_t> generated,
                                                const text::Tokenizer& tok,
                                                const text::SpecialTokens& special);

// Sends the reply's content to a TextStream as decoding goes, one token behind: the last
// token may be a stop token, which the transcript drops (StripAssistantHeader), so a token
// is sent once another follows it, and Finish sends the rest of the final content range.
// The content starts where Content() says, which is where StripAssistantHeader starts it.
// A null stream makes both calls no-ops.
class ContentStreamer {
 public:
  ContentStreamer(TextStream* stream, const text::Tokenizer& tok,
                  const text::SpecialTokens& special)
      : stream_(stream), tok_(tok), special_(special) {}

  // After each generated token; false once the stream's callback has asked to stop.
  bool Step(std::span<const int32_t> generated);
  // The transcript's tokens and content range, once decoding is over.
  bool Finish(std::span<const int32_t> generated, const ContentRange& r);

 private:
  TextStream* stream_;
  const text::Tokenizer& tok_;
  const text::SpecialTokens& special_;
  size_t sent_ = 0;  // content tokens sent
};

}  // namespace tern::engine
