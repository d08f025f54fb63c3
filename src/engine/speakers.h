// Speakers by voice. A model that does not tell voices apart (the bundled one answers
// "Speaker 0" for everyone) may declare a voice projection in its LM file (the tern.voices.*
// keys, docs/formats-tern-keys.md); the engine then labels the speakers of a structured
// transcript itself: each timed segment's voice features (audio/voice_features.h) are
// projected onto the declared directions, and segments are joined, closest first (average
// linkage on cosine distance), until the closest two groups are further apart than the
// declared link distance. Groups are numbered in order of their first segment. This also
// makes speaker numbers hold across the pieces of long audio, which a model's own numbers
// do not (each piece is its own prompt). A model without the keys keeps its own labels.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "audio/voice_features.h"
#include "base/status.h"
#include "gguf/gguf.h"
#include "tern/tern.h"

namespace tern::engine {

inline constexpr const char* kVoicesMeanKey = "tern.voices.mean";
inline constexpr const char* kVoicesProjectionKey = "tern.voices.projection";
inline constexpr const char* kVoicesLinkDistanceKey = "tern.voices.link_distance";

// Joining is quadratic in memory and time: beyond this many timed segments (hours of
// dialogue) the model's own labels are kept, with a warning.
inline constexpr size_t kMaxVoiceSegments = 4096;
// A live stream joins each final piece's segments with the last this many it sent (every
// final re-links them all: 2 MB and a few milliseconds at most).
inline constexpr size_t kMaxStreamVoiceSegments = 512;

struct VoiceProjection {
  std::vector<double> mean;        // audio::kVoiceFeatureCount
  std::vector<double> projection;  // audio::kVoiceFeatureCount rows of `dims`, row-major
  int dims = 0;
  double link_distance = 0;  // cosine distance, (0, 2]

  std::vector<double> Embed(const audio::VoiceFeatures& f) const;
};

// All three keys or none (nullopt); a missing partner, a wrong type or length, a value that
// is not finite, or a link distance outside (0, 2] is a format error naming the file and key.
Result<std::optional<VoiceProjection>> ReadVoiceProjection(const gguf::File& f);

// Average-linkage clustering of the points on cosine distance, stopping when the closest two
// groups are further apart than link_distance; labels 0, 1, ... in order of each group's
// first point.
std::vector<int> LinkByVoice(const std::vector<std::vector<double>>& points, double link_distance);

// Relabels the speakers of t's segments (structured transcripts only; times in t count from
// the source's start, audio.offset_s from it to audio's first sample). A segment without
// times or too short for voice features takes the label of the labelled segment before it
// (or, at the start, after it). Returns a warning when there were too many segments to
// join, else an empty string.
std::string LabelSpeakersByVoice(const VoiceProjection& p, const Audio& audio, Transcript* t);

// Speakers over a live stream, whose pieces are final one at a time: a piece's segments are
// linked together with the voices sent before (the last kMaxStreamVoiceSegments), and each
// group takes the number most of its earlier segments were sent with, one number per group,
// or the next new number. Numbers already sent never change, so the same voice keeps its
// number across pieces as far as the voices tell, where labelling each piece alone would
// start every piece at Speaker 0.
class StreamSpeakers {
 public:
  explicit StreamSpeakers(VoiceProjection p) : p_(std::move(p)) {}

  // A final piece's transcript (structured ones only; times count from piece.offset_s as in
  // LabelSpeakersByVoice). Segments too short to hear take the label before them, or the
  // last one sent.
  void Label(const Audio& piece, Transcript* t);

 private:
  VoiceProjection p_;
  std::deque<std::vector<double>> points_;  // the segments sent, oldest first
  std::deque<int> sent_;                    // the number each was sent with
  int next_ = 0;                            // the next new number
  int last_ = 0;                            // the last number sent
};

}  // namespace tern::engine
