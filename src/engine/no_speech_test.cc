#include "engine/no_speech.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace tern::engine {
namespace {

// A sine of amplitude a has RMS a / sqrt(2): the level of its loudest frame, and of a
// short burst inside silence, in dBFS of the source (samples / gain).
TEST(NoSpeech, LoudestFrameLevel) {
  std::vector<float> x(24000, 0.0f);
  for (size_t i = 12000; i < 12600; ++i) x[i] = 0.1f * std::sin(0.3f * static_cast<float>(i));
  const double want = 20 * std::log10(0.1 / std::sqrt(2.0));  // -23.0
  // The frame that covers the burst best (hops of 120 samples: at least 480 of its 600).
  const double got = LoudestFrameDbfs(x.data(), static_cast<int64_t>(x.size()), 1.0f);
  EXPECT_LE(got, want + 0.1);
  EXPECT_GE(got, want + 10 * std::log10(480.0 / 600.0) - 0.1);
  // The same samples after a gain of 10 (20 dB) are the same source level.
  std::vector<float> y = x;
  for (float& v : y) v *= 10.0f;
  EXPECT_NEAR(LoudestFrameDbfs(y.data(), static_cast<int64_t>(y.size()), 10.0f), got, 1e-4);
  // Shorter than one frame: the clip itself.
  EXPECT_NEAR(LoudestFrameDbfs(x.data() + 12000, 300, 1.0f), want, 0.2);
  std::vector<float> zeros(5000, 0.0f);
  EXPECT_TRUE(std::isinf(LoudestFrameDbfs(zeros.data(), 5000, 1.0f)));
}

TEST(NoSpeech, WhiteNoiseLevelIsItsRms) {
  std::mt19937 rng(7);
  std::normal_distribution<float> n(0.0f, 0.001f);  // -60 dBFS
  std::vector<float> x(48000);
  for (float& v : x) v = n(rng);
  EXPECT_NEAR(LoudestFrameDbfs(x.data(), 48000, 1.0f), -60.0, 1.0);
}

TEST(NoSpeech, StopProbabilityIsTheSoftmaxMassOfTheStopIds) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(3.0f), 0.0f};  // 1+2+3+1
  const std::vector<int32_t> stops = {1, 3};
  EXPECT_NEAR(StopProbability(logits, stops), 3.0 / 7.0, 1e-6);                    // float logits
  EXPECT_NEAR(StopProbability(logits, std::vector<int32_t>{2}), 3.0 / 7.0, 1e-6);  // float logits
  EXPECT_EQ(StopProbability(logits, std::vector<int32_t>{-1, 9}), 0.0);            // absent ids
}

TEST(NoSpeech, TranscriptSaysWhy) {
  Audio a;
  a.samples.assign(24000, 0.0f);
  a.offset_s = 2;
  const Transcript t = NoSpeechTranscript(a, -71.3, -55);
  EXPECT_EQ(t.text, "");
  EXPECT_TRUE(t.segments.empty());
  EXPECT_EQ(t.stop_reason, "no_speech");
  EXPECT_DOUBLE_EQ(t.duration_s, 1.0);
  EXPECT_DOUBLE_EQ(t.offset_s, 2.0);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("-71.3 dBFS"), std::string::npos) << t.warnings[0];
  EXPECT_NE(t.warnings[0].find("-55.0 dBFS"), std::string::npos) << t.warnings[0];
}

}  // namespace
}  // namespace tern::engine
