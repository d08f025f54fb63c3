#include "engine/speech_edges.h"

#include <algorithm>
#include <cmath>

#include "engine/prompt.h"

namespace tern::engine {
namespace {

constexpr int64_t kFrame = kModelSampleRate / 100;  // 10 ms

}  // namespace

std::vector<double> FrameEnergies(const float* x, int64_t n) {
  std::vector<double> energy(static_cast<size_t>(std::max<int64_t>(0, n / kFrame)));
  for (size_t f = 0; f < energy.size(); ++f) {
    double sum = 0.0;
    for (int64_t i = 0; i < kFrame; ++i) {
      const double v = x[static_cast<int64_t>(f) * kFrame + i];
      sum += v * v;
    }
    energy[f] = sum;
  }
  return energy;
}

SpeechEdges FindSpeechEdges(const float* x, int64_t n) {
  SpeechEdges out;
  const std::vector<double> energy = FrameEnergies(x, n);
  const double loudest = energy.empty() ? 0.0 : *std::max_element(energy.begin(), energy.end());
  if (!(loudest > 0)) return out;  // digital silence: no speech, no edges
  const double floor = loudest * std::pow(10.0, -kQuietDb / 10.0);  // in power
  const int64_t pause = std::llround(kPauseSeconds * 100);
  std::vector<int64_t> speech;
  for (size_t f = 0; f < energy.size(); ++f)
    if (energy[f] > floor) speech.push_back(static_cast<int64_t>(f));
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
