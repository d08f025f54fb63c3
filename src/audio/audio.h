// Audio front end: any WAV, FLAC, OGG/Vorbis, Ogg/Opus or MP3 file, and with FFmpeg
// (TERN_WITH_AV) M4A/MP4 (AAC, ALAC), WebM/Matroska (Opus, Vorbis) and the other containers
// of av_decode.h (or the same bytes in memory), to mono float samples at 24 kHz, the rate
// VibeASR's encoder consumes.
//
// Recipe (spec 6; order as upstream: mono -> resample -> normalize):
//  1. Decode with libsndfile as float. Integer PCM uses libsndfile's default scaling,
//     s16 / 32768 (s24 / 2^23, s32 / 2^31); upstream dr_wav scales s16 by 2^-15 too.
//     Float files pass through unscaled. Bytes libsndfile does not recognise go to FFmpeg
//     (av_decode.h), whose samples libswresample converts to float at their own rate and
//     channel count. Steps 2-5 are Pipeline's (pipeline.h), the same for both decoders.
//  2. Mono: float mean of the channels, sum / (float)channels, channels added in order.
//  3. Resample to 24 kHz (skipped when the source is 24 kHz: samples pass unchanged):
//     kSoxrHq (default): libsoxr, soxr_quality_spec(SOXR_HQ, 0) = 20-bit precision,
//       linear phase, passband to 91.3% of the lower Nyquist; one thread; streamed in
//       blocks so a long file never holds its source-rate samples.
//     kLinear: upstream VibeASR.cpp's resampler, for parity runs: ratio = src/dst
//       (double), out_len = (size_t)(in_len / ratio), x = i * ratio, linear interpolation
//       in double between floor(x) and floor(x)+1, the last sample held.
//  4. Normalize (on by default): rms = sqrtf((float)(sum x^2 in double / n)); if rms >=
//     1e-6, x *= powf(10, -25/20) / (rms + 1e-6)  (-25 dBFS, as upstream and VibeVoice).
//  5. Clip guard (on by default, as VibeVoice's Python AudioNormalizer; upstream C++ has
//     none): if max|x| > 1, x /= (max|x| + 1e-6).  `normalize = false` skips 4 and 5.
//
// Errors (each names the file or the caller's name): missing or unreadable file; a format
// neither libsndfile nor FFmpeg recognises (their messages are included; without FFmpeg the
// error says that other containers need tern built with it); a playlist (HLS, concat) or
// any file that would open another; a decode error mid-stream
// (truncated FLAC/OGG/MP3); no samples; every sample zero after mixing ("audio is
// silent": a hard error rather than an empty transcript, so a broken capture is noticed);
// NaN or Inf samples; sample rate outside [1000, 768000] Hz; more than 64 channels;
// longer than max_seconds (the message names the limit and --max-audio-seconds).
// A WAV whose data chunk is cut short is read up to the end of the file (libsndfile's
// behaviour): the header cannot be trusted over the bytes present.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "tern/types.h"

namespace tern::audio {

inline constexpr int kTargetRate = 24000;
inline constexpr int kMinSourceRate = 1000;
inline constexpr int kMaxSourceRate = 768000;
inline constexpr int kMaxChannels = 64;

enum class Resampler { kSoxrHq, kLinear };

// The options and the result are the public types (tern/types.h), used as they are.
using tern::Audio;
using tern::AudioOptions;

// Audio::name is `path`, or `name` for bytes in memory (the bytes are only read during the
// call). `resampler`: kLinear only for parity runs against upstream.
Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options = {},
                        Resampler resampler = Resampler::kSoxrHq);
Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options = {},
                                  Resampler resampler = Resampler::kSoxrHq);

}  // namespace tern::audio
