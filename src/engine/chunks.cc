#include "engine/chunks.h"

#include <algorithm>

#include "base/check.h"

namespace tern::engine {
namespace {

constexpr int64_t kWindow = 9600;  // 400 ms at 24 kHz: longer than most pauses inside a sentence
constexpr int64_t kHop = 240;      // 10 ms steps

}  // namespace

std::vector<std::pair<int64_t, int64_t>> PlanChunks(const float* x, int64_t n, int64_t max_len) {
  TERN_CHECK(max_len >= 1 && n >= 0);
  std::vector<std::pair<int64_t, int64_t>> out;
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
    int64_t cut = hi;
    double best = -1;
    for (int64_t c = lo; c <= hi; c += kHop) {
      const int64_t s = std::min(c - half_w, n - w);
      double e = 0;
      for (int64_t i = s; i < s + w; ++i) e += static_cast<double>(x[i]) * x[i];
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

}  // namespace tern::engine
