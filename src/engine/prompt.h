// The VibeASR ChatML prompt, token for token (spec 5.2/5.3, upstream prompt_builder.h):
//
//   <|im_start|> tok("system\n" SYS) <|im_end|> tok("\n")
//   <|im_start|> tok("user\n") <|speech_start|> <|speech_pad|> x N <|speech_end|>
//   tok(SUFFIX) <|im_end|> tok("\n")
//
//   SYS    = "You are a helpful assistant that transcribes audio input into text output in
//             JSON format."   (also in text mode)
//   SUFFIX = "\nThis is a D seconds audio, please transcribe it."              text
//          | "\nThis is a D seconds audio, please transcribe it with these keys: Start,
//             End, Speaker, Content"                                            json
//          | "\nThis is a D seconds audio, with extra info: CTX\n\nPlease transcribe it."
//          | "\nThis is a D seconds audio, with extra info: CTX\n\nPlease transcribe it
//             with these keys: Start, End, Speaker, Content"                   json + CTX
//   D = printf("%.2f", (float)n / 24000.0f)  (float division, as upstream)
//   N = ceil(n / 3200) pad slots; the encoder delivers F = floor(n / 3200) frames
//       (F = 1 for 0 < n < 3200), so F = N - 1 unless n is a multiple of 3200.
// Each text segment is tokenized on its own; special ids are inserted, never parsed; no
// BOS and no generation prompt (the model writes "<|im_start|>assistant\n" itself).
// CTX is used verbatim (upstream C++ does not trim it); empty means "no context".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "tern/tern.h"
#include "text/special_tokens.h"
#include "text/tokenizer.h"

namespace tern::engine {

inline constexpr int kModelSampleRate = 24000;
inline constexpr int kSamplesPerFrame = 3200;  // total encoder stride: 7.5 frames/s

struct Prompt {
  std::vector<int32_t> tokens;
  int pad_start = 0;     // P: index of the first <|speech_pad|> (26 with the Qwen2 vocab)
  int pad_count = 0;     // N = ceil(n / 3200)
  int n_frames = 0;      // F: encoder frames that will fill the first F pads
  std::string duration;  // D as printed in the prompt
};

// Pad slots and encoder frames for n samples at 24 kHz (n >= 1).
int64_t PadCount(int64_t n_samples);
int64_t FrameCount(int64_t n_samples);

// Errors: n_samples < 1, or a text segment that does not tokenize (invalid UTF-8 context).
Result<Prompt> BuildPrompt(const text::Tokenizer& tok, const text::SpecialTokens& special,
                           int64_t n_samples, PromptFormat format, const std::string& context);

// The transcript part of the generated ids [begin, end) (upstream asr_infer.cpp):
// with >= 3 ids starting with <|im_start|>, skip it, then a token rendering as
// "assistant", and only after that one rendering as "\n"; then drop one trailing
// <|im_end|> or <|endoftext|> if anything is left.
struct ContentRange {
  size_t begin = 0, end = 0;
};
ContentRange StripAssistantHeader(const text::Tokenizer& tok, const text::SpecialTokens& special,
                                  std::span<const int32_t> generated);

}  // namespace tern::engine
