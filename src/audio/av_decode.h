// The FFmpeg decode path (libavformat + libavcodec + libswresample): the containers and
// codecs libsndfile does not read, above all what browsers record (WebM/Opus) and what
// phones save (M4A/MP4 with AAC). audio.cc tries libsndfile first and comes here only when
// it does not recognise the bytes.
//
// Everything a hostile upload can cause is bounded: the bytes are read from memory through
// a custom AVIOContext and nothing else is ever opened (no protocols, no nested opens, so
// HLS/concat playlists and MP4 external references are refused); only the demuxers in
// kAvFormats are accepted; probing reads at most 1 MB; no single FFmpeg allocation may
// exceed 64 MB (av_max_alloc); packets and decoded frames are counted against max_seconds;
// decoded samples go through Pipeline like libsndfile's, so max_seconds, NaN/Inf, rate and
// channel limits hold the same way. FFmpeg's log never reaches stderr: errors it logs while
// decoding for a caller end up in that caller's message. (The allocation bound and the log
// callback are process-wide: a program that uses FFmpeg itself and wants its own log sets
// its callback after tern's first FFmpeg decode.)
//
// Built only with TERN_HAVE_AV (CMake option TERN_WITH_AV, on when pkg-config finds the
// libraries); without it DecodeWithAv returns an error saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "audio/audio.h"
#include "base/status.h"

namespace tern::audio {

// True when this build decodes through FFmpeg.
bool AvAvailable();
// "libavformat X.Y.Z, libavcodec X.Y.Z" of the libraries loaded at run time (what decodes),
// or "" without FFmpeg.
std::string AvVersions();

// Decodes `data` (the bytes of `name`, only read during the call). `sndfile_reason` is why
// libsndfile refused them: when FFmpeg does not recognise them either, the error gives both.
Result<Audio> DecodeWithAv(const uint8_t* data, size_t size, const std::string& name,
                           const AudioOptions& options, Resampler resampler,
                           const std::string& sndfile_reason);

}  // namespace tern::audio
