#include "scoring.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tern::scoring {

std::vector<std::string> NormWords(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  for (char ch : text) {
    const char c = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '\'') {
      cur.push_back(c);
    } else if (!cur.empty()) {
      words.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

size_t EditDistance(const std::vector<std::string>& ref, const std::vector<std::string>& hyp) {
  std::vector<size_t> prev(hyp.size() + 1), cur(hyp.size() + 1);
  for (size_t j = 0; j <= hyp.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= ref.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= hyp.size(); ++j) {
      const size_t sub = prev[j - 1] + (ref[i - 1] == hyp[j - 1] ? 0 : 1);
      cur[j] = std::min({sub, prev[j] + 1, cur[j - 1] + 1});
    }
    std::swap(prev, cur);
  }
  return prev[hyp.size()];
}

std::vector<std::pair<size_t, size_t>> AlignedPairs(const std::vector<std::string>& ref,
                                                    const std::vector<std::string>& hyp) {
  const size_t n = ref.size(), m = hyp.size(), w = m + 1;
  std::vector<size_t> d((n + 1) * w);
  for (size_t i = 0; i <= n; ++i) d[i * w] = i;
  for (size_t j = 0; j <= m; ++j) d[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      d[i * w + j] = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                               d[(i - 1) * w + j - 1] + (ref[i - 1] != hyp[j - 1])});
    }
  }
  std::vector<std::pair<size_t, size_t>> out;
  size_t i = n, j = m;
  while (i > 0 && j > 0) {
    if (d[i * w + j] == d[(i - 1) * w + j - 1] + (ref[i - 1] != hyp[j - 1])) {
      out.emplace_back(--i, --j);
    } else if (d[i * w + j] == d[(i - 1) * w + j] + 1) {
      --i;
    } else {
      --j;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

void WerCount::Add(std::string_view ref, std::string_view hyp) {
  const std::vector<std::string> r = NormWords(ref);
  edits += EditDistance(r, NormWords(hyp));
  words += r.size();
}

std::vector<TimedSegment> SegmentsFromJson(const nlohmann::json& rows) {
  std::vector<TimedSegment> out;
  for (const nlohmann::json& r : rows) {
    out.push_back({r.at(0).get<double>(), r.at(1).get<double>(), r.at(2).get<int>(),
                   r.at(3).get<std::string>()});
  }
  return out;
}

namespace {

// The words of a segment list, each with its segment's speaker.
void SpeakerWords(const std::vector<TimedSegment>& segs, std::vector<std::string>* words,
                  std::vector<int>* speakers) {
  for (const TimedSegment& s : segs) {
    for (std::string& w : NormWords(s.text)) {
      words->push_back(std::move(w));
      speakers->push_back(s.speaker);
    }
  }
}

// The largest number of aligned pairs whose speakers agree under a one-to-one renaming of
// the hypothesis speakers (each to a distinct reference speaker, or to none): a maximum
// weight matching, by dynamic programming over the hypothesis speakers and the set of
// reference speakers already taken (dialogues have a handful).
size_t BestRenaming(const std::vector<std::pair<size_t, size_t>>& pairs,
                    const std::vector<int>& ref_spk, const std::vector<int>& hyp_spk) {
  std::map<int, size_t> rid, hid;
  for (int s : ref_spk) rid.emplace(s, rid.size());
  for (int s : hyp_spk) hid.emplace(s, hid.size());
  const size_t r = std::min<size_t>(rid.size(), 16);  // more would not be a dialogue
  std::vector<std::vector<size_t>> agree(hid.size(), std::vector<size_t>(r));
  for (const auto& [i, j] : pairs) {
    const size_t ri = rid[ref_spk[i]];
    if (ri < r) ++agree[hid[hyp_spk[j]]][ri];
  }
  std::vector<size_t> best(size_t{1} << r, 0);  // over the taken set, after h speakers
  std::vector<bool> reach(best.size(), false);
  reach[0] = true;
  for (size_t h = 0; h < hid.size(); ++h) {
    std::vector<size_t> next = best;  // hypothesis speaker h renamed to none
    std::vector<bool> next_reach = reach;
    for (size_t mask = 0; mask < best.size(); ++mask) {
      if (!reach[mask]) continue;
      for (size_t k = 0; k < r; ++k) {
        if (mask >> k & 1) continue;
        const size_t to = mask | size_t{1} << k;
        if (!next_reach[to] || best[mask] + agree[h][k] > next[to]) {
          next[to] = best[mask] + agree[h][k];
          next_reach[to] = true;
        }
      }
    }
    best = std::move(next);
    reach = std::move(next_reach);
  }
  return *std::max_element(best.begin(), best.end());
}

}  // namespace

DialogueScore ScoreDialogue(const std::vector<TimedSegment>& ref,
                            const std::vector<TimedSegment>& hyp) {
  DialogueScore score;
  std::vector<std::string> ref_words, hyp_words;
  std::vector<int> ref_spk, hyp_spk;
  SpeakerWords(ref, &ref_words, &ref_spk);
  SpeakerWords(hyp, &hyp_words, &hyp_spk);
  score.words = ref_words.size();
  score.attributed = BestRenaming(AlignedPairs(ref_words, hyp_words), ref_spk, hyp_spk);
  for (const TimedSegment& s : ref) {
    const TimedSegment* most = nullptr;
    double most_overlap = 0;
    for (const TimedSegment& h : hyp) {
      const double overlap = std::min(s.end, h.end) - std::max(s.start, h.start);
      if (overlap > most_overlap) {  // the first of equals, as Python's max
        most_overlap = overlap;
        most = &h;
      }
    }
    if (most == nullptr) {
      score.boundary_errors.insert(score.boundary_errors.end(), 2, s.end - s.start);
    } else {
      score.boundary_errors.push_back(std::fabs(most->start - s.start));
      score.boundary_errors.push_back(std::fabs(most->end - s.end));
    }
  }
  return score;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace tern::scoring
