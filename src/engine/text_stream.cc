#include "engine/text_stream.h"

namespace tern::engine {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The longest prefix of s that does not end inside a multi-byte UTF-8 character: a lead
// byte among the last three whose sequence runs past the end is held back with what
// follows it. Bytes that are not valid UTF-8 at all are passed on as they are.
size_t CompletePrefix(std::string_view s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: look further back
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return len > back ? n - back : n;
  }
  return n;
}

}  // namespace

bool TextStream::Send(size_t n) {
  if (n == 0 || stopped_) return !stopped_;
  if (!sink_(std::string_view(pending_).substr(0, n))) stopped_ = true;
  pending_.erase(0, n);
  return !stopped_;
}

bool TextStream::Append(std::string_view bytes) {
  if (stopped_) return false;
  for (char c : bytes) {
    if (!piece_started_) {
      if (IsBlank(c)) continue;
      piece_started_ = true;
      if (any_text_) pending_.push_back(' ');
    }
    pending_.push_back(c);
  }
  // Everything up to the last non-blank byte, cut back to a character boundary.
  return Send(CompletePrefix(std::string_view(pending_).substr(0, NonBlankEnd())));
}

bool TextStream::EndPiece() {
  const bool ok = Send(NonBlankEnd());
  pending_.clear();
  any_text_ = any_text_ || piece_started_;
  piece_started_ = false;
  return ok;
}

size_t TextStream::NonBlankEnd() const {
  size_t end = pending_.size();
  while (end > 0 && IsBlank(pending_[end - 1])) --end;
  return end;
}

}  // namespace tern::engine
