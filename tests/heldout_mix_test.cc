// The bundled model (models/tiny-en) on held-out clips of the kinds a user brings
// (training/synth_mix.py; tests/data/heldout_mix/ holds a fixed share of each set, written
// by training/heldout_mix.py): requests phrased in sentence frames never trained on, in seen
// voices and the held-out one; monologues of several sentences with no options; dialogues as
// JSON segments (speakers, times); clips whose names a context line gives; noise. Scored as
// training/eval_mix.py scores the whole sets (tests/scoring.h). Each gate sits a few words
// above what the bundled model scores on these clips with this engine (greedy, independent
// of the thread count): room for near-tie flips between float paths, not for a worse model.
// A kind the model declares it was not trained for (tern.trained.*) is skipped, saying so.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "common/test_bundled_model.h"
#include "scoring.h"
#include "tern/tern.h"

namespace tern {
namespace {

using scoring::WerCount;

const std::string kDataDir = TERN_SOURCE_DIR "/tests/data/heldout_mix";
const std::string kHeldOutVoice = "espeak:en-us+f2";  // training/synth.py HELDOUT_VOICE

// Gates: the bundled model's figures on these clips (in brackets), then a few words of margin.
// They are far from what a user wants (10% WER, 90% attribution and boundaries): they hold
// the model and the engine to what they do now (training/README.md, "Bundled model").
constexpr double kMaxWerNaturalSeen = 0.58;              // (49.2% of 63 words)
constexpr double kMaxWerNaturalHeldOut = 0.62;           // (53.2% of 62 words)
constexpr double kMaxWerMonologues = 0.09;               // (6.0% of 184 words, at pauses)
constexpr double kMinNoiseEmpty = 0.83;                  // (6 of 6 clips)
constexpr double kMaxWerDialogues = 0.30;                // (21.8% of 101 words)
constexpr double kMinSpeakerAttribution = 0.90;          // (98.0% of 101 words, by voice)
constexpr double kMinBoundariesWithinHalfSecond = 0.85;  // (100% of 28 starts and ends)
constexpr double kMaxWerWithContext = 0.33;              // (23.8% of 42 words; 26.2% without)

struct Clip {
  std::string file, set, text, voice, context;
  std::vector<scoring::TimedSegment> segments;
};

std::vector<Clip> ClipsOf(const std::string& set) {
  std::vector<Clip> out;
  Result<std::string> text = ReadFileToString(kDataDir + "/clips.json");
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return out;
  for (const nlohmann::json& c : nlohmann::json::parse(*text)) {
    if (c.at("set") != set) continue;
    out.push_back({c.at("file"), set, c.at("text"), c.at("voice"), c.at("context"),
                   scoring::SegmentsFromJson(c.at("segments"))});
  }
  return out;
}

class HeldOutMix : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(model_); }

  // The clip's transcript; the test fails (and gets an empty one) when it does not come.
  Transcript Run(const Clip& clip, const TranscribeOptions& options) {
    Result<Audio> audio = LoadAudio(kDataDir + "/" + clip.file);
    EXPECT_TRUE(audio.ok()) << audio.status().ToString();
    if (!audio.ok()) return {};
    Session session(model_, 2);
    Result<Transcript> tr = session.Transcribe(*audio, options);
    EXPECT_TRUE(tr.ok()) << clip.file << ": " << tr.status().ToString();
    if (!tr.ok()) return {};
    std::printf("%s [%s]\n  ref: %s\n  hyp: %s\n", clip.file.c_str(), clip.voice.c_str(),
                clip.text.c_str(), tr->text.c_str());
    return *std::move(tr);
  }

  const std::shared_ptr<const Model> model_ = bundled::TinyModel();
};

// Requests in the domain, phrased in frames the training text never used.
TEST_F(HeldOutMix, NaturalPhrasingInSeenAndHeldOutVoices) {
  TranscribeOptions opt;
  opt.decoding.max_tokens = 96;
  WerCount seen, heldout;
  for (const Clip& c : ClipsOf("nat")) {
    (c.voice == kHeldOutVoice ? heldout : seen).Add(c.text, Run(c, opt).text);
  }
  std::printf(
      "natural phrasing: WER seen voices %.1f%% (%zu words), held-out voice %.1f%% "
      "(%zu words)\n",
      100 * seen.wer(), seen.words, 100 * heldout.wer(), heldout.words);
  ASSERT_GT(seen.words, 40u);
  ASSERT_GT(heldout.words, 40u);
  EXPECT_LE(seen.wer(), kMaxWerNaturalSeen);
  EXPECT_LE(heldout.wer(), kMaxWerNaturalHeldOut);
}

// Several sentences of one voice, 10-40 s, as a user runs them: no options at all.
TEST_F(HeldOutMix, MonologuesWithNoOptions) {
  WerCount all;
  int long_clips = 0;
  for (const Clip& c : ClipsOf("multi")) {
    all.Add(c.text, Run(c, TranscribeOptions()).text);
    long_clips += c.segments.back().end >= 29;
  }
  std::printf("monologues: WER %.1f%% (%zu words)\n", 100 * all.wer(), all.words);
  ASSERT_GE(long_clips, 2);
  EXPECT_LE(all.wer(), kMaxWerMonologues);
}

// Dialogues of 2-3 voices with --format json: the segments' words, who said them (under the
// best renaming of the speaker numbers) and when each turn starts and ends.
TEST_F(HeldOutMix, DialoguesAsSegmentsWithSpeakersAndTimes) {
  if (model_->info().trained.json_format != true) {
    GTEST_SKIP() << "the bundled model declares it was not trained for --format json";
  }
  TranscribeOptions opt;
  opt.format = PromptFormat::kJson;
  WerCount words;
  size_t ref_words = 0, attributed = 0;
  std::vector<double> boundary;
  int parsed = 0, clips = 0;
  for (const Clip& c : ClipsOf("dlg")) {
    const Transcript tr = Run(c, opt);
    std::vector<scoring::TimedSegment> hyp;
    std::string text;
    if (tr.structured) {
      ++parsed;
      for (const Segment& s : tr.segments) {
        hyp.push_back({s.start, s.end, s.speaker, s.text});
        text += s.text + " ";
        std::printf("    [%.2f-%.2f] %d: %s\n", s.start, s.end, s.speaker, s.text.c_str());
      }
    }
    words.Add(c.text, text);
    const scoring::DialogueScore d = scoring::ScoreDialogue(c.segments, hyp);
    ref_words += d.words;
    attributed += d.attributed;
    boundary.insert(boundary.end(), d.boundary_errors.begin(), d.boundary_errors.end());
    ++clips;
  }
  size_t within = 0;
  for (double e : boundary) within += e <= 0.5;
  const double attribution = static_cast<double>(attributed) / ref_words;
  const double within_share = static_cast<double>(within) / boundary.size();
  std::printf(
      "dialogues: %d of %d answers parsed as segments, WER %.1f%%, speaker attribution "
      "%.1f%%, boundary error median %.2f s, p90 %.2f s, within 0.5 s %.1f%%\n",
      parsed, clips, 100 * words.wer(), 100 * attribution, scoring::Quantile(boundary, 0.5),
      scoring::Quantile(boundary, 0.9), 100 * within_share);
  ASSERT_GE(clips, 5);
  EXPECT_EQ(parsed, clips);
  EXPECT_LE(words.wer(), kMaxWerDialogues);
  EXPECT_GE(attribution, kMinSpeakerAttribution);
  EXPECT_GE(within_share, kMinBoundariesWithinHalfSecond);
}

// Clips naming rare names, with the context line that names them and without it.
TEST_F(HeldOutMix, ContextLineSpellsTheNames) {
  if (model_->info().trained.context != true) {
    GTEST_SKIP() << "the bundled model declares it was not trained for --context";
  }
  WerCount without, with;
  for (const Clip& c : ClipsOf("ctx")) {
    without.Add(c.text, Run(c, TranscribeOptions()).text);
    TranscribeOptions opt;
    opt.context = c.context;
    with.Add(c.text, Run(c, opt).text);
  }
  std::printf("context: WER %.1f%% without the line, %.1f%% with it (%zu words)\n",
              100 * without.wer(), 100 * with.wer(), with.words);
  ASSERT_GT(with.words, 30u);
  // The line does not help this model yet (on the whole held-out set: 25.2% without, 34.3%
  // with), so only the level is held, not that the line improves on it.
  EXPECT_LE(with.wer(), kMaxWerWithContext);
}

// Noise and silence: nothing to transcribe.
TEST_F(HeldOutMix, NoiseGivesAnEmptyTranscript) {
  int empty = 0, clips = 0;
  for (const Clip& c : ClipsOf("noise")) {
    const Transcript tr = Run(c, TranscribeOptions());
    empty += tr.text.find_first_not_of(" \t\n") == std::string::npos;
    ++clips;
  }
  std::printf("noise: %d of %d transcripts empty\n", empty, clips);
  ASSERT_GE(clips, 6);
  EXPECT_GE(static_cast<double>(empty) / clips, kMinNoiseEmpty);
}

}  // namespace
}  // namespace tern
