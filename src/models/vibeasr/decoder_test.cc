// The decoder against a plain-loop reference forward (decoder_reference.h) on tiny
// checkpoints built in memory (decoder_test_model.h): numerics, prefill/step consistency,
// thread invariance, the position gap, the int8 head, the tied head and every error path.
#include "models/vibeasr/decoder.h"

#include <gtest/gtest.h>

#include "base/test_util.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "models/vibeasr/decoder_reference.h"
#include "models/vibeasr/decoder_test_model.h"

namespace tern::vibeasr {
namespace {

using testutil::ArgMax;
using testutil::Rms;

using testing::BuildTinyLm;
using testing::ReferenceDecoder;
using testing::TinyLm;
using testing::TinyLmSpec;

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

// A prompt shaped like VibeASR's: text, injected speech frames, text.
struct Prompt {
  std::vector<std::vector<float>> frames;
  std::vector<DecoderInput> inputs;
};

Prompt MakePrompt(int64_t hidden, int64_t vocab, int n_text0, int n_frames, int n_text1,
                  uint32_t seed) {
  Prompt p;
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.3f);
  p.frames.resize(n_frames);
  for (auto& f : p.frames) {
    f.resize(hidden);
    for (auto& x : f) x = d(rng);
  }
  int32_t pos = 0;
  for (int i = 0; i < n_text0; ++i) p.inputs.push_back({int32_t(rng() % vocab), nullptr, pos++});
  for (int i = 0; i < n_frames; ++i) p.inputs.push_back({-1, p.frames[i].data(), pos++});
  for (int i = 0; i < n_text1; ++i) p.inputs.push_back({int32_t(rng() % vocab), nullptr, pos++});
  return p;
}

struct Loaded {
  TinyLm lm;
  std::unique_ptr<Decoder> dec;
};

Loaded Load(const TinyLmSpec& spec, HeadPrecision mode = HeadPrecision::kF16) {
  Loaded l;
  Result<TinyLm> lm = BuildTinyLm(spec);
  EXPECT_TRUE(lm.ok()) << lm.status().ToString();
  l.lm = std::move(lm).value();
  Result<std::unique_ptr<Decoder>> d = Decoder::Load(*l.lm.file, mode);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  if (d.ok()) l.dec = std::move(d).value();
  return l;
}

// Tolerance vs the reference. The engine and the reference share every integer step and the
// spec'd float formulas; they differ only where the reference uses double (attention scores,
// softmax, P.V and the head) — relative differences ~1e-6. Such a difference can move an
// attention output across an int8 rounding boundary of the next projection's input; one flip
// changes that projection by one weight column times 1/s, i.e. ~|w| * amax / 127. With
// O(1) activations and |w| ~ 0.05 a handful of flips over 2 layers moves the final hidden
// state by ~1e-3 relative, and the logits (RMS ~2) by ~1e-2 at the very worst. We allow
// 1% of the logits' RMS, far below the spacing that decides the argmax in these tests.
double Tolerance(const std::vector<float>& ref) { return 0.01 * Rms(ref); }

TEST(DecoderTest, ConfigReadFromKeysAndValidatedAgainstEmbeddings) {
  Loaded l = Load(TinyLmSpec{});
  ASSERT_TRUE(l.dec);
  const DecoderConfig& c = l.dec->config();
  EXPECT_EQ(c.vocab, 320);
  EXPECT_EQ(c.hidden, 256);
  EXPECT_EQ(c.layers, 2);
  EXPECT_EQ(c.heads, 8);
  EXPECT_EQ(c.kv_heads, 2);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.ffn, 384);
  EXPECT_EQ(c.context, 4096);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.rope_theta, 10000.0f);
}

TEST(DecoderTest, MatchesReferenceForwardThroughPrefillAndDecode) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  ReferenceDecoder ref(*l.lm.file, l.dec->config());
  const Prompt p = MakePrompt(spec.hidden, spec.vocab, 6, 5, 4, 11);
  ThreadPool pool(2);
  DecoderState st(*l.dec, 64);
  std::vector<float> logits, want;
  ASSERT_TRUE(st.Prefill(p.inputs, pool, &logits).ok());
  for (const DecoderInput& in : p.inputs) want = ref.Forward(in.token, in.embedding, in.pos);
  double worst = 0;
  worst = std::max(worst, MaxAbsDiff(logits, want) / Tolerance(want));
  EXPECT_LE(MaxAbsDiff(logits, want), Tolerance(want));
  EXPECT_EQ(ArgMax(logits), ArgMax(want));
  int32_t pos = static_cast<int32_t>(p.inputs.size());
  for (int s = 0; s < 8; ++s) {
    const int32_t tok = static_cast<int32_t>(ArgMax(logits));
    ASSERT_TRUE(st.Step(tok, pos, pool, &logits).ok());
    want = ref.Forward(tok, nullptr, pos);
    ++pos;
    worst = std::max(worst, MaxAbsDiff(logits, want) / Tolerance(want));
    ASSERT_LE(MaxAbsDiff(logits, want), Tolerance(want)) << "step " << s;
    ASSERT_EQ(ArgMax(logits), ArgMax(want)) << "step " << s;
  }
  EXPECT_EQ(st.n_cached(), pos);
  EXPECT_EQ(st.timings().decode_steps, 8);
  EXPECT_GT(st.timings().prefill_ms, 0.0);
  std::printf("max |logit - reference| / tolerance = %.3g (logit RMS %.3f)\n", worst, Rms(want));
}

// Decoding a token after a prefill runs exactly the computations a longer prefill runs for
// that row (integer projections, one-row head, identical attention calls), so the logits
// must be byte-identical, not merely close — also across prefill batch boundaries.
TEST(DecoderTest, PrefillThenStepEqualsFullPrefill) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  const int64_t n = DecoderState::kPrefillBatch + 90;
  Prompt p = MakePrompt(spec.hidden, spec.vocab, 300, 60, n - 360, 12);
  ThreadPool pool(2);

  DecoderState full(*l.dec, n);
  std::vector<float> a, b;
  ASSERT_TRUE(full.Prefill(p.inputs, pool, &a).ok());

  DecoderState split(*l.dec, n);
  std::vector<DecoderInput> first(p.inputs.begin(), p.inputs.begin() + 200);
  std::vector<DecoderInput> second(p.inputs.begin() + 200, p.inputs.end() - 1);
  ASSERT_TRUE(split.Prefill(first, pool, &b).ok());
  ASSERT_TRUE(split.Prefill(second, pool, &b).ok());
  const DecoderInput last = p.inputs.back();
  ASSERT_TRUE(split.Step(last.token, last.pos, pool, &b).ok());
  EXPECT_EQ(split.n_cached(), full.n_cached());
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0) << MaxAbsDiff(a, b);
  EXPECT_EQ(ArgMax(a), ArgMax(b));
}

TEST(DecoderTest, IdenticalLogitsAtOneTwoAndFourThreads) {
  TinyLmSpec spec;
  for (HeadPrecision mode : {HeadPrecision::kF16, HeadPrecision::kInt8}) {
    Loaded l = Load(spec, mode);
    ASSERT_TRUE(l.dec);
    const Prompt p = MakePrompt(spec.hidden, spec.vocab, 20, 9, 7, 13);
    std::vector<float> first;
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      DecoderState st(*l.dec, 64);
      std::vector<float> logits, all;
      ASSERT_TRUE(st.Prefill(p.inputs, pool, &logits).ok());
      all = logits;
      int32_t pos = 36;
      for (int s = 0; s < 4; ++s) {
        ASSERT_TRUE(st.Step(static_cast<int32_t>(ArgMax(logits)), pos++, pool, &logits).ok());
        all.insert(all.end(), logits.begin(), logits.end());
      }
      if (first.empty()) {
        first = all;
      } else {
        ASSERT_EQ(std::memcmp(first.data(), all.data(), all.size() * 4), 0) << "nth=" << nth;
      }
    }
  }
}

// Spec 4.6: decoded tokens may sit at RoPE positions above their cache rows. The cache stays
// contiguous, every earlier row stays visible, and only the rotation changes.
TEST(DecoderTest, PositionGapRotatesByPositionButMasksByCacheOrder) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  const Prompt p = MakePrompt(spec.hidden, spec.vocab, 5, 6, 3, 14);
  const int32_t n = static_cast<int32_t>(p.inputs.size());
  ThreadPool pool(2);
  ReferenceDecoder ref(*l.lm.file, l.dec->config());
  std::vector<float> logits, want;
  DecoderState gap(*l.dec, 32);
  ASSERT_TRUE(gap.Prefill(p.inputs, pool, &logits).ok());
  for (const DecoderInput& in : p.inputs) ref.Forward(in.token, in.embedding, in.pos);
  // Two pads were reserved but not fed: decoding continues at n + 2.
  std::vector<float> gap_logits;
  ASSERT_TRUE(gap.Step(42, n + 2, pool, &gap_logits).ok());
  want = ref.Forward(42, nullptr, n + 2);
  EXPECT_EQ(gap.n_cached(), n + 1);
  EXPECT_LE(MaxAbsDiff(gap_logits, want), Tolerance(want));
  EXPECT_EQ(ArgMax(gap_logits), ArgMax(want));

  DecoderState nogap(*l.dec, 32);
  std::vector<float> nogap_logits;
  ASSERT_TRUE(nogap.Prefill(p.inputs, pool, &logits).ok());
  ASSERT_TRUE(nogap.Step(42, n, pool, &nogap_logits).ok());
  EXPECT_GT(MaxAbsDiff(gap_logits, nogap_logits), 10 * Tolerance(want))
      << "the RoPE position must matter";
}

// Beam search forks a state: the copy carries the cached rows and nothing else is shared.
TEST(DecoderTest, CopiedStateContinuesIndependently) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  const Prompt p = MakePrompt(spec.hidden, spec.vocab, 7, 3, 2, 16);
  const int32_t n = static_cast<int32_t>(p.inputs.size());
  ThreadPool pool(2);
  DecoderState st(*l.dec, 32);
  std::vector<float> logits, a1, a2, b1, fa1, fb1;
  ASSERT_TRUE(st.Prefill(p.inputs, pool, &logits).ok());
  DecoderState fork(st);
  EXPECT_EQ(fork.n_cached(), n);
  // The fork takes a different token, then the original continues as if it never existed.
  ASSERT_TRUE(fork.Step(11, n, pool, &fb1).ok());
  ASSERT_TRUE(st.Step(10, n, pool, &a1).ok());
  ASSERT_TRUE(st.Step(12, n + 1, pool, &a2).ok());
  DecoderState fresh(*l.dec, 32);
  ASSERT_TRUE(fresh.Prefill(p.inputs, pool, &logits).ok());
  ASSERT_TRUE(fresh.Step(11, n, pool, &b1).ok());
  EXPECT_EQ(std::memcmp(fb1.data(), b1.data(), b1.size() * 4), 0);
  DecoderState fresh2(*l.dec, 32);
  ASSERT_TRUE(fresh2.Prefill(p.inputs, pool, &logits).ok());
  ASSERT_TRUE(fresh2.Step(10, n, pool, &fa1).ok());
  EXPECT_EQ(std::memcmp(fa1.data(), a1.data(), a1.size() * 4), 0);
  ASSERT_TRUE(fresh2.Step(12, n + 1, pool, &fa1).ok());
  EXPECT_EQ(std::memcmp(fa1.data(), a2.data(), a2.size() * 4), 0);
  EXPECT_GT(MaxAbsDiff(a1, fb1), 0.0) << "different tokens must give different logits";
}

TEST(DecoderTest, ResetStartsAFreshSequence) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  const Prompt p = MakePrompt(spec.hidden, spec.vocab, 4, 2, 3, 15);
  ThreadPool pool(1);
  DecoderState st(*l.dec, 16);
  std::vector<float> a, b;
  ASSERT_TRUE(st.Prefill(p.inputs, pool, &a).ok());
  st.Reset();
  EXPECT_EQ(st.n_cached(), 0);
  EXPECT_EQ(st.timings().prefill_ms, 0.0);
  ASSERT_TRUE(st.Prefill(p.inputs, pool, &b).ok());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
}

// A state rewound to the rows two sequences share and prefilled with the rest of the second
// gives the second's logits bit for bit: a Session reuses the prompt's fixed head this way.
TEST(DecoderTest, RewindThenPrefillEqualsAFreshPrefill) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  // a and b share their first 9 text rows (same seed), then differ: frames and text.
  const Prompt a = MakePrompt(spec.hidden, spec.vocab, 9, 6, 7, 21);
  Prompt b = MakePrompt(spec.hidden, spec.vocab, 9, 6, 7, 21);
  for (int64_t i = 9; i < 15; ++i) {
    for (float& x : b.frames[i - 9]) x = -x;
  }
  b.inputs.back().token = (b.inputs.back().token + 1) % spec.vocab;
  const int32_t n = static_cast<int32_t>(a.inputs.size());
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    DecoderState fresh(*l.dec, 40);
    std::vector<float> want, want_step, got, got_step;
    ASSERT_TRUE(fresh.Prefill(a.inputs, pool, &want).ok());
    ASSERT_TRUE(fresh.Step(5, n, pool, &want_step).ok());

    DecoderState st(*l.dec, 40);
    ASSERT_TRUE(st.Prefill(b.inputs, pool, &got).ok());
    ASSERT_TRUE(st.Step(3, n, pool, &got).ok());
    EXPECT_GT(MaxAbsDiff(got, want_step), 0.0) << "b must differ from a";
    for (int64_t keep : {int64_t{9}, int64_t{4}, int64_t{0}}) {
      st.Rewind(keep);
      EXPECT_EQ(st.n_cached(), keep);
      EXPECT_EQ(st.timings().prefill_ms, 0.0);
      const std::vector<DecoderInput> rest(a.inputs.begin() + keep, a.inputs.end());
      ASSERT_TRUE(st.Prefill(rest, pool, &got).ok());
      ASSERT_TRUE(st.Step(5, n, pool, &got_step).ok());
      EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0)
          << threads << " threads, keep " << keep;
      EXPECT_EQ(std::memcmp(want_step.data(), got_step.data(), want_step.size() * 4), 0)
          << threads << " threads, keep " << keep;
      // Back to b's rows for the next round (its first 9 are a's).
      st.Rewind(9);
      const std::vector<DecoderInput> b_rest(b.inputs.begin() + 9, b.inputs.end());
      ASSERT_TRUE(st.Prefill(b_rest, pool, &got).ok());
    }
    st.Rewind(1000);  // clamped: keeps what it has
    EXPECT_EQ(st.n_cached(), n);
  }
}

TEST(DecoderTest, RuntimeErrorsLeaveTheStateUnchanged) {
  TinyLmSpec spec;
  Loaded l = Load(spec);
  ASSERT_TRUE(l.dec);
  ThreadPool pool(1);
  DecoderState st(*l.dec, 4);
  std::vector<float> logits;
  Status s = st.Prefill({}, pool, &logits);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  s = st.Prefill({{1, nullptr, 0}, {320, nullptr, 1}}, pool, &logits);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("320"), std::string::npos) << s.message();
  s = st.Prefill({{-1, nullptr, 0}}, pool, &logits);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  s = st.Prefill({{1, nullptr, -1}}, pool, &logits);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.n_cached(), 0);
  ASSERT_TRUE(st.Prefill({{1, nullptr, 0}, {2, nullptr, 1}, {3, nullptr, 2}}, pool, &logits).ok());
  s = st.Prefill({{1, nullptr, 3}, {2, nullptr, 4}}, pool, &logits);
  EXPECT_EQ(s.code(), ErrorCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(st.n_cached(), 3);
  EXPECT_TRUE(st.Step(5, 3, pool, &logits).ok());
  s = st.Step(5, 4, pool, &logits);
  EXPECT_EQ(s.code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(st.Step(-3, 4, pool, &logits).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.n_cached(), 4);
}

}  // namespace
}  // namespace tern::vibeasr
