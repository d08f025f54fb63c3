// Decoding (libsndfile) and the pipeline of audio.h: decode in blocks -> mono -> resample
// -> normalize.
#include "audio/audio.h"

#include <sndfile.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>

#include "audio/normalize.h"
#include "audio/resample.h"

namespace tern::audio {
namespace {

// libsndfile virtual I/O over caller memory.
struct MemStream {
  const uint8_t* data;
  sf_count_t size;
  sf_count_t pos;
};
sf_count_t MemLength(void* u) { return static_cast<MemStream*>(u)->size; }
sf_count_t MemSeek(sf_count_t off, int whence, void* u) {
  auto* m = static_cast<MemStream*>(u);
  sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? m->pos + off : m->size + off;
  if (p < 0 || p > m->size) return -1;
  m->pos = p;
  return p;
}
sf_count_t MemRead(void* dst, sf_count_t n, void* u) {
  auto* m = static_cast<MemStream*>(u);
  const sf_count_t k = std::min(n, m->size - m->pos);
  if (k <= 0) return 0;
  std::memcpy(dst, m->data + m->pos, static_cast<size_t>(k));
  m->pos += k;
  return k;
}
sf_count_t MemWrite(const void*, sf_count_t, void*) { return 0; }
sf_count_t MemTell(void* u) { return static_cast<MemStream*>(u)->pos; }

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

constexpr sf_count_t kBlockFrames = 1 << 15;

// A WAV whose data chunk promises more bytes than the file holds was cut short (an
// interrupted download or upload). libsndfile silently reads what is there; its log says
// "data : <declared> (should be <present>)". 0 and 0xFFFFFFFF are the placeholders that
// streaming writers (ffmpeg to a pipe) leave, not truncation.
Status CheckWavTruncation(SNDFILE* f, const SF_INFO& info, const std::string& name) {
  const int major = info.format & SF_FORMAT_TYPEMASK;
  if (major != SF_FORMAT_WAV && major != SF_FORMAT_WAVEX) return Status::Ok();
  char log[8192] = {0};
  sf_command(f, SFC_GET_LOG_INFO, log, sizeof(log));
  const char* d = std::strstr(log, "\ndata : ");
  unsigned long long declared = 0, present = 0;
  if (d != nullptr && std::sscanf(d, "\ndata : %llu (should be %llu)", &declared, &present) == 2 &&
      declared > present && declared != 0xFFFFFFFFull) {
    return FormatError(
        "%s: truncated WAV: the header declares %llu bytes of audio data, the file "
        "holds %llu",
        name.c_str(), declared, present);
  }
  return Status::Ok();
}

float Rms(const std::vector<float>& x) {
  double sum_sq = 0.0;
  for (float v : x) sum_sq += static_cast<double>(v) * static_cast<double>(v);
  return x.empty() ? 0.0f : static_cast<float>(std::sqrt(sum_sq / static_cast<double>(x.size())));
}

Result<Audio> Decode(SNDFILE* f, const SF_INFO& info, const std::string& name,
                     const AudioOptions& options, Resampler resampler) {
  const char* n = name.c_str();
  if (info.channels < 1 || info.channels > kMaxChannels) {
    return UnsupportedError("%s: %d channels; tern reads 1 to %d", n, info.channels, kMaxChannels);
  }
  if (info.samplerate < kMinSourceRate || info.samplerate > kMaxSourceRate) {
    return UnsupportedError("%s: sample rate %d Hz is outside %d..%d Hz", n, info.samplerate,
                            kMinSourceRate, kMaxSourceRate);
  }
  const int rate = info.samplerate, channels = info.channels;
  const double max_frames_d = std::ceil(options.max_seconds * rate);
  auto too_long = [&](double seconds_at_least) {
    return ResourceExhaustedError(
        "%s: audio is %s%.1f s long, over the limit of %.1f s (raise it with "
        "--max-audio-seconds)",
        n, seconds_at_least < 0 ? "more than " : "", std::fabs(seconds_at_least),
        options.max_seconds);
  };
  // The header's frame count (when it has one) lets a too-long file fail before decoding.
  if (info.frames > 0 && info.frames != SF_COUNT_MAX &&
      static_cast<double>(info.frames) > max_frames_d) {
    return too_long(static_cast<double>(info.frames) / rate);
  }

  TERN_RETURN_IF_ERROR(CheckWavTruncation(f, info, name));

  const bool passthrough = rate == kTargetRate;
  const bool linear = resampler == Resampler::kLinear;
  std::unique_ptr<SoxrResampler> soxr;
  if (!passthrough && !linear) {
    TERN_ASSIGN_OR_RETURN(soxr, SoxrResampler::Create(rate, kTargetRate));
  }

  Audio out;
  out.source_rate = rate;
  out.source_channels = channels;
  std::vector<float> mono_all;  // passthrough or linear: the whole mono signal
  std::vector<float> block(static_cast<size_t>(kBlockFrames) * channels), mono;
  int64_t total = 0;
  float peak = 0.0f;
  for (;;) {
    const sf_count_t got = sf_readf_float(f, block.data(), kBlockFrames);
    if (got <= 0) break;
    mono.resize(static_cast<size_t>(got));
    for (sf_count_t i = 0; i < got; ++i) {
      const float* fr = &block[static_cast<size_t>(i) * channels];
      float sum = 0.0f;
      for (int c = 0; c < channels; ++c) {
        if (!std::isfinite(fr[c])) {
          return FormatError("%s: sample %lld of channel %d is %s", n,
                             static_cast<long long>(total) + i, c,
                             std::isnan(fr[c]) ? "NaN" : "infinite");
        }
        sum += fr[c];
      }
      mono[i] = channels == 1 ? sum : sum / static_cast<float>(channels);
      peak = std::fmax(peak, std::fabs(mono[i]));
    }
    total += got;
    if (static_cast<double>(total) > max_frames_d)
      return too_long(-static_cast<double>(total) / rate);
    if (soxr) {
      TERN_RETURN_IF_ERROR(soxr->Push(mono.data(), mono.size(), &out.samples));
    } else {
      mono_all.insert(mono_all.end(), mono.begin(), mono.end());
    }
  }
  if (sf_error(f) != SF_ERR_NO_ERROR) {
    return FormatError("%s: decoding failed after %lld frames (truncated or corrupt file?): %s", n,
                       static_cast<long long>(total), sf_strerror(f));
  }
  if (total == 0) return FormatError("%s: contains no audio samples", n);
  // FLAC's STREAMINFO holds the exact length; fewer decoded frames means a cut stream.
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC && info.frames > 0 &&
      total < info.frames) {
    return FormatError(
        "%s: truncated or corrupt FLAC: the header declares %lld frames, only %lld "
        "decode",
        n, static_cast<long long>(info.frames), static_cast<long long>(total));
  }
  if (peak == 0.0f) {
    return InvalidArgumentError(
        "%s: audio is silent (every sample is zero after mixing to "
        "mono); nothing to transcribe",
        n);
  }
  if (soxr) {
    TERN_RETURN_IF_ERROR(soxr->Finish(&out.samples));
  } else if (passthrough) {
    out.samples = std::move(mono_all);
  } else {
    out.samples = ResampleLinear(mono_all, rate, kTargetRate);
  }
  if (out.samples.empty()) {
    return FormatError("%s: %lld frames at %d Hz are less than one sample at %d Hz", n,
                       static_cast<long long>(total), rate, kTargetRate);
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
    const float before = NormalizeRms(&out.samples);
    if (options.clip_guard) ClipGuard(&out.samples);
    // The level the samples had: a quiet recording and a loud one normalize alike, and the
    // no-speech check asks how loud the source was.
    if (before > 0) out.gain = Rms(out.samples) / before;
  }
  out.name = name;
  return out;
}

// libsndfile keeps the reason for a failed open in a global: opens are serialised so that
// concurrent loads (a server) each report their own reason. Reading is per handle and runs
// in parallel.
std::mutex& OpenMutex() {
  static std::mutex m;
  return m;
}

// Call with OpenMutex() held. sf_strerror(nullptr) is the message of the last failed open.
Status OpenError(const std::string& name) {
  return FormatError(
      "%s: not a readable audio file (WAV, FLAC, OGG/Vorbis, MP3, ...): "
      "libsndfile: %s",
      name.c_str(), sf_strerror(nullptr));
}

}  // namespace

Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options, Resampler resampler) {
  TERN_RETURN_IF_ERROR(options.Validate());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return NotFoundError("%s: no such file", path.c_str());
    return IoError("%s: %s", path.c_str(), std::strerror(e));
  }
  if (S_ISDIR(st.st_mode))
    return InvalidArgumentError("%s: is a directory, not an audio file", path.c_str());
  if (st.st_size == 0) return FormatError("%s: file is empty", path.c_str());
  SF_INFO info{};
  SndfilePtr f;
  {
    std::lock_guard<std::mutex> lock(OpenMutex());
    f.reset(sf_open(path.c_str(), SFM_READ, &info));
    if (!f) return OpenError(path);
  }
  return Decode(f.get(), info, path, options, resampler);
}

Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options, Resampler resampler) {
  TERN_RETURN_IF_ERROR(options.Validate());
  if (size == 0) return FormatError("%s: no bytes (empty input)", name.c_str());
  SF_VIRTUAL_IO io{MemLength, MemSeek, MemRead, MemWrite, MemTell};
  MemStream m{static_cast<const uint8_t*>(data), static_cast<sf_count_t>(size), 0};
  SF_INFO info{};
  SndfilePtr f;
  {
    std::lock_guard<std::mutex> lock(OpenMutex());
    f.reset(sf_open_virtual(&io, SFM_READ, &info, &m));
    if (!f) return OpenError(name);
  }
  return Decode(f.get(), info, name, options, resampler);
}

}  // namespace tern::audio

namespace tern {

// The public AudioOptions' rules live with the loader that reads them.
Status AudioOptions::Validate() const {
  if (!(max_seconds > 0) || !std::isfinite(max_seconds)) {
    return InvalidArgumentError("max audio seconds must be a positive number, got %g", max_seconds);
  }
  if (max_seconds > 1e7) {  // ~115 days: far past memory; rejects typos like 1e12
    return InvalidArgumentError("max audio seconds %g is absurd (limit 1e7)", max_seconds);
  }
  if (!(offset_s >= 0 && offset_s <= 1e7))
    return InvalidArgumentError("--offset must be in [0, 1e7] seconds, got %g", offset_s);
  if (!(duration_s >= 0 && duration_s <= 1e7))
    return InvalidArgumentError("--duration must be in [0, 1e7] seconds (0: to the end), got %g",
                                duration_s);
  return Status::Ok();
}

}  // namespace tern
