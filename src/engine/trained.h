// The tern.trained.* keys of an LM GGUF (docs/formats-tern-keys.md): what the model was
// trained with, so the engine can warn about options it was not (TrainedWith in tern.h).
#pragma once

#include "gguf/gguf.h"
#include "tern/tern.h"

namespace tern::engine {

inline constexpr const char* kTrainedContextKey = "tern.trained.context";
inline constexpr const char* kTrainedJsonFormatKey = "tern.trained.json_format";
inline constexpr const char* kTrainedMaxAudioSecondsKey = "tern.trained.max_audio_seconds";
inline constexpr const char* kTrainedChunkSecondsKey = "tern.trained.chunk_seconds";
inline constexpr const char* kTrainedSnapSecondsKey = "tern.trained.snap_seconds";
inline constexpr const char* kTrainedBeamKey = "tern.trained.beam";
inline constexpr const char* kTrainedUtterancePiecesKey = "tern.trained.utterance_pieces";

// Absent keys stay unknown; a key of the wrong type (or a length that is not a positive
// number) is a format error naming the file and the key.
Result<TrainedWith> ReadTrainedWith(const gguf::File& f);

// The piece length, seconds, for a model whose longest training clip is `longest` seconds.
double TrainedPieceSeconds(double longest);

// The automatic piece length of a model: its declared chunk_seconds, else
// TrainedPieceSeconds of its longest training clip; unset when it declares neither.
std::optional<double> AutomaticPieceSeconds(const TrainedWith& trained);

// The options as the model should run them: the context dropped when the model declares it
// was not trained with one (OptionWarnings says so); automatic pieces (chunk_seconds 0) of
// AutomaticPieceSeconds when the model declares a length, cut at every pause
// (pieces_at_pauses) when it declares utterance_pieces; snap_seconds -1 replaced by the
// model's declared snap_seconds (0 when it declares none); beam 0 replaced by the model's
// declared beam when decoding greedily (temperature 0) without on_text, else by 1.
TranscribeOptions FitOptions(const ModelInfo& model, const TranscribeOptions& options);

// Per audio: a hint when a --chunk-seconds over AutomaticPieceSeconds was asked for audio
// longer than the model's declared pieces (or, without those, its longest training clip);
// empty otherwise.
std::string LengthWarning(const ModelInfo& model, const TranscribeOptions& options,
                          double duration_s);

}  // namespace tern::engine
