// A compiled PCRE2 pattern (UTF + UCP, JIT when the platform has it) that lists the
// non-overlapping matches in a UTF-8 string. Immutable after compilation: one Regex may
// be used from many threads at once (each call allocates its own match data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tern::text {

class Regex {
 public:
  // Compiles `pattern`; a syntax error is returned with PCRE2's message and offset.
  static Result<Regex> Compile(const std::string& pattern);

  // Byte ranges [begin, end) of the successive leftmost-first matches in `subject`, which
  // must be valid UTF-8 (not re-checked). Lookarounds see nothing outside `subject`.
  // A PCRE2 resource error (match/depth limit, JIT stack) is returned, never a silently
  // shortened list.
  Status FindAll(std::string_view subject, std::vector<std::pair<size_t, size_t>>* out) const;

  const std::string& pattern() const { return pattern_; }
  bool jit() const { return jit_; }

 private:
  struct Code;
  std::string pattern_;
  std::shared_ptr<Code> code_;
  bool jit_ = false;
};

}  // namespace tern::text
