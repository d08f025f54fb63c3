// Geometry of the Qwen2 decoder, read from the LM GGUF's `qwen2.*` keys (spec 1.4, 4.1) and
// validated against `token_embd.weight`.
//
// Keys (all under "qwen2."):
//   embedding_length (hidden), block_count (layers), attention.head_count (heads),
//   attention.head_count_kv (kv_heads; default = heads), feed_forward_length (ffn),
//   context_length (context), attention.layer_norm_rms_epsilon (rms_eps),
//   rope.freq_base (rope_theta; default 10000 as llama.cpp), vocab_size (optional; else
//   token_embd.weight ne[1]).
//   head_dim = attention.key_length if present, else rope.dimension_count (the published file
//   has no key_length), else hidden / heads; head_dim * heads must equal hidden, and
//   rope.dimension_count (when present) must equal head_dim: RoPE covers every dimension.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "gguf/gguf.h"
#include "tern/types.h"

namespace tern::vibeasr {

struct DecoderConfig {
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0,
          context = 0;
  float rms_eps = 0, rope_theta = 0;
};

// How the output head runs (tern::HeadPrecision, tern/types.h): the stored F16 matrix, or
// per-channel int8 (W8A8) quantized once at load from whatever output.weight holds (half
// the bytes streamed per token).

// Reads and validates the geometry; errors name the file and the key or tensor at fault.
Result<DecoderConfig> ReadDecoderConfig(const gguf::File& lm);

}  // namespace tern::vibeasr
