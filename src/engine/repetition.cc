#include "engine/repetition.h"

#include <algorithm>

namespace tern::engine {

bool HasRepeatingTail(const std::vector<int32_t>& tokens, int max_repeats, int max_ngram,
                      int min_span) {
  const int64_t len = static_cast<int64_t>(tokens.size());
  for (int64_t n = 1; n <= max_ngram; ++n) {
    const int64_t need = std::max<int64_t>(n * max_repeats, min_span);
    if (need > len) continue;
    // The tail of length `need` has period n when every token equals the one n back.
    bool periodic = true;
    for (int64_t i = len - need + n; i < len && periodic; ++i) {
      periodic = tokens[static_cast<size_t>(i)] == tokens[static_cast<size_t>(i - n)];
    }
    if (periodic) return true;
  }
  return false;
}

}  // namespace tern::engine
