// Audio front end: any WAV, FLAC, OGG/Vorbis or MP3 file (or the same bytes in memory) to
// mono float samples at 24 kHz, the rate VibeASR's encoder consumes.
//
// Recipe (spec 6; order as upstream: mono -> resample -> normalize):
//  1. Decode with libsndfile as float. Integer PCM uses libsndfile's default scaling,
//     s16 / 32768 (s24 / 2^23, s32 / 2^31); upstream dr_wav scales s16 by 2^-15 too.
//     Float files pass through unscaled.
//  2. Mono: float mean of the channels, sum / (float)channels, channels added in order.
//  3. Resample to 24 kHz (skipped when the source is 24 kHz: samples pass unchanged):
//     kSoxrHq (default): libsoxr, soxr_quality_spec(SOXR_HQ, 0) = 20-bit precision,
//       linear phase, passband to 91.3% of the lower Nyquist; one thread; streamed in
//       blocks so a long file never holds its source-rate samples.
//     kLinear: upstream VibeASR.cpp's resampler, for parity runs: ratio = src/dst
//       (double), out_len = (size_t)(in_len / ratio), x = i * ratio, linear interpolation
//       in double between floor(x) and floor(x)+1, the last sample held.
//  4. Normalize (on by default): rms = sqrtf((float)(sum x^2 in double / n)); if rms >=
//     1e-6, x *= powf(10, -25/20) / (rms + 1e-6)  (-25 dBFS, as upstream and VibeVoice).
//  5. Clip guard (on by default, as VibeVoice's Python AudioNormalizer; upstream C++ has
//     none): if max|x| > 1, x /= (max|x| + 1e-6).  `normalize = false` skips 4 and 5.
//
// Errors (each names the file or the caller's name): missing or unreadable file; a format
// libsndfile does not recognise (its message is included); a decode error mid-stream
// (truncated FLAC/OGG/MP3); no samples; every sample zero after mixing ("audio is
// silent": a hard error rather than an empty transcript, so a broken capture is noticed);
// NaN or Inf samples; sample rate outside [1000, 768000] Hz; more than 64 channels;
// longer than max_seconds (the message names the limit and --max-audio-seconds).
// A WAV whose data chunk is cut short is read up to the end of the file (libsndfile's
// behaviour): the header cannot be trusted over the bytes present.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"

namespace tern::audio {

inline constexpr int kTargetRate = 24000;
inline constexpr int kMinSourceRate = 1000;
inline constexpr int kMaxSourceRate = 768000;
inline constexpr int kMaxChannels = 64;

enum class Resampler { kSoxrHq, kLinear };

struct AudioOptions {
  bool normalize = true;   // RMS to -25 dBFS (steps 4-5)
  bool clip_guard = true;  // step 5 (only when normalize is on)
  // 3 hours: the decoder's trained context (65 536 positions at 7.5 frames/s) covers about
  // 2.4 h, so longer input cannot be transcribed in one pass anyway; 3 h of 24 kHz float
  // samples is 1 GB, a bound a server can afford per request.
  double max_seconds = 3 * 3600.0;
  Resampler resampler = Resampler::kSoxrHq;
  // An excerpt: [offset_s, offset_s + duration_s) of the source (duration 0: to the end), cut
  // after resampling and before normalization, so it is normalized as a file of its own.
  // max_seconds still bounds what is decoded. An offset at or past the end is an error.
  double offset_s = 0;
  double duration_s = 0;

  Status Validate() const;
};

struct Audio {
  std::vector<float> samples;  // mono, kTargetRate Hz
  int source_rate = 0;
  int source_channels = 0;
  double duration_s = 0;       // samples.size() / 24000
  double offset_s = 0;         // where samples[0] lies in the source (AudioOptions::offset_s)
  float gain = 1.0f;           // what normalization multiplied the samples by (1: none)
};

Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options = {});
// `name` appears in messages. The bytes are only read during the call.
Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options = {});

}  // namespace tern::audio
