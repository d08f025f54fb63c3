#include "engine/segments.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "text/utf8.h"

namespace tern::engine {
namespace {

// A forgiving cursor over the model's text. Every Parse* returns false on input it cannot
// read; `truncated` is set when the text ends in the middle of a value.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  bool AtEnd() const { return i_ >= s_.size(); }
  bool truncated() const { return truncated_; }
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  char Peek() {
    SkipSpace();
    return i_ < s_.size() ? s_[i_] : '\0';
  }

  // A JSON string; on truncation returns what was read so far and sets truncated_.
  bool ParseString(std::string* out) {
    out->clear();
    if (!Consume('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      switch (e) {
        case 'n':
          out->push_back('\n');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!ParseHex4(&cp)) {
            truncated_ = AtEnd();
            return truncated_;
          }
          if (cp >= 0xD800 && cp <= 0xDBFF && i_ + 1 < s_.size() && s_[i_] == '\\' &&
              s_[i_ + 1] == 'u') {
            // Only a low surrogate completes the pair; anything else is read again as
            // its own escape (so "\uD800\u0041" keeps its 'A').
            const size_t next = i_;
            i_ += 2;
            uint32_t lo = 0;
            if (ParseHex4(&lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              i_ = next;
            }
          }
          // A lone surrogate cannot be encoded: it becomes U+FFFD.
          text::AppendUtf8(cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFDu : cp, out);
          break;
        }
        default:
          out->push_back(e);
          break;  // \" \\ \/ and anything else literally
      }
    }
    truncated_ = true;
    return true;
  }

  // A number, or a number written as a string ("12.5"). Returns false for other values.
  bool ParseNumber(double* out) {
    SkipSpace();
    if (Peek() == '"') {
      std::string s;
      if (!ParseString(&s)) return false;
      char* end = nullptr;
      *out = std::strtod(s.c_str(), &end);
      return end != s.c_str() && std::isfinite(*out);  // "nan", "inf", "1e999" are no time
    }
    const size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '+' || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
    }
    if (i_ == start) return false;
    if (AtEnd()) truncated_ = true;
    const std::string num(s_.substr(start, i_ - start));
    char* end = nullptr;
    *out = std::strtod(num.c_str(), &end);
    return end != num.c_str() && std::isfinite(*out);
  }

  // Skips any JSON value (unknown keys); tolerant of nesting.
  bool SkipValue() {
    const char c = Peek();
    if (c == '"') {
      std::string ignored;
      return ParseString(&ignored);
    }
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        const char d = s_[i_];
        if (d == '"') {
          std::string ignored;
          ParseString(&ignored);
          continue;
        }
        ++i_;
        if (d == '{' || d == '[') ++depth;
        if ((d == '}' || d == ']') && --depth == 0) return true;
      }
      truncated_ = true;
      return true;
    }
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']') ++i_;
    return i_ > start;
  }

 private:
  bool ParseHex4(uint32_t* cp) {
    if (i_ + 4 > s_.size()) {
      i_ = s_.size();
      return false;
    }
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<uint32_t>(h - 'A' + 10);
      else
        return false;
    }
    *cp = v;
    return true;
  }
  std::string_view s_;
  size_t i_ = 0;
  bool truncated_ = false;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Parses one object's members into `seg`. Returns whether a Content was seen.
bool ParseObject(Reader& r, Segment* seg) {
  bool has_content = false;
  while (!r.AtEnd()) {
    if (r.Consume('}')) return has_content;
    std::string key;
    if (!r.ParseString(&key) || r.truncated()) return has_content;
    if (!r.Consume(':')) return has_content;
    double num = 0;
    if (key == "Start" || key == "Start time" || key == "start") {
      if (r.ParseNumber(&num))
        seg->start = num;
      else
        r.SkipValue();
    } else if (key == "End" || key == "End time" || key == "end") {
      if (r.ParseNumber(&num))
        seg->end = num;
      else
        r.SkipValue();
    } else if (key == "Speaker" || key == "Speaker ID" || key == "speaker") {
      // Out of int range the cast would be undefined: such a speaker is no speaker.
      if (r.ParseNumber(&num))
        seg->speaker = std::fabs(num) < 1e9 ? static_cast<int>(num) : -1;
      else
        r.SkipValue();
    } else if (key == "Content" || key == "content" || key == "text") {
      if (!r.ParseString(&seg->text)) return has_content;
      has_content = true;
    } else {
      r.SkipValue();
    }
    if (r.truncated()) return has_content;
    r.Consume(',');
  }
  return has_content;
}

}  // namespace

bool ParseJsonSegments(std::string_view text, std::vector<Segment>* segments) {
  segments->clear();
  std::string_view s = Trim(text);
  // A fenced block: ```json ... ```
  if (s.substr(0, 3) == "```") {
    const size_t nl = s.find('\n');
    if (nl == std::string_view::npos) return false;
    s = s.substr(nl + 1);
    const size_t fence = s.rfind("```");
    if (fence != std::string_view::npos) s = s.substr(0, fence);
    s = Trim(s);
  }
  if (s.empty() || s.front() != '[') return false;
  Reader r(s);
  r.Consume('[');
  while (!r.AtEnd() && !r.truncated()) {
    if (r.Consume(']')) break;
    if (!r.Consume('{')) break;
    Segment seg;
    if (ParseObject(r, &seg)) segments->push_back(std::move(seg));
    r.Consume(',');
  }
  return !segments->empty();
}

std::string TrimText(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace tern::engine
