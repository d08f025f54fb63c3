#include "engine/live_cutter.h"

#include <algorithm>

#include "base/check.h"

namespace tern::engine {

LiveCutter::LiveCutter(const LiveCutterConfig& config) : c_(config) {
  TERN_CHECK(c_.pause_samples >= kFrame && c_.max_samples >= 4 * kFrame);
  pause_frames_ = c_.pause_samples / kFrame;
  max_frames_ = c_.max_samples / kFrame;
  // Before speech, keep half a pause of lead-in: the model hears the onset whole.
  lead_frames_ = std::max<int64_t>(1, pause_frames_ / 2);
}

void LiveCutter::Push(const float* x, size_t n, std::vector<Action>* out) {
  for (size_t i = 0; i < n; ++i) {
    partial_sum_ += static_cast<double>(x[i]) * x[i];
    ++received_;
    if (++partial_n_ == kFrame) {
      const double ms = partial_sum_ / kFrame;
      partial_sum_ = 0;
      partial_n_ = 0;
      AddFrame(ms, out);
    }
  }
}

void LiveCutter::AddFrame(double ms, std::vector<Action>* out) {
  ms_.push_back(ms);
  peak_ = std::max(peak_, ms);
  const double level = std::max(peak_, ref_);
  const double r2 = c_.silence_ratio * c_.silence_ratio;
  const bool quiet = ms < kFloor * kFloor || ms < r2 * level;
  if (quiet) {
    ++quiet_run_;
  } else {
    quiet_run_ = 0;
    if (!speech_) {
      speech_ = true;
      out->push_back({Action::Kind::kSpeechStarted,
                      start_ + static_cast<int64_t>(ms_.size() - 1) * kFrame,
                      start_ + static_cast<int64_t>(ms_.size()) * kFrame});
    }
  }
  const int64_t frames = static_cast<int64_t>(ms_.size());
  const int64_t decided = start_ + frames * kFrame;
  if (!speech_) {
    if (frames > lead_frames_) {
      Advance(frames - lead_frames_, nullptr);
      out->push_back({Action::Kind::kDrop, start_, decided});
    }
    return;
  }
  if (quiet_run_ >= pause_frames_) {
    // Cut in the middle of the pause: both pieces keep some silence around their words.
    const int64_t cut = frames - pause_frames_ / 2;
    out->push_back({Action::Kind::kCut, start_ + cut * kFrame, decided});
    ref_ = peak_;
    Advance(cut, out);
    return;
  }
  if (frames >= max_frames_) {
    // The quietest window (400 ms, or a quarter of the piece) whose middle lies in the
    // second half; ties go to the earliest.
    const int64_t w = std::min<int64_t>(40, std::max<int64_t>(1, max_frames_ / 4));
    const int64_t lo = std::max(max_frames_ / 2, w / 2), hi = frames - (w - w / 2);
    int64_t best_c = std::max(lo, std::min(hi, frames - 1));
    double best = -1;
    for (int64_t c = lo; c <= hi; ++c) {
      double e = 0;
      for (int64_t f = c - w / 2; f < c - w / 2 + w; ++f) e += ms_[f];
      if (best < 0 || e < best) {
        best = e;
        best_c = c;
      }
    }
    out->push_back({Action::Kind::kCut, start_ + best_c * kFrame, decided});
    ref_ = peak_;
    Advance(best_c, out);
  }
}

void LiveCutter::Advance(int64_t frames, std::vector<Action>* out) {
  TERN_CHECK(frames >= 1 && frames <= static_cast<int64_t>(ms_.size()));
  start_ += frames * kFrame;
  std::vector<double> rest(ms_.begin() + frames, ms_.end());
  ms_.clear();
  peak_ = 0;
  quiet_run_ = 0;
  speech_ = false;
  if (out == nullptr) {  // a drop: the frames left are quiet lead-in, their levels kept
    for (double ms : rest) {
      ms_.push_back(ms);
      peak_ = std::max(peak_, ms);
      ++quiet_run_;
    }
    return;
  }
  for (double ms : rest) AddFrame(ms, out);
}

}  // namespace tern::engine
