#include "engine/snap_times.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/speech_edges.h"

namespace tern::engine {
namespace {

// The edge nearest t within `seconds` (the earlier of two as near), else t.
double Nearest(const std::vector<double>& edges, double t, double seconds) {
  auto it = std::lower_bound(edges.begin(), edges.end(), t);
  double best = t, gap = seconds;
  bool found = false;
  if (it != edges.begin() && t - *std::prev(it) <= gap) {
    best = *std::prev(it);
    gap = t - best;
    found = true;
  }
  if (it != edges.end() && *it - t <= seconds && (!found || *it - t < gap)) best = *it;
  return best;
}

}  // namespace

void SnapToSpeechEdges(const Audio& audio, double seconds, Transcript* t) {
  if (!t->structured || t->segments.empty() || !(seconds > 0)) return;
  const SpeechEdges edges =
      FindSpeechEdges(audio.samples.data(), static_cast<int64_t>(audio.samples.size()));
  for (Segment& s : t->segments) {
    if (s.start < 0 || !(s.end > s.start)) continue;
    const double a = Nearest(edges.onsets, s.start - audio.offset_s, seconds) + audio.offset_s;
    const double b = Nearest(edges.offsets, s.end - audio.offset_s, seconds) + audio.offset_s;
    if (a < b) {
      s.start = a;
      s.end = b;
    }
  }
}

}  // namespace tern::engine
