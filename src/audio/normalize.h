// Loudness normalization to -25 dBFS and the clip guard (audio.h, steps 4-5).
#pragma once

#include <vector>

namespace tern::audio {

// Returns the RMS measured before scaling (as float, the way upstream computes it).
float NormalizeRms(std::vector<float>* x);
// If max|x| > 1, divides every sample by (max|x| + 1e-6). Returns max|x| before.
float ClipGuard(std::vector<float>* x);

}  // namespace tern::audio
