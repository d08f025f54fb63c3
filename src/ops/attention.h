// Causal grouped-query attention over an F16 KV cache (spec 4.2, audit 8b).
//
// Cache layout, one layer: K and V are each [n_kv_heads][capacity][head_dim] F16, so the rows
// of one KV head are contiguous and one kernel call scores a whole group of query heads.
// Query head h reads KV head h / (n_heads / n_kv_heads).
//
// For a new token at cache row t (tokens are appended in order; masking is by cache order, so
// the token sees rows 0..t whatever its RoPE position):
//   s_j = (q . f32(K[j])) * (1/sqrt(head_dim))      float accumulation (kernel gemm_f16_f32)
//   p   = softmax(s)                                 F32, sum in double (ops/activation.h)
//   o   = sum_j p_j * f32(V[j])                      accumulated in float, j ascending
// (Upstream's ggml graph also rounds q and p to F16 before its two F16 matmuls; keeping them
// in F32 is slightly more accurate and differs from it by far less than the int8 steps.)
// Work items are (token, KV head); each is computed by one thread with the same kernel calls
// whatever the thread count, so the output is byte-identical at any thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/thread_pool.h"

namespace tern::ops {

struct AttentionDims {
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t group() const { return n_heads / n_kv_heads; }
};

struct KvLayer {
  uint16_t* k = nullptr;  // [n_kv_heads][capacity][head_dim]
  uint16_t* v = nullptr;
  int64_t capacity = 0;
};

// Converts n new K and V rows (each n_kv_heads*head_dim floats, strides ldk/ldv) to F16 and
// stores them at cache rows [start, start + n).
void StoreKv(ThreadPool& pool, const AttentionDims& dims, const float* k, int64_t ldk,
             const float* v, int64_t ldv, int64_t n, int64_t start, const KvLayer& kv);

// Floats of scratch CausalAttention needs for `nth` threads with up to `n_kv` cache rows.
size_t AttentionScratchFloats(const AttentionDims& dims, int64_t n_kv, int nth);

// q: n rows of n_heads*head_dim floats (already rotated), the tokens at cache rows
// [start, start + n) (already stored). out: n rows of n_heads*head_dim floats.
// `scratch` holds AttentionScratchFloats(dims, start + n, pool.size()) floats.
void CausalAttention(ThreadPool& pool, const AttentionDims& dims, const float* q, int64_t ldq,
                     int64_t n, int64_t start, const KvLayer& kv, float* out, int64_t ldo,
                     float* scratch);

// One sequence's row of a batched decode step: B independent sequences, each with its own
// cache, advance by one token together. q (rotated), k (rotated) and v are the row's
// projections; the K/V row is stored at cache row `row` of `kv`, then the query attends over
// cache rows [0, row]. out: n_heads*head_dim floats.
struct DecodeRow {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t row = 0;
  KvLayer kv;
  float* out = nullptr;
};

// Floats of scratch DecodeAttention needs for `nth` threads when the longest cache has
// `max_rows` rows after the step.
size_t DecodeAttentionScratchFloats(const AttentionDims& dims, int64_t max_rows, int nth);

// The rows' StoreKv + CausalAttention (n = 1 each) in one parallel region over (row, KV head):
// each output is byte-identical to that sequence's own StoreKv + CausalAttention call.
void DecodeAttention(ThreadPool& pool, const AttentionDims& dims, const DecodeRow* rows, int64_t n,
                     float* scratch);

}  // namespace tern::ops
