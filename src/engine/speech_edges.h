// Where speech starts after a pause and stops before one: the edges segment times snap to
// (snap_times.h) and the cuts of pieces at pauses (chunks.h, PlanPiecesAtPauses). A pause is at
// least kPauseSeconds in which every 10 ms frame is kQuietDb below the loudest frame of the
// audio, so audio without clear pauses (noise under the speech) has no edges inside it.
#pragma once

#include <cstdint>
#include <vector>

namespace tern::engine {

inline constexpr double kPauseSeconds = 0.4;  // longer than the gaps inside a sentence
inline constexpr double kQuietDb = 45.0;      // below the loudest 10 ms of the audio

// Sum of squares of each whole 10 ms frame of x (n / 240 frames at 24 kHz): the loudness
// both the edges below and LeadInStart (chunks.h) measure speech by.
std::vector<double> FrameEnergies(const float* x, int64_t n);

// Times (seconds from x[0]) where speech starts after a pause (or at the start of the audio)
// and where it stops before one (or at the end), in increasing order: onsets[i] < offsets[i]
// <= onsets[i + 1]. None for digital silence.
struct SpeechEdges {
  std::vector<double> onsets, offsets;
};
SpeechEdges FindSpeechEdges(const float* x, int64_t n);

}  // namespace tern::engine
