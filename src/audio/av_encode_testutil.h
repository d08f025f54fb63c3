// Test support: encodes a known signal with FFmpeg's encoders into a container in memory, so
// the tests of the FFmpeg decode path need no binary and no stored media. Only built with
// TERN_WITH_AV; FFmpeg's types stay inside the .cc (src/audio owns FFmpeg).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tern::audio::testutil {

// `interleaved`: frames of `channels` floats at `rate` Hz. `container`: a libavformat muxer
// ("webm", "ipod" for .m4a, "mp4"); `encoder`: a libavcodec encoder ("libopus", "aac").
// NotFound when this FFmpeg lacks the muxer or the encoder.
Result<std::string> EncodeWithAv(const std::string& container, const std::string& encoder, int rate,
                                 int channels, const std::vector<float>& interleaved, int bit_rate);

}  // namespace tern::audio::testutil
