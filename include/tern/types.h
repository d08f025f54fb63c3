// Plain data types of the public API that the layers under it use as they are: the audio
// front end fills an Audio from AudioOptions, the encoder returns Features, the decoder
// loads its head at a HeadPrecision. One definition each, so nothing converts between a
// public and an internal copy. Any layer may include this header (like tern/status.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tern/status.h"

namespace tern {

enum class HeadPrecision {
  kF16,   // the output head as stored (F16)
  kInt8,  // quantized once at load to per-channel int8 (W8A8): half the bytes per token
};

struct AudioOptions {
  bool normalize = true;   // RMS-normalize to -25 dBFS (as VibeVoice's processor does)
  bool clip_guard = true;  // then divide by max|x| when it exceeds 1 (only with normalize)
  // Longer input is an error naming this limit. 3 hours: the decoder's trained context
  // (65 536 positions at 7.5 frames/s) covers about 2.4 h, so longer input cannot be
  // transcribed in one pass anyway; 3 h of 24 kHz float samples is 1 GB, a bound a server
  // can afford per request.
  double max_seconds = 3 * 3600.0;
  // An excerpt [offset_s, offset_s + duration_s) of the source (duration 0: to the end), cut
  // after resampling and before normalization, so it is normalized as a file of its own;
  // the transcript's times still count from the source's start. max_seconds still bounds
  // what is decoded. An offset at or past the end is an error.
  double offset_s = 0;
  double duration_s = 0;

  Status Validate() const;
};

// Mono float samples at 24 kHz, the rate the model consumes.
struct Audio {
  std::string name;  // path or caller-given name, for messages
  std::vector<float> samples;
  int source_rate = 0;
  int source_channels = 0;
  double offset_s = 0;  // where samples[0] lies in the source, seconds
  // What normalization multiplied the source by (1: none, or samples made by the caller):
  // samples / gain is the source's level, which the no-speech check measures.
  float gain = 1.0f;
  // Normalized as a whole (AudioOptions::normalize): the pieces long audio is cut into are then
  // each normalized alike, as the file of their own they stand for would be.
  bool normalized = false;
  double duration_s() const { return static_cast<double>(samples.size()) / 24000.0; }
};

// Features from the encoder: frames x hidden, row-major (the sum of both branches).
struct Features {
  int64_t frames = 0, hidden = 0;
  std::vector<float> data;
};

}  // namespace tern
