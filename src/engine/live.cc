// LiveSession: samples in, pieces cut by LiveCutter, each open piece re-decoded from its start
// every update_seconds (partial) and once more when it ends (final).
#include "engine/live.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "audio/normalize.h"
#include "base/timer.h"
#include "engine/chunks.h"

namespace tern {

namespace {

constexpr int kRate = 24000;

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

engine::LiveCutterConfig CutterConfig(const LiveOptions& o, int64_t max_piece_samples) {
  engine::LiveCutterConfig c;
  c.pause_samples = std::llround(o.pause_seconds * kRate);
  c.silence_ratio = std::pow(10.0, o.silence_db / 20.0);
  c.max_samples = max_piece_samples;
  return c;
}

}  // namespace

Status LiveOptions::Validate() const {
  if (sample_rate < 8000 || sample_rate > 192000)
    return InvalidArgumentError("live sample rate must be in [8000, 192000] Hz, got %d",
                                sample_rate);
  if (!(update_seconds >= 0.05 && update_seconds <= 60))
    return InvalidArgumentError("live update interval must be in [0.05, 60] s, got %g",
                                update_seconds);
  if (!(pause_seconds >= 0.05 && pause_seconds <= 10))
    return InvalidArgumentError("pause length must be in [0.05, 10] s, got %g", pause_seconds);
  if (!(silence_db >= -90 && silence_db <= -6))
    return InvalidArgumentError("silence level must be in [-90, -6] dB, got %g", silence_db);
  if (!(max_piece_seconds == 0 || (max_piece_seconds >= 2 && max_piece_seconds <= 600)))
    return InvalidArgumentError("max piece length must be 0 (default) or in [2, 600] s, got %g",
                                max_piece_seconds);
  if (max_piece_seconds != 0 && max_piece_seconds < 2 * pause_seconds)
    return InvalidArgumentError("max piece length (%g s) must be at least twice the pause (%g s)",
                                max_piece_seconds, pause_seconds);
  return transcribe.Validate();
}

LiveSession::Impl::Impl(const LiveOptions& o, int64_t max_piece_samples, PieceDecoder decoder)
    : options(o),
      decode(std::move(decoder)),
      cutter(CutterConfig(o, max_piece_samples)),
      update_samples(std::max<int64_t>(1, std::llround(o.update_seconds * kRate))) {}

Status LiveSession::Impl::Decode(LiveEvent::Kind kind, int64_t end, int64_t heard,
                                 double lag_origin_ms, std::vector<LiveEvent>* events) {
  const int64_t n = end - buf_start;
  if (n < 1) return Status::Ok();
  const double t0 = static_cast<double>(buf_start) / kRate, t1 = static_cast<double>(end) / kRate;
  Audio a;
  a.name = "live stream " + engine::PieceLabel(t0, t1);
  a.samples.assign(buf.begin(), buf.begin() + n);
  a.source_rate = options.sample_rate;
  a.source_channels = 1;
  if (options.normalize) {  // as LoadAudio does a file (AudioOptions defaults)
    if (const float gain = audio::Normalize(&a.samples, /*clip_guard=*/true); gain > 0)
      a.gain = gain;
    a.normalized = true;
  }
  Result<Transcript> t = decode(a);
  if (!t.ok()) {
    broken = t.status();
    return broken;
  }
  LiveEvent e;
  e.kind = kind;
  e.piece = piece;
  e.start_sample = buf_start;
  e.end_sample = end;
  e.heard_sample = heard;
  e.text = t->text;
  e.metrics = t->metrics;
  if (kind == LiveEvent::Kind::kFinal) {
    if (speakers) speakers->Label(a, &*t);  // replaces the piece's own numbers
    e.transcript = std::move(*t);
    // To the millisecond: the model's times have two decimals, and a sum's last bits would
    // show in JSON (6.0600000000000005).
    const auto shift = [t0](double v) { return std::round((v + t0) * 1000.0) / 1000.0; };
    for (Segment& s : e.transcript.segments) {
      if (s.start >= 0) s.start = shift(s.start);
      if (s.end >= 0) s.end = shift(s.end);
    }
    e.transcript.offset_s = t0;
  }
  e.lag_ms = NowMs() - lag_origin_ms;
  events->push_back(std::move(e));
  return Status::Ok();
}

Status LiveSession::Impl::Feed(const float* x, size_t n, std::vector<LiveEvent>* events) {
  const double origin = NowMs();
  if (!broken.ok()) return broken;
  if (done) return InvalidArgumentError("live stream: Feed after Finish");
  std::vector<float> resampled;
  if (options.sample_rate != kRate) {
    if (!resampler) {
      TERN_ASSIGN_OR_RETURN(resampler, audio::SoxrResampler::Create(options.sample_rate, kRate));
    }
    TERN_RETURN_IF_ERROR(resampler->Push(x, n, &resampled));
    x = resampled.data();
    n = resampled.size();
  }
  if (n == 0) return Status::Ok();
  buf.insert(buf.end(), x, x + n);
  std::vector<engine::LiveCutter::Action> actions;
  cutter.Push(x, n, &actions);
  using Kind = engine::LiveCutter::Action::Kind;
  for (const auto& a : actions) {
    switch (a.kind) {
      case Kind::kSpeechStarted: {
        LiveEvent e;
        e.kind = LiveEvent::Kind::kSpeechStarted;
        e.piece = piece;
        e.start_sample = e.end_sample = a.at;
        e.heard_sample = a.decided;
        e.lag_ms = NowMs() - origin;
        events->push_back(std::move(e));
        break;
      }
      case Kind::kDrop:
        buf.erase(buf.begin(), buf.begin() + (a.at - buf_start));
        buf_start = a.at;
        last_update = a.at;
        break;
      case Kind::kCut:
        TERN_RETURN_IF_ERROR(Decode(LiveEvent::Kind::kFinal, a.at, a.decided, origin, events));
        ++piece;
        buf.erase(buf.begin(), buf.begin() + (a.at - buf_start));
        buf_start = a.at;
        last_update = a.at;
        break;
    }
  }
  // One partial per call however many update points it crossed: a caller that fell behind
  // catches up instead of queueing stale results.
  const int64_t received = cutter.received();
  if (cutter.has_speech() && received - last_update >= update_samples) {
    TERN_RETURN_IF_ERROR(Decode(LiveEvent::Kind::kPartial, received, received, origin, events));
    last_update = received;
  }
  return Status::Ok();
}

Status LiveSession::Impl::Finish(std::vector<LiveEvent>* events) {
  const double origin = NowMs();
  if (!broken.ok()) return broken;
  if (done) return InvalidArgumentError("live stream: Finish called twice");
  if (resampler) {
    std::vector<float> tail;
    TERN_RETURN_IF_ERROR(resampler->Finish(&tail));
    resampler.reset();
    const int rate = options.sample_rate;
    options.sample_rate = kRate;  // the tail is at 24 kHz already
    const Status s = Feed(tail.data(), tail.size(), events);
    options.sample_rate = rate;
    TERN_RETURN_IF_ERROR(s);
  }
  done = true;
  if (cutter.has_speech()) {
    TERN_RETURN_IF_ERROR(
        Decode(LiveEvent::Kind::kFinal, cutter.received(), cutter.received(), origin, events));
    ++piece;
  }
  buf.clear();
  return Status::Ok();
}

const char* LiveEventKindName(LiveEvent::Kind kind) {
  switch (kind) {
    case LiveEvent::Kind::kSpeechStarted:
      return "speech_started";
    case LiveEvent::Kind::kPartial:
      return "partial";
    case LiveEvent::Kind::kFinal:
      return "final";
  }
  return "final";
}

LiveSession::LiveSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LiveSession::~LiveSession() = default;

Status LiveSession::Feed(const float* samples, size_t n, std::vector<LiveEvent>* events) {
  return impl_->Feed(samples, n, events);
}
Status LiveSession::Finish(std::vector<LiveEvent>* events) { return impl_->Finish(events); }
int64_t LiveSession::samples_received() const { return impl_->cutter.received(); }

}  // namespace tern
