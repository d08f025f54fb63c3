#include "models/vibeasr/decoder.h"

#include <algorithm>
#include <cstring>
#include <string>

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

namespace detail {

void Activations::Allocate(const DecoderConfig& c, int64_t n) {
  const int64_t h = c.hidden, kvd = c.kv_heads * c.head_dim, qd = c.heads * c.head_dim;
  rows = n;
  x.Allocate(n * h);
  xn.Allocate(n * h);
  q.Allocate(n * qd);
  k.Allocate(n * kvd);
  v.Allocate(n * kvd);
  attn.Allocate(n * qd);
  tmp.Allocate(n * h);
  gate.Allocate(n * c.ffn);
  up.Allocate(n * c.ffn);
  act_q.Allocate(n * std::max({h, qd, c.ffn}));
  act_scale.Allocate(n);
  act_sum.Allocate(n);
  pos.Allocate(n);
}

}  // namespace detail

namespace {

// Rows [0, n) of `a` (x and pos filled) through one layer. `attend` stores the new K/V rows
// and writes a.attn from a.q/a.k/a.v: one sequence's causal attention, or one row per
// sequence of a batched step. Everything else works row by row, so a row's bytes do not
// depend on which other rows share the call.
template <typename Attend>
void RunLayer(const DecoderConfig& c, const LayerWeights& w, detail::Activations& a, int64_t n,
              ThreadPool& pool, Attend&& attend) {
  const int64_t h = c.hidden, hd = c.head_dim, ffn = c.ffn;
  const int64_t qd = c.heads * hd, kvd = c.kv_heads * hd;
  ops::QuantizedRows acts{a.act_q.data(), std::max({h, qd, ffn}), a.act_scale.data(),
                          a.act_sum.data()};

  // Attention block.
  ops::RmsNorm(pool, a.x.data(), n, h, h, w.attn_norm, c.rms_eps, a.xn.data(), h);
  ops::QuantizeRows(pool, a.xn.data(), n, h, h, &acts);
  const ops::I2SProjection qkv[3] = {{&w.wq, w.bq, a.q.data(), qd},
                                     {&w.wk, w.bk, a.k.data(), kvd},
                                     {&w.wv, w.bv, a.v.data(), kvd}};
  ops::LinearI2S(pool, acts, qkv, 3);
  ops::RopeNeox(pool, a.q.data(), n, c.heads, hd, qd, a.pos.data(), c.rope_theta);
  ops::RopeNeox(pool, a.k.data(), n, c.kv_heads, hd, kvd, a.pos.data(), c.rope_theta);
  attend();
  ops::QuantizeRows(pool, a.attn.data(), n, qd, qd, &acts);
  ops::LinearI2S(pool, acts, {&w.wo, nullptr, a.tmp.data(), h});
  ops::AddInPlace(pool, a.x.data(), h, a.tmp.data(), h, n, h);

  // Feed-forward block (SwiGLU).
  ops::RmsNorm(pool, a.x.data(), n, h, h, w.ffn_norm, c.rms_eps, a.xn.data(), h);
  ops::QuantizeRows(pool, a.xn.data(), n, h, h, &acts);
  ops::LinearI2SSwiGlu(pool, acts, w.gate, w.up, a.gate.data(), a.up.data(), ffn);
  ops::QuantizeRows(pool, a.gate.data(), n, ffn, ffn, &acts);
  ops::LinearI2S(pool, acts, {&w.down, nullptr, a.tmp.data(), h});
  ops::AddInPlace(pool, a.x.data(), h, a.tmp.data(), h, n, h);
}

// Logits of `n` final hidden rows (stride hidden, in a.x from row `first`) into
// out[j * vocab]: output norm per row, then one head GEMM over the rows. Uses a.xn and the
// quantized-activation buffers of `a`.
void RunHead(const DecoderConfig& c, const LmWeights& w, detail::Activations& a, const float* x,
             int64_t n, ThreadPool& pool, float* out) {
  const int64_t h = c.hidden;
  for (int64_t j = 0; j < n; ++j) {
    ops::RmsNormRow(x + j * h, h, w.output_norm, c.rms_eps, a.xn.data() + j * h);
  }
  if (w.head_mode == HeadPrecision::kF16) {
    ops::LinearF16(pool, w.head_f16, h, h, c.vocab, a.xn.data(), n, h, out, c.vocab);
    return;
  }
  ops::QuantizedRows acts{a.act_q.data(), h, a.act_scale.data(), a.act_sum.data()};
  ops::QuantizeRows(pool, a.xn.data(), n, h, h, &acts);
  ops::LinearW8A8(pool, w.head_i8, acts, out, c.vocab);
}

// x0 of a text token from the embedding table.
void EmbedToken(const LmWeights& w, int32_t token, int64_t hidden, ThreadPool& pool, float* x) {
  ops::EmbeddingLookup(pool, w.token_embd, &token, 1, x, hidden);
}

}  // namespace

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
  kv_.Allocate(c_.layers * 2 * c_.kv_heads * c_.head_dim * max_tokens_);
  a_.Allocate(c_, batch_);
}

void DecoderState::Rewind(int64_t rows) {
  n_cached_ = std::clamp<int64_t>(rows, 0, n_cached_);
  timings_ = Timings();
}

Status DecoderState::Validate(const DecoderInput* inputs, int64_t n) const {
  if (n <= 0) return InvalidArgumentError("decoder: no inputs to run");
  if (n > max_tokens_ - n_cached_) {
    return ResourceExhaustedError(
        "decoder: %lld new rows exceed the KV cache (%lld of %lld "
        "rows used)",
        static_cast<long long>(n), static_cast<long long>(n_cached_),
        static_cast<long long>(max_tokens_));
  }
  for (int64_t i = 0; i < n; ++i) {
    const DecoderInput& in = inputs[i];
    if (in.token >= c_.vocab) {
      return InvalidArgumentError(
          "decoder: input %lld: token id %d is outside the vocabulary "
          "[0, %lld)",
          static_cast<long long>(i), in.token, static_cast<long long>(c_.vocab));
    }
    if (in.token < 0 && in.embedding == nullptr) {
      return InvalidArgumentError(
          "decoder: input %lld has neither a token id nor an "
          "embedding",
          static_cast<long long>(i));
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

void DecoderState::Forward(const DecoderInput* inputs, int64_t n, ThreadPool& pool, float* logits) {
  const LmWeights& w = d_.weights();
  const int64_t h = c_.hidden;
  // x0: text rows from the embedding table, speech rows injected as-is (spec 4.5, audit 8c).
  for (int64_t i = 0; i < n; ++i) {
    float* xr = a_.x.data() + i * h;
    if (inputs[i].token >= 0) {
      EmbedToken(w, inputs[i].token, h, pool, xr);
    } else {
      std::memcpy(xr, inputs[i].embedding, static_cast<size_t>(h) * sizeof(float));
    }
    a_.pos.data()[i] = inputs[i].pos;
  }
  const ops::AttentionDims dims{c_.heads, c_.kv_heads, c_.head_dim};
  const int64_t qd = c_.heads * c_.head_dim, kvd = c_.kv_heads * c_.head_dim;
  const int64_t layer_kv = kvd * max_tokens_;
  for (int64_t l = 0; l < c_.layers; ++l) {
    RunLayer(c_, w.layers[l], a_, n, pool, [&] {
      const ops::KvLayer kv{kv_.data() + (2 * l) * layer_kv, kv_.data() + (2 * l + 1) * layer_kv,
                            max_tokens_};
      ops::StoreKv(pool, dims, a_.k.data(), kvd, a_.v.data(), kvd, n, n_cached_, kv);
      const size_t scratch = ops::AttentionScratchFloats(dims, n_cached_ + n, pool.size());
      if (a_.attn_scratch.size() < scratch) a_.attn_scratch.resize(scratch);
      ops::CausalAttention(pool, dims, a_.q.data(), qd, n, n_cached_, kv, a_.attn.data(), qd,
                           a_.attn_scratch.data());
    });
  }
  n_cached_ += n;
  if (logits) RunHead(c_, w, a_, a_.x.data() + (n - 1) * h, 1, pool, logits);
}

DecoderBatch::DecoderBatch(const Decoder& decoder, int64_t max_streams)
    : d_(decoder), c_(decoder.config()), max_streams_(std::max<int64_t>(1, max_streams)) {
  a_.Allocate(c_, max_streams_);
}

Status DecoderBatch::Step(const std::vector<BatchStep>& steps, ThreadPool& pool) {
  const int64_t n = static_cast<int64_t>(steps.size());
  if (n == 0) return InvalidArgumentError("decoder batch: no sequences to step");
  if (n > max_streams_) {
    return InvalidArgumentError("decoder batch: %lld sequences exceed the batch's %lld",
                                static_cast<long long>(n), static_cast<long long>(max_streams_));
  }
  for (int64_t i = 0; i < n; ++i) {
    const BatchStep& s = steps[i];
    if (s.state == nullptr || s.logits == nullptr) {
      return InvalidArgumentError("decoder batch: step %lld has no state or no logits",
                                  static_cast<long long>(i));
    }
    if (&s.state->d_ != &d_) {
      return InvalidArgumentError(
          "decoder batch: step %lld's state belongs to another "
          "decoder",
          static_cast<long long>(i));
    }
    for (int64_t j = 0; j < i; ++j) {
      if (steps[j].state == s.state) {
        return InvalidArgumentError(
            "decoder batch: steps %lld and %lld advance the same "
            "state",
            static_cast<long long>(j), static_cast<long long>(i));
      }
    }
    if (s.token < 0) {
      return InvalidArgumentError(
          "decoder batch: step %lld: token id %d is outside the "
          "vocabulary",
          static_cast<long long>(i), s.token);
    }
    const DecoderInput in{s.token, nullptr, s.pos};
    if (Status st = s.state->Validate(&in, 1); !st.ok()) {
      return Status(st.code(), "decoder batch: step " + std::to_string(i) + ": " + st.message());
    }
  }
  Timer timer;
  const LmWeights& w = d_.weights();
  const int64_t h = c_.hidden;
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    tokens[i] = steps[i].token;
    a_.pos.data()[i] = steps[i].pos;
  }
  ops::EmbeddingLookup(pool, w.token_embd, tokens.data(), n, a_.x.data(), h);  // one region
  const ops::AttentionDims dims{c_.heads, c_.kv_heads, c_.head_dim};
  const int64_t qd = c_.heads * c_.head_dim, kvd = c_.kv_heads * c_.head_dim;
  int64_t max_rows = 0;
  for (const BatchStep& s : steps) max_rows = std::max(max_rows, s.state->n_cached_ + 1);
  const size_t scratch = ops::DecodeAttentionScratchFloats(dims, max_rows, pool.size());
  if (a_.attn_scratch.size() < scratch) a_.attn_scratch.resize(scratch);
  std::vector<ops::DecodeRow> rows(static_cast<size_t>(n));
  for (int64_t l = 0; l < c_.layers; ++l) {
    for (int64_t i = 0; i < n; ++i) {
      DecoderState& st = *steps[i].state;
      const int64_t layer_kv = kvd * st.max_tokens_;
      rows[i] = {a_.q.data() + i * qd,
                 a_.k.data() + i * kvd,
                 a_.v.data() + i * kvd,
                 st.n_cached_,
                 {st.kv_.data() + (2 * l) * layer_kv, st.kv_.data() + (2 * l + 1) * layer_kv,
                  st.max_tokens_},
                 a_.attn.data() + i * qd};
    }
    RunLayer(c_, w.layers[l], a_, n, pool,
             [&] { ops::DecodeAttention(pool, dims, rows.data(), n, a_.attn_scratch.data()); });
  }
  logits_.resize(static_cast<size_t>(n * c_.vocab));
  RunHead(c_, w, a_, a_.x.data(), n, pool, logits_.data());
  const double ms = timer.ElapsedMs();
  for (int64_t i = 0; i < n; ++i) {
    DecoderState& st = *steps[i].state;
    ++st.n_cached_;
    st.timings_.decode_ms += ms;
    ++st.timings_.decode_steps;
    const float* src = logits_.data() + i * c_.vocab;
    steps[i].logits->assign(src, src + c_.vocab);
  }
  return Status::Ok();
}

}  // namespace tern::vibeasr
