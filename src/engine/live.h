// LiveSession's state (tern.h): the cutter, the open piece's samples, and how a piece is
// decoded (Session::StartLive binds it to the Session's one-prompt transcription).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audio/resample.h"
#include "engine/live_cutter.h"
#include "engine/speakers.h"
#include "tern/tern.h"

namespace tern {

struct LiveSession::Impl {
  // A piece's transcript: what Session::Transcribe gives for it as a file (the samples
  // normalized as LoadAudio would, `name` naming the piece in errors).
  using PieceDecoder = std::function<Result<Transcript>(const Audio& piece)>;

  Impl(const LiveOptions& options, int64_t max_piece_samples, PieceDecoder decoder);

  Status Feed(const float* x, size_t n, std::vector<LiveEvent>* events);
  Status Finish(std::vector<LiveEvent>* events);
  // The open piece [piece_start, end) decoded as `kind`.
  Status Decode(LiveEvent::Kind kind, int64_t end, int64_t heard, double lag_origin_ms,
                std::vector<LiveEvent>* events);

  LiveOptions options;
  PieceDecoder decode;
  engine::LiveCutter cutter;
  std::unique_ptr<audio::SoxrResampler> resampler;  // sample_rate != 24000
  // A model that declares a voice projection: speaker numbers that hold across the pieces.
  std::optional<engine::StreamSpeakers> speakers;
  std::vector<float> buf;  // the open piece's samples so far
  int64_t buf_start = 0;   // buf[0]'s index in the stream
  int64_t update_samples = 0;
  int64_t last_update = 0;  // where the last partial (or the piece) ended
  int64_t piece = 0;
  bool done = false;
  Status broken;  // the first error; sticks
};

}  // namespace tern
