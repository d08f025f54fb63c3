#include "models/vibeasr/decoder_config.h"

#include <cmath>
#include <string>

#include "ops/rope.h"

namespace tern::vibeasr {
namespace {

constexpr const char* kArch = "qwen2";

// A required positive integer key.
Result<int64_t> GetPositive(const gguf::File& f, const std::string& key, int64_t max_value) {
  Result<int64_t> v = f.GetI64(key);
  if (!v.ok()) return v.status();
  if (*v < 1 || *v > max_value) {
    return FormatError("%s: key '%s' = %lld is out of range [1, %lld]", f.path().c_str(),
                       key.c_str(), static_cast<long long>(*v), static_cast<long long>(max_value));
  }
  return *v;
}

// An optional positive integer key: `fallback` when absent.
Result<int64_t> GetPositiveOr(const gguf::File& f, const std::string& key, int64_t fallback,
                              int64_t max_value) {
  if (!f.Find(key)) return fallback;
  return GetPositive(f, key, max_value);
}

Result<float> GetFloat(const gguf::File& f, const std::string& key, bool required, float fallback) {
  if (!f.Find(key)) {
    if (required) return NotFoundError("%s: missing key '%s'", f.path().c_str(), key.c_str());
    return fallback;
  }
  Result<double> v = f.GetF64(key);
  if (!v.ok()) return v.status();
  if (!std::isfinite(*v) || *v <= 0) {
    return FormatError("%s: key '%s' = %g must be a positive finite number", f.path().c_str(),
                       key.c_str(), *v);
  }
  return static_cast<float>(*v);
}

}  // namespace

Result<DecoderConfig> ReadDecoderConfig(const gguf::File& f) {
  const std::string k = std::string(kArch) + ".";
  if (f.Find("general.architecture")) {
    TERN_ASSIGN_OR_RETURN(std::string a, f.GetString("general.architecture"));
    if (a != kArch) {
      return UnsupportedError("%s: general.architecture is '%s', the decoder needs '%s'",
                              f.path().c_str(), a.c_str(), kArch);
    }
  }
  constexpr int64_t kBig = int64_t{1} << 31;
  DecoderConfig c;
  TERN_ASSIGN_OR_RETURN(c.hidden, GetPositive(f, k + "embedding_length", 1 << 20));
  TERN_ASSIGN_OR_RETURN(c.layers, GetPositive(f, k + "block_count", 4096));
  TERN_ASSIGN_OR_RETURN(c.heads, GetPositive(f, k + "attention.head_count", 4096));
  TERN_ASSIGN_OR_RETURN(c.kv_heads, GetPositiveOr(f, k + "attention.head_count_kv", c.heads, 4096));
  TERN_ASSIGN_OR_RETURN(c.ffn, GetPositive(f, k + "feed_forward_length", 1 << 22));
  TERN_ASSIGN_OR_RETURN(c.context, GetPositive(f, k + "context_length", kBig));
  TERN_ASSIGN_OR_RETURN(c.rms_eps, GetFloat(f, k + "attention.layer_norm_rms_epsilon",
                                            /*required=*/true, 0));
  TERN_ASSIGN_OR_RETURN(c.rope_theta, GetFloat(f, k + "rope.freq_base", false, 10000.0f));

  const std::string rope_key = k + "rope.dimension_count";
  const std::string key_len_key = k + "attention.key_length";
  int64_t rope_dims = 0;
  if (f.Find(rope_key)) {
    TERN_ASSIGN_OR_RETURN(rope_dims, GetPositive(f, rope_key, ops::kMaxRopeDims));
  }
  if (f.Find(key_len_key)) {
    TERN_ASSIGN_OR_RETURN(c.head_dim, GetPositive(f, key_len_key, ops::kMaxRopeDims));
    if (f.Find(k + "attention.value_length")) {
      TERN_ASSIGN_OR_RETURN(int64_t vl, GetPositive(f, k + "attention.value_length", kBig));
      if (vl != c.head_dim) {
        return UnsupportedError("%s: attention.value_length %lld != key_length %lld",
                                f.path().c_str(), static_cast<long long>(vl),
                                static_cast<long long>(c.head_dim));
      }
    }
  } else if (rope_dims > 0) {
    c.head_dim = rope_dims;
  } else {
    c.head_dim = c.hidden / c.heads;
  }
  if (c.head_dim * c.heads != c.hidden) {
    return FormatError("%s: head_dim %lld x head_count %lld != embedding_length %lld",
                       f.path().c_str(), static_cast<long long>(c.head_dim),
                       static_cast<long long>(c.heads), static_cast<long long>(c.hidden));
  }
  if (rope_dims > 0 && rope_dims != c.head_dim) {
    return UnsupportedError(
        "%s: rope.dimension_count %lld != head_dim %lld (partial RoPE is "
        "not supported)",
        f.path().c_str(), static_cast<long long>(rope_dims), static_cast<long long>(c.head_dim));
  }
  if (c.head_dim % 2 != 0 || c.head_dim > ops::kMaxRopeDims) {
    return UnsupportedError("%s: head_dim %lld must be even and <= %lld", f.path().c_str(),
                            static_cast<long long>(c.head_dim),
                            static_cast<long long>(ops::kMaxRopeDims));
  }
  if (c.heads % c.kv_heads != 0) {
    return FormatError("%s: head_count %lld is not a multiple of head_count_kv %lld",
                       f.path().c_str(), static_cast<long long>(c.heads),
                       static_cast<long long>(c.kv_heads));
  }

  const gguf::TensorInfo* emb = f.FindTensor("token_embd.weight");
  if (!emb) return NotFoundError("%s: missing tensor 'token_embd.weight'", f.path().c_str());
  if (emb->n_dims != 2 || emb->ne[0] != c.hidden) {
    return FormatError(
        "%s: tensor 'token_embd.weight' has shape {%lld, %lld} (%d dims), "
        "expected {embedding_length=%lld, vocab}",
        f.path().c_str(), static_cast<long long>(emb->ne[0]), static_cast<long long>(emb->ne[1]),
        emb->n_dims, static_cast<long long>(c.hidden));
  }
  TERN_ASSIGN_OR_RETURN(c.vocab, GetPositiveOr(f, k + "vocab_size", emb->ne[1], kBig));
  if (c.vocab != emb->ne[1]) {
    return FormatError("%s: vocab_size %lld != token_embd.weight rows %lld", f.path().c_str(),
                       static_cast<long long>(c.vocab), static_cast<long long>(emb->ne[1]));
  }
  return c;
}

}  // namespace tern::vibeasr
