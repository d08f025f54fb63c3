#include "audio/normalize.h"

#include <cmath>

namespace tern::audio {
namespace {

float Rms(const std::vector<float>& x) {
  double sum_sq = 0.0;
  for (float v : x) sum_sq += static_cast<double>(v) * static_cast<double>(v);
  return x.empty() ? 0.0f : static_cast<float>(std::sqrt(sum_sq / static_cast<double>(x.size())));
}

}  // namespace

float NormalizeRms(std::vector<float>* x) {
  if (x->empty()) return 0.0f;
  double sum_sq = 0.0;
  for (float v : *x) sum_sq += static_cast<double>(v) * static_cast<double>(v);
  const float rms = std::sqrt(static_cast<float>(sum_sq / static_cast<double>(x->size())));
  const float eps = 1e-6f;
  if (rms < eps) return rms;  // (near) silence: leave as is
  const float target = std::pow(10.0f, -25.0f / 20.0f);
  const float scalar = target / (rms + eps);
  for (float& v : *x) v *= scalar;
  return rms;
}

float ClipGuard(std::vector<float>* x) {
  float peak = 0.0f;
  for (float v : *x) peak = std::fmax(peak, std::fabs(v));
  if (peak > 1.0f) {
    const float d = peak + 1e-6f;
    for (float& v : *x) v /= d;
  }
  return peak;
}

float Normalize(std::vector<float>* x, bool clip_guard) {
  const float before = NormalizeRms(x);
  if (clip_guard) ClipGuard(x);
  return before > 0 ? Rms(*x) / before : 0.0f;
}

}  // namespace tern::audio
