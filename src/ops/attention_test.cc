// Causal GQA over the F16 cache vs a double-precision reference on the same F16 rows, with an
// error bound derived from float accumulation; byte-identical at 1, 2 and 4 threads; rows
// after a token's own cache row are never read (they hold NaN here).
#include "ops/attention.h"

#include "base/test_util.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tensor/quant_ref.h"

namespace tern::ops {
namespace {

using testutil::RandomFloats;

const double kU = std::ldexp(1.0, -24);

struct Case {
  int64_t heads, kv_heads, hd, start, n;
};

void RunCase(const Case& c) {
  const AttentionDims dims{c.heads, c.kv_heads, c.hd};
  const int64_t cap = c.start + c.n + 3;  // spare rows: must stay unread
  const int64_t qd = c.heads * c.hd, kvd = c.kv_heads * c.hd;
  const auto q = RandomFloats(static_cast<size_t>(c.n * qd), 1, 1.0f);
  const auto k_all = RandomFloats(static_cast<size_t>((c.start + c.n) * kvd), 2, 2.0f);
  const auto v_all = RandomFloats(static_cast<size_t>((c.start + c.n) * kvd), 3, 1.0f);

  std::vector<float> first;
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    std::vector<uint16_t> kc(static_cast<size_t>(c.kv_heads * cap * c.hd),
                             F32ToF16(std::numeric_limits<float>::quiet_NaN()));
    std::vector<uint16_t> vc(kc);
    const KvLayer kv{kc.data(), vc.data(), cap};
    // Earlier rows in one call, the new ones in another (prefill then the batch).
    if (c.start > 0) StoreKv(pool, dims, k_all.data(), kvd, v_all.data(), kvd, c.start, 0, kv);
    StoreKv(pool, dims, k_all.data() + c.start * kvd, kvd, v_all.data() + c.start * kvd, kvd, c.n,
            c.start, kv);
    std::vector<float> scratch(AttentionScratchFloats(dims, c.start + c.n, nth));
    std::vector<float> out(static_cast<size_t>(c.n * qd), -9.0f);
    CausalAttention(pool, dims, q.data(), qd, c.n, c.start, kv, out.data(), qd, scratch.data());
    if (!first.empty()) {
      ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0) << "nth=" << nth;
      continue;
    }
    first = out;
    // Reference in double over the F16-rounded K and V.
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.hd));
    for (int64_t i = 0; i < c.n; ++i) {
      const int64_t n_kv = c.start + i + 1;
      for (int64_t h = 0; h < c.heads; ++h) {
        const int64_t g = h / (c.heads / c.kv_heads);
        const float* qh = q.data() + i * qd + h * c.hd;
        std::vector<double> s(n_kv), kq_mag(n_kv);
        double mx = -INFINITY, max_ds = 0;
        for (int64_t j = 0; j < n_kv; ++j) {
          double dot = 0, mag = 0;
          for (int64_t d = 0; d < c.hd; ++d) {
            const double kk = F16ToF32(F32ToF16(k_all[j * kvd + g * c.hd + d]));
            dot += qh[d] * kk;
            mag += std::fabs(qh[d] * kk);
          }
          s[j] = dot * scale;
          // float dot of hd products, then the scale: gamma_{hd+1} * sum|q k| * scale.
          max_ds = std::max(max_ds, (c.hd + 2) * kU * mag * scale + kU * std::fabs(s[j]));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < n_kv; ++j) sum += std::exp(s[j] - mx);
        double vmax = 0;
        for (int64_t d = 0; d < c.hd; ++d) {
          double ref = 0;
          for (int64_t j = 0; j < n_kv; ++j) {
            const double vv = F16ToF32(F32ToF16(v_all[j * kvd + g * c.hd + d]));
            vmax = std::max(vmax, std::fabs(vv));
            ref += std::exp(s[j] - mx) / sum * vv;
          }
          // Perturbing every score by <= ds moves each probability by a factor within
          // e^{+-2ds}; softmax rounding adds ~6u; the float sum over n_kv terms adds
          // gamma_{n_kv} * sum p|v| <= gamma_{n_kv} * vmax.
          const double tol = vmax * (2.2 * max_ds + 8 * kU + (n_kv + 1) * kU);
          ASSERT_LE(std::fabs(out[i * qd + h * c.hd + d] - ref), tol)
              << "token " << i << " head " << h << " dim " << d;
        }
      }
    }
  }
}

TEST(CausalAttentionTest, DecodeOneToken) { RunCase({12, 2, 128, 40, 1}); }
TEST(CausalAttentionTest, PrefillFromEmptyCache) { RunCase({8, 2, 32, 0, 19}); }
TEST(CausalAttentionTest, BatchAfterCachedRows) { RunCase({4, 4, 64, 7, 5}); }
TEST(CausalAttentionTest, SingleKvHeadManyQueries) { RunCase({6, 1, 16, 3, 33}); }

TEST(CausalAttentionTest, FirstTokenReturnsItsOwnValue) {
  // With one visible row the softmax is exactly 1 and the output is exactly V[0].
  const AttentionDims dims{4, 2, 8};
  ThreadPool pool(2);
  const auto k = RandomFloats(16, 4, 1.0f), v = RandomFloats(16, 5, 1.0f);
  const auto q = RandomFloats(32, 6, 1.0f);
  std::vector<uint16_t> kc(16), vc(16);
  const KvLayer kv{kc.data(), vc.data(), 1};
  StoreKv(pool, dims, k.data(), 16, v.data(), 16, 1, 0, kv);
  std::vector<float> scratch(AttentionScratchFloats(dims, 1, 2)), out(32);
  CausalAttention(pool, dims, q.data(), 32, 1, 0, kv, out.data(), 32, scratch.data());
  for (int h = 0; h < 4; ++h) {
    for (int d = 0; d < 8; ++d) {
      EXPECT_EQ(out[h * 8 + d], F16ToF32(F32ToF16(v[(h / 2) * 8 + d])));
    }
  }
}

}  // namespace
}  // namespace tern::ops

namespace tern::ops {
namespace {

// DecodeAttention over sequences of different cache lengths: each sequence's stored K/V rows
// and output are the bytes of its own StoreKv + CausalAttention (n = 1), at 1, 2 and 4
// threads, and no other cache row is written.
TEST(DecodeAttentionTest, EachRowEqualsItsOwnSequencesAttention) {
  const AttentionDims dims{12, 2, 64};
  const int64_t qd = dims.n_heads * dims.head_dim, kvd = dims.n_kv_heads * dims.head_dim;
  const int64_t cached[] = {0, 5, 130, 17, 1};
  const int64_t n = 5, cap = 140;
  const auto q = RandomFloats(static_cast<size_t>(n * qd), 11, 1.0f);
  const auto k = RandomFloats(static_cast<size_t>(n * kvd), 12, 2.0f);
  const auto v = RandomFloats(static_cast<size_t>(n * kvd), 13, 1.0f);
  // Caches: random F16 rows below each sequence's length, a sentinel pattern above.
  std::vector<std::vector<uint16_t>> base_k(n), base_v(n);
  for (int64_t i = 0; i < n; ++i) {
    const auto kf = RandomFloats(static_cast<size_t>(cap * kvd), 20 + uint32_t(i), 2.0f);
    const auto vf = RandomFloats(static_cast<size_t>(cap * kvd), 40 + uint32_t(i), 1.0f);
    base_k[i].resize(kf.size());
    base_v[i].resize(vf.size());
    for (size_t j = 0; j < kf.size(); ++j) {
      const bool used = static_cast<int64_t>(j % (cap * dims.head_dim)) / dims.head_dim < cached[i];
      base_k[i][j] = used ? F32ToF16(kf[j]) : uint16_t{0x7777};
      base_v[i][j] = used ? F32ToF16(vf[j]) : uint16_t{0x7777};
    }
  }
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    auto ks = base_k, vs = base_v, kb = base_k, vb = base_v;
    std::vector<float> solo(static_cast<size_t>(n * qd)), batched(solo.size(), -1.0f);
    std::vector<DecodeRow> rows(n);
    int64_t longest = 0;
    for (int64_t i = 0; i < n; ++i) {
      const KvLayer own{ks[i].data(), vs[i].data(), cap};
      StoreKv(pool, dims, k.data() + i * kvd, kvd, v.data() + i * kvd, kvd, 1, cached[i], own);
      std::vector<float> scratch(AttentionScratchFloats(dims, cached[i] + 1, pool.size()));
      CausalAttention(pool, dims, q.data() + i * qd, qd, 1, cached[i], own, solo.data() + i * qd,
                      qd, scratch.data());
      rows[i] = {q.data() + i * qd,
                 k.data() + i * kvd,
                 v.data() + i * kvd,
                 cached[i],
                 KvLayer{kb[i].data(), vb[i].data(), cap},
                 batched.data() + i * qd};
      longest = std::max(longest, cached[i] + 1);
    }
    std::vector<float> scratch(DecodeAttentionScratchFloats(dims, longest, pool.size()));
    DecodeAttention(pool, dims, rows.data(), n, scratch.data());
    EXPECT_EQ(std::memcmp(solo.data(), batched.data(), solo.size() * sizeof(float)), 0)
        << "threads " << nth;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(kb[i], ks[i]) << "K cache of sequence " << i << ", threads " << nth;
      EXPECT_EQ(vb[i], vs[i]) << "V cache of sequence " << i << ", threads " << nth;
    }
  }
}

}  // namespace
}  // namespace tern::ops
