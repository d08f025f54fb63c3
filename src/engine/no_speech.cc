#include "engine/no_speech.h"

#include "engine/content_stream.h"
#include "engine/decode.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace tern::engine {

double LoudestFrameDbfs(const float* x, int64_t n, float gain) {
  // Sums of squares per hop-long block, then each frame as the sum of its blocks: one pass.
  constexpr int64_t kBlocks = kLevelFrameSamples / kLevelHopSamples;
  static_assert(kLevelFrameSamples % kLevelHopSamples == 0);
  double loudest = 0;  // mean square
  if (n < kLevelFrameSamples) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
    loudest = n > 0 ? sum / static_cast<double>(n) : 0.0;
  } else {
    std::vector<double> block(static_cast<size_t>(n / kLevelHopSamples));
    for (size_t b = 0; b < block.size(); ++b) {
      double sum = 0;
      const float* p = x + static_cast<int64_t>(b) * kLevelHopSamples;
      for (int64_t i = 0; i < kLevelHopSamples; ++i) sum += static_cast<double>(p[i]) * p[i];
      block[b] = sum;
    }
    for (size_t b = 0; b + kBlocks <= block.size(); ++b) {
      double sum = 0;
      for (int64_t k = 0; k < kBlocks; ++k) sum += block[b + static_cast<size_t>(k)];
      loudest = std::max(loudest, sum / static_cast<double>(kLevelFrameSamples));
    }
  }
  if (!(loudest > 0) || !(gain > 0)) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(loudest) - 20.0 * std::log10(static_cast<double>(gain));
}

Transcript NoSpeechTranscript(const Audio& audio, double level_dbfs, double floor_dbfs) {
  Transcript t;
  t.duration_s = audio.duration_s();
  t.offset_s = audio.offset_s;
  t.stop_reason = "no_speech";
  char msg[256];
  if (std::isinf(level_dbfs)) {
    std::snprintf(msg, sizeof msg, "no speech: every sample is zero; nothing transcribed");
  } else {
    std::snprintf(msg, sizeof msg,
                  "no speech: the loudest 25 ms of the audio is at %.1f dBFS, under the "
                  "no-speech floor of %.1f dBFS (--no-speech-floor); nothing transcribed",
                  level_dbfs, floor_dbfs);
  }
  t.warnings.emplace_back(msg);
  return t;
}

double StopProbability(std::span<const float> logits, std::span<const int32_t> stop_ids) {
  if (logits.empty()) return 0.0;
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0, stop = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - max);
  for (int32_t id : stop_ids) {
    if (id >= 0 && static_cast<size_t>(id) < logits.size())
      stop += std::exp(static_cast<double>(logits[static_cast<size_t>(id)]) - max);
  }
  return stop / sum;
}

void NoteNoSpeechProb(std::span<const int32_t> generated, std::span<const float> logits,
                      const DecodeContext& c, Decoded* d) {
  if (d->no_speech_prob >= 0) return;
  const auto content = Content(generated, c.tokenizer, c.special);
  if (!content || !content->empty()) return;
  const int32_t stops[] = {c.special.im_end, c.special.endoftext};
  d->no_speech_prob = StopProbability(logits, stops);
}

}  // namespace tern::engine
