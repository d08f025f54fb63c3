// Segment times moved to the edges of speech: edges only at pauses of 0.4 s or more, the
// nearest within the window, source times through an excerpt's offset, and nothing moved
// where the audio has no pauses or the segment would turn inside out.
#include "engine/snap_times.h"
#include "engine/speech_edges.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace tern::engine {
namespace {

// Speech-like bursts (a 200 Hz tone) at the given [start, end) seconds, silence between,
// `total` seconds in all, with a floor of `noise` amplitude everywhere.
std::vector<float> Bursts(const std::vector<std::pair<double, double>>& spans, double total,
                          float noise = 0.0f) {
  std::vector<float> x(static_cast<size_t>(total * 24000), 0.0f);
  uint32_t state = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = noise * (static_cast<float>(state >> 8) / 16777216.0f - 0.5f);
  }
  for (const auto& [a, b] : spans) {
    for (size_t i = static_cast<size_t>(a * 24000); i < static_cast<size_t>(b * 24000); ++i)
      x[i] += 0.3f * static_cast<float>(std::sin(2 * std::numbers::pi * 200 * i / 24000.0));
  }
  return x;
}

TEST(FindSpeechEdges, OnlyAtPausesOfAtLeastFourTenths) {
  // A 0.2 s gap inside the first utterance is no edge; the 0.6 s gap is.
  const std::vector<float> x = Bursts({{0.5, 1.2}, {1.4, 2.0}, {2.6, 3.5}}, 4.0);
  const SpeechEdges e = FindSpeechEdges(x.data(), static_cast<int64_t>(x.size()));
  ASSERT_EQ(e.onsets.size(), 2u);
  ASSERT_EQ(e.offsets.size(), 2u);
  EXPECT_NEAR(e.onsets[0], 0.5, 0.011);
  EXPECT_NEAR(e.offsets[0], 2.0, 0.011);
  EXPECT_NEAR(e.onsets[1], 2.6, 0.011);
  EXPECT_NEAR(e.offsets[1], 3.5, 0.011);
}

TEST(FindSpeechEdges, NoneInsideNoiseWithoutPauses) {
  // Noise 30 dB under the speech fills the gaps: no pause is 45 dB quiet, so the only edges
  // are where the audio starts and ends.
  const std::vector<float> x = Bursts({{0.5, 1.5}, {2.5, 3.5}}, 4.0, 0.03f);
  const SpeechEdges e = FindSpeechEdges(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(e.onsets, std::vector<double>{0.0});
  EXPECT_EQ(e.offsets, std::vector<double>{4.0});
}

TEST(SnapToSpeechEdges, MovesTimesToTheNearestEdgeWithinTheWindow) {
  Audio audio;
  audio.samples = Bursts({{0.5, 1.7}, {2.6, 4.0}, {6.0, 7.0}}, 8.0);
  audio.offset_s = 30.0;  // an excerpt: times count from the source's start
  Transcript t;
  t.structured = true;
  t.segments = {Segment{30.3, 31.5, 0, "a"},  // both ends move: 30.5, 31.7
                Segment{32.0, 34.6, 1, "b"},  // 32.6, 34.0
                Segment{33.0, 33.5, 1, "c"},  // start 32.6 (0.4 before; 36.0 is further),
                                              // end 34.0
                Segment{35.3, 35.5, 0, "d"},  // start to 36.0, after its end: kept whole
                Segment{-1, -1, 0, "untimed"}};
  SnapToSpeechEdges(audio, 0.8, &t);
  EXPECT_NEAR(t.segments[0].start, 30.5, 0.011);
  EXPECT_NEAR(t.segments[0].end, 31.7, 0.011);
  EXPECT_NEAR(t.segments[1].start, 32.6, 0.011);
  EXPECT_NEAR(t.segments[1].end, 34.0, 0.011);
  EXPECT_NEAR(t.segments[2].start, 32.6, 0.011);
  EXPECT_NEAR(t.segments[2].end, 34.0, 0.011);
  EXPECT_EQ(t.segments[3].start, 35.3);
  EXPECT_EQ(t.segments[3].end, 35.5);
  EXPECT_EQ(t.segments[4].start, -1);
  // A window too small to reach any edge, 0 (off) and unstructured text move nothing.
  Transcript u;
  u.structured = true;
  u.segments = {Segment{30.3, 31.5, 0, "a"}};
  SnapToSpeechEdges(audio, 0.1, &u);
  EXPECT_EQ(u.segments[0].start, 30.3);
  SnapToSpeechEdges(audio, 0, &u);
  EXPECT_EQ(u.segments[0].end, 31.5);
  u.structured = false;
  SnapToSpeechEdges(audio, 0.8, &u);
  EXPECT_EQ(u.segments[0].start, 30.3);
}

TEST(SnapToSpeechEdges, SilenceHasNoEdges) {
  Audio audio;
  audio.samples.assign(48000, 0.0f);
  Transcript t;
  t.structured = true;
  t.segments = {Segment{0.2, 1.0, 0, "a"}};
  SnapToSpeechEdges(audio, 2.0, &t);
  EXPECT_EQ(t.segments[0].start, 0.2);
  EXPECT_EQ(t.segments[0].end, 1.0);
}

}  // namespace
}  // namespace tern::engine
