// No-speech checks: audio too quiet to hold speech is not sent through the model (which
// would invent words for it), and the model's own probability of an empty answer.
#pragma once

#include <cstdint>
#include <span>

#include "tern/tern.h"

namespace tern::engine {

// Level frames: 25 ms long, one every 5 ms, at the model's 24 kHz.
inline constexpr int64_t kLevelFrameSamples = 600;
inline constexpr int64_t kLevelHopSamples = 120;

// The RMS level of the loudest frame of x[0, n) in dBFS of the source (the samples divided
// by `gain`, Audio::gain); a clip shorter than a frame is one frame (and a tail shorter
// than a hop is not measured). -inf when all zero.
double LoudestFrameDbfs(const float* x, int64_t n, float gain);

// The transcript of audio judged to hold no speech: no text, no segments, stop reason
// "no_speech" and a warning that gives the level and the floor.
Transcript NoSpeechTranscript(const Audio& audio, double level_dbfs, double floor_dbfs);

// p(the reply's first content token is a stop token): the model's probability that there is
// nothing to transcribe, from the logits at that position (softmax at temperature 1).
double StopProbability(std::span<const float> logits, std::span<const int32_t> stop_ids);

}  // namespace tern::engine
