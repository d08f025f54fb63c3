// Audio too long for one prompt, in pieces, and the pieces' transcripts merged into one.
// VibeASR reads a whole recording in one prompt; when its pads and the output budget do not
// fit the decoder's context, or the encoder's memory budget (long_audio.h), or the caller asks
// for shorter pieces, the audio is cut into consecutive pieces, each in a pause near its
// length limit so that a cut rarely splits a word.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/prompt.h"
#include "tern/tern.h"

namespace tern::engine {

// Consecutive [begin, end) sample ranges covering [0, n) (none for n = 0), each at most
// `max_len` samples and, when there are several, at least max_len / 2. Each but the last
// ends in the middle of the lowest-energy 400 ms window (shorter if max_len is) among those
// whose middle lies in the second half of the allowed length. Deterministic; ties go to the
// earliest window.
std::vector<std::pair<int64_t, int64_t>> PlanChunks(const float* x, int64_t n, int64_t max_len);

// 0.25 s: half the default live pause, and within the 0.02-0.35 s of silence the bundled
// model's training clips begin with.
inline constexpr int64_t kPieceLeadIn = kModelSampleRate / 4;

// PlanChunks, each piece after a cut starting LeadInStart(kPieceLeadIn) into its span (the
// silence before it is left out): pieces of at most max_len that may leave gaps.
std::vector<std::pair<int64_t, int64_t>> PlanPiecesByLength(const float* x, int64_t n,
                                                            int64_t max_len);

// Pieces at pauses, for a model that reads one utterance per prompt best
// (TrainedWith::utterance_pieces): one piece per stretch of speech between pauses
// (speech_edges.h), from kPieceLeadIn before its onset to kPieceLeadIn after its offset
// (the first from the audio's start, the last to its end; where a pause is shorter than
// both, the two pieces meet in its middle); a stretch longer than max_len is cut by
// PlanPiecesByLength. Audio with no pause is one piece (or PlanPiecesByLength's).
std::vector<std::pair<int64_t, int64_t>> PlanPiecesAtPauses(const float* x, int64_t n,
                                                            int64_t max_len);

// Where a piece that begins inside a pause should start: `lead` samples before its first
// 10 ms frame within 35 dB of its loudest one (0 if that is nearer the start than `lead`, or
// the span is digital silence). Models place their segment times as if speech began about
// where it does in the clips they were trained on, a fraction of a second in; a piece cut in
// the middle of a pause starts up to half of it earlier, and every time in it comes out early
// by that much.
int64_t LeadInStart(const float* x, int64_t n, int64_t lead);

// "[t0-t1 s]" with two decimals: how errors and warnings name a piece.
std::string PieceLabel(double t0, double t1);

// Appends the transcript of the piece [t0, t1) seconds to `all` (empty for the first piece):
// text joined with a space; ids, log-probabilities and frames in turn; segment times shifted
// by t0 (a plain-text piece is one segment [t0, t1)); warnings prefixed with the piece;
// timings summed; the first piece's prompt and model fields; the worst stop reason ("eos"
// only if every piece ended so). `structured` holds when every piece answered in JSON. Wall
// time, RTF and peak RSS are the caller's.
void AppendPiece(const Transcript& piece, double t0, double t1, Transcript* all);

}  // namespace tern::engine
