#include "engine/chunks.h"

#include <gtest/gtest.h>

#include <random>
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
  EXPECT_EQ(PlanChunks(x.data(), 5000, 5000), (std::vector<std::pair<int64_t, int64_t>>{{0, 5000}}));
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

}  // namespace
}  // namespace tern::engine
