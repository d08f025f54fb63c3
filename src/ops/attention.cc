#include "ops/attention.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "kernels/kernels.h"
#include "ops/activation.h"
#include "ops/parallel.h"

namespace tern::ops {
namespace {

// Query heads of KV head g (group of them, at q) against cache rows [0, n_kv) of that head;
// `s` holds group*n_kv floats. The one computation behind CausalAttention and DecodeAttention.
void AttendGroup(const kernels::KernelTable& kt, const AttentionDims& dims, const float* q,
                 int64_t n_kv, const KvLayer& kv, int64_t g, float* out, float* s) {
  const int64_t hd = dims.head_dim, group = dims.group();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const uint16_t* kg = kv.k + g * kv.capacity * hd;
  const uint16_t* vg = kv.v + g * kv.capacity * hd;
  const float* qg = q + g * group * hd;
  kt.gemm_f16_f32(kg, hd, hd, 0, n_kv, qg, hd, group, s, n_kv);
  for (int64_t h = 0; h < group; ++h) {
    float* sh = s + h * n_kv;
    for (int64_t j = 0; j < n_kv; ++j) sh[j] *= scale;
    SoftmaxRow(sh, n_kv);
  }
  // The group's heads share the KV head's values: one pass over them for all.
  kt.weighted_rows_f16(s, n_kv, group, vg, hd, n_kv, hd, out + g * group * hd, hd);
}

}  // namespace

void StoreKv(ThreadPool& pool, const AttentionDims& dims, const float* k, int64_t ldk,
             const float* v, int64_t ldv, int64_t n, int64_t start, const KvLayer& kv) {
  TERN_CHECK(start >= 0 && start + n <= kv.capacity);
  const auto& kt = kernels::Kernels();
  const int64_t hd = dims.head_dim;
  ParallelRanges(pool, n, 1, n * dims.n_kv_heads * hd * 8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      for (int64_t g = 0; g < dims.n_kv_heads; ++g) {
        const int64_t row = (g * kv.capacity + start + i) * hd;
        kt.f32_to_f16(k + i * ldk + g * hd, hd, kv.k + row);
        kt.f32_to_f16(v + i * ldv + g * hd, hd, kv.v + row);
      }
    }
  });
}

size_t AttentionScratchFloats(const AttentionDims& dims, int64_t n_kv, int nth) {
  return static_cast<size_t>(nth) * static_cast<size_t>(dims.group() * n_kv);
}

void CausalAttention(ThreadPool& pool, const AttentionDims& dims, const float* q, int64_t ldq,
                     int64_t n, int64_t start, const KvLayer& kv, float* out, int64_t ldo,
                     float* scratch) {
  TERN_CHECK(dims.n_kv_heads > 0 && dims.n_heads % dims.n_kv_heads == 0);
  TERN_CHECK(start + n <= kv.capacity);
  const auto& kt = kernels::Kernels();
  const int64_t group = dims.group();
  const int64_t per_thread = group * (start + n);
  const int64_t items = n * dims.n_kv_heads;

  // Item = (token i, KV head g): score the group's query heads against rows 0..start+i.
  auto item = [&](int64_t it, float* s) {
    const int64_t i = it / dims.n_kv_heads, g = it % dims.n_kv_heads;
    AttendGroup(kt, dims, q + i * ldq, start + i + 1, kv, g, out + i * ldo, s);
  };

  const int64_t work = items * (start + n) * group * dims.head_dim;
  if (pool.size() == 1 || items == 1 || work < 64 * 1024) {
    for (int64_t it = 0; it < items; ++it) item(it, scratch);
    return;
  }
  // Strided assignment balances the causal triangle (later tokens see more rows).
  pool.Run([&](int tid, int nth) {
    float* s = scratch + static_cast<int64_t>(tid) * per_thread;
    for (int64_t it = tid; it < items; it += nth) item(it, s);
  });
}

size_t DecodeAttentionScratchFloats(const AttentionDims& dims, int64_t max_rows, int nth) {
  return AttentionScratchFloats(dims, max_rows, nth);
}

void DecodeAttention(ThreadPool& pool, const AttentionDims& dims, const DecodeRow* rows, int64_t n,
                     float* scratch) {
  TERN_CHECK(dims.n_kv_heads > 0 && dims.n_heads % dims.n_kv_heads == 0);
  const auto& kt = kernels::Kernels();
  const int64_t hd = dims.head_dim, group = dims.group();
  int64_t max_rows = 0, work = 0;
  for (int64_t i = 0; i < n; ++i) {
    TERN_CHECK(rows[i].row >= 0 && rows[i].row < rows[i].kv.capacity);
    max_rows = std::max(max_rows, rows[i].row + 1);
    work += (rows[i].row + 1) * dims.n_heads * hd;
  }
  const int64_t per_thread = group * max_rows;
  const int64_t items = n * dims.n_kv_heads;
  // Item = (sequence i, KV head g): store that head's new K/V row (as StoreKv), then attend.
  auto item = [&](int64_t it, float* s) {
    const DecodeRow& r = rows[it / dims.n_kv_heads];
    const int64_t g = it % dims.n_kv_heads;
    const int64_t at = (g * r.kv.capacity + r.row) * hd;
    kt.f32_to_f16(r.k + g * hd, hd, r.kv.k + at);
    kt.f32_to_f16(r.v + g * hd, hd, r.kv.v + at);
    AttendGroup(kt, dims, r.q, r.row + 1, r.kv, g, r.out, s);
  };
  if (pool.size() == 1 || items == 1 || work < 64 * 1024) {
    for (int64_t it = 0; it < items; ++it) item(it, scratch);
    return;
  }
  // Strided: sequences of different lengths spread over the threads.
  pool.Run([&](int tid, int nth) {
    float* s = scratch + static_cast<int64_t>(tid) * per_thread;
    for (int64_t it = tid; it < items; it += nth) item(it, s);
  });
}

}  // namespace tern::ops
