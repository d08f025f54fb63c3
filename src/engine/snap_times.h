// Segment times moved to the edges of the speech they cover. A small model places its
// segments' starts and ends roughly (the bundled one: median 0.16 s off, a tenth of them over
// 1 s); the audio itself says where speech begins and ends after a pause. A model that
// declares tern.trained.snap_seconds (docs/formats-tern-keys.md) has each start of its JSON
// segments moved to the nearest onset of speech within that many seconds, and each end to
// the nearest offset: speech_edges.h's, so audio without clear pauses (noise under the
// speech) keeps the model's times.
#pragma once

#include "tern/tern.h"

namespace tern::engine {

// Moves the starts and ends of t's timed segments (structured transcripts only; times count
// from the source's start, audio.offset_s from there to audio's first sample) to the nearest
// edge within `seconds`; a segment whose start would no longer precede its end keeps both.
void SnapToSpeechEdges(const Audio& audio, double seconds, Transcript* t);

}  // namespace tern::engine
