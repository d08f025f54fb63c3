// DecoderBatch: B sequences stepped together give each sequence the bytes of its own
// DecoderState::Step, whatever the batch around it (sizes 1..6, mixed prompt lengths, position
// gaps, sequences joining and leaving between steps), at 1, 2 and 4 threads and with both
// heads; run the binary under TERN_ISA=scalar/avx2/avx512 for the ISAs. And its error paths.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "models/vibeasr/decoder.h"
#include "models/vibeasr/decoder_test_model.h"

namespace tern::vibeasr {
namespace {

using testing::BuildTinyLm;
using testing::TinyLm;
using testing::TinyLmSpec;

struct Loaded {
  TinyLm lm;
  std::unique_ptr<Decoder> dec;
};

Loaded Load(HeadPrecision mode, uint32_t seed = 7) {
  Loaded l;
  TinyLmSpec spec;
  spec.seed = seed;
  Result<TinyLm> lm = BuildTinyLm(spec);
  EXPECT_TRUE(lm.ok()) << lm.status().ToString();
  if (!lm.ok()) return l;
  l.lm = std::move(lm).value();
  Result<std::unique_ptr<Decoder>> d = Decoder::Load(*l.lm.file, mode);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  if (d.ok()) l.dec = std::move(d).value();
  return l;
}

// Sequence i's prompt: text, speech frames, text, of lengths that differ between sequences,
// at positions starting anywhere (a sequence need not start at 0 for this test).
struct Sequence {
  std::vector<std::vector<float>> frames;
  std::vector<DecoderInput> prompt;
  int32_t next_pos = 0;
};

Sequence MakeSequence(const DecoderConfig& c, int i, uint32_t seed) {
  Sequence s;
  std::mt19937 rng(seed + 101u * static_cast<uint32_t>(i));
  std::normal_distribution<float> nd(0.0f, 0.3f);
  const int text0 = 1 + (i * 5) % 7, frames = (i * 3) % 5, text1 = (i * 2) % 3;
  s.frames.assign(static_cast<size_t>(frames), std::vector<float>(c.hidden));
  for (auto& f : s.frames) {
    for (auto& x : f) x = nd(rng);
  }
  int32_t pos = 3 * i;
  for (int t = 0; t < text0; ++t) s.prompt.push_back({int32_t(rng() % c.vocab), nullptr, pos++});
  for (auto& f : s.frames) s.prompt.push_back({-1, f.data(), pos++});
  for (int t = 0; t < text1; ++t) s.prompt.push_back({int32_t(rng() % c.vocab), nullptr, pos++});
  s.next_pos = pos;
  return s;
}

bool SameBytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

int32_t Argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST(DecoderBatchTest, EverySequenceGetsTheBytesOfItsOwnStep) {
  for (HeadPrecision mode : {HeadPrecision::kInt8, HeadPrecision::kF16}) {
    Loaded l = Load(mode);
    ASSERT_TRUE(l.dec);
    const DecoderConfig& c = l.dec->config();
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      for (int b = 1; b <= 6; ++b) {
        SCOPED_TRACE("head " + std::string(mode == HeadPrecision::kF16 ? "f16" : "int8") +
                     ", threads " + std::to_string(nth) + ", streams " + std::to_string(b));
        std::vector<Sequence> seqs;
        std::vector<std::unique_ptr<DecoderState>> solo, batched;
        std::vector<std::vector<float>> solo_logits(b), batch_logits(b);
        for (int i = 0; i < b; ++i) {
          seqs.push_back(MakeSequence(c, i, 40u + static_cast<uint32_t>(b)));
          solo.push_back(std::make_unique<DecoderState>(*l.dec, 48));
          batched.push_back(std::make_unique<DecoderState>(*l.dec, 48));
          ASSERT_TRUE(solo[i]->Prefill(seqs[i].prompt, pool, &solo_logits[i]).ok());
          ASSERT_TRUE(batched[i]->Prefill(seqs[i].prompt, pool, &batch_logits[i]).ok());
        }
        DecoderBatch batch(*l.dec, 6);
        for (int step = 0; step < 5; ++step) {
          // Sequences join and leave at token boundaries: from the second step on, a
          // sequence sits out every third step (phase by index), except in a batch of one.
          std::vector<BatchStep> steps;
          for (int i = 0; i < b; ++i) {
            if (b > 1 && step > 0 && (i + step) % 3 == 0) continue;
            const int32_t tok = Argmax(solo_logits[i]);
            // Position gaps: sequence 1 jumps 4 positions after its first decoded token.
            const int32_t pos = seqs[i].next_pos + (i == 1 && step == 1 ? 4 : 0);
            seqs[i].next_pos = pos + 1;
            ASSERT_TRUE(solo[i]->Step(tok, pos, pool, &solo_logits[i]).ok());
            steps.push_back({batched[i].get(), tok, pos, &batch_logits[i]});
          }
          ASSERT_TRUE(batch.Step(steps, pool).ok());
          for (int i = 0; i < b; ++i) {
            ASSERT_EQ(batched[i]->n_cached(), solo[i]->n_cached()) << "sequence " << i;
            EXPECT_TRUE(SameBytes(batch_logits[i], solo_logits[i]))
                << "sequence " << i << " step " << step;
          }
        }
        // The caches stay equal too: one more solo step from each batched state matches.
        for (int i = 0; i < b; ++i) {
          std::vector<float> a, s;
          ASSERT_TRUE(batched[i]->Step(5, seqs[i].next_pos, pool, &a).ok());
          ASSERT_TRUE(solo[i]->Step(5, seqs[i].next_pos, pool, &s).ok());
          EXPECT_TRUE(SameBytes(a, s)) << "sequence " << i << " after the batch";
        }
      }
    }
  }
}

TEST(DecoderBatchTest, ErrorsNameTheStepAndLeaveEveryStateUnchanged) {
  Loaded l = Load(HeadPrecision::kInt8);
  Loaded other = Load(HeadPrecision::kInt8, 8);
  ASSERT_TRUE(l.dec && other.dec);
  const DecoderConfig& c = l.dec->config();
  ThreadPool pool(2);
  std::vector<float> la, lb, lc;
  DecoderState a(*l.dec, 8), b(*l.dec, 8), full(*l.dec, 2), foreign(*other.dec, 8);
  const std::vector<DecoderInput> one{{3, nullptr, 0}};
  ASSERT_TRUE(a.Prefill(one, pool, &la).ok());
  ASSERT_TRUE(b.Prefill(one, pool, &lb).ok());
  ASSERT_TRUE(full.Prefill({{3, nullptr, 0}, {4, nullptr, 1}}, pool, &lc).ok());
  ASSERT_TRUE(foreign.Prefill(one, pool, &lc).ok());
  DecoderBatch batch(*l.dec, 2);
  EXPECT_EQ(batch.max_streams(), 2);

  struct Case {
    const char* what;
    std::vector<BatchStep> steps;
    ErrorCode code;
    const char* message_has;
  };
  const std::vector<Case> cases = {
      {"empty", {}, ErrorCode::kInvalidArgument, "no sequences"},
      {"too many",
       {{&a, 1, 1, &la}, {&b, 1, 1, &lb}, {&full, 1, 2, &lc}},
       ErrorCode::kInvalidArgument,
       "exceed"},
      {"same state twice",
       {{&a, 1, 1, &la}, {&a, 2, 1, &lb}},
       ErrorCode::kInvalidArgument,
       "same state"},
      {"other decoder",
       {{&a, 1, 1, &la}, {&foreign, 1, 1, &lb}},
       ErrorCode::kInvalidArgument,
       "another decoder"},
      {"null state", {{nullptr, 1, 1, &la}}, ErrorCode::kInvalidArgument, "no state"},
      {"token",
       {{&a, 1, 1, &la}, {&b, static_cast<int32_t>(c.vocab), 1, &lb}},
       ErrorCode::kInvalidArgument,
       "step 1"},
      {"negative token", {{&a, -2, 1, &la}}, ErrorCode::kInvalidArgument, "step 0"},
      {"position", {{&a, 1, -1, &la}}, ErrorCode::kInvalidArgument, "negative position"},
      {"full cache",
       {{&a, 1, 1, &la}, {&full, 1, 2, &lc}},
       ErrorCode::kResourceExhausted,
       "step 1"},
  };
  for (const Case& k : cases) {
    const Status st = batch.Step(k.steps, pool);
    EXPECT_EQ(st.code(), k.code) << k.what << ": " << st.ToString();
    EXPECT_NE(st.message().find(k.message_has), std::string::npos)
        << k.what << ": " << st.ToString();
    EXPECT_EQ(a.n_cached(), 1) << k.what;
    EXPECT_EQ(b.n_cached(), 1) << k.what;
    EXPECT_EQ(full.n_cached(), 2) << k.what;
  }
  // And a valid step still runs after the errors.
  ASSERT_TRUE(batch.Step({{&a, 1, 1, &la}, {&b, 2, 1, &lb}}, pool).ok());
  EXPECT_EQ(a.n_cached(), 2);
  EXPECT_EQ(b.n_cached(), 2);
}

}  // namespace
}  // namespace tern::vibeasr
