#include "text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "text/utf8.h"

namespace tern::text {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Result<Regex> Regex::Compile(const std::string& pattern) {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &err_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    return InvalidArgumentError("regex '%s': %s at offset %zu", pattern.c_str(),
                                reinterpret_cast<const char*>(msg),
                                static_cast<size_t>(err_offset));
  }
  Regex r;
  r.pattern_ = pattern;
  r.code_ = std::make_shared<Code>();
  r.code_->code = code;
  // JIT is an optimisation only: without it (unsupported CPU, no executable memory) the
  // interpreter gives the same matches.
  r.jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return r;
}

Status Regex::FindAll(std::string_view subject, std::vector<std::pair<size_t, size_t>>* out) const {
  out->clear();
  Status status;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  const auto* s = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t pos = 0;
  while (pos <= subject.size()) {
    const int rc =
        pcre2_match(code_->code, s, subject.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof(msg));
      status = ResourceExhaustedError("regex match at byte %zu of a %zu-byte text failed: %s", pos,
                                      subject.size(), reinterpret_cast<const char*>(msg));
      break;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t b = ov[0], e = ov[1];
    if (e > b) {
      out->emplace_back(b, e);
      pos = e;
    } else {
      // An empty match (none of our patterns can produce one): step one character on.
      if (b >= subject.size()) break;
      const size_t n = ValidUtf8SequenceLength(subject, b);
      pos = b + (n ? n : 1);
    }
  }
  pcre2_match_data_free(md);
  return status;
}

}  // namespace tern::text
