// Mono mix, length bound, resampling, excerpt and normalization (audio.h steps 2-5).
#include "audio/pipeline.h"

#include <algorithm>
#include <cmath>

#include "audio/normalize.h"

namespace tern::audio {
Pipeline::~Pipeline() = default;

Result<std::unique_ptr<Pipeline>> Pipeline::Create(const std::string& name, int rate, int channels,
                                                   const AudioOptions& options,
                                                   Resampler resampler) {
  const char* n = name.c_str();
  if (channels < 1 || channels > kMaxChannels) {
    return UnsupportedError("%s: %d channels; tern reads 1 to %d", n, channels, kMaxChannels);
  }
  if (rate < kMinSourceRate || rate > kMaxSourceRate) {
    return UnsupportedError("%s: sample rate %d Hz is outside %d..%d Hz", n, rate, kMinSourceRate,
                            kMaxSourceRate);
  }
  std::unique_ptr<Pipeline> p(new Pipeline);
  p->name_ = name;
  p->options_ = options;
  p->resampler_ = resampler;
  p->rate_ = rate;
  p->channels_ = channels;
  p->max_frames_ = std::ceil(options.max_seconds * rate);
  if (rate != kTargetRate && resampler == Resampler::kSoxrHq) {
    TERN_ASSIGN_OR_RETURN(p->soxr_, SoxrResampler::Create(rate, kTargetRate));
  }
  return p;
}

Status TooLongError(const std::string& name, const AudioOptions& options, double seconds_at_least) {
  return ResourceExhaustedError(
      "%s: audio is %s%.1f s long, over the limit of %.1f s (raise it with "
      "--max-audio-seconds)",
      name.c_str(), seconds_at_least < 0 ? "more than " : "", std::fabs(seconds_at_least),
      options.max_seconds);
}

Status Pipeline::CheckDeclaredFrames(int64_t frames) const {
  if (frames > 0 && static_cast<double>(frames) > max_frames_) {
    return TooLongError(name_, options_, static_cast<double>(frames) / rate_);
  }
  return Status::Ok();
}

Status Pipeline::Push(const float* in, size_t frames) {
  if (frames == 0) return Status::Ok();
  mono_.resize(frames);
  for (size_t i = 0; i < frames; ++i) {
    const float* fr = in + i * static_cast<size_t>(channels_);
    float sum = 0.0f;
    for (int c = 0; c < channels_; ++c) {
      if (!std::isfinite(fr[c])) {
        return FormatError("%s: sample %lld of channel %d is %s", name_.c_str(),
                           static_cast<long long>(total_) + static_cast<long long>(i), c,
                           std::isnan(fr[c]) ? "NaN" : "infinite");
      }
      sum += fr[c];
    }
    mono_[i] = channels_ == 1 ? sum : sum / static_cast<float>(channels_);
    peak_ = std::fmax(peak_, std::fabs(mono_[i]));
  }
  total_ += static_cast<int64_t>(frames);
  if (static_cast<double>(total_) > max_frames_) {
    return TooLongError(name_, options_, -static_cast<double>(total_) / rate_);
  }
  if (soxr_) return soxr_->Push(mono_.data(), mono_.size(), &out_);
  mono_all_.insert(mono_all_.end(), mono_.begin(), mono_.end());
  return Status::Ok();
}

Result<Audio> Pipeline::Finish() {
  const char* n = name_.c_str();
  const AudioOptions& options = options_;
  if (total_ == 0) return FormatError("%s: contains no audio samples", n);
  if (peak_ == 0.0f) {
    return InvalidArgumentError(
        "%s: audio is silent (every sample is zero after mixing to "
        "mono); nothing to transcribe",
        n);
  }
  Audio out;
  out.source_rate = rate_;
  out.source_channels = channels_;
  if (soxr_) {
    TERN_RETURN_IF_ERROR(soxr_->Finish(&out_));
    out.samples = std::move(out_);
  } else if (rate_ == kTargetRate) {
    out.samples = std::move(mono_all_);
  } else {
    out.samples = ResampleLinear(mono_all_, rate_, kTargetRate);
  }
  if (out.samples.empty()) {
    return FormatError("%s: %lld frames at %d Hz are less than one sample at %d Hz", n,
                       static_cast<long long>(total_), rate_, kTargetRate);
  }
  if (options.offset_s > 0 || options.duration_s > 0) {
    const int64_t size = static_cast<int64_t>(out.samples.size());
    const int64_t b = std::llround(options.offset_s * kTargetRate);
    if (b >= size) {
      return InvalidArgumentError(
          "%s: --offset %.3f s is at or past the end of the audio "
          "(%.3f s)",
          n, options.offset_s, static_cast<double>(size) / kTargetRate);
    }
    const int64_t e =
        options.duration_s > 0
            ? std::min<int64_t>(size, b + std::llround(options.duration_s * kTargetRate))
            : size;
    if (e <= b) {
      return InvalidArgumentError("%s: --duration %g s is less than one sample", n,
                                  options.duration_s);
    }
    out.samples.erase(out.samples.begin() + e, out.samples.end());
    out.samples.erase(out.samples.begin(), out.samples.begin() + b);
    out.offset_s = static_cast<double>(b) / kTargetRate;
    if (std::all_of(out.samples.begin(), out.samples.end(), [](float v) { return v == 0.0f; })) {
      return InvalidArgumentError(
          "%s: the excerpt [%.3f, %.3f) s is silent; nothing to "
          "transcribe",
          n, out.offset_s, static_cast<double>(e) / kTargetRate);
    }
  }
  if (options.normalize) {
    // The level the samples had: a quiet recording and a loud one normalize alike, and the
    // no-speech check asks how loud the source was.
    if (const float gain = Normalize(&out.samples, options.clip_guard); gain > 0) out.gain = gain;
    out.normalized = true;
  }
  out.name = name_;
  return out;
}

}  // namespace tern::audio
