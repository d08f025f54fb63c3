// Greedy or sampled decoding: one hypothesis, one token at a time.
#include <string>
#include <utility>

#include "engine/decode.h"
#include "engine/repetition.h"
#include "engine/sampler.h"

namespace tern::engine {

Result<Decoded> DecodeSampled(vibeasr::DecoderState& state, Stepper& stepper,
                              std::vector<float> logits, int32_t pos, const DecodeContext& c,
                              ContentStreamer& streamer) {
  const TranscribeOptions& o = c.options;
  const DecodingOptions& d = o.decoding;
  Sampler sampler(d);
  Decoded out;
  out.stop_reason = "max_tokens";
  const int64_t vocab = static_cast<int64_t>(logits.size());
  std::vector<std::pair<int32_t, float>> saved;
  for (int i = 0; i < d.max_tokens; ++i) {
    if (Cancelled(o)) return CancelledError("transcription cancelled");
    NoteNoSpeechProb(out.tokens, logits, c, &out);
    saved.clear();
    if (!c.bias.empty()) {
      if (const auto content = Content(out.tokens, c.tokenizer, c.special))
        c.bias.Apply(*content, logits.data(), vocab, &saved);
    }
    const int32_t tok = sampler.Sample(logits.data(), vocab);
    RestoreLogits(saved, logits.data());
    out.tokens.push_back(tok);
    if (d.logprobs) {
      out.logprobs.push_back(static_cast<float>(LogProbOf(logits.data(), vocab, tok)));
    }
    if (c.special.IsStop(tok) && !d.ignore_eos) {
      out.stop_reason = "eos";
      break;
    }
    if (d.repetition_guard && HasRepeatingTail(out.tokens, d.repetition_max_repeats)) {
      out.stop_reason = "repetition";
      out.warnings.push_back("the output started repeating itself; decoding stopped after " +
                             std::to_string(out.tokens.size()) + " tokens");
      break;
    }
    if (i + 1 == d.max_tokens) break;
    if (o.on_progress && !o.on_progress(0.5 + 0.5 * (i + 1) / static_cast<double>(d.max_tokens)))
      return CancelledError("transcription cancelled by the progress callback");
    if (!streamer.Step(out.tokens))
      return CancelledError("transcription cancelled by the text callback");
    TERN_RETURN_IF_ERROR(stepper.Step(state, tok, pos++, &logits));
  }
  return out;
}

}  // namespace tern::engine
