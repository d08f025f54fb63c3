// LiveCutter on synthetic signals: pauses end pieces, silence before speech is dropped,
// a piece without a pause is cut at its quietest part, and nothing depends on how the
// samples were split into Push calls.
#include "engine/live_cutter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace tern::engine {
namespace {

using Kind = LiveCutter::Action::Kind;

void Tone(double seconds, double amp, std::vector<float>* x) {
  const int64_t n = std::llround(seconds * 24000);
  for (int64_t i = 0; i < n; ++i)
    x->push_back(static_cast<float>(amp * std::sin(2 * M_PI * 220.0 * i / 24000.0)));
}
void Silence(double seconds, std::vector<float>* x) {
  x->insert(x->end(), static_cast<size_t>(std::llround(seconds * 24000)), 0.0f);
}

std::vector<LiveCutter::Action> PushAll(const std::vector<float>& x, const LiveCutterConfig& c,
                                        std::mt19937* rng) {
  LiveCutter cutter(c);
  std::vector<LiveCutter::Action> out;
  size_t i = 0;
  std::uniform_real_distribution<double> logn(0, std::log(120000.0));
  while (i < x.size()) {
    size_t n = rng ? static_cast<size_t>(std::exp(logn(*rng))) : x.size();
    n = std::max<size_t>(1, std::min(n, x.size() - i));
    cutter.Push(x.data() + i, n, &out);
    i += n;
  }
  return out;
}

std::vector<LiveCutter::Action> Cuts(const std::vector<LiveCutter::Action>& a, Kind k) {
  std::vector<LiveCutter::Action> r;
  for (const auto& x : a)
    if (x.kind == k) r.push_back(x);
  return r;
}

TEST(LiveCutter, PausesEndPiecesAndLeadingSilenceIsDropped) {
  std::vector<float> x;
  Silence(2.0, &x);    // dropped down to a short lead-in
  Tone(1.0, 0.3, &x);  // piece 0 speech at 2.0 s
  Silence(1.0, &x);    // pause: cut in its middle region
  Tone(1.5, 0.1, &x);  // piece 1 (quieter, still above -35 dB of 0.3)
  Silence(0.3, &x);    // shorter than the pause: no cut
  Tone(0.5, 0.1, &x);
  Silence(1.0, &x);
  LiveCutterConfig c;  // 0.5 s pause, 30 s max
  const auto a = PushAll(x, c, nullptr);
  const auto starts = Cuts(a, Kind::kSpeechStarted);
  const auto cuts = Cuts(a, Kind::kCut);
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(cuts.size(), 2u);
  EXPECT_EQ(starts[0].at, 48000);
  // the pause [3.0, 4.0) s is found after 0.5 s of it; the cut lies 0.25 s into it
  EXPECT_EQ(cuts[0].at, 72000 + 6000);
  EXPECT_EQ(starts[1].at, 96000);
  EXPECT_EQ(cuts[1].at, 96000 + 36000 + 7200 + 12000 + 6000);
  // the drops kept a quarter second of lead-in before the first onset
  int64_t last_drop = -1;
  for (const auto& d : Cuts(a, Kind::kDrop))
    if (d.at < starts[0].at) last_drop = d.at;
  EXPECT_EQ(last_drop, 48000 - 6000);
  // and after the last piece, the trailing silence is dropped as it arrives
  EXPECT_EQ(Cuts(a, Kind::kDrop).back().at, static_cast<int64_t>(x.size()) - 6000);
}

TEST(LiveCutter, LongPieceIsCutAtItsQuietestPartInTheSecondHalf) {
  std::vector<float> x;
  Tone(6.0, 0.3, &x);
  Tone(0.4, 0.05, &x);  // a dip (not a pause: -15.6 dB) at 6.0-6.4 s
  Tone(3.6, 0.3, &x);
  LiveCutterConfig c;
  c.max_samples = 8 * 24000;
  const auto cuts = Cuts(PushAll(x, c, nullptr), Kind::kCut);
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(cuts[0].at, 6 * 24000 + 4800);  // the dip's middle
}

TEST(LiveCutter, ActionsDoNotDependOnHowSamplesArrive) {
  std::mt19937 noise(7);
  std::normal_distribution<float> g(0, 1);
  std::vector<float> x;
  for (int k = 0; k < 6; ++k) {
    const size_t b = x.size();
    Tone(0.7 + 0.3 * k, 0.2, &x);
    for (size_t i = b; i < x.size(); ++i) x[i] *= 1 + 0.5f * g(noise);
    Silence(0.2 + 0.25 * k, &x);
  }
  LiveCutterConfig c;
  c.max_samples = 3 * 24000;
  const auto whole = PushAll(x, c, nullptr);
  EXPECT_GE(Cuts(whole, Kind::kCut).size(), 3u);
  for (unsigned seed = 1; seed <= 5; ++seed) {
    std::mt19937 rng(seed);
    const auto split = PushAll(x, c, &rng);
    ASSERT_EQ(split.size(), whole.size()) << seed;
    for (size_t i = 0; i < split.size(); ++i) {
      EXPECT_EQ(split[i].kind, whole[i].kind) << seed << " " << i;
      EXPECT_EQ(split[i].at, whole[i].at) << seed << " " << i;
    }
  }
}

}  // namespace
}  // namespace tern::engine
