// The decoder's weight table: binds the GGUF tensor names of spec 1.4 to fields, checking
// each tensor's type and shape (errors name the file, the tensor, expected vs actual).
//
//   token_embd.weight                      {hidden, vocab}   F32 | F16 | Q8_0 | Q6_K (rows looked up)
//   output_norm.weight                     {hidden}          F32
//   output.weight                          {hidden, vocab}   F16 (kF16: used in place) or any
//                                                            row type (kInt8: quantized at load)
//   blk.L.attn_norm.weight / ffn_norm      {hidden}          F32
//   blk.L.attn_q.weight                    {hidden, hidden}  I2_S
//   blk.L.attn_k.weight / attn_v.weight    {hidden, kv_heads*head_dim}  I2_S
//   blk.L.attn_q.bias / _k / _v            {out}             F32 (optional: zero when absent)
//   blk.L.attn_output.weight               {hidden, hidden}  I2_S
//   blk.L.ffn_gate.weight / ffn_up.weight  {hidden, ffn}     I2_S
//   blk.L.ffn_down.weight                  {ffn, hidden}     I2_S
// 1-D tensors may also be stored as {n, 1}.
//
// Tied head: if output.weight is absent the head is token_embd.weight (the model is tied, and
// the published F16 copy is only what llama-quantize forced). kF16 then needs F16 rows: an
// F16 table is used in place, any other type is converted to an owned F16 copy at load;
// kInt8 quantizes the table's rows to int8 whatever their type.
//
// I2_S matrices are packed once at load for the active kernel table (owned here, all in one
// buffer); F32 vectors and an F16 head point into the mapping, so the gguf::File must outlive
// the weights.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/huge_buffer.h"
#include "gguf/gguf.h"
#include "models/vibeasr/decoder_config.h"
#include "ops/embedding.h"
#include "ops/linear.h"
#include "runtime/thread_pool.h"

namespace tern::vibeasr {

struct LayerWeights {
  const float* attn_norm = nullptr;
  ops::I2SMatrix wq, wk, wv, wo;
  const float* bq = nullptr;  // null when the file has no bias
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* ffn_norm = nullptr;
  ops::I2SMatrix gate, up, down;
};

struct LmWeights {
  ops::EmbeddingTable token_embd;
  const float* output_norm = nullptr;
  HeadPrecision head_mode = HeadPrecision::kF16;
  bool head_tied = false;              // output.weight absent: head = token_embd
  const uint16_t* head_f16 = nullptr;  // kF16: vocab rows of hidden F16 values
  ops::I8Matrix head_i8;               // kInt8
  std::vector<LayerWeights> layers;

  HugeBuffer i2s_packed;      // every I2_S matrix, packed, in the order the forward reads
  HugeBuffer head_f16_owned;  // kF16 over a non-F16 table: the converted rows
};

// Binds every tensor; `pool` (may be null) threads the int8 head quantization.
Result<std::unique_ptr<LmWeights>> LoadLmWeights(const gguf::File& lm, const DecoderConfig& config,
                                                 HeadPrecision head, ThreadPool* pool);

}  // namespace tern::vibeasr
