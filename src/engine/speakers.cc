#include "engine/speakers.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "engine/prompt.h"

namespace tern::engine {
namespace {

Status FiniteValues(const gguf::File& f, const char* key, const std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]))
      return FormatError("%s: %s[%zu] is not a finite number", f.path().c_str(), key, i);
  }
  return Status::Ok();
}

}  // namespace

std::vector<double> VoiceProjection::Embed(const audio::VoiceFeatures& f) const {
  std::vector<double> e(static_cast<size_t>(dims), 0.0);
  for (int i = 0; i < audio::kVoiceFeatureCount; ++i) {
    const double d = f[i] - mean[i];
    for (int k = 0; k < dims; ++k) e[k] += d * projection[static_cast<size_t>(i) * dims + k];
  }
  return e;
}

Result<std::optional<VoiceProjection>> ReadVoiceProjection(const gguf::File& f) {
  const char* keys[] = {kVoicesMeanKey, kVoicesProjectionKey, kVoicesLinkDistanceKey};
  int present = 0;
  for (const char* k : keys) present += f.Find(k) != nullptr;
  if (present == 0) return std::optional<VoiceProjection>();
  for (const char* k : keys) {
    if (f.Find(k) == nullptr)
      return FormatError("%s: %s is missing (the tern.voices.* keys come together)",
                         f.path().c_str(), k);
  }
  VoiceProjection p;
  TERN_ASSIGN_OR_RETURN(p.mean, f.GetFloatArray(kVoicesMeanKey));
  TERN_ASSIGN_OR_RETURN(p.projection, f.GetFloatArray(kVoicesProjectionKey));
  TERN_ASSIGN_OR_RETURN(p.link_distance, f.GetF64(kVoicesLinkDistanceKey));
  const size_t n = audio::kVoiceFeatureCount;
  if (p.mean.size() != n) {
    return FormatError("%s: %s has %zu values, not the %zu voice features", f.path().c_str(),
                       kVoicesMeanKey, p.mean.size(), n);
  }
  if (p.projection.empty() || p.projection.size() % n != 0 || p.projection.size() > n * n) {
    return FormatError("%s: %s has %zu values, not %zu rows of 1 to %zu directions",
                       f.path().c_str(), kVoicesProjectionKey, p.projection.size(), n, n);
  }
  p.dims = static_cast<int>(p.projection.size() / n);
  TERN_RETURN_IF_ERROR(FiniteValues(f, kVoicesMeanKey, p.mean));
  TERN_RETURN_IF_ERROR(FiniteValues(f, kVoicesProjectionKey, p.projection));
  if (!(p.link_distance > 0 && p.link_distance <= 2)) {
    return FormatError("%s: %s must be a cosine distance in (0, 2], got %g", f.path().c_str(),
                       kVoicesLinkDistanceKey, p.link_distance);
  }
  return std::optional<VoiceProjection>(std::move(p));
}

std::vector<int> LinkByVoice(const std::vector<std::vector<double>>& points, double link_distance) {
  const size_t n = points.size();
  if (n == 0) return {};
  std::vector<std::vector<double>> unit = points;
  for (std::vector<double>& u : unit) {
    double norm = 0.0;
    for (double v : u) norm += v * v;
    norm = std::sqrt(norm) + 1e-12;
    for (double& v : u) v /= norm;
  }
  // d[i][j]: average cosine distance between the groups led by i and j (Lance-Williams).
  std::vector<std::vector<double>> d(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      double dot = 0.0;
      for (size_t k = 0; k < unit[i].size(); ++k) dot += unit[i][k] * unit[j][k];
      d[i][j] = d[j][i] = 1.0 - dot;
    }
  }
  std::vector<size_t> size(n, 1), leader(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) leader[i] = i;
  // Each live group's nearest other group: merging i and j moves d(i+j, k) between d(i, k)
  // and d(j, k), so only groups whose nearest was i or j need a new look.
  std::vector<size_t> nearest(n, n);
  std::vector<double> nearest_d(n, INFINITY);
  auto rescan = [&](size_t i) {
    nearest[i] = n;
    nearest_d[i] = INFINITY;
    for (size_t k = 0; k < n; ++k) {
      if (k != i && alive[k] && d[i][k] < nearest_d[i]) {
        nearest_d[i] = d[i][k];
        nearest[i] = k;
      }
    }
  };
  for (size_t i = 0; i < n; ++i) rescan(i);
  for (size_t groups = n; groups > 1; --groups) {
    size_t a = n;
    for (size_t i = 0; i < n; ++i)
      if (alive[i] && (a == n || nearest_d[i] < nearest_d[a])) a = i;
    if (!(nearest_d[a] <= link_distance)) break;
    const size_t b = nearest[a];
    const size_t keep = std::min(a, b), gone = std::max(a, b);
    for (size_t k = 0; k < n; ++k) {
      if (!alive[k] || k == keep || k == gone) continue;
      const double v = (static_cast<double>(size[keep]) * d[keep][k] +
                        static_cast<double>(size[gone]) * d[gone][k]) /
                       static_cast<double>(size[keep] + size[gone]);
      d[keep][k] = d[k][keep] = v;
    }
    size[keep] += size[gone];
    alive[gone] = false;
    for (size_t i = 0; i < n; ++i)
      if (leader[i] == gone) leader[i] = keep;
    for (size_t k = 0; k < n; ++k) {
      if (!alive[k]) continue;
      if (k == keep || nearest[k] == keep || nearest[k] == gone) {
        rescan(k);
      } else if (d[k][keep] < nearest_d[k]) {
        nearest_d[k] = d[k][keep];
        nearest[k] = keep;
      }
    }
  }
  // A group's leader is its first point (merges keep the smaller index): number the
  // leaders in order.
  std::vector<int> label_of(n, -1), labels(n);
  int next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (label_of[leader[i]] < 0) label_of[leader[i]] = next++;
    labels[i] = label_of[leader[i]];
  }
  return labels;
}

namespace {

// The timed segments long enough to describe, and their projected voices.
struct HeardSegments {
  std::vector<size_t> index;
  std::vector<std::vector<double>> points;
};

HeardSegments Hear(const VoiceProjection& p, const Audio& audio, const Transcript& t) {
  HeardSegments h;
  const int64_t n = static_cast<int64_t>(audio.samples.size());
  const auto at = [&](double sec) {
    return std::clamp<int64_t>(std::llround((sec - audio.offset_s) * kModelSampleRate), 0, n);
  };
  for (size_t i = 0; i < t.segments.size(); ++i) {
    const Segment& s = t.segments[i];
    if (s.start < 0 || !(s.end > s.start)) continue;
    const int64_t a = at(s.start), b = at(s.end);
    audio::VoiceFeatures f;
    if (b <= a || !audio::ComputeVoiceFeatures(audio.samples.data() + a, b - a, &f)) continue;
    h.index.push_back(i);
    h.points.push_back(p.Embed(f));
  }
  return h;
}

// Gives the heard segments their labels and every other segment the label before it (at the
// start, the first one after it; `fallback` when none was heard).
void Assign(const std::vector<size_t>& heard, const std::vector<int>& labels, int fallback,
            Transcript* t) {
  std::vector<int> speaker(t->segments.size(), -1);
  for (size_t k = 0; k < heard.size(); ++k) speaker[heard[k]] = labels[k];
  int last = -1;
  for (size_t i = 0; i < speaker.size(); ++i) {
    if (speaker[i] >= 0)
      last = speaker[i];
    else
      speaker[i] = last;
  }
  for (size_t i = speaker.size(); i-- > 0;) {
    if (speaker[i] >= 0)
      last = speaker[i];
    else
      speaker[i] = last;
  }
  for (size_t i = 0; i < speaker.size(); ++i)
    t->segments[i].speaker = speaker[i] >= 0 ? speaker[i] : fallback;
}

}  // namespace

std::string LabelSpeakersByVoice(const VoiceProjection& p, const Audio& audio, Transcript* t) {
  if (!t->structured || t->segments.empty()) return {};
  const HeardSegments h = Hear(p, audio, *t);
  if (h.points.size() > kMaxVoiceSegments) {
    return "speakers: " + std::to_string(h.points.size()) + " segments are more than the " +
           std::to_string(kMaxVoiceSegments) +
           " the engine joins by voice; the speakers are the model's own";
  }
  Assign(h.index, LinkByVoice(h.points, p.link_distance), 0, t);
  return {};
}

void StreamSpeakers::Label(const Audio& piece, Transcript* t) {
  if (!t->structured || t->segments.empty()) return;
  const HeardSegments h = Hear(p_, piece, *t);
  std::vector<std::vector<double>> all(points_.begin(), points_.end());
  all.insert(all.end(), h.points.begin(), h.points.end());
  const std::vector<int> group = LinkByVoice(all, p_.link_distance);
  const size_t old = points_.size();
  // Votes: how many earlier segments of each group were sent with each number.
  std::map<std::pair<int, int>, int> votes;  // (group, number sent) -> segments
  for (size_t i = 0; i < old; ++i) ++votes[{group[i], sent_[i]}];
  std::set<int> fresh(group.begin() + static_cast<std::ptrdiff_t>(old), group.end());
  std::vector<std::tuple<int, int, int>> ranked;  // (-votes, number, group): most votes first
  for (const auto& [key, count] : votes)
    if (fresh.count(key.first)) ranked.emplace_back(-count, key.second, key.first);
  std::sort(ranked.begin(), ranked.end());
  std::map<int, int> number;  // group -> number
  std::set<int> taken;
  for (const auto& [neg, num, g] : ranked) {
    if (number.count(g) || taken.count(num)) continue;
    number[g] = num;
    taken.insert(num);
  }
  std::vector<int> labels;
  for (size_t k = 0; k < h.points.size(); ++k) {
    const int g = group[old + k];
    if (!number.count(g)) number[g] = next_++;  // a voice not heard before
    labels.push_back(number[g]);
  }
  Assign(h.index, labels, last_, t);
  for (size_t k = 0; k < h.points.size(); ++k) {
    points_.push_back(h.points[k]);
    sent_.push_back(labels[k]);
  }
  while (points_.size() > kMaxStreamVoiceSegments) {
    points_.pop_front();
    sent_.pop_front();
  }
  last_ = t->segments.back().speaker;
}

}  // namespace tern::engine
