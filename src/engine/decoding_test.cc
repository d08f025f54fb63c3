// Sampler and repetition guard.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "engine/repetition.h"
#include "engine/sampler.h"

namespace tern::engine {
namespace {

TEST(ArgMax, FirstMaximumWins) {
  const float logits[] = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  EXPECT_EQ(ArgMax(logits, 5), 1);
  const float all_equal[] = {7.0f, 7.0f, 7.0f};
  EXPECT_EQ(ArgMax(all_equal, 3), 0);
}

TEST(Sampler, ZeroTemperatureIsGreedy) {
  DecodingOptions o;
  o.temperature = 0.0f;
  Sampler s(o);
  const float logits[] = {0.1f, 0.2f, 5.0f, 0.3f};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.Sample(logits, 4), 2);
}

TEST(Sampler, SeededAndReproducible) {
  DecodingOptions o;
  o.temperature = 1.0f;
  o.seed = 7;
  const float logits[] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  Sampler a(o), b(o);
  std::vector<int> ra, rb;
  for (int i = 0; i < 200; ++i) {
    ra.push_back(a.Sample(logits, 6));
    rb.push_back(b.Sample(logits, 6));
  }
  EXPECT_EQ(ra, rb);
  o.seed = 8;
  Sampler c(o);
  std::vector<int> rc;
  for (int i = 0; i < 200; ++i) rc.push_back(c.Sample(logits, 6));
  EXPECT_NE(ra, rc);
}

TEST(Sampler, FrequenciesFollowSoftmax) {
  DecodingOptions o;
  o.temperature = 1.0f;
  o.seed = 1;
  const float logits[] = {0.0f, std::log(3.0f)};  // p = 0.25, 0.75
  Sampler s(o);
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += s.Sample(logits, 2);
  // Binomial sd = sqrt(n p q) ~ 61; allow 5 sd.
  EXPECT_NEAR(ones, 0.75 * n, 5 * std::sqrt(n * 0.75 * 0.25));
}

TEST(Sampler, TopKAndTopPCut) {
  const float logits[] = {5.0f, 4.9f, 0.0f, -1.0f, 4.8f};
  DecodingOptions o;
  o.temperature = 1.0f;
  o.top_k = 2;
  Sampler k2(o);
  for (int i = 0; i < 500; ++i) {
    const int t = k2.Sample(logits, 5);
    EXPECT_TRUE(t == 0 || t == 1) << t;
  }
  o.top_k = 0;
  o.top_p = 0.01f;  // only the most likely token survives
  Sampler p(o);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(p.Sample(logits, 5), 0);
}

TEST(LogSoftmax, SumsToOne) {
  const float logits[] = {1000.0f, 999.0f, -5.0f};
  std::vector<double> out;
  LogSoftmax(logits, 3, &out);
  double sum = 0;
  for (double v : out) sum += std::exp(v);
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_NEAR(out[0] - out[1], 1.0, 1e-9);
}

TEST(Repetition, DetectsLoopingTails) {
  std::vector<int32_t> toks = {5, 6, 7};
  for (int i = 0; i < 10; ++i) toks.insert(toks.end(), {11, 12, 13});
  EXPECT_TRUE(HasRepeatingTail(toks, 8));
  std::vector<int32_t> same(30, 4);
  EXPECT_TRUE(HasRepeatingTail(same, 8));
}

TEST(Repetition, IgnoresShortOrBrokenRepeats) {
  std::vector<int32_t> shortrep = {1, 2, 3, 9, 9, 9, 9};
  EXPECT_FALSE(HasRepeatingTail(shortrep, 8));
  std::vector<int32_t> broken;
  for (int i = 0; i < 10; ++i) broken.insert(broken.end(), {11, 12, 13});
  broken.push_back(99);
  EXPECT_FALSE(HasRepeatingTail(broken, 8));
  std::vector<int32_t> varied;
  for (int i = 0; i < 200; ++i) varied.push_back(i % 37 * 13 % 101 + i / 37);
  EXPECT_FALSE(HasRepeatingTail(varied, 8));
}

}  // namespace
}  // namespace tern::engine
