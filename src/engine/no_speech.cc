#include "engine/no_speech.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace tern::engine {

double LoudestFrameDbfs(const float* x, int64_t n, float gain) {
  double loudest = 0;  // mean square
  const int64_t len = std::min(n, kLevelFrameSamples);
  for (int64_t b = 0; b + len <= n; b += kLevelHopSamples) {
    double sum = 0;
    for (int64_t i = b; i < b + len; ++i) sum += static_cast<double>(x[i]) * x[i];
    loudest = std::max(loudest, sum / static_cast<double>(len));
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

}  // namespace tern::engine
