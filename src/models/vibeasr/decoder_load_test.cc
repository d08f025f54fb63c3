// Decoder loading: geometry keys and the weight table's type/shape checks (each error names
// the key or tensor and expected vs actual), the int8 head against its quantization error
// bound, and the tied-head fallback.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "models/vibeasr/decoder.h"
#include "models/vibeasr/decoder_reference.h"
#include "models/vibeasr/decoder_test_model.h"

namespace tern::vibeasr {
namespace {

using testing::BuildTinyLm;
using testing::Int8HeadBound;
using testing::ReferenceDecoder;
using testing::TinyLm;
using testing::TinyLmSpec;

Status LoadStatus(const TinyLmSpec& spec, HeadPrecision mode = HeadPrecision::kF16) {
  Result<TinyLm> lm = BuildTinyLm(spec);
  if (!lm.ok()) return lm.status();
  Result<std::unique_ptr<Decoder>> d = Decoder::Load(*lm->file, mode);
  return d.status();
}

void ExpectError(const TinyLmSpec& spec, ErrorCode code, const std::vector<std::string>& parts) {
  const Status s = LoadStatus(spec);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s.ToString();
  for (const auto& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos) << "'" << p << "' not in: " << s.message();
  }
}

TEST(DecoderLoadTest, GeometryKeyErrors) {
  {
    TinyLmSpec s;
    s.drop_keys = {"qwen2.embedding_length"};
    ExpectError(s, ErrorCode::kNotFound, {"tiny-lm.gguf", "qwen2.embedding_length"});
  }
  {
    TinyLmSpec s;
    s.drop_keys = {"qwen2.attention.layer_norm_rms_epsilon"};
    ExpectError(s, ErrorCode::kNotFound, {"layer_norm_rms_epsilon"});
  }
  {
    TinyLmSpec s;  // head_dim from rope.dimension_count inconsistent with hidden / heads
    s.keys = [](gguf::Writer* w) { w->SetU32("qwen2.rope.dimension_count", 16); };
    ExpectError(s, ErrorCode::kFormat, {"head_dim 16", "head_count 8", "embedding_length 256"});
  }
  {
    TinyLmSpec s;  // key_length wins over rope.dimension_count, and must be consistent
    s.write_rope_dims = false;
    s.keys = [](gguf::Writer* w) { w->SetU32("qwen2.attention.key_length", 64); };
    ExpectError(s, ErrorCode::kFormat, {"head_dim 64"});
  }
  {
    TinyLmSpec s;  // partial RoPE
    s.write_key_length = true;
    s.keys = [](gguf::Writer* w) { w->SetU32("qwen2.rope.dimension_count", 16); };
    ExpectError(s, ErrorCode::kUnsupported, {"rope.dimension_count 16", "head_dim 32"});
  }
  {
    TinyLmSpec s;
    s.keys = [](gguf::Writer* w) { w->SetU32("qwen2.attention.head_count_kv", 3); };
    ExpectError(s, ErrorCode::kFormat, {"head_count_kv 3"});
  }
  {
    TinyLmSpec s;
    s.keys = [](gguf::Writer* w) { w->SetU32("qwen2.block_count", 0); };
    ExpectError(s, ErrorCode::kFormat, {"qwen2.block_count", "out of range"});
  }
  {
    TinyLmSpec s;
    s.keys = [](gguf::Writer* w) { w->SetU32("qwen2.vocab_size", 321); };
    ExpectError(s, ErrorCode::kFormat, {"vocab_size 321", "320"});
  }
  {
    TinyLmSpec s;
    s.keys = [](gguf::Writer* w) { w->SetString("qwen2.embedding_length", "wide"); };
    ExpectError(s, ErrorCode::kFormat, {"qwen2.embedding_length"});
  }
  {
    TinyLmSpec s;
    s.keys = [](gguf::Writer* w) { w->SetString("general.architecture", "llama"); };
    ExpectError(s, ErrorCode::kUnsupported, {"llama", "qwen2"});
  }
  {
    TinyLmSpec s;  // embedding width disagrees with embedding_length
    s.keys = [](gguf::Writer* w) {
      w->SetU32("qwen2.embedding_length", 128);
      w->SetU32("qwen2.rope.dimension_count", 16);
    };
    ExpectError(s, ErrorCode::kFormat, {"token_embd.weight", "{256, 320}"});
  }
}

TEST(DecoderLoadTest, WeightTableTypeAndShapeErrors) {
  {
    TinyLmSpec s;
    s.mutate = [](const std::string& n, DType* t, std::vector<int64_t>*) {
      if (n == "blk.1.attn_q.weight") *t = DType::kF16;
    };
    ExpectError(s, ErrorCode::kFormat,
                {"tiny-lm.gguf", "'blk.1.attn_q.weight'", "expected I2_S, got F16"});
  }
  {
    TinyLmSpec s;
    s.mutate = [](const std::string& n, DType*, std::vector<int64_t>* ne) {
      if (n == "blk.0.attn_k.weight") (*ne)[1] = 128;
    };
    ExpectError(s, ErrorCode::kFormat,
                {"'blk.0.attn_k.weight'", "expected shape {256, 64}, got {256, 128}"});
  }
  {
    TinyLmSpec s;
    s.mutate = [](const std::string& n, DType* t, std::vector<int64_t>*) {
      if (n == "blk.0.ffn_norm.weight") *t = DType::kF16;
    };
    ExpectError(s, ErrorCode::kFormat, {"'blk.0.ffn_norm.weight'", "expected F32, got F16"});
  }
  {
    TinyLmSpec s;
    s.mutate = [](const std::string& n, DType* t, std::vector<int64_t>*) {
      if (n == "output.weight") *t = DType::kI2_S;
    };
    ExpectError(s, ErrorCode::kFormat, {"'output.weight'", "got I2_S"});
  }
  {
    TinyLmSpec s;
    s.mutate = [](const std::string& n, DType*, std::vector<int64_t>* ne) {
      if (n == "blk.1.attn_v.bias") *ne = {128};
    };
    ExpectError(s, ErrorCode::kFormat, {"'blk.1.attn_v.bias'", "expected shape {64}"});
  }
  {
    TinyLmSpec s;
    s.drop_tensors = {"blk.1.ffn_down.weight"};
    ExpectError(s, ErrorCode::kNotFound, {"missing tensor 'blk.1.ffn_down.weight'"});
  }
  {
    TinyLmSpec s;
    s.drop_tensors = {"output_norm.weight"};
    ExpectError(s, ErrorCode::kNotFound, {"'output_norm.weight'"});
  }
  {
    TinyLmSpec s;  // I2_S needs rows that are whole 128-value groups: the reader refuses 64
    s.hidden = 64;
    s.embd_type = DType::kF32;
    s.heads = 2;
    s.kv_heads = 1;
    EXPECT_FALSE(LoadStatus(s).ok());
  }
}

TEST(DecoderLoadTest, BiasesAreOptionalAndEmbeddingTypesVary) {
  for (DType embd : {DType::kQ6_K, DType::kF16, DType::kF32, DType::kQ8_0}) {
    TinyLmSpec s;
    s.with_bias = false;
    s.embd_type = embd;
    Result<TinyLm> lm = BuildTinyLm(s);
    ASSERT_TRUE(lm.ok());
    auto d = Decoder::Load(*lm->file, HeadPrecision::kF16);
    ASSERT_TRUE(d.ok()) << DTypeName(embd) << ": " << d.status().ToString();
    EXPECT_EQ((*d)->weights().layers[0].bq, nullptr);
    EXPECT_EQ((*d)->weights().token_embd.type, embd);
    ReferenceDecoder ref(*lm->file, (*d)->config());
    ThreadPool pool(2);
    DecoderState st(**d, 8);
    std::vector<float> logits, want;
    std::vector<DecoderInput> in = {{3, nullptr, 0}, {77, nullptr, 1}, {319, nullptr, 2}};
    ASSERT_TRUE(st.Prefill(in, pool, &logits).ok());
    for (const auto& i : in) want = ref.Forward(i.token, nullptr, i.pos);
    double rms = 0, diff = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      rms += double(want[i]) * want[i];
      diff = std::max(diff, double(std::fabs(logits[i] - want[i])));
    }
    EXPECT_LE(diff, 0.01 * std::sqrt(rms / want.size())) << DTypeName(embd);
  }
}

// The int8 head may only disagree with the F16 head where the F16 top-1 margin is within the
// two candidates' error bounds; every logit must stay inside its bound. The x used for the
// bound comes from the reference forward (within 1% of the engine's), hence the 10% slack.
TEST(DecoderLoadTest, Int8HeadStaysWithinItsQuantizationBound) {
  TinyLmSpec spec;
  Result<TinyLm> lm = BuildTinyLm(spec);
  ASSERT_TRUE(lm.ok());
  auto f16 = Decoder::Load(*lm->file, HeadPrecision::kF16);
  auto i8 = Decoder::Load(*lm->file, HeadPrecision::kInt8);
  ASSERT_TRUE(f16.ok() && i8.ok());
  EXPECT_EQ((*i8)->head_mode(), HeadPrecision::kInt8);
  ReferenceDecoder ref(*lm->file, (*f16)->config());
  ThreadPool pool(2);
  DecoderState a(**f16, 128), b(**i8, 128);
  std::vector<float> la, lb, x;
  std::mt19937 rng(3);
  int agree = 0, decided = 0, total = 0;
  double max_err = 0, max_ratio = 0;
  for (int32_t pos = 0; pos < 100; ++pos) {
    const int32_t tok = pos < 30 ? int32_t(rng() % spec.vocab)
                                 : int32_t(std::max_element(la.begin(), la.end()) - la.begin());
    ASSERT_TRUE(a.Step(tok, pos, pool, &la).ok());
    ASSERT_TRUE(b.Step(tok, pos, pool, &lb).ok());
    ref.Forward(tok, nullptr, pos, &x);
    const auto bound = Int8HeadBound(ref.head(), spec.hidden, x);
    for (size_t r = 0; r < la.size(); ++r) {
      const double e = std::fabs(la[r] - lb[r]);
      max_err = std::max(max_err, e);
      max_ratio = std::max(max_ratio, e / bound[r]);
      ASSERT_LE(e, 1.1 * bound[r]) << "pos " << pos << " row " << r;
    }
    std::vector<int64_t> idx(la.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
    std::partial_sort(idx.begin(), idx.begin() + 2, idx.end(),
                      [&](int64_t p, int64_t q) { return la[p] > la[q]; });
    const int64_t top_b = std::max_element(lb.begin(), lb.end()) - lb.begin();
    const bool same = top_b == idx[0];
    ++total;
    agree += same;
    // If any other row beat the F16 winner, its bound plus the winner's must cover the gap.
    if (!same) {
      EXPECT_LE(la[idx[0]] - la[top_b], 1.1 * (bound[idx[0]] + bound[top_b])) << "pos " << pos;
    }
    if (la[idx[0]] - la[idx[1]] > 1.1 * 2 * *std::max_element(bound.begin(), bound.end())) {
      ++decided;
      EXPECT_TRUE(same) << "pos " << pos;
    }
  }
  std::printf(
      "int8 head vs F16: top-1 agreement %d/%d (%d decided by the bound), max |dlogit| "
      "%.4f, max error/bound %.3f\n",
      agree, total, decided, max_err, max_ratio);
  EXPECT_GE(agree, decided);
}

TEST(DecoderLoadTest, TiedHeadFallsBackToTokenEmbeddings) {
  for (DType embd : {DType::kQ6_K, DType::kF16}) {
    TinyLmSpec s;
    s.with_head = false;
    s.embd_type = embd;
    Result<TinyLm> lm = BuildTinyLm(s);
    ASSERT_TRUE(lm.ok());
    auto d = Decoder::Load(*lm->file, HeadPrecision::kF16);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    const LmWeights& w = (*d)->weights();
    EXPECT_TRUE(w.head_tied);
    if (embd == DType::kF16) {
      // Used in place from the mapping.
      EXPECT_EQ(static_cast<const void*>(w.head_f16),
                static_cast<const void*>(lm->file->FindTensor("token_embd.weight")->data));
    }
    ReferenceDecoder ref(*lm->file, (*d)->config());
    ThreadPool pool(2);
    DecoderState st(**d, 8);
    std::vector<float> logits, want, x;
    ASSERT_TRUE(st.Step(5, 0, pool, &logits).ok());
    ASSERT_TRUE(st.Step(9, 1, pool, &logits).ok());
    ref.Forward(5, nullptr, 0);
    want = ref.Forward(9, nullptr, 1, &x);
    double rms = 0;
    for (float v : want) rms += double(v) * v;
    rms = std::sqrt(rms / want.size());
    for (size_t r = 0; r < want.size(); ++r) {
      // A Q6_K table converted to F16 adds up to 2^-11 relative per weight.
      double mag = 0;
      for (int64_t i = 0; i < s.hidden; ++i) mag += std::fabs(ref.head()[r * s.hidden + i] * x[i]);
      ASSERT_LE(std::fabs(logits[r] - want[r]), 0.01 * rms + std::ldexp(mag, -11)) << r;
    }
    auto d8 = Decoder::Load(*lm->file, HeadPrecision::kInt8);
    ASSERT_TRUE(d8.ok()) << d8.status().ToString();
    EXPECT_TRUE((*d8)->weights().head_tied);
    EXPECT_EQ((*d8)->weights().head_i8.n, s.vocab);
  }
}

}  // namespace
}  // namespace tern::vibeasr
