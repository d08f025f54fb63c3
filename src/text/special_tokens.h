// The six special tokens VibeASR's prompt and stopping rule need, found in a vocabulary.
//
// A vocabulary that names them (<|endoftext|> <|im_start|> <|im_end|> <|speech_start|>
// <|speech_end|> <|speech_pad|>) is used as is: small test models work this way.
// The published VibeASR vocabulary is Qwen2's and has no <|speech_*|> tokens: upstream
// hard-codes ids 151646/151647/151648 (Qwen's <|object_ref_start|>, <|object_ref_end|>,
// <|box_start|>, or padding <dummy...> tokens in a --pad-vocab GGUF) as speech start,
// end and pad. That mapping is applied only when the vocabulary is recognisably Qwen2's:
// <|endoftext|>, <|im_start|>, <|im_end|> at 151643..151645 and 151646..151648 present
// and not normal text tokens. Anything else missing is an error naming the tokens.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "text/tokenizer.h"

namespace tern::text {

struct SpecialTokens {
  int32_t endoftext = -1;
  int32_t im_start = -1;
  int32_t im_end = -1;
  int32_t speech_start = -1;
  int32_t speech_end = -1;
  int32_t speech_pad = -1;
  bool qwen_mapping = false;  // true when the VibeASR id mapping was applied

  // Generation stops on either of these (upstream: 151645, 151643).
  bool IsStop(int32_t id) const { return id == im_end || id == endoftext; }
};

Result<SpecialTokens> FindSpecialTokens(const Tokenizer& tok);

}  // namespace tern::text
