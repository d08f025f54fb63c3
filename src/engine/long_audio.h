// Long audio in a Session: how long one prompt's piece may be, the loop that transcribes
// the pieces in order and merges them (the cutting and merging rules are chunks.h's), and
// times that count from the source's start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/prompt.h"
#include "models/vibeasr/encoder.h"
#include "tern/tern.h"

namespace tern::engine {

// Encoder activations per piece when no --chunk-seconds is given: about 13 minutes of audio
// at the published geometry, so a long recording neither exhausts a 16 GB machine nor
// depends, in where it is cut, on the machine it runs on.
inline constexpr size_t kPieceEncoderBytes = size_t{4} << 30;

// The longest piece (samples) of n whose prompt and output budget fit the decoder's
// `context` (0: no limit), and then either within options.chunk_seconds or, without it,
// within kPieceEncoderBytes of encoder activations; an error when not even one frame fits
// the context. `whole` is the prompt for all n samples: a piece's prompt differs only in
// its pads and its duration, which has no more digits.
Result<int64_t> MaxPieceSamples(const vibeasr::Encoder& encoder, int64_t context, int64_t n,
                                const Prompt& whole, const TranscribeOptions& options);

// Transcribes one piece: samples x[0, n), named `name` in errors, with these options.
using PieceTranscriber = std::function<Result<Transcript>(
    const float* x, int64_t n, const std::string& name, const TranscribeOptions& options)>;

// Audio in the given pieces (PlanPiecesByLength or PlanPiecesAtPauses): one prompt per
// piece, in order, merged into one transcript with the pieces' times shifted to the whole
// audio (AppendPiece). Progress is reported over the whole. The model's speaker numbers
// restart in every piece. Pieces may leave gaps (silence not transcribed), and so may
// Transcript::pieces.
Result<Transcript> TranscribeInPieces(const Audio& audio,
                                      const std::vector<std::pair<int64_t, int64_t>>& pieces,
                                      const TranscribeOptions& options,
                                      const PieceTranscriber& transcribe);

// Times count from the source's start: an excerpt (AudioOptions::offset_s) shifts them.
void ShiftToSource(double offset, Transcript* t);

}  // namespace tern::engine
