// No speech, on the bundled model (models/tiny-en): audio that never rises above a noise
// floor gives an empty transcript with a warning instead of the words the model invents for
// amplified noise, while quiet speech still transcribes; and each segment's
// no_speech_prob is the model's own probability of an empty answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tern/tern.h"

namespace tern {
namespace {

const std::string kSource = TERN_SOURCE_DIR;

std::shared_ptr<const Model> LoadTiny() {
  ModelOptions mo;
  mo.model_dir = kSource + "/models/tiny-en";
  Result<std::shared_ptr<const Model>> m = Model::Load(mo);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : nullptr;
}

// 16-bit mono PCM WAV bytes at 24 kHz.
std::string WavBytes(const std::vector<int16_t>& s) {
  std::string b;
  auto put = [&b](uint32_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
  };
  const uint32_t bytes = static_cast<uint32_t>(s.size() * 2);
  b += "RIFF";
  put(36 + bytes, 4);
  b += "WAVEfmt ";
  put(16, 4);
  put(1, 2);
  put(1, 2);
  put(24000, 4);
  put(48000, 4);
  put(2, 2);
  put(16, 2);
  b += "data";
  put(bytes, 4);
  b.append(reinterpret_cast<const char*>(s.data()), bytes);
  return b;
}

// The samples of a 16-bit WAV scaled by `gain` and rounded, as a quieter recording would hold.
std::vector<int16_t> Scaled(const std::string& wav, double db) {
  Result<Audio> a = LoadAudio(wav, [] {
    AudioOptions o;
    o.normalize = false;
    return o;
  }());
  EXPECT_TRUE(a.ok()) << wav;
  std::vector<int16_t> out;
  if (!a.ok()) return out;
  const double g = std::pow(10.0, db / 20.0) * 32768.0;
  for (float v : a->samples) out.push_back(static_cast<int16_t>(std::lround(v * g)));
  return out;
}

Result<Transcript> Run(Session& s, const std::vector<int16_t>& pcm, const std::string& name,
                       double floor_dbfs = -55.0) {
  const std::string bytes = WavBytes(pcm);
  Result<Audio> a = LoadAudioFromMemory(bytes.data(), bytes.size(), name);
  if (!a.ok()) return a.status();
  TranscribeOptions o;
  o.decoding.max_tokens = 96;
  o.no_speech_floor_dbfs = floor_dbfs;
  return s.Transcribe(*a, o);
}

std::string Lower(std::string s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == ' ')
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

// White noise at -60 dBFS and near-silence (16-bit dither, +-1 LSB): with the check off the
// model writes words for them; with it, nothing and a warning that names the level.
TEST(NoSpeech, FaintNoiseAndNearSilenceGiveEmptyTranscripts) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Session session(model, 2);
  std::mt19937 rng(11);
  std::normal_distribution<double> hiss(0.0, 0.001 * 32768);  // -60 dBFS RMS
  std::uniform_int_distribution<int> lsb(-1, 1);
  std::vector<int16_t> noise(3 * 24000), dither(3 * 24000);
  for (int16_t& v : noise) v = static_cast<int16_t>(std::lround(hiss(rng)));
  for (int16_t& v : dither) v = static_cast<int16_t>(lsb(rng));
  for (const auto& [name, pcm] : {std::pair{"hiss", &noise}, std::pair{"dither", &dither}}) {
    SCOPED_TRACE(name);
    Result<Transcript> off = Run(session, *pcm, name, -150.0);
    ASSERT_TRUE(off.ok()) << off.status().ToString();
    EXPECT_NE(off->text, "") << "the model no longer invents words for " << name;
    std::printf("%s with the check off: \"%s\"\n", name, off->text.c_str());
    Result<Transcript> t = Run(session, *pcm, name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->text, "");
    EXPECT_TRUE(t->segments.empty());
    EXPECT_EQ(t->stop_reason, "no_speech");
    EXPECT_TRUE(t->token_ids.empty());  // the model did not run
    EXPECT_DOUBLE_EQ(t->duration_s, 3.0);
    ASSERT_EQ(t->warnings.size(), 1u);
    EXPECT_NE(t->warnings[0].find("no speech: the loudest 25 ms"), std::string::npos)
        << t->warnings[0];
    EXPECT_EQ(FormatTranscript(*t, OutputFormat::kTxt), "\n");
    EXPECT_EQ(nlohmann::json::parse(FormatTranscript(*t, OutputFormat::kJson))["text"], "");
  }
}

// The quiet real clips still transcribe: every demo sample 25 dB down (its loudest frame
// then near -48 dBFS, 7 dB above the floor) gives its own words, as at full level.
TEST(NoSpeech, QuietSpeechStillTranscribes) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Session session(model, 2);
  int clips = 0;
  for (const char* stem : {"sample1", "sample2", "sample3"}) {
    SCOPED_TRACE(stem);
    const std::string wav = kSource + "/samples/" + stem + ".wav";
    Result<Transcript> full = Run(session, Scaled(wav, 0.0), stem);
    Result<Transcript> quiet = Run(session, Scaled(wav, -25.0), stem);
    ASSERT_TRUE(full.ok() && quiet.ok());
    EXPECT_NE(quiet->stop_reason, "no_speech");
    EXPECT_EQ(Lower(quiet->text), Lower(full->text));
    EXPECT_NE(full->text, "");
    ++clips;
  }
  EXPECT_EQ(clips, 3);
}

// no_speech_prob: the model's probability of ending its answer before any word, per
// segment in verbose_json; a probability, and lower for speech than for loud noise.
TEST(NoSpeech, NoSpeechProbIsTheModelsOwn) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Session session(model, 2);
  Result<Transcript> speech = Run(session, Scaled(kSource + "/samples/sample1.wav", 0.0), "s1");
  ASSERT_TRUE(speech.ok());
  ASSERT_EQ(speech->segments.size(), 1u);
  const double p = speech->segments[0].no_speech_prob;
  EXPECT_GE(p, 0.0);
  EXPECT_LE(p, 1.0);
  const nlohmann::json j =
      nlohmann::json::parse(FormatTranscript(*speech, OutputFormat::kVerboseJson));
  EXPECT_DOUBLE_EQ(j["segments"][0]["no_speech_prob"].get<double>(), p);
  EXPECT_FALSE(nlohmann::json::parse(FormatTranscript(*speech, OutputFormat::kJson))["segments"][0]
                   .contains("no_speech_prob"));
  std::mt19937 rng(5);
  std::normal_distribution<double> loud(0.0, 0.1 * 32768);  // -20 dBFS: above the floor
  std::vector<int16_t> noise(3 * 24000);
  for (int16_t& v : noise) v = static_cast<int16_t>(std::clamp(std::lround(loud(rng)), -32768L, 32767L));
  Result<Transcript> n = Run(session, noise, "loud noise");
  ASSERT_TRUE(n.ok());
  ASSERT_FALSE(n->segments.empty());
  std::printf("no_speech_prob: speech %.3g, loud noise %.3g (\"%s\")\n", p,
              n->segments[0].no_speech_prob, n->text.c_str());
  EXPECT_GE(n->segments[0].no_speech_prob, 0.0);
}

}  // namespace
}  // namespace tern
