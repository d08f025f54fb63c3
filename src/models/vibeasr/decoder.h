// The VibeASR text decoder: Qwen2 with ternary (I2_S) projections (spec 4).
//
// Decoder is immutable after Load and may be shared by many DecoderStates (one per Session).
// DecoderState owns the F16 KV cache and the scratch buffers of one sequence.
//
// Per layer, for a batch of rows x (spec 4.2):
//   h = RMSNorm(x) * attn_norm;  q,k,v = I2S(W{q,k,v}, h) + b{q,k,v}  (h quantized once)
//   q,k = RoPE_NEOX(q,k, pos);   a = CausalGQA(q, Kcache, Vcache)   (F16 cache)
//   x += I2S(Wo, a);  h = RMSNorm(x) * ffn_norm;  x += I2S(Wdown, silu(I2S(Wgate,h)) * I2S(Wup,h))
// logits = head(RMSNorm(x_last) * output_norm), head F16 or W8A8 (HeadPrecision).
//
// Positions are explicit (spec 4.6): cache rows are contiguous in feed order, but the RoPE
// position of a row is whatever the caller passes, so decoded tokens can sit above their cache
// row. Masking is by cache order: a row sees itself and every earlier row.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"
#include "models/vibeasr/decoder_config.h"
#include "models/vibeasr/lm_weights.h"
#include "runtime/thread_pool.h"

namespace tern::vibeasr {

class Decoder {
 public:
  // The File must outlive the Decoder (norms, biases, embeddings and an F16 head are used in
  // place from its mapping). `pool` (optional) threads the load-time int8 head quantization.
  static Result<std::unique_ptr<Decoder>> Load(const gguf::File& lm, HeadPrecision head,
                                               ThreadPool* pool = nullptr);

  const DecoderConfig& config() const { return config_; }
  HeadPrecision head_mode() const { return weights_->head_mode; }
  const LmWeights& weights() const { return *weights_; }

 private:
  Decoder() = default;
  DecoderConfig config_;
  std::unique_ptr<LmWeights> weights_;
};

// One input row: a text token (token >= 0, looked up in token_embd) or, when token < 0, an
// injected embedding of `hidden` floats (speech frames), at RoPE position `pos`.
struct DecoderInput {
  int32_t token = -1;
  const float* embedding = nullptr;
  int32_t pos = 0;
};

class DecoderState {
 public:
  // `max_tokens` cache rows (clamped to at least 1); the cache and scratch are reserved here
  // but left untouched, so memory is committed only as rows are used.
  DecoderState(const Decoder& decoder, int64_t max_tokens);
  // A fork of the sequence (beam search): copies only the cached rows.
  DecoderState(const DecoderState& other);
  DecoderState& operator=(const DecoderState&) = delete;

  // Appends `inputs` to the cache (in batches of up to kPrefillBatch rows, GEMM path) and
  // writes the logits of the LAST input (vocab floats) to *last_logits (resized). Errors
  // (state unchanged): empty input, more rows than the cache has left (kResourceExhausted),
  // token ids outside [0, vocab), a null embedding, a negative position.
  Status Prefill(const std::vector<DecoderInput>& inputs, ThreadPool& pool,
                 std::vector<float>* last_logits);

  // One text token at position `pos`; logits (vocab floats) to *logits.
  Status Step(int32_t token, int32_t pos, ThreadPool& pool, std::vector<float>* logits);

  int64_t n_cached() const { return n_cached_; }
  int64_t max_tokens() const { return max_tokens_; }
  // Forgets the cached rows and the timings.
  void Reset() { Rewind(0); }
  // Keeps the first `rows` cached rows (clamped to [0, n_cached()]), forgets the rest and the
  // timings: a sequence that starts like the previous one (every prompt starts with the same
  // system turn) prefills only from where they differ. Each row depends only on the rows
  // before it, so the result is the same, bit for bit, as prefilling it all again.
  void Rewind(int64_t rows);

  struct Timings {
    double prefill_ms = 0, decode_ms = 0;
    int64_t decode_steps = 0;
  };
  const Timings& timings() const { return timings_; }

  static constexpr int64_t kPrefillBatch = 512;

 private:
  Status Validate(const DecoderInput* inputs, int64_t n) const;
  // Runs rows [0, n) of `inputs` at cache rows [n_cached_, n_cached_ + n); when `logits` is
  // not null, writes the logits of the last row.
  void Forward(const DecoderInput* inputs, int64_t n, ThreadPool& pool, float* logits);
  void Layer(int64_t l, int64_t n, ThreadPool& pool);
  void Head(const float* x, ThreadPool& pool, float* logits);

  // Heap storage that is not value-initialized (pages are committed on first write).
  template <typename T>
  class Buffer {
   public:
    void Allocate(int64_t n) {
      p_.reset(new T[static_cast<size_t>(n)]);
      n_ = n;
    }
    T* data() const { return p_.get(); }
    int64_t size() const { return n_; }

   private:
    std::unique_ptr<T[]> p_;
    int64_t n_ = 0;
  };
  void AllocateBuffers();

  const Decoder& d_;
  const DecoderConfig& c_;
  int64_t max_tokens_;
  int64_t batch_;
  int64_t n_cached_ = 0;
  Timings timings_;

  Buffer<uint16_t> kv_;  // [layer][K|V][kv_head][max_tokens][head_dim]
  // Activations of one batch (row-major, batch_ rows).
  Buffer<float> x_, xn_, q_, k_, v_, attn_, tmp_, gate_, up_;
  Buffer<int8_t> act_q_;
  Buffer<float> act_scale_;
  Buffer<int32_t> act_sum_, pos_;
  std::vector<float> attn_scratch_;
};

}  // namespace tern::vibeasr
