// Voice features: the same numbers as training/voices.py's definition (the projection a
// model declares was fitted on those), independent of level, and refused when too short.
#include "audio/voice_features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace tern::audio {
namespace {

// Two tones under a slow tremolo plus an LCG's noise, the first 0.2 s near silent (so the
// loudness gate drops frames): 1 s at 24 kHz.
std::vector<float> Signal() {
  const int n = 24000;
  std::vector<float> x(n);
  uint64_t state = 12345;
  const double pi = std::numbers::pi;
  for (int i = 0; i < n; ++i) {
    state = (state * 1103515245 + 12345) % (uint64_t{1} << 31);
    const double noise = static_cast<double>(state) / 2147483648.0 - 0.5;
    double v = (0.3 * std::sin(2 * pi * 180 * i / 24000) +
                0.2 * std::sin(2 * pi * 1250 * i / 24000) + 0.05 * noise) *
               (1 + 0.5 * std::sin(2 * pi * 3 * i / 24000));
    if (i < 4800) v *= 0.001;
    x[i] = static_cast<float>(v);
  }
  return x;
}

// training/voices.py's features() of the same signal (numpy, float64):
//   voices.features(x) with x built as Signal() builds it.
constexpr double kFromTraining[kVoiceFeatureCount] = {
    26.4918288,  16.0197116, 6.9865466,   27.4029852,  40.0070565,  27.0615755,  0.933981826,
    -10.6150189, 1.48258188, 15.6493148,  10.2068362,  -10.2472003, -21.1748064, -13.0143553,
    1.08051604,  2.5624132,  -8.56247018, -16.6517882, -11.872667,  4.66115525,  4.0704328,
    2.22038395,  3.23628832, 3.16797627,  2.69690729,  2.23327837,  2.16886461,  2.08627008,
    3.26186155,  2.11610449, 1.94464461,  3.02211471,  2.34034622,  1.89895788,  1.98129407,
    2.04054522,  2.43202393, 2.21632763,  5.18796931,  0.330528731, 0.9875};

TEST(VoiceFeatures, MatchTheTrainingDefinition) {
  const std::vector<float> x = Signal();
  VoiceFeatures f;
  ASSERT_TRUE(ComputeVoiceFeatures(x.data(), static_cast<int64_t>(x.size()), &f));
  // Both sides compute in double from the same float samples; they differ in the FFT's and
  // the sums' order only (~1e-12 relative), the printed reference in its 9 digits.
  for (int i = 0; i < kVoiceFeatureCount; ++i)
    EXPECT_NEAR(f[i], kFromTraining[i], 1e-6 * std::max(1.0, std::fabs(kFromTraining[i]))) << i;
}

constexpr int kLogPitch = 2 * kVoiceCepstra, kPitchSpread = kLogPitch + 1,
              kVoicedShare = kLogPitch + 2;

// A buzz of ten harmonics of 120 Hz (a period of exactly 200 samples) is voiced in every
// frame at that pitch; white noise has no period, and reads as the 150 Hz of no pitch.
TEST(VoiceFeatures, HearPitch) {
  const double pi = std::numbers::pi;
  std::vector<float> buzz(24000), noise(24000);
  uint64_t state = 7;
  for (size_t i = 0; i < buzz.size(); ++i) {
    double v = 0.0;
    for (int h = 1; h <= 10; ++h)
      v += std::sin(2 * pi * 120 * h * static_cast<double>(i) / 24000) / h;
    buzz[i] = static_cast<float>(0.2 * v);
    state = (state * 6364136223846793005ULL + 1442695040888963407ULL);
    noise[i] = static_cast<float>(static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5);
  }
  VoiceFeatures f;
  ASSERT_TRUE(ComputeVoiceFeatures(buzz.data(), static_cast<int64_t>(buzz.size()), &f));
  EXPECT_NEAR(std::exp(f[kLogPitch]), 120.0, 1e-9);
  EXPECT_NEAR(f[kPitchSpread], 0.0, 1e-12);
  EXPECT_EQ(f[kVoicedShare], 1.0);
  ASSERT_TRUE(ComputeVoiceFeatures(noise.data(), static_cast<int64_t>(noise.size()), &f));
  EXPECT_LT(f[kVoicedShare], 0.05);
  EXPECT_NEAR(std::exp(f[kLogPitch]), 150.0, 1e-9);
  EXPECT_EQ(f[kPitchSpread], 0.0);
}

// Silence is not a voice, but it is not an error either: every frame is gated in (all as
// loud as the loudest), none is voiced, and every feature is a finite number.
TEST(VoiceFeatures, SilenceIsFinite) {
  const std::vector<float> zeros(24000, 0.0f);
  VoiceFeatures f;
  ASSERT_TRUE(ComputeVoiceFeatures(zeros.data(), static_cast<int64_t>(zeros.size()), &f));
  for (int i = 0; i < kVoiceFeatureCount; ++i) EXPECT_TRUE(std::isfinite(f[i])) << i;
  EXPECT_EQ(f[kVoicedShare], 0.0);
}

TEST(VoiceFeatures, DoNotDependOnLevel) {
  const std::vector<float> x = Signal();
  std::vector<float> quiet = x;
  for (float& v : quiet) v *= 0.05f;
  VoiceFeatures a, b;
  ASSERT_TRUE(ComputeVoiceFeatures(x.data(), static_cast<int64_t>(x.size()), &a));
  ASSERT_TRUE(ComputeVoiceFeatures(quiet.data(), static_cast<int64_t>(quiet.size()), &b));
  // A gain adds a constant to every log-mel band, which cepstra from c1 on cancel, and
  // scales every autocorrelation, which the pitch's normalization cancels; what is left is
  // the 1e-9 floor under the log, far below the gated frames' energies.
  for (int i = 0; i < kVoiceFeatureCount; ++i) EXPECT_NEAR(a[i], b[i], 1e-4) << i;
}

TEST(VoiceFeatures, NeedTenFrames) {
  const std::vector<float> x = Signal();
  VoiceFeatures f{};
  const int64_t ten = 600 + 9 * 240;  // one window and nine hops
  EXPECT_FALSE(ComputeVoiceFeatures(x.data() + 12000, ten - 1, &f));
  EXPECT_EQ(f[0], 0.0);  // untouched
  EXPECT_TRUE(ComputeVoiceFeatures(x.data() + 12000, ten, &f));
  EXPECT_FALSE(ComputeVoiceFeatures(x.data(), 0, &f));
}

}  // namespace
}  // namespace tern::audio
