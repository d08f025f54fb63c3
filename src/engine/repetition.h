// Detects a decoder stuck in a loop: the tail of the output is one n-gram repeated.
#pragma once

#include <cstdint>
#include <vector>

namespace tern::engine {

// True when the last tokens are the same n-gram (1 <= n <= max_ngram) repeated at least
// `max_repeats` times back to back and the repeated span is at least `min_span` tokens long
// (so a short legitimate repeat such as "no, no, no" does not trip it).
bool HasRepeatingTail(const std::vector<int32_t>& tokens, int max_repeats, int max_ngram = 32,
                      int min_span = 24);

}  // namespace tern::engine
