#include "engine/trained.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tern::engine {
namespace {

Result<std::optional<bool>> ReadBool(const gguf::File& f, const char* key) {
  const gguf::Value* v = f.Find(key);
  if (v == nullptr) return std::optional<bool>();
  if (v->type != gguf::ValueType::kBool)
    return FormatError("%s: %s must be a bool", f.path().c_str(), key);
  return std::optional<bool>(v->u != 0);
}

Result<std::optional<double>> ReadSeconds(const gguf::File& f, const char* key) {
  if (f.Find(key) == nullptr) return std::optional<double>();
  TERN_ASSIGN_OR_RETURN(const double s, f.GetF64(key));
  if (!(s > 0) || !std::isfinite(s))
    return FormatError("%s: %s must be a positive number of seconds, got %g", f.path().c_str(), key,
                       s);
  return std::optional<double>(s);
}

}  // namespace

Result<TrainedWith> ReadTrainedWith(const gguf::File& f) {
  TrainedWith t;
  TERN_ASSIGN_OR_RETURN(t.context, ReadBool(f, kTrainedContextKey));
  TERN_ASSIGN_OR_RETURN(t.json_format, ReadBool(f, kTrainedJsonFormatKey));
  TERN_ASSIGN_OR_RETURN(t.max_audio_seconds, ReadSeconds(f, kTrainedMaxAudioSecondsKey));
  TERN_ASSIGN_OR_RETURN(t.chunk_seconds, ReadSeconds(f, kTrainedChunkSecondsKey));
  TERN_ASSIGN_OR_RETURN(t.snap_seconds, ReadSeconds(f, kTrainedSnapSecondsKey));
  TERN_ASSIGN_OR_RETURN(t.utterance_pieces, ReadBool(f, kTrainedUtterancePiecesKey));
  if (f.Find(kTrainedBeamKey) != nullptr) {
    TERN_ASSIGN_OR_RETURN(const uint64_t beam, f.GetU64(kTrainedBeamKey));
    if (beam < 1 || beam > 16) {
      return FormatError("%s: %s must be a beam width in [1, 16], got %llu", f.path().c_str(),
                         kTrainedBeamKey, static_cast<unsigned long long>(beam));
    }
    t.beam = static_cast<int>(beam);
  }
  return t;
}

double TrainedPieceSeconds(double longest) {
  // Pieces are cut in the second half of the limit, so a limit of about 0.6 of the longest
  // clip gives pieces of 0.3-0.6 of it: one utterance each for a model trained on single
  // utterances (longer pieces hold two sentences, which such a model garbles).
  return std::max(1.0, std::round(0.6 * longest));
}

std::optional<double> AutomaticPieceSeconds(const TrainedWith& trained) {
  if (trained.chunk_seconds) return trained.chunk_seconds;
  if (trained.max_audio_seconds) return TrainedPieceSeconds(*trained.max_audio_seconds);
  return std::nullopt;
}

TranscribeOptions FitOptions(const ModelInfo& model, const TranscribeOptions& options) {
  TranscribeOptions o = options;
  if (model.trained.context == false) o.context.clear();
  // Automatic pieces (chunk_seconds 0) for a model that declares its piece length or its
  // longest training clip: pieces it reads well, cut at pauses, instead of one prompt it
  // garbles.
  if (o.chunk_seconds == 0) {
    o.pieces_at_pauses = o.pieces_at_pauses || model.trained.utterance_pieces == true;
    o.chunk_seconds = AutomaticPieceSeconds(model.trained).value_or(0);
  }
  if (o.snap_seconds < 0) o.snap_seconds = model.trained.snap_seconds.value_or(0);
  // The declared beam for greedy decoding whose text is not streamed: beam search sends its
  // text whole at the end.
  if (o.decoding.beam == 0) {
    o.decoding.beam =
        o.decoding.temperature == 0 && !o.on_text ? model.trained.beam.value_or(1) : 1;
  }
  return o;
}

std::string LengthWarning(const ModelInfo& model, const TranscribeOptions& options,
                          double duration_s) {
  const std::optional<double> hint = AutomaticPieceSeconds(model.trained);
  if (!hint || options.chunk_seconds <= *hint) return {};  // 0: FitOptions picks `hint`
  char msg[320];
  if (model.trained.chunk_seconds) {
    if (duration_s <= *hint) return {};
    std::snprintf(msg, sizeof msg,
                  "the audio is %.1f s long, and this model reads pieces of at most %.1f s "
                  "best: --chunk-seconds %.0f may transcribe it better",
                  duration_s, *hint, *hint);
    return msg;
  }
  const double longest = *model.trained.max_audio_seconds;
  if (duration_s <= longest) return {};
  std::snprintf(msg, sizeof msg,
                "the audio is %.1f s long, and this model was trained on clips of at most "
                "%.1f s: --chunk-seconds %.0f may transcribe it better",
                duration_s, longest, *hint);
  return msg;
}

}  // namespace tern::engine

namespace tern {

std::vector<std::string> OptionWarnings(const ModelInfo& model, const TranscribeOptions& options) {
  std::vector<std::string> w;
  if (!options.context.empty() && model.trained.context == false) {
    w.push_back(
        "this model was not trained with context (tern.trained.context is false): "
        "--context / prompt is not used");
  }
  if (options.format == PromptFormat::kJson && model.trained.json_format == false) {
    w.push_back(
        "this model was not trained with the JSON prompt (tern.trained.json_format is "
        "false): --format json will likely give garbage; use --format text");
  }
  return w;
}

}  // namespace tern
