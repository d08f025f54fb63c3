// Test-only: a tiny Qwen2 LM checkpoint written in memory with gguf::Writer, in the layout of
// spec 1.4 (I2_S projections, F32 norms and q/k/v biases, Q6_K/F16/... embeddings, F16 head),
// plus knobs to break it (wrong types, shapes, keys) for the error tests.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "tensor/quant_ref.h"

namespace tern::vibeasr::testing {

struct TinyLmSpec {
  int64_t hidden = 256, layers = 2, heads = 8, kv_heads = 2, ffn = 384, vocab = 320;
  int64_t context = 4096;
  float eps = 1e-6f, theta = 10000.0f;
  DType embd_type = DType::kQ6_K;
  DType head_type = DType::kF16;
  bool with_head = true;  // false: tied to token_embd
  bool with_bias = true;
  bool write_rope_dims = true;
  bool write_key_length = false;
  uint32_t seed = 7;
  // Called before each tensor is added; may change its type or shape (the bytes are then
  // re-encoded for the new type/shape) — for the mis-typed / mis-shaped tensor tests.
  std::function<void(const std::string& name, DType* type, std::vector<int64_t>* ne)> mutate;
  // Called after the keys are set; may override keys or add new ones.
  std::function<void(gguf::Writer*)> keys;
  std::vector<std::string> drop_keys;     // keys not written at all
  std::vector<std::string> drop_tensors;  // tensors not written at all
};

// Owns the file image and the parsed File.
struct TinyLm {
  std::string image;
  std::unique_ptr<gguf::File> file;
};

inline std::vector<uint8_t> Encode(DType type, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> b(static_cast<size_t>(StoredBytes(type, n)));
  if (type == DType::kF32) {
    std::memcpy(b.data(), x.data(), x.size() * 4);
  } else if (type == DType::kF16) {
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t h = F32ToF16(x[i]);
      std::memcpy(b.data() + 2 * i, &h, 2);
    }
  } else {
    QuantizeRef(type, x.data(), n, b.data());
  }
  return b;
}

inline Result<TinyLm> BuildTinyLm(const TinyLmSpec& s) {
  gguf::Writer w;
  const int64_t hd = s.hidden / s.heads;
  auto kept = [&](const std::string& key) {
    for (const auto& d : s.drop_keys) {
      if (d == key) return false;
    }
    return true;
  };
  auto u32 = [&](const std::string& key, int64_t v) {
    if (kept(key)) w.SetU32(key, static_cast<uint32_t>(v));
  };
  auto f32 = [&](const std::string& key, float v) {
    if (kept(key)) w.SetF32(key, v);
  };
  w.SetString("general.architecture", "qwen2");
  w.SetString("general.name", "tiny-test");
  u32("qwen2.vocab_size", s.vocab);
  u32("qwen2.context_length", s.context);
  u32("qwen2.embedding_length", s.hidden);
  u32("qwen2.block_count", s.layers);
  u32("qwen2.feed_forward_length", s.ffn);
  if (s.write_rope_dims) u32("qwen2.rope.dimension_count", hd);
  if (s.write_key_length) u32("qwen2.attention.key_length", hd);
  u32("qwen2.attention.head_count", s.heads);
  u32("qwen2.attention.head_count_kv", s.kv_heads);
  f32("qwen2.attention.layer_norm_rms_epsilon", s.eps);
  f32("qwen2.rope.freq_base", s.theta);
  if (s.keys) s.keys(&w);

  std::mt19937 rng(s.seed);
  auto normal = [&](size_t n, float sd) {
    std::normal_distribution<float> d(0.0f, sd);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  auto uniform = [&](size_t n, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  Status st;
  auto add = [&](const std::string& name, DType type, std::vector<int64_t> ne,
                 std::vector<float> values) {
    if (!st.ok()) return;
    for (const auto& d : s.drop_tensors) {
      if (d == name) return;
    }
    if (s.mutate) s.mutate(name, &type, &ne);
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    values.resize(static_cast<size_t>(n), 0.01f);
    st = w.AddTensor(name, type, ne, Encode(type, values));
  };
  const int64_t kvd = s.kv_heads * hd;
  add("token_embd.weight", s.embd_type, {s.hidden, s.vocab},
      normal(static_cast<size_t>(s.hidden * s.vocab), 0.3f));
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const float sh = 1.0f / std::sqrt(static_cast<float>(s.hidden));
    const float sf = 1.0f / std::sqrt(static_cast<float>(s.ffn));
    add(p + "attn_norm.weight", DType::kF32, {s.hidden}, uniform(s.hidden, 0.8f, 1.2f));
    add(p + "attn_q.weight", DType::kI2_S, {s.hidden, s.hidden}, normal(s.hidden * s.hidden, sh));
    add(p + "attn_k.weight", DType::kI2_S, {s.hidden, kvd}, normal(s.hidden * kvd, sh));
    add(p + "attn_v.weight", DType::kI2_S, {s.hidden, kvd}, normal(s.hidden * kvd, sh));
    if (s.with_bias) {
      add(p + "attn_q.bias", DType::kF32, {s.hidden}, normal(s.hidden, 0.05f));
      add(p + "attn_k.bias", DType::kF32, {kvd}, normal(kvd, 0.05f));
      add(p + "attn_v.bias", DType::kF32, {kvd}, normal(kvd, 0.05f));
    }
    add(p + "attn_output.weight", DType::kI2_S, {s.hidden, s.hidden},
        normal(s.hidden * s.hidden, sh));
    add(p + "ffn_norm.weight", DType::kF32, {s.hidden}, uniform(s.hidden, 0.8f, 1.2f));
    add(p + "ffn_gate.weight", DType::kI2_S, {s.hidden, s.ffn}, normal(s.hidden * s.ffn, sh));
    add(p + "ffn_up.weight", DType::kI2_S, {s.hidden, s.ffn}, normal(s.hidden * s.ffn, sh));
    add(p + "ffn_down.weight", DType::kI2_S, {s.ffn, s.hidden}, normal(s.ffn * s.hidden, sf));
  }
  add("output_norm.weight", DType::kF32, {s.hidden}, uniform(s.hidden, 0.8f, 1.2f));
  if (s.with_head) {
    add("output.weight", s.head_type, {s.hidden, s.vocab},
        normal(static_cast<size_t>(s.hidden * s.vocab), 2.0f / std::sqrt(float(s.hidden))));
  }
  if (!st.ok()) return st;
  TinyLm lm;
  lm.image = w.Serialize();
  TERN_ASSIGN_OR_RETURN(
      lm.file, gguf::File::Parse(reinterpret_cast<const uint8_t*>(lm.image.data()), lm.image.size(),
                                 "tiny-lm.gguf"));
  return lm;
}

}  // namespace tern::vibeasr::testing
