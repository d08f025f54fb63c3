// Beam search over copies of the prefilled decoder state.
#include <algorithm>
#include <memory>
#include <utility>

#include "engine/decode.h"
#include "engine/sampler.h"

namespace tern::engine {

Result<Decoded> DecodeBeam(const vibeasr::DecoderState& prefilled, ThreadPool& pool,
                           const std::vector<float>& first_logits, int32_t pos,
                           const DecodeContext& c) {
  const TranscribeOptions& o = c.options;
  const DecodingOptions& d = o.decoding;
  struct Hyp {
    std::unique_ptr<vibeasr::DecoderState> state;
    std::vector<float> logits;
    std::vector<int32_t> tokens;
    std::vector<float> logprobs;  // per token
    double logprob = 0;
  };
  struct Cand {
    double logprob;
    size_t hyp;
    int32_t token;
    double token_logprob;
  };
  std::vector<Hyp> alive;
  alive.push_back({std::make_unique<vibeasr::DecoderState>(prefilled), first_logits, {}, {}, 0.0});
  std::vector<Hyp> finished;
  std::vector<double> lp;
  std::vector<std::pair<int32_t, float>> saved;
  Decoded out;
  out.stop_reason = "max_tokens";
  for (int step = 0; step < d.max_tokens && !alive.empty(); ++step) {
    if (Cancelled(o)) return CancelledError("transcription cancelled");
    NoteNoSpeechProb(alive[0].tokens, alive[0].logits, c, &out);  // the best so far
    std::vector<Cand> cands;
    for (size_t h = 0; h < alive.size(); ++h) {
      float* logits = alive[h].logits.data();
      const int64_t vocab = static_cast<int64_t>(alive[h].logits.size());
      saved.clear();
      if (!c.bias.empty()) {
        if (const auto content = Content(alive[h].tokens, c.tokenizer, c.special))
          c.bias.Apply(*content, logits, vocab, &saved);
      }
      LogSoftmax(logits, vocab, &lp);
      RestoreLogits(saved, logits);
      std::vector<int32_t> idx(lp.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int32_t>(i);
      const size_t k = std::min<size_t>(static_cast<size_t>(d.beam), idx.size());
      std::partial_sort(
          idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
          [&lp](int32_t a, int32_t b) { return lp[a] > lp[b] || (lp[a] == lp[b] && a < b); });
      for (size_t i = 0; i < k; ++i) {
        // the search ranks by the boosted scores; the reported log-probability is the model's
        const double own =
            saved.empty() || !d.logprobs ? lp[idx[i]] : LogProbOf(logits, vocab, idx[i]);
        cands.push_back({alive[h].logprob + lp[idx[i]], h, idx[i], own});
      }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return a.logprob > b.logprob ||
             (a.logprob == b.logprob && (a.hyp < b.hyp || (a.hyp == b.hyp && a.token < b.token)));
    });
    std::vector<Hyp> next;
    for (const Cand& cand : cands) {
      if (static_cast<int>(next.size()) + static_cast<int>(finished.size()) >= d.beam) break;
      Hyp h;
      h.tokens = alive[cand.hyp].tokens;
      h.tokens.push_back(cand.token);
      if (d.logprobs) {
        h.logprobs = alive[cand.hyp].logprobs;
        h.logprobs.push_back(static_cast<float>(cand.token_logprob));
      }
      h.logprob = cand.logprob;
      if (c.special.IsStop(cand.token) && !d.ignore_eos) {
        finished.push_back(std::move(h));
        continue;
      }
      h.state = std::make_unique<vibeasr::DecoderState>(*alive[cand.hyp].state);
      next.push_back(std::move(h));
    }
    if (step + 1 < d.max_tokens) {
      for (Hyp& h : next)
        TERN_RETURN_IF_ERROR(h.state->Step(h.tokens.back(), pos, pool, &h.logits));
    }
    ++pos;
    alive = std::move(next);
    if (static_cast<int>(finished.size()) >= d.beam) break;
  }
  const bool any_finished = !finished.empty();
  std::vector<Hyp>& ranked = any_finished ? finished : alive;
  size_t best = 0;
  for (size_t i = 1; i < ranked.size(); ++i) {
    const double a = ranked[i].logprob / static_cast<double>(ranked[i].tokens.size());
    const double b = ranked[best].logprob / static_cast<double>(ranked[best].tokens.size());
    if (a > b) best = i;
  }
  out.tokens = ranked[best].tokens;
  if (d.logprobs) out.logprobs = ranked[best].logprobs;
  if (any_finished) out.stop_reason = "eos";
  return out;
}

}  // namespace tern::engine
