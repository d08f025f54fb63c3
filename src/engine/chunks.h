// Audio too long for one pass, in pieces. VibeASR reads a whole recording in one prompt; when
// its pads and the output budget do not fit the decoder's context (or the caller asks for
// shorter pieces, to bound memory), the audio is cut into consecutive pieces, each at the
// quietest moment near its length limit so that a cut rarely splits a word.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tern::engine {

// Consecutive [begin, end) sample ranges covering [0, n) (none for n = 0), each at most
// `max_len` samples and, when there are several, at least max_len / 2. Each but the last
// ends in the middle of the lowest-energy 400 ms window (shorter if max_len is) among those
// whose middle lies in the second half of the allowed length. Deterministic; ties go to the
// earliest window.
std::vector<std::pair<int64_t, int64_t>> PlanChunks(const float* x, int64_t n, int64_t max_len);

}  // namespace tern::engine
