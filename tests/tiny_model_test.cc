// The bundled model (models/tiny-en, trained here: training/README.md):
//   * the engine must compute what the PyTorch quantized forward it was trained with
//     computes (features, prompt ids, teacher-forced logits on the dumped clips);
//   * the engine (not PyTorch) must hear: greedy transcripts of the held-out clips (sentences
//     never trained on; half of them in a voice setting never trained on) scored by word
//     error rate with a proper alignment, against thresholds justified below.
//
// Data (tests/data/heldout/): NNN.wav clips (24 kHz), transcripts.tsv (file, reference,
// voice), reference/NNN.json (+ .features.f32, .logits.f32) dumped by training/reference.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "base/mapped_file.h"
#include "engine/model_impl.h"
#include "engine/prefill.h"
#include "engine/prompt.h"
#include "engine/segments.h"
#include "engine/trained.h"
#include "ops/i8s_tensor.h"
#include "scoring.h"
#include "tern/tern.h"

namespace tern {
namespace {

const std::string kModelDir = TERN_SOURCE_DIR "/models/tiny-en";
const std::string kDataDir = TERN_SOURCE_DIR "/tests/data/heldout";

using scoring::EditDistance;
using scoring::NormWords;
using scoring::WerCount;

std::shared_ptr<const Model> LoadTiny() {
  ModelOptions mo;
  mo.model_dir = kModelDir;
  Result<std::shared_ptr<const Model>> m = Model::Load(mo);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : nullptr;
}

std::vector<float> ReadF32(const std::string& path) {
  Result<std::string> bytes = ReadFileToString(path);
  EXPECT_TRUE(bytes.ok()) << path;
  std::vector<float> v(bytes.ok() ? bytes->size() / sizeof(float) : 0);
  if (!v.empty()) std::memcpy(v.data(), bytes->data(), v.size() * sizeof(float));
  return v;
}

// max |a - ref| over equal-length vectors; *ref_max_abs = max |ref|.
double MaxDiff(const std::vector<float>& a, const std::vector<float>& ref, double* ref_max_abs) {
  double d = 0, m = 0;
  for (size_t k = 0; k < ref.size(); ++k) {
    d = std::max(d, std::fabs(static_cast<double>(a[k]) - ref[k]));
    m = std::max(m, std::fabs(static_cast<double>(ref[k])));
  }
  *ref_max_abs = m;
  return d;
}

// Engine vs the PyTorch quantized forward on the dumped clips: the prompt ids exactly, the
// encoder features and the logits of every teacher-forced step within tolerances derived
// from the data (a fraction of the values' spread), and the greedy choices.
TEST(TinyModel, AgreesWithPyTorchQuantizedForward) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  const Model::Impl& m = model->impl();
  ThreadPool pool(2);
  int checked = 0;
  for (int i = 0; i < 1000 && checked < 8; ++i) {
    char stem[32];
    std::snprintf(stem, sizeof(stem), "%03d", i);
    const std::string json_path = kDataDir + "/reference/" + stem + ".json";
    Result<std::string> text = ReadFileToString(json_path);
    if (!text.ok()) continue;
    ++checked;
    const nlohmann::json ref = nlohmann::json::parse(*text);
    Result<Audio> audio = LoadAudio(kDataDir + "/" + ref["wav"].get<std::string>());
    ASSERT_TRUE(audio.ok()) << audio.status().ToString();
    ASSERT_EQ(static_cast<int64_t>(audio->samples.size()), ref["n_samples"].get<int64_t>());

    // Features.
    Result<vibeasr::Features> feats =
        m.encoder->Run(audio->samples.data(), audio->samples.size(), pool);
    ASSERT_TRUE(feats.ok()) << feats.status().ToString();
    const std::vector<float> ref_feats = ReadF32(kDataDir + "/reference/" + stem + ".features.f32");
    ASSERT_EQ(feats->data.size(), ref_feats.size());
    double max_abs = 0;
    const double max_diff = MaxDiff(feats->data, ref_feats, &max_abs);
    std::printf("%s features: max |engine - torch| = %.3g (max |x| %.3g)\n", stem, max_diff,
                max_abs);
    // A requantization that lands on the other side of a rounding boundary in one path (float
    // products of dequantized values in PyTorch, exact int32 sums here) moves a tensor's
    // values by one step, and a scale flip moves all later ones, a few percent of max |x|
    // (`tern-dev encode --step` finds where the paths part); a wrong op or layout gives
    // differences of the order of the values themselves.
    EXPECT_LE(max_diff, 0.05 * max_abs) << stem;

    // Prompt ids.
    Result<engine::Prompt> prompt =
        engine::BuildPrompt(*m.tokenizer, m.special, static_cast<int64_t>(audio->samples.size()),
                            PromptFormat::kText, "");
    ASSERT_TRUE(prompt.ok());
    EXPECT_EQ(prompt->tokens, ref["prompt_ids"].get<std::vector<int32_t>>()) << stem;

    // Teacher-forced logits with the TORCH features, so this isolates the decoder.
    const std::vector<vibeasr::DecoderInput> in =
        engine::PrefillInputs(*prompt, feats->frames, feats->hidden, ref_feats.data());
    vibeasr::DecoderState state(*m.decoder, static_cast<int64_t>(in.size()) + 128);
    std::vector<float> logits;
    ASSERT_TRUE(state.Prefill(in, pool, &logits).ok());
    const std::vector<float> ref_logits = ReadF32(kDataDir + "/reference/" + stem + ".logits.f32");
    const int64_t vocab = ref["vocab"].get<int64_t>();
    const std::vector<int32_t> gen = ref["generated"].get<std::vector<int32_t>>();
    const int64_t steps = ref["logit_steps"].get<int64_t>();
    ASSERT_EQ(static_cast<int64_t>(ref_logits.size()), steps * vocab);
    int32_t dpos = static_cast<int32_t>(prompt->tokens.size());
    double worst = 0;
    for (int64_t s = 0; s < steps; ++s) {
      const float* r = ref_logits.data() + s * vocab;
      float lo = r[0], hi = r[0];
      double d = 0;
      for (int64_t v = 0; v < vocab; ++v) {
        lo = std::min(lo, r[v]);
        hi = std::max(hi, r[v]);
        d = std::max(d, std::fabs(static_cast<double>(logits[static_cast<size_t>(v)]) - r[v]));
      }
      worst = std::max(worst, d / (hi - lo));
      // Float noise, unless one of the decoder's per-row int8 roundings falls the other way in
      // the two float paths and moves every later value a little; a wrong op gives
      // differences of the order of the range itself.
      EXPECT_LE(d, 1e-2 * (hi - lo)) << stem << " step " << s;
      if (s + 1 < steps) {
        ASSERT_TRUE(state.Step(gen[static_cast<size_t>(s)], dpos++, pool, &logits).ok());
      }
    }
    std::printf("%s logits: max |engine - torch| = %.3g of the logit range over %lld steps\n", stem,
                worst, static_cast<long long>(steps));
  }
  EXPECT_GE(checked, 2) << "no reference dumps in " << kDataDir << "/reference";
}

// Each generated token's log-probability (DecodingOptions::logprobs) is the log-softmax of
// the logits it was chosen from: checked against PyTorch's logits for the reference clips,
// as far as the engine's greedy ids equal PyTorch's. Where the engine's features equal
// PyTorch's to float noise the two agree to 1e-4; where requantizations land on the other
// side of a rounding boundary (features a few percent apart, see the test above), to 0.05.
TEST(TinyModel, TokenLogProbsMatchPyTorchLogits) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Session session(model, 2);
  TranscribeOptions opt;
  opt.decoding.max_tokens = 96;
  opt.decoding.logprobs = true;
  int compared = 0;
  double worst = 0;
  for (int i = 0; i < 1000; ++i) {
    char stem[32];
    std::snprintf(stem, sizeof(stem), "%03d", i);
    Result<std::string> text = ReadFileToString(kDataDir + "/reference/" + stem + ".json");
    if (!text.ok()) continue;
    const nlohmann::json ref = nlohmann::json::parse(*text);
    Result<Audio> audio = LoadAudio(kDataDir + "/" + ref["wav"].get<std::string>());
    ASSERT_TRUE(audio.ok());
    Result<Transcript> t = session.Transcribe(*audio, opt);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_EQ(t->token_logprobs.size(), t->token_ids.size());
    Result<Features> feats = session.Encode(*audio);
    ASSERT_TRUE(feats.ok());
    const std::vector<float> ref_feats = ReadF32(kDataDir + "/reference/" + stem + ".features.f32");
    ASSERT_EQ(feats->data.size(), ref_feats.size());
    double fmax = 0;
    const double fdiff = MaxDiff(feats->data, ref_feats, &fmax);
    const double tol = fdiff <= 1e-4 * fmax ? 1e-4 : 0.05;
    const std::vector<float> logits = ReadF32(kDataDir + "/reference/" + stem + ".logits.f32");
    const int64_t vocab = ref["vocab"].get<int64_t>(), steps = ref["logit_steps"].get<int64_t>();
    const std::vector<int32_t> gen = ref["generated"].get<std::vector<int32_t>>();
    for (int64_t s = 0; s < steps && s < static_cast<int64_t>(t->token_ids.size()); ++s) {
      if (t->token_ids[static_cast<size_t>(s)] != gen[static_cast<size_t>(s)]) break;
      const float* r = logits.data() + s * vocab;
      double mx = r[0], sum = 0;
      for (int64_t v = 1; v < vocab; ++v) mx = std::max<double>(mx, r[v]);
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(r[v] - mx);
      const double want = r[gen[static_cast<size_t>(s)]] - mx - std::log(sum);
      const double d = std::fabs(t->token_logprobs[static_cast<size_t>(s)] - want);
      worst = std::max(worst, d);
      EXPECT_LE(d, tol) << stem << " step " << s;
      ++compared;
    }
  }
  std::printf("%d token log-probabilities compared, max |engine - torch| = %.3g\n", compared,
              worst);
  EXPECT_GE(compared, 10);
}

// Held-out accuracy gate on these 32 clips (the bundled model's scores: training/README.md,
// "Bundled model"). Each gate sits a few words above what the model scores with this engine:
// room for near-tie flips between float paths, far below a model that ignores the audio.
// Decoding uses the beam width the model declares (4; deterministic) and is thread-count
// independent, so the score is reproducible: 6.2% seen voices, 3.0% the held-out voice.
constexpr double kMaxWerSeenVoices = 0.11;
constexpr double kMaxWerHeldoutVoice = 0.07;

TEST(TinyModel, HeldOutWordErrorRate) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Result<std::string> tsv = ReadFileToString(kDataDir + "/transcripts.tsv");
  ASSERT_TRUE(tsv.ok()) << tsv.status().ToString();
  Session session(model, 2);
  TranscribeOptions opt;
  opt.decoding.max_tokens = 96;
  std::map<std::string, WerCount> by_voice;
  std::istringstream lines(*tsv);
  std::string line;
  int clips = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    ASSERT_NE(t2, std::string::npos) << "bad transcripts.tsv line: " << line;
    const std::string wav = line.substr(0, t1), ref = line.substr(t1 + 1, t2 - t1 - 1),
                      voice = line.substr(t2 + 1);
    Result<Audio> audio = LoadAudio(kDataDir + "/" + wav);
    ASSERT_TRUE(audio.ok()) << audio.status().ToString();
    Result<Transcript> tr = session.Transcribe(*audio, opt);
    ASSERT_TRUE(tr.ok()) << wav << ": " << tr.status().ToString();
    const std::vector<std::string> r = NormWords(ref), h = NormWords(tr->text);
    const size_t e = EditDistance(r, h);
    std::printf("%s [%s] %zu/%zu\n  ref: %s\n  hyp: %s\n", wav.c_str(), voice.c_str(), e, r.size(),
                ref.c_str(), tr->text.c_str());
    by_voice[voice].edits += e;
    by_voice[voice].words += r.size();
    ++clips;
  }
  WerCount seen, heldout;  // the held-out voice setting (training/synth.py) vs all others
  for (const auto& [voice, c] : by_voice) {
    std::printf("WER %-28s %5.1f%% (%zu words)\n", voice.c_str(), 100 * c.wer(), c.words);
    WerCount& group = voice == "espeak:en-us+f2" ? heldout : seen;
    group.edits += c.edits;
    group.words += c.words;
  }
  std::printf("WER seen voices %.1f%% (%zu words), held-out voice %.1f%% (%zu words)\n",
              100 * seen.wer(), seen.words, 100 * heldout.wer(), heldout.words);
  ASSERT_GE(clips, 16);
  ASSERT_GT(heldout.words, 40u);
  ASSERT_GT(seen.words, 40u);
  EXPECT_LE(seen.wer(), kMaxWerSeenVoices);
  EXPECT_LE(heldout.wer(), kMaxWerHeldoutVoice);
}

// README's first command (scripts/demo) transcribes samples/*.wav with this model, and says
// they come out right. They are held-out clips picked, after the fact, among those the engine
// gets right (training/reference.py --samples; the WER above is the unpicked measure): this
// holds the demo to that, and fails if a kernel, the decoder or a new model changes them.
// A clip with NAME.txt beside it is a plain transcript; one with NAME.json a dialogue the
// demo shows as JSON segments ([[start, end, speaker, text], ...]). No held-out dialogue
// comes out entirely right with this model, so the demo shows one as the model gets it and
// says so; this holds it to the words (at most 2 of the 25 wrong, as now), to one segment per
// utterance with every start and end within 0.1 s (0.01 s at most since the engine moves them
// to the edges of speech, tern.trained.snap_seconds; 0.56 s before), and to its speakers
// (the engine's, by voice: segments share a speaker number exactly when the reference's
// do). The held-out set's figures are gated in heldout_mix_test.cc. A model that declares
// the JSON prompt must show one.
TEST(TinyModel, DemoSamplesComeOutRight) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Session session(model, 2);
  TranscribeOptions opt;
  opt.decoding.max_tokens = 96;
  TranscribeOptions json_opt;
  json_opt.format = PromptFormat::kJson;
  int clips = 0, dialogues = 0;
  // Every samples/*.wav, as the demo's glob takes them, each with its reference beside it.
  for (const auto& entry : std::filesystem::directory_iterator(TERN_SOURCE_DIR "/samples")) {
    if (entry.path().extension() != ".wav") continue;
    const std::string wav = entry.path().string();
    const std::string stem =
        entry.path().parent_path().string() + "/" + entry.path().stem().string();
    Result<Audio> audio = LoadAudio(wav);
    ASSERT_TRUE(audio.ok()) << audio.status().ToString();
    if (std::filesystem::exists(stem + ".json")) {
      Result<std::string> text = ReadFileToString(stem + ".json");
      ASSERT_TRUE(text.ok()) << text.status().ToString();
      const std::vector<scoring::TimedSegment> ref =
          scoring::SegmentsFromJson(nlohmann::json::parse(*text));
      std::vector<scoring::TimedSegment> hyp;
      Result<Transcript> tr = session.Transcribe(*audio, json_opt);
      ASSERT_TRUE(tr.ok()) << wav << ": " << tr.status().ToString();
      EXPECT_TRUE(tr->structured) << wav << ": \"" << tr->text << "\"";
      std::string ref_text, hyp_text;
      for (const auto& s : ref) ref_text += s.text + " ";
      for (const Segment& s : tr->segments) {
        hyp.push_back({s.start, s.end, s.speaker, s.text});
        hyp_text += s.text + " ";
      }
      const std::vector<std::string> ref_words = NormWords(ref_text);
      EXPECT_LE(EditDistance(ref_words, NormWords(hyp_text)), ref_words.size() / 10)
          << wav << ": \"" << tr->text << "\"";
      EXPECT_EQ(hyp.size(), ref.size()) << wav << ": \"" << tr->text << "\"";
      const scoring::DialogueScore d = scoring::ScoreDialogue(ref, hyp);
      for (double e : d.boundary_errors) EXPECT_LE(e, 0.1) << wav << ": \"" << tr->text << "\"";
      for (size_t i = 0; i < hyp.size() && hyp.size() == ref.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          EXPECT_EQ(hyp[i].speaker == hyp[j].speaker, ref[i].speaker == ref[j].speaker)
              << wav << ": segments " << j << " and " << i << " (\"" << tr->text << "\")";
        }
      }
      ++dialogues;
      continue;
    }
    Result<std::string> ref = ReadFileToString(stem + ".txt");
    ASSERT_TRUE(ref.ok()) << wav << " has no transcript: " << ref.status().ToString();
    Result<Transcript> tr = session.Transcribe(*audio, opt);
    ASSERT_TRUE(tr.ok()) << wav << ": " << tr.status().ToString();
    EXPECT_EQ(NormWords(tr->text), NormWords(*ref)) << wav << ": \"" << tr->text << "\"";
    ++clips;
  }
  EXPECT_GE(clips, 3) << "no samples/*.wav with a .txt";
  if (model->info().trained.json_format == true) {
    EXPECT_GE(dialogues, 1) << "no samples/*.wav with a .json: the demo shows no dialogue";
  }
}

// Hotwords (DecodingOptions::hotwords): naming a clip's own content words (4 letters or
// more) must fix many of the words the model gets wrong, and naming the next clip's words
// instead (wrong hints) must cost little. The gates leave a few words of room around what
// the default boost achieves on these 32 clips.
TEST(TinyModel, HotwordsFavourTheWordsTheyName) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Result<std::string> tsv = ReadFileToString(kDataDir + "/transcripts.tsv");
  ASSERT_TRUE(tsv.ok());
  std::vector<std::pair<std::string, std::string>> clips;  // wav, reference
  std::istringstream lines(*tsv);
  for (std::string line; std::getline(lines, line);) {
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    if (t2 != std::string::npos)
      clips.emplace_back(line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1));
  }
  ASSERT_GE(clips.size(), 16u);
  auto content_words = [](const std::string& ref) {
    std::vector<std::string> w;
    for (const std::string& x : NormWords(ref))
      if (x.size() >= 4 && std::find(w.begin(), w.end(), x) == w.end()) w.push_back(x);
    return w;
  };
  Session session(model, 2);
  WerCount none, own, other;
  for (size_t i = 0; i < clips.size(); ++i) {
    Result<Audio> audio = LoadAudio(kDataDir + "/" + clips[i].first);
    ASSERT_TRUE(audio.ok());
    const std::vector<std::string> ref = NormWords(clips[i].second);
    for (auto [count, hints] :
         {std::pair{&none, std::vector<std::string>{}},
          std::pair{&own, content_words(clips[i].second)},
          std::pair{&other, content_words(clips[(i + 1) % clips.size()].second)}}) {
      TranscribeOptions opt;
      opt.decoding.max_tokens = 96;
      opt.decoding.beam = 1;  // the gates were measured greedy
      opt.decoding.hotwords = hints;
      Result<Transcript> tr = session.Transcribe(*audio, opt);
      ASSERT_TRUE(tr.ok()) << tr.status().ToString();
      count->edits += EditDistance(ref, NormWords(tr->text));
      count->words += ref.size();
    }
  }
  std::printf(
      "WER without hotwords %.1f%%, with the clip's own words %.1f%%, with another "
      "clip's %.1f%% (%zu words)\n",
      100 * none.wer(), 100 * own.wer(), 100 * other.wer(), none.words);
  EXPECT_LE(own.wer(), 0.85 * none.wer());
  EXPECT_LE(other.wer(), none.wer() + 0.05);
}

// Runs a shell command; its stdout and stderr in *out, its exit code returned (-1: no exit).
int RunCommand(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[512];
  out->clear();
  while (std::fgets(buf, sizeof buf, p)) *out += buf;
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The CLI's --hotwords: comma-separated words, spaces around them dropped; bad values are
// usage errors (exit 2) naming the option. Without hints the bundled model hears this clip
// as "Add cookies and lemons to the list." (greedy and beam 2).
TEST(TinyModel, HotwordsFromTheCommandLine) {
  const std::string tern = std::string(TERN_BINARY) + " transcribe --model " +
                           std::string(TERN_SOURCE_DIR) + "/models/tiny-en -t 1 " + kDataDir +
                           "/002.wav";
  std::string plain, hinted, err;
  ASSERT_EQ(RunCommand(tern, &plain), 0);
  ASSERT_EQ(RunCommand(tern + " --hotwords ' coffee ,lemons ' --hotword-boost 3", &hinted), 0)
      << hinted;
  EXPECT_EQ(hinted, "Add coffee and lemons to the list.\n") << "without hints: " << plain;
  EXPECT_NE(plain, hinted);
  std::string beam;  // beam search ranks by the boosted scores too
  ASSERT_EQ(RunCommand(tern + " --beam 2 --hotwords coffee,lemons --hotword-boost 3", &beam), 0);
  EXPECT_EQ(beam, hinted);
  EXPECT_EQ(RunCommand(tern + " --hotwords 'coffee,,lemons'", &err), 2);
  EXPECT_NE(err.find("--hotwords: an empty word"), std::string::npos) << err;
  EXPECT_EQ(RunCommand(tern + " --hotwords lemons --hotword-boost 30", &err), 2);
  EXPECT_NE(err.find("hotword boost must be in [0, 20]"), std::string::npos) << err;
}

// An empty directory of this name under the test temp dir (an earlier run's left over goes).
std::string FreshTempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  return dir;
}

// `tern-dev encode` on the bundled model, quiet; arguments follow.
std::string EncodeCommand() {
  return std::string(TERN_DEV_BINARY) + " encode --model " + kModelDir + " -q ";
}

// `tern-dev encode`: one input to --dump-features FILE, several to --output-dir DIR (one
// <stem>.f32 each, the encoder loaded once); each file holds exactly the library encoder's
// features. A failing input is reported and the others still run; bad option combinations
// are usage errors (exit 2) that say what to give instead.
TEST(TinyModel, EncodeCommandWritesFeaturesPerInput) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  const std::string dir = FreshTempDir("tern_encode_test");
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  const std::string tern = EncodeCommand();
  const std::vector<std::string> stems = {"000", "001", "002"};
  std::string files, out;
  for (const std::string& s : stems) files += " " + kDataDir + "/" + s + ".wav";
  ASSERT_EQ(RunCommand(tern + "--output-dir " + dir + files, &out), 0) << out;
  ASSERT_EQ(RunCommand(tern + "--dump-features " + dir + "/one.f32 " + kDataDir + "/001.wav", &out),
            0)
      << out;
  ThreadPool pool(1);
  for (const std::string& s : stems) {
    Result<Audio> audio = LoadAudio(kDataDir + "/" + s + ".wav");
    ASSERT_TRUE(audio.ok());
    Result<vibeasr::Features> want =
        model->impl().encoder->Run(audio->samples.data(), audio->samples.size(), pool);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(ReadF32(dir + "/" + s + ".f32"), want->data) << s;
    if (s == "001") {
      EXPECT_EQ(ReadF32(dir + "/one.f32"), want->data);
    }
  }
  // A missing file among three: the other two are written, exit 1, the count reported.
  std::filesystem::remove(dir + "/002.f32");
  EXPECT_EQ(RunCommand(tern + "--output-dir " + dir + " " + kDataDir + "/001.wav " + dir +
                           "/missing.wav " + kDataDir + "/002.wav",
                       &out),
            1);
  EXPECT_NE(out.find("missing.wav"), std::string::npos) << out;
  EXPECT_NE(out.find("1 of 3 inputs failed"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/002.f32"));
  EXPECT_EQ(RunCommand(tern + kDataDir + "/001.wav", &out), 2);
  EXPECT_NE(out.find("--dump-features FILE (one input) or --output-dir DIR"), std::string::npos)
      << out;
  EXPECT_EQ(RunCommand(tern + "--dump-features " + dir + "/x.f32" + files, &out), 2);
  EXPECT_NE(out.find("--dump-features takes one input, got 3"), std::string::npos) << out;
  EXPECT_EQ(RunCommand(tern + "--output-dir " + dir + files + " " + kDataDir + "/001.wav", &out),
            2);
  EXPECT_NE(out.find("a second input would write"), std::string::npos) << out;
  EXPECT_EQ(RunCommand(tern + "--output-dir " + dir + "/none" + files, &out), 1);
  EXPECT_NE(out.find("not a directory"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

// `tern-dev encode --step NAME`: one branch's activation after that step, dequantized, frames x
// channels: byte for byte what the library's RunBranch hook sees. A step the encoder does not
// have is a usage error that lists the ones it has.
TEST(TinyModel, EncodeCommandDumpsOneStep) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  const std::string dir = FreshTempDir("tern_encode_step_test");
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  const std::string tern = EncodeCommand();
  const std::string wav = kDataDir + "/004.wav";
  Result<Audio> audio = LoadAudio(wav);
  ASSERT_TRUE(audio.ok());
  ThreadPool pool(1);
  for (auto [branch, step] : {std::pair{"acoustic", "s5.b1.ffn_res"},
                              std::pair{"semantic", "s3.conv"}, std::pair{"semantic", "head"}}) {
    SCOPED_TRACE(std::string(branch) + " " + step);
    std::string out;
    ASSERT_EQ(RunCommand(tern + "--branch " + branch + " --step " + step + " --dump-features " +
                             dir + "/step.f32 " + wav,
                         &out),
              0)
        << out;
    std::vector<float> want;
    int64_t channels = 0;
    const vibeasr::Encoder::StageHook hook = [&](const std::string& name, const ops::I8sTensor& x) {
      if (name != step) return;
      want.resize(static_cast<size_t>(x.size()));
      channels = x.ne0;
      ops::DequantizeI8s(x, want.data());
    };
    const vibeasr::Branch b =
        std::string(branch) == "semantic" ? vibeasr::Branch::kSemantic : vibeasr::Branch::kAcoustic;
    ASSERT_TRUE(
        model->impl()
            .encoder->RunBranch(b, audio->samples.data(), audio->samples.size(), pool, &hook)
            .ok());
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(ReadF32(dir + "/step.f32"), want);
    // The frames of the step's rate: one per 400 samples at stage 5, 16 at stage 3, 3200 at
    // the head.
    const std::string name = step;
    const int64_t hop = name == "s3.conv" ? 16 : name == "head" ? 3200 : 400;
    EXPECT_EQ(static_cast<int64_t>(want.size()) / channels,
              static_cast<int64_t>(audio->samples.size()) / hop);
  }
  std::string err;
  EXPECT_EQ(RunCommand(tern + "--step s9.conv --dump-features " + dir + "/x.f32 " + wav, &err), 2);
  EXPECT_NE(err.find("--step s9.conv: this encoder has no such step; its steps are: input, "
                     "s0.conv,"),
            std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.f32"));
  // Refused once, before any input runs: not once per input, and nothing written.
  EXPECT_EQ(RunCommand(tern + "--step s9.conv --output-dir " + dir + " " + wav + " " + kDataDir +
                           "/005.wav",
                       &err),
            2);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("no such step"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/004.f32"));
  EXPECT_EQ(
      RunCommand(tern + "--branch both --step head --dump-features " + dir + "/x.f32 " + wav, &err),
      2);
  EXPECT_NE(err.find("--branch"), std::string::npos) << err;
  EXPECT_EQ(RunCommand(tern + "--branch semantic --dump-features " + dir + "/x.f32 " + wav, &err),
            2);  // --branch only with --step
  EXPECT_NE(err.find("--branch requires --step"), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

// TranscribeOptions::on_text: the deltas join to the transcript byte for byte (its text less
// leading and trailing blanks, as the writers show it), arrive while decoding goes (greedy:
// several of them), and a callback that returns false cancels.
TEST(TinyModel, StreamedTextJoinsToTheTranscript) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Result<Audio> audio = LoadAudio(kDataDir + "/008.wav");
  ASSERT_TRUE(audio.ok());
  Session session(model, 2);
  for (auto [beam, format] : {std::pair{1, PromptFormat::kText}, std::pair{1, PromptFormat::kJson},
                              std::pair{3, PromptFormat::kText}}) {
    SCOPED_TRACE(::testing::Message()
                 << "beam " << beam << " json " << (format == PromptFormat::kJson));
    TranscribeOptions opt;
    opt.format = format;
    opt.decoding.beam = beam;
    std::vector<std::string> deltas;
    size_t tokens_when_first = 0;
    opt.on_text = [&](std::string_view d) {
      deltas.emplace_back(d);
      return true;
    };
    opt.on_progress = [&](double) {  // how far decoding was when the first delta came
      if (deltas.empty()) ++tokens_when_first;
      return true;
    };
    Result<Transcript> t = session.Transcribe(*audio, opt);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_FALSE(t->text.empty());
    std::string joined;
    for (const std::string& d : deltas) {
      EXPECT_FALSE(d.empty());
      joined += d;
    }
    EXPECT_EQ(joined, engine::TrimText(t->text));
    // Greedy text arrives in several deltas. The bundled model was trained on the text
    // prompt only; in the json variant it writes a word or two, so only joining is checked.
    if (beam == 1 && format == PromptFormat::kText) {
      EXPECT_GE(deltas.size(), 3u) << t->text;
      EXPECT_LT(tokens_when_first, t->token_ids.size());  // not all at the end
    }
  }
  TranscribeOptions stop;
  int calls = 0;
  stop.on_text = [&calls](std::string_view) { return ++calls < 2; };
  Result<Transcript> t = session.Transcribe(*audio, stop);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), ErrorCode::kCancelled) << t.status().ToString();
  EXPECT_EQ(calls, 2);
}

// tern transcribe --stream prints what the txt writer prints, file after file, and refuses
// destinations other than stdout's plain text (a usage error, exit 2). Streaming decodes
// greedily (a beam's text would come at the end): it equals the run with --beam 1.
TEST(TinyModel, StreamFromTheCommandLine) {
  const std::string tern = std::string(TERN_BINARY) + " transcribe --model " +
                           std::string(TERN_SOURCE_DIR) + "/models/tiny-en -t 1 -q " + kDataDir +
                           "/008.wav " + kDataDir + "/003.wav";
  std::string plain, streamed, err;
  ASSERT_EQ(RunCommand(tern + " --beam 1", &plain), 0) << plain;
  ASSERT_EQ(RunCommand(tern + " --stream", &streamed), 0) << streamed;
  EXPECT_EQ(streamed, plain);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), '\n'), 4) << plain;  // a header line each
  for (const char* bad : {" -o /dev/null", " --output-format srt", " --output-dir /tmp"}) {
    EXPECT_EQ(RunCommand(tern + " --stream" + bad, &err), 2) << bad;
    EXPECT_NE(err.find("--stream prints plain text to stdout"), std::string::npos) << err;
  }
}

// Audio longer than the decoder's context holds (with this --max-tokens) goes in pieces, cut
// in the pauses between the sentences, instead of failing; the words still come out.
TEST(TinyModel, LongAudioGoesInPiecesCutInThePauses) {
  auto model = LoadTiny();
  ASSERT_TRUE(model);
  Result<std::string> tsv = ReadFileToString(kDataDir + "/transcripts.tsv");
  ASSERT_TRUE(tsv.ok());
  Audio all;
  all.name = "twelve clips";
  all.source_rate = 24000;
  all.source_channels = 1;
  std::vector<std::pair<size_t, size_t>> pauses;  // [begin, end) samples of the added silence
  std::vector<std::string> ref;
  std::istringstream lines(*tsv);
  std::string line;
  for (int i = 0; i < 12 && std::getline(lines, line); ++i) {
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    Result<Audio> a = LoadAudio(kDataDir + "/" + line.substr(0, t1));
    ASSERT_TRUE(a.ok());
    all.samples.insert(all.samples.end(), a->samples.begin(), a->samples.end());
    pauses.emplace_back(all.samples.size(), all.samples.size() + 7200);
    all.samples.insert(all.samples.end(), 7200, 0.0f);  // 300 ms
    for (const std::string& w : NormWords(line.substr(t1 + 1, t2 - t1 - 1))) ref.push_back(w);
  }
  Session session(model, 2);
  TranscribeOptions opt;
  // Pieces sized by the decoder's context alone: a --chunk-seconds far over the automatic
  // one (the model's declared training length) turns that off.
  opt.chunk_seconds = 1e6;
  // Leave room for 32 pads (4.3 s) beside the prompt's text and the output budget: the
  // prompt's text is its length less its pads (one per 3200 samples), plus 4 of slack.
  Result<Transcript> probe = session.Transcribe(all, [&opt] {
    TranscribeOptions o = opt;
    o.decoding.max_tokens = 1;
    return o;
  }());
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  ASSERT_TRUE(probe->pieces.empty());
  const int64_t text = static_cast<int64_t>(probe->prompt_token_ids.size()) -
                       static_cast<int64_t>((all.samples.size() + 3199) / 3200);
  opt.decoding.max_tokens = static_cast<int>(model->info().context - text - 4 - 32);
  std::string streamed;  // the pieces' texts trimmed and joined as Transcript::text is
  opt.on_text = [&streamed](std::string_view d) {
    streamed += d;
    return true;
  };
  Result<Transcript> whole = session.Transcribe(all, opt);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(streamed, whole->text);
  ASSERT_GE(whole->pieces.size(), 8u);
  double rms = 0;
  for (float v : all.samples) rms += static_cast<double>(v) * v;
  rms = std::sqrt(rms / all.samples.size());
  for (size_t i = 0; i < whole->pieces.size(); ++i) {
    const auto [t0, t1] = whole->pieces[i];
    EXPECT_LE(t1 - t0, 32 * 3200 / 24000.0 + 1e-9);
    if (i + 1 == whole->pieces.size()) break;
    // The cut lies in a pause: the 100 ms around it is near silence.
    const size_t c = static_cast<size_t>(std::llround(t1 * 24000));
    double e = 0;
    for (size_t j = c - 1200; j < c + 1200; ++j) {
      e += static_cast<double>(all.samples[j]) * all.samples[j];
    }
    EXPECT_LT(std::sqrt(e / 2400), 0.05 * rms) << "cut at " << t1 << " s";
  }
  for (const auto& [a, b] : whole->pieces) std::printf("[%.2f-%.2f] ", a, b);
  const std::vector<std::string> hyp = NormWords(whole->text);
  const double wer = static_cast<double>(EditDistance(ref, hyp)) / ref.size();
  std::printf("%zu pieces, WER %.1f%% over %zu words\n  hyp: %s\n", whole->pieces.size(), 100 * wer,
              ref.size(), whole->text.c_str());
  // The pieces hold whole sentences, so the words fare about as the clips do alone; a cut
  // through words or a hallucinated tail would push the WER past the gate.
  EXPECT_LE(wer, 0.17);

  // With no options at all the model's declared piece length (or training length) cuts the
  // audio into pieces of at most AutomaticPieceSeconds, with no warning; the bundled model
  // also declares utterance_pieces, so every pause cuts.
  const std::optional<double> declared = engine::AutomaticPieceSeconds(model->info().trained);
  ASSERT_TRUE(declared.has_value());
  const double piece = *declared;
  Result<Transcript> plain = session.Transcribe(all, TranscribeOptions());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->warnings.empty()) << plain->warnings[0];
  ASSERT_GE(plain->pieces.size(),
            static_cast<size_t>(std::ceil(all.samples.size() / 24000.0 / piece)));
  for (const auto& [a, b] : plain->pieces) EXPECT_LE(b - a, piece + 1e-9);
  const double plain_wer =
      static_cast<double>(EditDistance(ref, NormWords(plain->text))) / ref.size();
  std::printf("no options: %zu pieces, WER %.1f%%\n  hyp: %s\n", plain->pieces.size(),
              100 * plain_wer, plain->text.c_str());
  // One piece per request (6.5% with this engine; in 6 s pieces cut by length, two requests
  // shared a piece and the model dropped or merged words of one: 49.4%). The gate is that
  // figure with a few words' room.
  EXPECT_LE(plain_wer, 0.12);
}

}  // namespace
}  // namespace tern
