// libFuzzer target for the audio front end from memory (audio/audio.h
// LoadAudioFromMemory): an upload is arbitrary bytes. Run with scripts/fuzz. Built with
// TERN_HAVE_AV (scripts/fuzz does when pkg-config finds FFmpeg), bytes libsndfile refuses
// go on to the FFmpeg path (audio/av_decode.h), seeded with WebM, M4A and playlists.
//
// max_seconds is 2 s, so whatever the bytes claim, a successful decode holds at most a few
// seconds of samples; scripts/fuzz also caps each malloc (-malloc_limit_mb) so a header
// that makes anyone allocate in proportion to a claimed length is reported as a crash.
// Oracles beyond "no crash, no sanitizer report":
//   * success gives 1..(2 s + one resampler block) samples at 24 kHz, all finite,
//     duration_s() = samples / 24000, a source rate and channel count inside the limits;
//   * with normalize + clip guard, every |sample| <= 1;
//   * a failure names the upload.
// Each input is decoded with the soxr resampler and, when the last byte is odd, again with
// the linear one (the two share the decode path, not the resampling).
#include <cmath>
#include <cstdint>
#include <string>

#include "audio/audio.h"

namespace {

void Require(bool cond) {
  if (!cond) __builtin_trap();
}

void Check(const uint8_t* data, size_t size, tern::audio::Resampler resampler) {
  tern::audio::AudioOptions opt;
  opt.max_seconds = 2.0;
  auto a = tern::audio::LoadAudioFromMemory(data, size, "fuzz.wav", opt, resampler);
  if (!a.ok()) {
    Require(a.status().message().rfind("fuzz.wav: ", 0) == 0);
    return;
  }
  using tern::audio::kTargetRate;
  Require(a->source_rate >= tern::audio::kMinSourceRate &&
          a->source_rate <= tern::audio::kMaxSourceRate);
  Require(a->source_channels >= 1 && a->source_channels <= tern::audio::kMaxChannels);
  Require(!a->samples.empty());
  // 2 s of output plus a resampler's rounding (a few samples, well under 0.1 s).
  Require(a->samples.size() <= static_cast<size_t>(2.1 * kTargetRate));
  Require(a->duration_s() == static_cast<double>(a->samples.size()) / kTargetRate);
  for (float x : a->samples) Require(std::isfinite(x) && std::fabs(x) <= 1.0f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Check(data, size, tern::audio::Resampler::kSoxrHq);
  if (size > 0 && (data[size - 1] & 1)) Check(data, size, tern::audio::Resampler::kLinear);
  return 0;
}
