// tern transcribe --live: a stream of raw PCM (s16le) or a WAV stream read as it arrives, text
// out as it is spoken (tern::LiveSession).
#pragma once

#include <string>

#include "tern/tern.h"

namespace tern::cli {

struct LiveCliOptions {
  std::string input;     // "-" (standard input) or a file read as a stream
  int raw_rate = 24000;  // raw PCM's sample rate (a WAV stream says its own)
  bool json = false;     // one JSON event per line
  bool metrics = false;  // lag figures on stderr at the end
  LiveOptions live;
};

Status TranscribeLive(Session& session, const LiveCliOptions& options);

}  // namespace tern::cli
