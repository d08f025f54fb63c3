// Sample-rate conversion to the model rate (recipes in audio.h, step 3).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "base/status.h"

namespace tern::audio {

// Streaming libsoxr HQ resampler, mono float. Push blocks, then Finish once; the output
// does not depend on how the input was cut into blocks.
class SoxrResampler {
 public:
  static Result<std::unique_ptr<SoxrResampler>> Create(double in_rate, double out_rate);
  ~SoxrResampler();
  Status Push(const float* in, size_t n, std::vector<float>* out);
  Status Finish(std::vector<float>* out);

 private:
  SoxrResampler() = default;
  struct State;
  std::unique_ptr<State> s_;
};

// Upstream VibeASR.cpp's linear interpolation (parity mode).
std::vector<float> ResampleLinear(const std::vector<float>& in, int in_rate, int out_rate);

}  // namespace tern::audio
