#include "engine/speech_edges.h"

#include <algorithm>
#include <cmath>

#include "engine/prompt.h"

namespace tern::engine {
namespace {

constexpr int64_t kFrame = kModelSampleRate / 100;  // 10 ms

}  // namespace

SpeechEdges FindSpeechEdges(const float* x, int64_t n) {
  SpeechEdges out;
  const int64_t frames = n / kFrame;
  std::vector<double> rms(static_cast<size_t>(frames));
  double loudest = 0.0;
  for (int64_t f = 0; f < frames; ++f) {
    double sum = 0.0;
    for (int64_t i = 0; i < kFrame; ++i) {
      const double v = x[f * kFrame + i];
      sum += v * v;
    }
    rms[f] = std::sqrt(sum / kFrame);
    loudest = std::max(loudest, rms[f]);
  }
  if (!(loudest > 0)) return out;  // digital silence: no speech, no edges
  const double floor = loudest * std::pow(10.0, -kQuietDb / 20.0);
  const int64_t pause = std::llround(kPauseSeconds * 100);
  std::vector<int64_t> speech;
  for (int64_t f = 0; f < frames; ++f)
    if (rms[f] > floor) speech.push_back(f);
  for (size_t k = 0; k < speech.size(); ++k) {
    // An onset follows more than `pause` quiet frames (or the start), an offset precedes them
    // (or the end).
    if (k == 0 || speech[k] - speech[k - 1] > pause)
      out.onsets.push_back(static_cast<double>(speech[k]) / 100);
    if (k + 1 == speech.size() || speech[k + 1] - speech[k] > pause)
      out.offsets.push_back(static_cast<double>(speech[k] + 1) / 100);
  }
  return out;
}

}  // namespace tern::engine
