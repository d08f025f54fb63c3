// No speech, on the bundled model (models/tiny-en): audio that never rises above a noise
// floor gives an empty transcript with a warning instead of the words the model invents for
// amplified noise, while quiet speech still transcribes; and each segment's
// no_speech_prob is the model's own probability of an empty answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "engine/model_impl.h"
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

Result<Transcript> TranscribePcm(Session& s, const std::vector<int16_t>& pcm,
                                 const std::string& name, double floor_dbfs = -55.0) {
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
// model runs on them; with it, the model does not run: nothing and a warning naming the level.
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
    Result<Transcript> off = TranscribePcm(session, *pcm, name, -150.0);
    ASSERT_TRUE(off.ok()) << off.status().ToString();
    // With the check off the model runs and answers as it was trained to (the bundled model
    // learned empty answers for noise; other models invent words here).
    EXPECT_NE(off->stop_reason, "no_speech");
    EXPECT_FALSE(off->token_ids.empty());
    std::printf("%s with the check off: \"%s\"\n", name, off->text.c_str());
    Result<Transcript> t = TranscribePcm(session, *pcm, name);
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
    Result<Transcript> full = TranscribePcm(session, Scaled(wav, 0.0), stem);
    Result<Transcript> quiet = TranscribePcm(session, Scaled(wav, -25.0), stem);
    ASSERT_TRUE(full.ok() && quiet.ok());
    EXPECT_NE(quiet->stop_reason, "no_speech");
    EXPECT_EQ(Lower(quiet->text), Lower(full->text));
    EXPECT_NE(full->text, "");
    ++clips;
  }
  EXPECT_EQ(clips, 3);
}

// no_speech_prob: a probability per segment in verbose_json (not in json). The bundled
// model never saw silence or noise in training, and it shows: its values stay tiny and do
// not separate speech from noise (measured here: held-out speech up to 4.2e-6; loud white
// noise 3.2e-4, brown 6.4e-7, clicks 8.1e-7), so this prints them and checks only what holds
// for any model: they are probabilities, written where they belong.
TEST(NoSpeech, NoSpeechProbIsTheModelsOwn) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Session session(model, 2);
  Result<Transcript> speech =
      TranscribePcm(session, Scaled(kSource + "/samples/sample1.wav", 0.0), "s1");
  ASSERT_TRUE(speech.ok());
  ASSERT_EQ(speech->segments.size(), 1u);
  const double p = speech->segments[0].no_speech_prob;
  EXPECT_GE(p, 0.0);
  EXPECT_LE(p, 1.0);
  const nlohmann::json j =
      nlohmann::json::parse(FormatTranscript(*speech, OutputFormat::kVerboseJson));
  EXPECT_DOUBLE_EQ(j["segments"][0]["no_speech_prob"].get<double>(), p);
  EXPECT_FALSE(
      nlohmann::json::parse(FormatTranscript(*speech, OutputFormat::kJson))["segments"][0].contains(
          "no_speech_prob"));

  double speech_max = 0;
  int clips = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/tests/data/heldout")) {
    if (e.path().extension() != ".wav") continue;
    Result<Transcript> t = TranscribePcm(session, Scaled(e.path().string(), 0.0), "clip");
    ASSERT_TRUE(t.ok());
    speech_max = std::max(speech_max, t->segments.at(0).no_speech_prob);
    ++clips;
  }
  ASSERT_GE(clips, 16);
  // White, brown (integrated) and clicking noise, 3 s at -20 dBFS: far above the floor.
  std::mt19937 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  double noise_min = 1;
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<double> x(3 * 24000);
    double acc = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double w = g(rng);
      acc = 0.995 * acc + w;
      x[i] = kind == 0 ? w : kind == 1 ? acc : (i % 2400 < 24 ? w * 8 : 0.02 * w);
    }
    double rms = 0;
    for (double v : x) rms += v * v;
    rms = std::sqrt(rms / static_cast<double>(x.size()));
    std::vector<int16_t> pcm;
    for (double v : x)
      pcm.push_back(
          static_cast<int16_t>(std::clamp(std::lround(v / rms * 0.1 * 32768), -32768L, 32767L)));
    Result<Transcript> t = TranscribePcm(session, pcm, "noise");
    ASSERT_TRUE(t.ok());
    noise_min = std::min(noise_min, t->segments.at(0).no_speech_prob);
    std::printf("noise %d: no_speech_prob %.3g \"%s\"\n", kind, t->segments[0].no_speech_prob,
                t->text.c_str());
  }
  std::printf("no_speech_prob: held-out speech at most %.3g (%d clips), noise at least %.3g\n",
              speech_max, clips, noise_min);
  EXPECT_LE(speech_max, 1.0);
  EXPECT_GE(noise_min, 0.0);
}

// The value is the model's: PyTorch's probability of a stop token at the first position
// after the reply's header, from the logits training/reference.py dumped for the held-out
// clips (their layout: tiny_model_test.cc), as far as the engine's header is PyTorch's.
TEST(NoSpeech, NoSpeechProbMatchesPyTorch) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  const text::SpecialTokens& special = model->impl().special;
  Session session(model, 2);
  const std::string dir = kSource + "/tests/data/heldout";
  int compared = 0;
  double worst = 0;
  for (int i = 0; i < 1000; ++i) {
    char stem[32];
    std::snprintf(stem, sizeof(stem), "%03d", i);
    Result<std::string> text = ReadFileToString(dir + "/reference/" + stem + ".json");
    if (!text.ok()) continue;
    const nlohmann::json ref = nlohmann::json::parse(*text);
    Result<Audio> audio = LoadAudio(dir + "/" + ref["wav"].get<std::string>());
    ASSERT_TRUE(audio.ok());
    TranscribeOptions o;
    o.decoding.max_tokens = 8;
    o.decoding.beam = 1;  // PyTorch's dump is greedy
    Result<Transcript> t = session.Transcribe(*audio, o);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    const std::vector<int32_t> gen = ref["generated"].get<std::vector<int32_t>>();
    const int64_t vocab = ref["vocab"].get<int64_t>(), steps = ref["logit_steps"].get<int64_t>();
    if (steps < 4 || gen.size() < 4 || t->token_ids.size() < 4 || gen[0] != special.im_start ||
        !std::equal(gen.begin(), gen.begin() + 3, t->token_ids.begin()))
      continue;
    Result<std::string> bytes = ReadFileToString(dir + "/reference/" + stem + ".logits.f32");
    ASSERT_TRUE(bytes.ok());
    ASSERT_GE(bytes->size(), static_cast<size_t>(4 * vocab * sizeof(float)));
    std::vector<float> row(static_cast<size_t>(vocab));
    std::memcpy(row.data(), bytes->data() + 3 * vocab * sizeof(float), row.size() * sizeof(float));
    double mx = row[0], sum = 0;
    for (float v : row) mx = std::max<double>(mx, v);
    for (float v : row) sum += std::exp(v - mx);
    const double want =
        (std::exp(row[special.im_end] - mx) + std::exp(row[special.endoftext] - mx)) / sum;
    const double got = t->segments.at(0).no_speech_prob;
    ASSERT_GT(got, 0.0) << stem;
    const double d = std::fabs(std::log(got) - std::log(want));  // nats: the values are tiny
    worst = std::max(worst, d);
    // Their features are 1-3% apart from PyTorch's (rounding boundaries of the encoder's
    // requantizations, tiny_model_test.cc): 0.21 nats measured.
    EXPECT_LE(d, 0.5) << stem << ": engine " << got << ", torch " << want;
    ++compared;
  }
  std::printf("%d no_speech_prob compared with PyTorch, max |log ratio| = %.3g\n", compared, worst);
  EXPECT_GE(compared, 3);  // the three dumped clips
}

}  // namespace
}  // namespace tern
