// Loudness normalization to -25 dBFS and the clip guard (audio.h, steps 4-5).
#pragma once

#include <vector>

namespace tern::audio {

// Returns the RMS measured before scaling (as float, the way upstream computes it).
float NormalizeRms(std::vector<float>* x);
// If max|x| > 1, divides every sample by (max|x| + 1e-6). Returns max|x| before.
float ClipGuard(std::vector<float>* x);
// NormalizeRms, then ClipGuard when `clip_guard` (what LoadAudio and the live pieces do).
// Returns the gain the samples got, RMS after / RMS before, or 0 when they were silent:
// Audio::gain, through which the no-speech check reads how loud the source was.
float Normalize(std::vector<float>* x, bool clip_guard);

}  // namespace tern::audio
