// Segment times moved to the edges of the speech they cover. A small model places its
// segments' starts and ends roughly (the bundled one: median 0.16 s off, a tenth of them over
// 1 s); the audio itself says where speech begins and ends after a pause. A model that
// declares tern.trained.snap_seconds (docs/formats-tern-keys.md) has each start of its JSON
// segments moved to the nearest onset of speech within that many seconds, and each end to
// the nearest offset. Onsets and offsets are those of pauses of at least kSnapPauseSeconds
// in which every 10 ms frame is kSnapQuietDb below the loudest frame of the audio: so audio
// without clear pauses (noise under the speech) keeps the model's times.
#pragma once

#include <vector>

#include "tern/tern.h"

namespace tern::engine {

inline constexpr double kSnapPauseSeconds = 0.4;  // longer than the gaps inside a sentence
inline constexpr double kSnapQuietDb = 45.0;      // below the loudest 10 ms of the audio

// Times (seconds from audio's first sample) where speech starts after a pause of at least
// kSnapPauseSeconds (or at the start of the audio), and where it stops before one (or at the
// end), in increasing order.
struct SpeechEdges {
  std::vector<double> onsets, offsets;
};
SpeechEdges FindSpeechEdges(const float* x, int64_t n);

// Moves the starts and ends of t's timed segments (structured transcripts only; times count
// from the source's start, audio.offset_s from there to audio's first sample) to the nearest
// edge within `seconds`; a segment whose start would no longer precede its end keeps both.
void SnapToSpeechEdges(const Audio& audio, double seconds, Transcript* t);

}  // namespace tern::engine
