#include "engine/prefill.h"

#include <algorithm>

namespace tern::engine {

std::vector<vibeasr::DecoderInput> PrefillInputs(const Prompt& p, int64_t frames, int64_t hidden,
                                                 const float* features) {
  std::vector<vibeasr::DecoderInput> in;
  in.reserve(p.tokens.size());
  const int64_t fed = std::min<int64_t>(p.pad_count, frames);
  int32_t pos = 0;
  for (int i = 0; i < p.pad_start; ++i)
    in.push_back({p.tokens[static_cast<size_t>(i)], nullptr, pos++});
  for (int64_t f = 0; f < fed; ++f) in.push_back({-1, features + f * hidden, pos++});
  for (size_t i = static_cast<size_t>(p.pad_start) + static_cast<size_t>(p.pad_count);
       i < p.tokens.size(); ++i) {
    in.push_back({p.tokens[i], nullptr, pos++});
  }
  return in;
}

}  // namespace tern::engine
