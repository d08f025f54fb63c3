#include "engine/long_audio.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "base/timer.h"
#include "engine/chunks.h"

namespace tern::engine {

Result<int64_t> MaxPieceSamples(const vibeasr::Encoder& encoder, int64_t context, int64_t n,
                                const Prompt& whole, const TranscribeOptions& options) {
  int64_t limit = n;
  if (options.chunk_seconds > 0) {
    limit = std::min<int64_t>(limit, std::llround(options.chunk_seconds * kModelSampleRate));
  } else if (encoder.WorkspaceBytes(static_cast<size_t>(n)) > kPieceEncoderBytes) {
    int64_t lo = kSamplesPerFrame, hi = n;  // WorkspaceBytes grows with n
    while (hi - lo > kSamplesPerFrame) {
      const int64_t mid = lo + (hi - lo) / 2;
      (encoder.WorkspaceBytes(static_cast<size_t>(mid)) <= kPieceEncoderBytes ? lo : hi) = mid;
    }
    limit = lo;
  }
  if (context <= 0) return limit;
  // Everything but the pads, plus a few tokens of slack for tokenizers that split digits
  // differently.
  const int64_t fixed = static_cast<int64_t>(whole.tokens.size()) - whole.pad_count + 4;
  const int64_t pads = context - options.decoding.max_tokens - fixed;
  if (pads < 1) {
    return ResourceExhaustedError(
        "the prompt (%lld tokens besides the audio) plus --max-tokens %d leaves no room for "
        "audio in the model's context of %lld tokens; use fewer --max-tokens",
        static_cast<long long>(fixed), options.decoding.max_tokens,
        static_cast<long long>(context));
  }
  return std::min(limit, pads * kSamplesPerFrame);
}

Result<Transcript> TranscribeInPieces(const Audio& audio,
                                      const std::vector<std::pair<int64_t, int64_t>>& pieces,
                                      const TranscribeOptions& options,
                                      const PieceTranscriber& transcribe) {
  Timer wall;
  const double sr = kModelSampleRate;
  Transcript all;
  all.duration_s = audio.duration_s();
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto [b, e] = pieces[i];
    const double t0 = static_cast<double>(b) / sr, t1 = static_cast<double>(e) / sr;
    TranscribeOptions o = options;
    if (options.on_progress) {
      const double lo = static_cast<double>(i) / pieces.size(), hi = (i + 1.0) / pieces.size();
      o.on_progress = [&options, lo, hi](double p) {
        return options.on_progress(lo + p * (hi - lo));
      };
    }
    const std::string name = audio.name + " " + PieceLabel(t0, t1);  // for errors
    Result<Transcript> part = transcribe(audio.samples.data() + b, e - b, name, o);
    if (!part.ok()) return part.status();
    AppendPiece(*part, t0, t1, &all);
  }
  all.metrics.wall_ms = wall.ElapsedMs();
  all.metrics.rtf = all.duration_s > 0 ? all.metrics.wall_ms / 1000.0 / all.duration_s : 0.0;
  all.metrics.peak_rss_bytes = PeakRssBytes();
  ShiftToSource(audio.offset_s, &all);
  return all;
}

void ShiftToSource(double offset, Transcript* t) {
  t->offset_s = offset;
  if (offset == 0) return;
  for (Segment& s : t->segments) {
    if (s.start >= 0) s.start += offset;
    if (s.end >= 0) s.end += offset;
  }
  for (auto& [a, b] : t->pieces) {
    a += offset;
    b += offset;
  }
}

}  // namespace tern::engine
