#include "models/vibeasr/decoder.h"

#include <algorithm>
#include <cstring>

#include "base/timer.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/embedding.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace tern::vibeasr {

Result<std::unique_ptr<Decoder>> Decoder::Load(const gguf::File& lm, HeadPrecision head,
                                               ThreadPool* pool) {
  std::unique_ptr<Decoder> d(new Decoder());
  TERN_ASSIGN_OR_RETURN(d->config_, ReadDecoderConfig(lm));
  TERN_ASSIGN_OR_RETURN(d->weights_, LoadLmWeights(lm, d->config_, head, pool));
  return d;
}

DecoderState::DecoderState(const Decoder& decoder, int64_t max_tokens)
    : d_(decoder),
      c_(decoder.config()),
      max_tokens_(std::max<int64_t>(1, max_tokens)),
      batch_(std::min(kPrefillBatch, max_tokens_)) {
  AllocateBuffers();
}

DecoderState::DecoderState(const DecoderState& o)
    : d_(o.d_),
      c_(o.c_),
      max_tokens_(o.max_tokens_),
      batch_(o.batch_),
      n_cached_(o.n_cached_),
      timings_(o.timings_) {
  AllocateBuffers();
  // The cache is [segment][max_tokens][head_dim] with one segment per (layer, K|V, KV head);
  // only the first n_cached rows of each segment hold data.
  const int64_t seg = max_tokens_ * c_.head_dim, used = n_cached_ * c_.head_dim;
  for (int64_t s = 0; s < c_.layers * 2 * c_.kv_heads; ++s) {
    std::memcpy(kv_.data() + s * seg, o.kv_.data() + s * seg,
                static_cast<size_t>(used) * sizeof(uint16_t));
  }
}

void DecoderState::AllocateBuffers() {
  const int64_t h = c_.hidden, kvd = c_.kv_heads * c_.head_dim, qd = c_.heads * c_.head_dim;
  kv_.Allocate(c_.layers * 2 * kvd * max_tokens_);
  x_.Allocate(batch_ * h);
  xn_.Allocate(batch_ * h);
  q_.Allocate(batch_ * qd);
  k_.Allocate(batch_ * kvd);
  v_.Allocate(batch_ * kvd);
  attn_.Allocate(batch_ * qd);
  tmp_.Allocate(batch_ * h);
  gate_.Allocate(batch_ * c_.ffn);
  up_.Allocate(batch_ * c_.ffn);
  act_q_.Allocate(batch_ * std::max({h, qd, c_.ffn}));
  act_scale_.Allocate(batch_);
  act_sum_.Allocate(batch_);
  pos_.Allocate(batch_);
}

void DecoderState::Rewind(int64_t rows) {
  n_cached_ = std::clamp<int64_t>(rows, 0, n_cached_);
  timings_ = Timings();
}

Status DecoderState::Validate(const DecoderInput* inputs, int64_t n) const {
  if (n <= 0) return InvalidArgumentError("decoder: no inputs to run");
  if (n > max_tokens_ - n_cached_) {
    return ResourceExhaustedError("decoder: %lld new rows exceed the KV cache (%lld of %lld "
                                  "rows used)", static_cast<long long>(n),
                                  static_cast<long long>(n_cached_),
                                  static_cast<long long>(max_tokens_));
  }
  for (int64_t i = 0; i < n; ++i) {
    const DecoderInput& in = inputs[i];
    if (in.token >= c_.vocab) {
      return InvalidArgumentError("decoder: input %lld: token id %d is outside the vocabulary "
                                  "[0, %lld)", static_cast<long long>(i), in.token,
                                  static_cast<long long>(c_.vocab));
    }
    if (in.token < 0 && in.embedding == nullptr) {
      return InvalidArgumentError("decoder: input %lld has neither a token id nor an "
                                  "embedding", static_cast<long long>(i));
    }
    if (in.pos < 0) {
      return InvalidArgumentError("decoder: input %lld: negative position %d",
                                  static_cast<long long>(i), in.pos);
    }
  }
  return Status::Ok();
}

Status DecoderState::Prefill(const std::vector<DecoderInput>& inputs, ThreadPool& pool,
                             std::vector<float>* last_logits) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  TERN_RETURN_IF_ERROR(Validate(inputs.data(), n));
  Timer timer;
  last_logits->resize(static_cast<size_t>(c_.vocab));
  for (int64_t b = 0; b < n; b += batch_) {
    const int64_t nb = std::min(batch_, n - b);
    Forward(inputs.data() + b, nb, pool, b + nb == n ? last_logits->data() : nullptr);
  }
  timings_.prefill_ms += timer.ElapsedMs();
  return Status::Ok();
}

Status DecoderState::Step(int32_t token, int32_t pos, ThreadPool& pool,
                          std::vector<float>* logits) {
  if (token < 0) {
    return InvalidArgumentError("decoder: step token id %d is outside the vocabulary", token);
  }
  const DecoderInput in{token, nullptr, pos};
  TERN_RETURN_IF_ERROR(Validate(&in, 1));
  Timer timer;
  logits->resize(static_cast<size_t>(c_.vocab));
  Forward(&in, 1, pool, logits->data());
  timings_.decode_ms += timer.ElapsedMs();
  ++timings_.decode_steps;
  return Status::Ok();
}

void DecoderState::Forward(const DecoderInput* inputs, int64_t n, ThreadPool& pool,
                           float* logits) {
  const LmWeights& w = d_.weights();
  const int64_t h = c_.hidden;
  // x0: text rows from the embedding table, speech rows injected as-is (spec 4.5, audit 8c).
  for (int64_t i = 0; i < n; ++i) {
    float* xr = x_.data() + i * h;
    if (inputs[i].token >= 0) {
      ops::EmbeddingLookup(pool, w.token_embd, &inputs[i].token, 1, xr, h);
    } else {
      std::memcpy(xr, inputs[i].embedding, static_cast<size_t>(h) * sizeof(float));
    }
    pos_.data()[i] = inputs[i].pos;
  }
  for (int64_t l = 0; l < c_.layers; ++l) Layer(l, n, pool);
  n_cached_ += n;
  if (logits) Head(x_.data() + (n - 1) * h, pool, logits);
}

void DecoderState::Layer(int64_t l, int64_t n, ThreadPool& pool) {
  const LayerWeights& w = d_.weights().layers[l];
  const int64_t h = c_.hidden, hd = c_.head_dim, ffn = c_.ffn;
  const int64_t qd = c_.heads * hd, kvd = c_.kv_heads * hd;
  ops::QuantizedRows acts{act_q_.data(), std::max({h, qd, ffn}), act_scale_.data(),
                          act_sum_.data()};

  // Attention block.
  ops::RmsNorm(pool, x_.data(), n, h, h, w.attn_norm, c_.rms_eps, xn_.data(), h);
  ops::QuantizeRows(pool, xn_.data(), n, h, h, &acts);
  const ops::I2SProjection qkv[3] = {{&w.wq, w.bq, q_.data(), qd},
                                     {&w.wk, w.bk, k_.data(), kvd},
                                     {&w.wv, w.bv, v_.data(), kvd}};
  ops::LinearI2S(pool, acts, qkv, 3);
  ops::RopeNeox(pool, q_.data(), n, c_.heads, hd, qd, pos_.data(), c_.rope_theta);
  ops::RopeNeox(pool, k_.data(), n, c_.kv_heads, hd, kvd, pos_.data(), c_.rope_theta);

  const ops::AttentionDims dims{c_.heads, c_.kv_heads, hd};
  const int64_t layer_kv = kvd * max_tokens_;
  const ops::KvLayer kv{kv_.data() + (2 * l) * layer_kv, kv_.data() + (2 * l + 1) * layer_kv,
                        max_tokens_};
  ops::StoreKv(pool, dims, k_.data(), kvd, v_.data(), kvd, n, n_cached_, kv);
  const size_t scratch = ops::AttentionScratchFloats(dims, n_cached_ + n, pool.size());
  if (attn_scratch_.size() < scratch) attn_scratch_.resize(scratch);
  ops::CausalAttention(pool, dims, q_.data(), qd, n, n_cached_, kv, attn_.data(), qd,
                       attn_scratch_.data());
  ops::QuantizeRows(pool, attn_.data(), n, qd, qd, &acts);
  ops::LinearI2S(pool, acts, {&w.wo, nullptr, tmp_.data(), h});
  ops::AddInPlace(pool, x_.data(), h, tmp_.data(), h, n, h);

  // Feed-forward block (SwiGLU).
  ops::RmsNorm(pool, x_.data(), n, h, h, w.ffn_norm, c_.rms_eps, xn_.data(), h);
  ops::QuantizeRows(pool, xn_.data(), n, h, h, &acts);
  ops::LinearI2SSwiGlu(pool, acts, w.gate, w.up, gate_.data(), up_.data(), ffn);
  ops::QuantizeRows(pool, gate_.data(), n, ffn, ffn, &acts);
  ops::LinearI2S(pool, acts, {&w.down, nullptr, tmp_.data(), h});
  ops::AddInPlace(pool, x_.data(), h, tmp_.data(), h, n, h);
}

void DecoderState::Head(const float* x, ThreadPool& pool, float* logits) {
  const LmWeights& w = d_.weights();
  const int64_t h = c_.hidden;
  float* xn = xn_.data();
  ops::RmsNormRow(x, h, w.output_norm, c_.rms_eps, xn);
  if (w.head_mode == HeadPrecision::kF16) {
    ops::LinearF16(pool, w.head_f16, h, h, c_.vocab, xn, 1, h, logits, c_.vocab);
    return;
  }
  ops::QuantizedRows acts{act_q_.data(), h, act_scale_.data(), act_sum_.data()};
  ops::QuantizeRows(pool, xn, 1, h, h, &acts);
  ops::LinearW8A8(pool, w.head_i8, acts, logits, c_.vocab);
}

}  // namespace tern::vibeasr
