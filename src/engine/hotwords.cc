#include "engine/hotwords.h"

#include <algorithm>

namespace tern::engine {
namespace {

void AddUnique(std::vector<std::vector<int32_t>>&& from, std::vector<std::vector<int32_t>>* to) {
  for (auto& s : from)
    if (!s.empty() && std::find(to->begin(), to->end(), s) == to->end())
      to->push_back(std::move(s));
}

}  // namespace

HotwordBias::HotwordBias(std::vector<std::vector<int32_t>> anywhere,
                         std::vector<std::vector<int32_t>> start, std::vector<int32_t> openers,
                         float boost)
    : openers_(std::move(openers)), boost_(boost) {
  AddUnique(std::move(anywhere), &anywhere_);
  AddUnique(std::move(start), &start_);
  std::sort(openers_.begin(), openers_.end());
}

Result<HotwordBias> HotwordBias::FromWords(const text::Tokenizer& tok,
                                           const std::vector<std::string>& words, float boost) {
  std::vector<std::vector<int32_t>> anywhere, start;
  auto spell = [&](const std::string& word, const std::string& text,
                   std::vector<std::vector<int32_t>>* into) -> Status {
    Result<std::vector<int32_t>> ids = tok.Encode(text);
    if (!ids.ok())
      return InvalidArgumentError("hotword \"%s\": %s", word.c_str(),
                                  ids.status().message().c_str());
    if (ids->empty()) return Status::Ok();
    const std::string_view first = tok.Piece((*ids)[0]);
    if (first.find_first_not_of(" \t\n") == std::string_view::npos) return Status::Ok();
    into->push_back(std::move(*ids));
    return Status::Ok();
  };
  for (const std::string& given : words) {
    const size_t b = given.find_first_not_of(" \t\n"), e = given.find_last_not_of(" \t\n");
    if (b == std::string::npos) continue;  // DecodingOptions::Validate rejects these
    const std::string w = given.substr(b, e - b + 1);
    std::string upper = w;
    if (upper[0] >= 'a' && upper[0] <= 'z') upper[0] = static_cast<char>(upper[0] - 'a' + 'A');
    TERN_RETURN_IF_ERROR(spell(w, " " + w, &anywhere));
    TERN_RETURN_IF_ERROR(spell(w, w, &start));
    TERN_RETURN_IF_ERROR(spell(w, upper, &start));
  }
  std::vector<int32_t> openers;
  if (!anywhere.empty() || !start.empty()) {
    for (int32_t id = 0; id < static_cast<int32_t>(tok.vocab_size()); ++id) {
      const std::string_view p = tok.Piece(id);
      if (!p.empty() && (p.back() == '"' || p.back() == '\n')) openers.push_back(id);
    }
  }
  return HotwordBias(std::move(anywhere), std::move(start), std::move(openers), boost);
}

void HotwordBias::Apply(std::span<const int32_t> content, float* logits, int64_t vocab,
                        std::vector<std::pair<int32_t, float>>* saved) const {
  auto boost = [&](int32_t t) {
    if (t < 0 || t >= vocab) return;
    for (const auto& [id, v] : *saved)
      if (id == t) return;  // once per token
    saved->emplace_back(t, logits[t]);
    logits[t] += boost_;
  };
  const size_t n = content.size();
  auto ends_with = [&](const std::vector<int32_t>& s, size_t m) {
    return m <= n && std::equal(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(m),
                                content.end() - static_cast<std::ptrdiff_t>(m));
  };
  auto written = [&](const std::vector<int32_t>& s) {
    return std::search(content.begin(), content.end(), s.begin(), s.end()) != content.end();
  };
  auto favour = [&](const std::vector<int32_t>& s, bool begin) {
    // not again once written: a boosted word must not feed a loop ("the the the", "from
    // Dallas from Dallas")
    if (begin && !written(s)) boost(s[0]);
    for (size_t m = std::min(s.size() - 1, n); m >= 1; --m) {
      if (ends_with(s, m)) {
        boost(s[m]);
        break;
      }
    }
  };
  const bool text_starts =
      n == 0 || std::binary_search(openers_.begin(), openers_.end(), content.back());
  for (const std::vector<int32_t>& s : anywhere_) favour(s, true);
  for (const std::vector<int32_t>& s : start_) favour(s, text_starts);
}

void RestoreLogits(const std::vector<std::pair<int32_t, float>>& saved, float* logits) {
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) logits[it->first] = it->second;
}

}  // namespace tern::engine
