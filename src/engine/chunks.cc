#include "engine/chunks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/check.h"
#include "engine/prompt.h"
#include "engine/segments.h"
#include "engine/speech_edges.h"

namespace tern::engine {
namespace {

constexpr int64_t kWindow = 9600;  // 400 ms at 24 kHz: longer than most pauses inside a sentence
constexpr int64_t kHop = 240;      // 10 ms steps

}  // namespace

std::vector<std::pair<int64_t, int64_t>> PlanChunks(const float* x, int64_t n, int64_t max_len) {
  TERN_CHECK(max_len >= 1 && n >= 0);
  std::vector<std::pair<int64_t, int64_t>> out;
  std::vector<double> sums;  // sums[i]: energy of the span's first i samples
  int64_t b = 0;
  while (n - b > max_len) {
    // The cut c is the middle of the quietest window with c in the second half of the
    // allowed length (speech pauses every few seconds, so one is nearly always in reach),
    // and never so late that the rest would be shorter than half the limit (a short tail of
    // near silence is what a model is most likely to invent words for).
    const int64_t half_len = std::max<int64_t>(1, max_len / 2);
    const int64_t w = std::min(kWindow, half_len), half_w = w / 2;
    const int64_t lo = std::max(b + half_len, b + half_w);
    const int64_t hi = std::max(lo, std::min(b + max_len, n - half_len));
    // Window energies from running sums over the span the windows cover: linear in the
    // audio, where summing each window afresh cost w / kHop times more (seconds for an
    // hour). A run of zeros adds nothing to the sum, so digital silence still measures
    // exactly 0 and ties break as before: to the earliest cut.
    const int64_t first = std::min(lo - half_w, n - w);
    const int64_t last = std::min(hi - half_w, n - w) + w;
    sums.assign(static_cast<size_t>(last - first + 1), 0.0);
    for (int64_t i = first; i < last; ++i)
      sums[i - first + 1] = sums[i - first] + static_cast<double>(x[i]) * x[i];
    int64_t cut = hi;
    double best = -1;
    for (int64_t c = lo; c <= hi; c += kHop) {
      const int64_t s = std::min(c - half_w, n - w) - first;
      const double e = sums[s + w] - sums[s];
      if (best < 0 || e < best) {
        best = e;
        cut = c;
      }
    }
    out.emplace_back(b, cut);
    b = cut;
  }
  if (n > b) out.emplace_back(b, n);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> PlanPiecesByLength(const float* x, int64_t n,
                                                            int64_t max_len) {
  std::vector<std::pair<int64_t, int64_t>> pieces = PlanChunks(x, n, max_len);
  for (size_t i = 1; i < pieces.size(); ++i) {
    auto& [b, e] = pieces[i];
    b += LeadInStart(x + b, e - b, kPieceLeadIn);
  }
  return pieces;
}

std::vector<std::pair<int64_t, int64_t>> PlanPiecesAtPauses(const float* x, int64_t n,
                                                            int64_t max_len) {
  const SpeechEdges edges = FindSpeechEdges(x, n);
  const size_t k = std::min(edges.onsets.size(), edges.offsets.size());
  if (k <= 1) return PlanPiecesByLength(x, n, max_len);
  auto at = [](double s) { return static_cast<int64_t>(std::llround(s * kModelSampleRate)); };
  std::vector<std::pair<int64_t, int64_t>> spans(k);
  for (size_t i = 0; i < k; ++i) {
    spans[i] = {i == 0 ? 0 : at(edges.onsets[i]) - kPieceLeadIn,
                i + 1 == k ? n : at(edges.offsets[i]) + kPieceLeadIn};
  }
  for (size_t i = 0; i + 1 < k; ++i) {
    if (spans[i].second > spans[i + 1].first) {  // a pause shorter than both margins
      const int64_t mid = (at(edges.offsets[i]) + at(edges.onsets[i + 1])) / 2;
      spans[i].second = spans[i + 1].first = mid;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (const auto& [b, e] : spans) {
    for (auto [pb, pe] : PlanPiecesByLength(x + b, e - b, max_len))
      pieces.emplace_back(b + pb, b + pe);
  }
  return pieces;
}

int64_t LeadInStart(const float* x, int64_t n, int64_t lead) {
  const std::vector<double> energy = FrameEnergies(x, n);
  const double loudest = energy.empty() ? 0 : *std::max_element(energy.begin(), energy.end());
  if (loudest <= 0) return 0;
  const double floor = loudest * 3.1622776601683795e-4;  // -35 dB
  size_t first = 0;
  while (energy[first] < floor) ++first;
  return std::max<int64_t>(0, static_cast<int64_t>(first) * kHop - lead);
}

std::string PieceLabel(double t0, double t1) {
  char label[64];
  std::snprintf(label, sizeof label, "[%.2f-%.2f s]", t0, t1);
  return label;
}

void AppendPiece(const Transcript& p, double t0, double t1, Transcript* all) {
  const bool first = all->pieces.empty();
  if (first) {
    all->prompt_token_ids = p.prompt_token_ids;
    all->model = p.model;
    all->head = p.head;
    all->isa = p.isa;
    all->threads = p.threads;
    all->stop_reason = p.stop_reason;
    all->structured = p.structured;
  }
  // A cut-off or looping piece is what the caller must see.
  if (p.stop_reason != "eos" && all->stop_reason == "eos") all->stop_reason = p.stop_reason;
  all->structured = all->structured && p.structured;
  const std::string text = TrimText(p.text);
  if (!text.empty()) all->text += (all->text.empty() ? "" : " ") + text;
  if (p.structured) {
    for (Segment seg : p.segments) {
      if (seg.start >= 0) seg.start += t0;
      if (seg.end >= 0) seg.end += t0;
      all->segments.push_back(std::move(seg));
    }
  } else {
    Segment seg{t0, t1, -1, text};
    if (!p.segments.empty()) seg.no_speech_prob = p.segments.front().no_speech_prob;
    all->segments.push_back(std::move(seg));
  }
  all->token_ids.insert(all->token_ids.end(), p.token_ids.begin(), p.token_ids.end());
  all->token_logprobs.insert(all->token_logprobs.end(), p.token_logprobs.begin(),
                             p.token_logprobs.end());
  const std::string where = PieceLabel(t0, t1) + ": ";
  for (const std::string& w : p.warnings) all->warnings.push_back(where + w);
  all->frames += p.frames;
  all->pieces.emplace_back(t0, t1);
  Metrics& m = all->metrics;
  m.encoder_ms += p.metrics.encoder_ms;
  m.prefill_ms += p.metrics.prefill_ms;
  m.decode_ms += p.metrics.decode_ms;
  m.prompt_tokens += p.metrics.prompt_tokens;
  m.prompt_reused_tokens += p.metrics.prompt_reused_tokens;
  m.decode_tokens += p.metrics.decode_tokens;
  if (first) {
    m.stages = p.metrics.stages;
  } else {
    for (size_t k = 0; k < m.stages.size() && k < p.metrics.stages.size(); ++k)
      m.stages[k].second += p.metrics.stages[k].second;
  }
}

}  // namespace tern::engine
