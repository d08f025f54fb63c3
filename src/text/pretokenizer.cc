#include "text/pretokenizer.h"

#include "base/check.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace tern::text {
namespace {

// Expands the placeholders \s and \S (written here as {S} and {NS}) into explicit
// White_Space classes, so that PCRE2's own notion of \s never enters.
std::string WithWhitespace(std::string p) {
  const std::string ws = WhitespaceClassBody();
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t i = p.find(from); i != std::string::npos; i = p.find(from, i + to.size())) {
      p.replace(i, from.size(), to);
    }
  };
  replace("{NS}", "[^" + ws + "]");
  replace("{SB}", ws);  // inside an existing bracket
  replace("{S}", "[" + ws + "]");
  return p;
}

const char* kQwen2Pattern =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^{SB}\\p{L}\\p{N}]+[\\r\\n]*|{S}*[\\r\\n]+|{S}+(?!{NS})|{S}+";

}  // namespace

const char* PreTokenizerName(PreTokenizerType t) {
  return t == PreTokenizerType::kQwen2 ? "qwen2" : "default";
}

Result<PreTokenizerType> PreTokenizerFromName(std::string_view name) {
  if (name == "qwen2") return PreTokenizerType::kQwen2;
  if (name == "default") return PreTokenizerType::kDefault;
  return UnsupportedError(
      "unsupported pre-tokenizer '%.*s' (tokenizer.ggml.pre); supported: qwen2, default",
      static_cast<int>(name.size()), name.data());
}

std::vector<Span> SplitGpt2(std::string_view text, const std::vector<Span>& fragments) {
  std::vector<Span> out;
  std::vector<uint32_t> cpts;
  std::vector<size_t> off;  // byte offset of each code point in `text`, plus the end
  for (const Span& frag : fragments) {
    const std::string_view s = text.substr(frag.first, frag.second - frag.first);
    const bool valid = DecodeUtf8(s, &cpts, nullptr);
    TERN_CHECK(valid);
    off.clear();
    for (size_t p = frag.first; p < frag.second; p += ValidUtf8SequenceLength(text, p)) {
      off.push_back(p);
    }
    off.push_back(frag.second);
    const size_t n = cpts.size();
    // Out-of-fragment positions read as "no code point, no class", so lookaheads stop at
    // the fragment edge exactly as the regex would.
    constexpr uint32_t kNone = 0xFFFFFFFF;
    auto cpt = [&](size_t i) { return i < n ? cpts[i] : kNone; };
    auto cls = [&](size_t i) -> uint8_t { return i < n ? CodepointClass(cpts[i]) : 0; };
    auto other = [&](size_t i) {  // [^\s\p{L}\p{N}], inside the fragment
      return i < n && (cls(i) & (kCpLetter | kCpNumber | kCpWhitespace)) == 0;
    };
    size_t prev = 0;
    auto emit = [&](size_t end) {
      if (end > prev) out.emplace_back(off[prev], off[end]);
      prev = end;
    };
    for (size_t i = 0; i < n;) {
      const uint32_t c = cpts[i];
      // 's|'t|'re|'ve|'m|'ll|'d (lower case only, as in GPT-2)
      if (c == '\'' && i + 1 < n) {
        const uint32_t c1 = cpt(i + 1), c2 = cpt(i + 2);
        if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
          emit(i += 2);
          continue;
        }
        if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
          emit(i += 3);
          continue;
        }
      }
      // ' ?' prefix: the class tested is that of the code point after the space.
      const size_t j = c == ' ' ? i + 1 : i;
      if (cls(j) & kCpLetter) {  // ' ?\p{L}+'
        i = j;
        while (cls(i) & kCpLetter) ++i;
        emit(i);
        continue;
      }
      if (cls(j) & kCpNumber) {  // ' ?\p{N}+'
        i = j;
        while (cls(i) & kCpNumber) ++i;
        emit(i);
        continue;
      }
      if (other(j)) {  // ' ?[^\s\p{L}\p{N}]+'
        i = j;
        while (other(i)) ++i;
        emit(i);
        continue;
      }
      size_t ws = 0;
      while (cls(i + ws) & kCpWhitespace) ++ws;
      if (ws > 1 && i + ws < n) {  // '\s+(?!\S)': leave the last space to the next word
        emit(i += ws - 1);
        continue;
      }
      if (ws > 0) {  // '\s+' (a final run, or a single space before a non-space)
        emit(i += ws);
        continue;
      }
      emit(++i);  // unreachable with a complete class table; kept as a safe fallback
    }
  }
  return out;
}

Result<PreTokenizer> PreTokenizer::Create(PreTokenizerType type) {
  PreTokenizer p;
  p.type_ = type;
  auto add_regex = [&](const std::string& pattern) -> Status {
    TERN_ASSIGN_OR_RETURN(Regex re, Regex::Compile(WithWhitespace(pattern)));
    p.steps_.push_back(Step{false, std::move(re)});
    return Status::Ok();
  };
  if (type == PreTokenizerType::kQwen2) {
    TERN_RETURN_IF_ERROR(add_regex(kQwen2Pattern));
  } else {
    TERN_RETURN_IF_ERROR(add_regex("[\\p{P}\\$\\+<=>\\^~\\|]+"));
    p.steps_.push_back(Step{true, Regex()});
    TERN_RETURN_IF_ERROR(add_regex("\\p{N}+"));
    TERN_RETURN_IF_ERROR(add_regex("[0-9][0-9][0-9]"));
  }
  return p;
}

Result<std::vector<std::string_view>> PreTokenizer::Split(std::string_view text) const {
  std::vector<Span> frags;
  if (!text.empty()) frags.emplace_back(0, text.size());
  for (const Step& step : steps_) {
    if (step.gpt2) {
      frags = SplitGpt2(text, frags);
      continue;
    }
    std::vector<Span> next, matches;
    for (const Span& f : frags) {
      const size_t base = f.first;
      size_t cur = f.first;
      TERN_RETURN_IF_ERROR(step.regex.FindAll(text.substr(f.first, f.second - f.first), &matches));
      for (auto [b, e] : matches) {
        if (base + b > cur) next.emplace_back(cur, base + b);  // unmatched span kept
        next.emplace_back(base + b, base + e);
        cur = base + e;
      }
      if (cur < f.second) next.emplace_back(cur, f.second);
    }
    frags = std::move(next);
  }
  std::vector<std::string_view> words;
  words.reserve(frags.size());
  for (const Span& f : frags) words.push_back(text.substr(f.first, f.second - f.first));
  return words;
}

}  // namespace tern::text
