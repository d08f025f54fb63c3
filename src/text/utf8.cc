#include "text/utf8.h"

namespace tern::text {
namespace {

enum class SeqKind { kComplete, kIncomplete, kInvalid };
struct Seq {
  SeqKind kind;
  size_t len;  // complete: sequence length; incomplete: bytes present; invalid: bytes to replace
};

// Well-formed sequences per Unicode Table 3-7: the lead byte fixes the length and the
// allowed range of the second byte; later bytes are always 80..BF.
Seq Analyze(std::string_view s, size_t pos) {
  const auto b0 = static_cast<uint8_t>(s[pos]);
  if (b0 < 0x80) return {SeqKind::kComplete, 1};
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {SeqKind::kInvalid, 1};
  }
  for (size_t i = 1; i < n; ++i) {
    if (pos + i >= s.size()) return {SeqKind::kIncomplete, i};
    const auto b = static_cast<uint8_t>(s[pos + i]);
    const uint8_t l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (b < l || b > h) return {SeqKind::kInvalid, i};
  }
  return {SeqKind::kComplete, n};
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

size_t ValidUtf8SequenceLength(std::string_view s, size_t pos) {
  if (pos >= s.size()) return 0;
  const Seq q = Analyze(s, pos);
  return q.kind == SeqKind::kComplete ? q.len : 0;
}

bool DecodeUtf8(std::string_view s, std::vector<uint32_t>* cpts, size_t* bad_offset) {
  cpts->clear();
  cpts->reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    const size_t n = ValidUtf8SequenceLength(s, pos);
    if (n == 0) {
      if (bad_offset) *bad_offset = pos;
      return false;
    }
    const auto b0 = static_cast<uint8_t>(s[pos]);
    uint32_t c = n == 1 ? b0 : n == 2 ? (b0 & 0x1Fu) : n == 3 ? (b0 & 0x0Fu) : (b0 & 0x07u);
    for (size_t i = 1; i < n; ++i) c = (c << 6) | (static_cast<uint8_t>(s[pos + i]) & 0x3Fu);
    cpts->push_back(c);
    pos += n;
  }
  return true;
}

void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string Utf8Assembler::Push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const Seq q = Analyze(pending_, pos);
    if (q.kind == SeqKind::kIncomplete) break;  // wait for more bytes
    if (q.kind == SeqKind::kComplete) {
      out.append(pending_, pos, q.len);
    } else {
      out.append(kReplacement);
    }
    pos += q.len;
  }
  pending_.erase(0, pos);
  return out;
}

std::string Utf8Assembler::Flush() {
  std::string out;
  if (!pending_.empty()) out.append(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace tern::text
