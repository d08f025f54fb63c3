// What a stretch of speech sounds like, as a fixed-length vector that tells voices apart:
// the mean and spread of its mel cepstra. The engine labels speakers with it when a model
// declares a voice projection (engine/speakers.h); training/voices.py fits that projection
// on the same definition, step for step:
//   frames of 25 ms (600 samples at 24 kHz, Hamming), every 10 ms, zero-padded to 1024;
//   power spectrum -> 40 HTK-mel triangles over 60-8000 Hz -> log(energy + 1e-9);
//   frames whose loudest band is within 30 dB of the 95th percentile of that loudness
//   (so pauses and breaths do not describe the voice);
//   cepstra 1..19 (DCT-II of the log-mel; c0, the level, left out) -> their mean, then
//   their standard deviation;
//   pitch of the same frames: each frame's autocorrelation (inverse transform of its power
//   spectrum) divided by the window's own, its highest peak over lags 60-320 (400-75 Hz);
//   a frame is voiced when that peak is over 0.5 -> the median and standard deviation of
//   log(24000 / lag) over the voiced frames (log 150 and 0 with fewer than 3 of them), and
//   the voiced share of the frames. Pitch tells most voices apart where the spectral
//   envelope alone does not (a man's and a woman's voice of one synthesizer).
#pragma once

#include <array>
#include <cstdint>

namespace tern::audio {

inline constexpr int kVoiceCepstra = 19;
inline constexpr int kVoicePitchFeatures = 3;  // median and spread of log pitch, voiced share
inline constexpr int kVoiceFeatureCount = 2 * kVoiceCepstra + kVoicePitchFeatures;
inline constexpr int kVoiceMinFrames = 10;  // about 0.1 s of speech

using VoiceFeatures = std::array<double, kVoiceFeatureCount>;

// Samples at 24 kHz (any level: the cepstra from c1 on do not change with it). False, and
// `out` untouched, when fewer than kVoiceMinFrames frames fit in n samples.
bool ComputeVoiceFeatures(const float* x, int64_t n, VoiceFeatures* out);

}  // namespace tern::audio
