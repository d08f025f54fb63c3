// The decoder inputs of a prompt with its speech frames injected (spec 4.6, as upstream):
// the text before the pads at positions 0..P-1, the first F' = min(N, frames) pad slots
// replaced by the frames at P..P+F'-1, then the text after ALL N pad slots (unfed pads are
// skipped, not fed as ids) at P+F'... Decoding later continues at position = the full prompt
// length, so generated tokens sit N-F' positions above their cache rows.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/prompt.h"
#include "models/vibeasr/decoder.h"

namespace tern::engine {

// `features` holds `frames` rows of `hidden` floats and must outlive the returned inputs.
std::vector<vibeasr::DecoderInput> PrefillInputs(const Prompt& p, int64_t frames, int64_t hidden,
                                                 const float* features);

}  // namespace tern::engine
