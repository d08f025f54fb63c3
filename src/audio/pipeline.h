// What every decoder shares (audio.h steps 2-5): a decoder only produces interleaved float
// frames at the source rate; this checks and mixes them to mono, bounds their number by
// max_seconds, resamples to 24 kHz, cuts the excerpt and normalizes, in one place, so
// libsndfile and FFmpeg input are treated alike byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audio/audio.h"
#include "audio/resample.h"
#include "base/status.h"

namespace tern::audio {

// "NAME: audio is [more than ]S s long, over the limit ..." (seconds_at_least < 0: "more
// than |S|", for a count that stopped at the limit).
Status TooLongError(const std::string& name, const AudioOptions& options, double seconds_at_least);

class Pipeline {
 public:
  // Checks `rate` and `channels` against the limits of audio.h (errors name `name`).
  static Result<std::unique_ptr<Pipeline>> Create(const std::string& name, int rate, int channels,
                                                  const AudioOptions& options, Resampler resampler);
  ~Pipeline();

  // A length the container declares, checked before decoding: a file that says it is hours
  // long fails at once rather than after decoding up to the limit.
  Status CheckDeclaredFrames(int64_t frames) const;
  // `frames` interleaved frames of channels() floats. Fails on NaN/Inf and once the total
  // passes max_seconds.
  Status Push(const float* interleaved, size_t frames);
  // Steps 3-5 over everything pushed; errors for no samples and silence.
  Result<Audio> Finish();

  int rate() const { return rate_; }
  int channels() const { return channels_; }
  int64_t frames() const { return total_; }

 private:
  Pipeline() = default;

  std::string name_;
  AudioOptions options_;
  Resampler resampler_ = Resampler::kSoxrHq;
  int rate_ = 0, channels_ = 0;
  double max_frames_ = 0;
  std::unique_ptr<SoxrResampler> soxr_;
  std::vector<float> mono_all_;  // passthrough or linear: the whole mono signal
  std::vector<float> mono_;      // one pushed block, mixed
  std::vector<float> out_;       // soxr output so far
  int64_t total_ = 0;
  float peak_ = 0.0f;
};

}  // namespace tern::audio
