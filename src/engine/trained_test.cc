// tern.trained.* keys: read when present, unknown when absent, refused when mistyped; and
// what they make the engine warn about or drop.
#include <gtest/gtest.h>

#include "engine/trained.h"
#include "gguf/test_parse.h"
#include "gguf/writer.h"

namespace tern::engine {
namespace {

using gguf::Parsed;
Parsed Parse(const gguf::Writer& w) { return gguf::ParseWritten(w); }

TEST(TrainedWith, AbsentKeysAreUnknown) {
  gguf::Writer w;
  w.SetString("general.name", "published");
  Parsed p = Parse(w);
  Result<TrainedWith> t = ReadTrainedWith(*p.file);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->context.has_value());
  EXPECT_FALSE(t->json_format.has_value());
  EXPECT_FALSE(t->max_audio_seconds.has_value());
  EXPECT_FALSE(t->chunk_seconds.has_value());
  EXPECT_FALSE(AutomaticPieceSeconds(*t).has_value());
  // Unknown: nothing warned, nothing dropped, whatever the options.
  ModelInfo info;
  info.trained = *t;
  TranscribeOptions o;
  o.context = "Paris";
  o.format = PromptFormat::kJson;
  EXPECT_TRUE(OptionWarnings(info, o).empty());
  EXPECT_EQ(FitOptions(info, o).context, "Paris");
  EXPECT_EQ(LengthWarning(info, o, 3600.0), "");
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 0);  // the published model: one prompt
}

TEST(TrainedWith, DeclaredKeysDriveWarnings) {
  gguf::Writer w;
  w.SetBool(kTrainedContextKey, false);
  w.SetBool(kTrainedJsonFormatKey, false);
  w.SetF32(kTrainedMaxAudioSecondsKey, 6.5f);
  Parsed p = Parse(w);
  Result<TrainedWith> t = ReadTrainedWith(*p.file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->context, false);
  EXPECT_EQ(t->json_format, false);
  EXPECT_DOUBLE_EQ(t->max_audio_seconds.value(), 6.5);
  ModelInfo info;
  info.trained = *t;
  TranscribeOptions o;
  EXPECT_TRUE(OptionWarnings(info, o).empty());  // nothing asked that it lacks
  o.context = "Paris";
  ASSERT_EQ(OptionWarnings(info, o).size(), 1u);
  EXPECT_NE(OptionWarnings(info, o)[0].find("not trained with context"), std::string::npos);
  EXPECT_EQ(FitOptions(info, o).context, "");
  o.format = PromptFormat::kJson;
  EXPECT_EQ(OptionWarnings(info, o).size(), 2u);
  // Longer audio than the longest training clip: automatic pieces of 0.6 of it, and a hint
  // only when longer pieces are asked.
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 4);
  EXPECT_EQ(LengthWarning(info, o, 6.0), "");
  EXPECT_EQ(LengthWarning(info, o, 20.0), "");
  o.chunk_seconds = 3;  // asked: kept
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 3);
  o.chunk_seconds = 4;
  EXPECT_EQ(LengthWarning(info, o, 20.0), "");
  o.chunk_seconds = 6;  // two sentences to a piece
  EXPECT_NE(LengthWarning(info, o, 20.0), "");
  o.chunk_seconds = 10;
  EXPECT_NE(LengthWarning(info, o, 20.0).find("--chunk-seconds 4"), std::string::npos);
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 10);
  // A model that declares it was trained with context keeps it.
  info.trained.context = true;
  o.format = PromptFormat::kText;
  EXPECT_EQ(FitOptions(info, o).context, "Paris");
  EXPECT_TRUE(OptionWarnings(info, o).empty());
}

TEST(TrainedWith, DeclaredChunkSecondsOverridesTheTrainingLength) {
  // Trained on clips up to 40 s, measured best in 6 s pieces: the pieces are 6 s, not 24 s.
  gguf::Writer w;
  w.SetF32(kTrainedMaxAudioSecondsKey, 40.0f);
  w.SetF32(kTrainedChunkSecondsKey, 6.0f);
  Parsed p = Parse(w);
  Result<TrainedWith> t = ReadTrainedWith(*p.file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_DOUBLE_EQ(t->chunk_seconds.value(), 6.0);
  EXPECT_DOUBLE_EQ(AutomaticPieceSeconds(*t).value(), 6.0);
  ModelInfo info;
  info.trained = *t;
  TranscribeOptions o;
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 6);
  o.chunk_seconds = 20;  // asked: kept, with a hint once the audio is longer than a piece
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 20);
  EXPECT_EQ(LengthWarning(info, o, 5.0), "");
  EXPECT_NE(LengthWarning(info, o, 30.0).find("--chunk-seconds 6"), std::string::npos);
  o.chunk_seconds = 6;
  EXPECT_EQ(LengthWarning(info, o, 30.0), "");
  // Declared alone (no training length) it still sets the pieces.
  info.trained.max_audio_seconds.reset();
  o.chunk_seconds = 0;
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 6);
}

TEST(TrainedWith, DeclaredSnapSecondsIsTheDefaultWindow) {
  gguf::Writer w;
  w.SetF32(kTrainedSnapSecondsKey, 2.5f);
  Parsed p = Parse(w);
  Result<TrainedWith> t = ReadTrainedWith(*p.file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_DOUBLE_EQ(t->snap_seconds.value(), 2.5);
  ModelInfo info;
  info.trained = *t;
  TranscribeOptions o;  // -1: the model's
  EXPECT_EQ(FitOptions(info, o).snap_seconds, 2.5);
  o.snap_seconds = 0;  // asked off: kept
  EXPECT_EQ(FitOptions(info, o).snap_seconds, 0);
  o.snap_seconds = 1;
  EXPECT_EQ(FitOptions(info, o).snap_seconds, 1);
  o.snap_seconds = -1;  // a model that declares none: off
  EXPECT_EQ(FitOptions(ModelInfo(), o).snap_seconds, 0);
  o.snap_seconds = -2;
  EXPECT_FALSE(o.Validate().ok());
  o.snap_seconds = 61;
  EXPECT_FALSE(o.Validate().ok());
  // Not a positive number of seconds: refused, naming the key.
  gguf::Writer bad;
  bad.SetF32(kTrainedSnapSecondsKey, -1.0f);
  Parsed q = Parse(bad);
  Result<TrainedWith> r = ReadTrainedWith(*q.file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(kTrainedSnapSecondsKey), std::string::npos);
}

TEST(TrainedWith, DeclaredBeamIsTheDefaultWidthWhenGreedyAndNotStreamed) {
  gguf::Writer w;
  w.SetU32(kTrainedBeamKey, 4);
  Parsed p = Parse(w);
  Result<TrainedWith> t = ReadTrainedWith(*p.file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->beam.value(), 4);
  ModelInfo info;
  info.trained = *t;
  TranscribeOptions o;  // beam 0: the model's
  EXPECT_EQ(FitOptions(info, o).decoding.beam, 4);
  EXPECT_EQ(FitOptions(ModelInfo(), o).decoding.beam, 1);  // declares none: greedy
  TranscribeOptions sampled = o;
  sampled.decoding.temperature = 0.7f;
  EXPECT_EQ(FitOptions(info, sampled).decoding.beam, 1);
  TranscribeOptions streamed = o;
  streamed.on_text = [](std::string_view) { return true; };
  EXPECT_EQ(FitOptions(info, streamed).decoding.beam, 1);
  TranscribeOptions asked = o;
  asked.decoding.beam = 1;
  EXPECT_EQ(FitOptions(info, asked).decoding.beam, 1);
  asked.decoding.beam = 2;
  EXPECT_EQ(FitOptions(info, asked).decoding.beam, 2);
  // Widths outside [1, 16], or not an integer: refused, naming the key.
  for (uint32_t bad : {0u, 17u}) {
    gguf::Writer b;
    b.SetU32(kTrainedBeamKey, bad);
    Parsed q = Parse(b);
    Result<TrainedWith> r = ReadTrainedWith(*q.file);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(kTrainedBeamKey), std::string::npos);
  }
  gguf::Writer b;
  b.SetString(kTrainedBeamKey, "four");
  Parsed q = Parse(b);
  EXPECT_FALSE(ReadTrainedWith(*q.file).ok());
}

TEST(TrainedWith, DeclaredUtterancePiecesCutAtPausesUnlessALengthIsAsked) {
  gguf::Writer w;
  w.SetBool(kTrainedUtterancePiecesKey, true);
  w.SetF32(kTrainedChunkSecondsKey, 6.0f);
  Parsed p = Parse(w);
  Result<TrainedWith> t = ReadTrainedWith(*p.file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->utterance_pieces.value());
  ModelInfo info;
  info.trained = *t;
  TranscribeOptions o;
  EXPECT_TRUE(FitOptions(info, o).pieces_at_pauses);
  EXPECT_EQ(FitOptions(info, o).chunk_seconds, 6);
  o.chunk_seconds = 10;  // a length asked for: pieces by length only
  EXPECT_FALSE(FitOptions(info, o).pieces_at_pauses);
  EXPECT_FALSE(FitOptions(ModelInfo(), TranscribeOptions()).pieces_at_pauses);
}

TEST(TrainedWith, MistypedKeysAreFormatErrors) {
  {
    gguf::Writer w;
    w.SetU32(kTrainedContextKey, 1);
    Parsed p = Parse(w);
    Result<TrainedWith> t = ReadTrainedWith(*p.file);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), ErrorCode::kFormat);
    EXPECT_NE(t.status().message().find("m.gguf: tern.trained.context must be a bool"),
              std::string::npos)
        << t.status().message();
  }
  for (const char* key : {kTrainedMaxAudioSecondsKey, kTrainedChunkSecondsKey}) {
    for (float bad : {0.0f, -1.0f}) {
      gguf::Writer w;
      w.SetF32(key, bad);
      Parsed p = Parse(w);
      Result<TrainedWith> t = ReadTrainedWith(*p.file);
      ASSERT_FALSE(t.ok());
      EXPECT_NE(t.status().message().find(key), std::string::npos) << t.status().message();
    }
  }
  gguf::Writer w;
  w.SetString(kTrainedMaxAudioSecondsKey, "6.5");
  Parsed p = Parse(w);
  EXPECT_FALSE(ReadTrainedWith(*p.file).ok());
}

}  // namespace
}  // namespace tern::engine
