// The decode loops that follow the prefill: greedy or sampled (one hypothesis, streamed as
// it goes) and beam search (several, its text sent whole at the end).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/content_stream.h"
#include "engine/hotwords.h"
#include "engine/stepper.h"
#include "models/vibeasr/decoder.h"
#include "runtime/thread_pool.h"
#include "tern/tern.h"
#include "text/special_tokens.h"
#include "text/tokenizer.h"

namespace tern::engine {

inline bool Cancelled(const TranscribeOptions& o) {
  return o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed);
}

struct Decoded {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;  // with DecodingOptions::logprobs
  std::string stop_reason;
  std::vector<std::string> warnings;
  // The model's probability that the reply is empty: a stop token as the first token after
  // its header, at temperature 1, without hotword boosts (the best hypothesis's, for beam
  // search); -1 when decoding ended before that position.
  double no_speech_prob = -1;
};

// What every decode loop reads: the tokenizer and special ids, the hotword boosts (built
// once per call) and the caller's options.
struct DecodeContext {
  const text::Tokenizer& tokenizer;
  const text::SpecialTokens& special;
  const HotwordBias& bias;
  const TranscribeOptions& options;
};

// Sets d->no_speech_prob from `logits` when `generated` has just completed the reply's
// header (its content is empty) and it is not set yet.
void NoteNoSpeechProb(std::span<const int32_t> generated, std::span<const float> logits,
                      const DecodeContext& c, Decoded* d);

// Greedy or sampled decoding, one token at a time, from `state` just after the prefill
// (`logits`: its last row's) with the first new token at position `pos`, advanced by
// `stepper` (a member of it for the whole loop); each token goes to `streamer` once the next
// is decoded.
Result<Decoded> DecodeSampled(vibeasr::DecoderState& state, Stepper& stepper,
                              std::vector<float> logits, int32_t pos, const DecodeContext& c,
                              ContentStreamer& streamer);

// Beam search: keeps the `beam` best partial hypotheses by total log-probability; finished
// ones are ranked by log-probability per token. Deterministic (ties to lower token ids).
// Each hypothesis decodes in its own copy of `prefilled`.
Result<Decoded> DecodeBeam(const vibeasr::DecoderState& prefilled, ThreadPool& pool,
                           const std::vector<float>& first_logits, int32_t pos,
                           const DecodeContext& c);

}  // namespace tern::engine
