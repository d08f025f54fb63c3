#include "engine/chunks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace tern::engine {
namespace {

std::vector<float> Noise(int64_t n, uint32_t seed, float amp = 0.3f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, amp);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = d(rng);
  return x;
}

void ExpectTiling(const std::vector<std::pair<int64_t, int64_t>>& p, int64_t n, int64_t max_len) {
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.front().first, 0);
  EXPECT_EQ(p.back().second, n);
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_GT(p[i].second, p[i].first) << i;
    EXPECT_LE(p[i].second - p[i].first, max_len) << i;
    if (i > 0) {
      EXPECT_EQ(p[i].first, p[i - 1].second) << i;
    }
  }
}

TEST(PlanChunks, ShortAudioIsOnePiece) {
  const std::vector<float> x = Noise(5000, 1);
  const std::vector<std::pair<int64_t, int64_t>> whole = {{0, 5000}};
  EXPECT_EQ(PlanChunks(x.data(), 5000, 5000), whole);
  EXPECT_EQ(PlanChunks(x.data(), 5000, 1 << 20).size(), 1u);
  EXPECT_TRUE(PlanChunks(x.data(), 0, 100).empty());
}

TEST(PlanChunks, PiecesTileTheAudioWithinTheLimitAndNoneIsShort) {
  const std::vector<float> x = Noise(1000003, 2);
  for (int64_t max_len : {3200, 7001, 24000, 240000, 999999}) {
    const auto p = PlanChunks(x.data(), 1000003, max_len);
    ExpectTiling(p, 1000003, max_len);
    const int64_t k = (1000003 + max_len - 1) / max_len;
    EXPECT_LE(static_cast<int64_t>(p.size()), 2 * k) << max_len;
    for (const auto& [b, e] : p) EXPECT_GE(e - b, max_len / 2) << max_len;
  }
  const std::vector<float> y = Noise(7, 3);
  const auto ones = PlanChunks(y.data(), 7, 1);
  ExpectTiling(ones, 7, 1);
  EXPECT_EQ(ones.size(), 7u);
}

TEST(PlanChunks, CutsFallInTheQuietGap) {
  // 25 s of loud noise with 500 ms of near silence starting at 6.1 s and 200 ms of it at
  // 8 s (a pause inside a sentence): with pieces of at most 10 s the first cut is searched
  // for in 5-10 s, and the longer pause wins.
  const int64_t n = 25 * 24000, gap = 6100 * 24, len = 12000;
  std::vector<float> x = Noise(n, 4);
  for (int64_t i = gap; i < gap + len; ++i) x[static_cast<size_t>(i)] *= 1e-3f;
  for (int64_t i = 8000 * 24; i < 8200 * 24; ++i) x[static_cast<size_t>(i)] = 0.0f;
  const auto p = PlanChunks(x.data(), n, 10 * 24000);
  ExpectTiling(p, n, 10 * 24000);
  ASSERT_GE(p.size(), 2u);
  EXPECT_GT(p[0].second, gap);
  EXPECT_LT(p[0].second, gap + len);
  EXPECT_EQ(PlanChunks(x.data(), n, 10 * 24000), p);  // deterministic
}

// A piece cut in a pause starts `lead` samples before its first frame within 35 dB of its
// loudest: 1 s of silence, then faint breath 40 dB down (not speech), then a tone.
TEST(LeadInStart, StartsShortlyBeforeTheSpeech) {
  std::vector<float> x(24000, 0.0f);
  for (int i = 0; i < 2400; ++i) x.push_back(0.005f * ((i % 2) ? 1.0f : -1.0f));
  const size_t onset = x.size();  // 26400: a multiple of the 240-sample frames
  for (int i = 0; i < 48000; ++i) x.push_back(0.5f * static_cast<float>(std::sin(0.07 * i)));
  const int64_t n = static_cast<int64_t>(x.size());
  EXPECT_EQ(LeadInStart(x.data(), n, 6000), static_cast<int64_t>(onset) - 6000);
  EXPECT_EQ(LeadInStart(x.data(), n, 0), static_cast<int64_t>(onset));
  // Speech nearer the start than the lead-in, or none at all: the piece stays as it is.
  EXPECT_EQ(LeadInStart(x.data() + 24000, n - 24000, 6000), 0);
  const std::vector<float> silence(48000, 0.0f);
  EXPECT_EQ(LeadInStart(silence.data(), 48000, 6000), 0);
  EXPECT_EQ(LeadInStart(x.data(), 100, 6000), 0);  // shorter than one frame
}

// Speech (noise bursts) at [a, b) seconds in `total` seconds of digital silence.
std::vector<float> Speech(const std::vector<std::pair<double, double>>& spans, double total) {
  std::vector<float> x(static_cast<size_t>(total * 24000), 0.0f);
  uint32_t seed = 1;
  for (const auto& [a, b] : spans) {
    const std::vector<float> v = Noise(static_cast<int64_t>((b - a) * 24000), seed++);
    std::copy(v.begin(), v.end(), x.begin() + static_cast<int64_t>(a * 24000));
  }
  return x;
}

TEST(PlanPiecesAtPauses, OnePiecePerStretchOfSpeech) {
  // Pauses of 1.0 s and 0.45 s split; 0.3 s does not (shorter than a pause).
  const std::vector<float> x = Speech({{0.3, 1.5}, {2.5, 3.0}, {3.3, 4.0}, {4.45, 5.0}}, 6.0);
  const int64_t n = static_cast<int64_t>(x.size());
  const auto p = PlanPiecesAtPauses(x.data(), n, 10 * 24000);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].first, 0);  // the first from the audio's start
  EXPECT_EQ(p[0].second, 1.5 * 24000 + kPieceLeadIn);
  EXPECT_EQ(p[1].first, 2.5 * 24000 - kPieceLeadIn);
  EXPECT_EQ(p[1].second, p[2].first);  // a 0.45 s pause: they meet in its middle
  EXPECT_NEAR(p[1].second, 4.225 * 24000, 240);
  EXPECT_EQ(p[2].second, n);  // the last to its end
}

TEST(PlanPiecesAtPauses, LongStretchesAndNoPausesGoByLength) {
  const std::vector<float> one = Speech({{0.2, 5.8}}, 6.0);
  const int64_t n = static_cast<int64_t>(one.size());
  EXPECT_EQ(PlanPiecesAtPauses(one.data(), n, 10 * 24000),
            (std::vector<std::pair<int64_t, int64_t>>{{0, n}}));
  EXPECT_EQ(PlanPiecesAtPauses(one.data(), n, 2 * 24000),
            PlanPiecesByLength(one.data(), n, 2 * 24000));
  const std::vector<float> silence(48000, 0.0f);
  EXPECT_EQ(PlanPiecesAtPauses(silence.data(), 48000, 24000),
            PlanPiecesByLength(silence.data(), 48000, 24000));
  // A stretch over the limit is cut inside it; the pieces stay within the limit.
  const std::vector<float> x = Speech({{0.2, 1.0}, {2.0, 7.5}}, 8.0);
  const auto p = PlanPiecesAtPauses(x.data(), static_cast<int64_t>(x.size()), 3 * 24000);
  ASSERT_GE(p.size(), 3u);
  EXPECT_EQ(p[0].second, 1.0 * 24000 + kPieceLeadIn);
  for (const auto& [a, b] : p) EXPECT_LE(b - a, 3 * 24000);
}

TEST(AppendPiece, MergesTextIdsSegmentsAndStops) {
  Transcript a, b, c;
  a.text = " Hello there. ";
  a.segments = {Segment{0.0, 9.9, -1, a.text}};
  a.token_ids = {1, 2};
  a.prompt_token_ids = {7, 7};
  a.stop_reason = "eos";
  a.frames = 75;
  a.metrics.encoder_ms = 10;
  a.metrics.stages = {{"acoustic.s0", 1.0}};
  b.text = R"([{"Start":1.5,"End":3,"Speaker":0,"Content":"Yes."}])";
  b.structured = true;
  b.segments = {Segment{1.5, 3.0, 0, "Yes."}, Segment{-1, 4.0, 1, "No."}};
  b.token_ids = {3};
  b.stop_reason = "max_tokens";
  b.warnings = {"cut off"};
  b.frames = 60;
  b.metrics.encoder_ms = 5;
  b.metrics.stages = {{"acoustic.s0", 2.0}};
  c.text = "";
  c.segments = {Segment{0.0, 1.0, -1, ""}};
  c.stop_reason = "eos";
  Transcript all;
  AppendPiece(a, 0.0, 10.0, &all);
  AppendPiece(b, 10.0, 18.0, &all);
  AppendPiece(c, 18.0, 19.0, &all);
  EXPECT_EQ(all.text, std::string("Hello there. ") + b.text);
  EXPECT_EQ(all.token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(all.prompt_token_ids, a.prompt_token_ids);
  EXPECT_EQ(all.stop_reason, "max_tokens");
  EXPECT_FALSE(all.structured);
  ASSERT_EQ(all.segments.size(), 4u);
  EXPECT_EQ(all.segments[0].start, 0.0);
  EXPECT_EQ(all.segments[0].end, 10.0);
  EXPECT_EQ(all.segments[0].text, "Hello there.");
  EXPECT_EQ(all.segments[1].start, 11.5);
  EXPECT_EQ(all.segments[1].end, 13.0);
  EXPECT_EQ(all.segments[1].speaker, 0);
  EXPECT_EQ(all.segments[2].start, -1);  // no time stays no time
  EXPECT_EQ(all.segments[2].end, 14.0);
  EXPECT_EQ(all.segments[3].start, 18.0);
  ASSERT_EQ(all.warnings.size(), 1u);
  EXPECT_EQ(all.warnings[0], "[10.00-18.00 s]: cut off");
  EXPECT_EQ(all.frames, 135);
  EXPECT_EQ(all.metrics.encoder_ms, 15);
  ASSERT_EQ(all.metrics.stages.size(), 1u);
  EXPECT_EQ(all.metrics.stages[0].second, 3.0);
  EXPECT_EQ(all.pieces, (std::vector<std::pair<double, double>>{{0, 10}, {10, 18}, {18, 19}}));
}

}  // namespace
}  // namespace tern::engine
