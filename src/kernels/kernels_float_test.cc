// Float kernels: F16 x F32 GEMM (tolerance from the data: float accumulation order differs
// between ISAs), weighted_rows_f16 and silu_mul_f32 (bit-exact: the same operations in the
// same order on every ISA, never fused).
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/test_util.h"

namespace tern::kernels {
namespace {

using ktest::Bits;
using ktest::ForEachRequantEpilogue;
using ktest::Guarded;
using ktest::Scalar;
using ktest::SimdTables;

std::vector<const KernelTable*> AllTables() {
  std::vector<const KernelTable*> v = SimdTables();
  v.push_back(&Scalar());
  return v;
}

// Any order of float sums (with or without FMA) of k products is within
// k * 2^-24 * sum|w*x| of the exact value (classic bound gamma_k, first order, padded by 2x).
void CheckF16Gemm(int64_t k, int64_t nr, int64_t n, std::mt19937& rng) {
  const int64_t ldw = k + (k % 2 ? 0 : 8), ldx = k + 1, ldo = nr + 2;
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Guarded<uint16_t> w(static_cast<size_t>((nr - 1) * ldw + k));
  for (size_t i = 0; i < w.n; ++i) {
    const float v = nd(rng) * 0.05f;
    Scalar().f32_to_f16(&v, 1, &w[i]);
  }
  Guarded<float> x(static_cast<size_t>((n - 1) * ldx + k));
  for (size_t i = 0; i < x.n; ++i) x[i] = nd(rng);
  std::vector<double> exact(static_cast<size_t>(n * nr)), bound(static_cast<size_t>(n * nr));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < nr; ++r) {
      double s = 0, a = 0;
      for (int64_t i = 0; i < k; ++i) {
        float wf;
        Scalar().f16_to_f32(&w[r * ldw + i], 1, &wf);
        s += static_cast<double>(wf) * x[j * ldx + i];
        a += std::fabs(static_cast<double>(wf) * x[j * ldx + i]);
      }
      exact[j * nr + r] = s;
      bound[j * nr + r] = 2.0 * static_cast<double>(k) * std::ldexp(1.0, -24) * a + 1e-30;
    }
  }
  for (const KernelTable* t : AllTables()) {
    for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, nr}, {nr / 3, nr}}) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " k=" << k << " N=" << nr
                                        << " n=" << n << " rows " << r0 << ".." << r1);
      Guarded<float> out(static_cast<size_t>((n - 1) * ldo + nr));
      for (size_t i = 0; i < out.n; ++i) out[i] = -7.0f;
      t->gemm_f16_f32(w.data(), k, ldw, r0, r1, x.data(), ldx, n, out.data(), ldo);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < nr; ++r) {
          const float got = out[j * ldo + r];
          if (r < r0 || r >= r1) {
            ASSERT_EQ(got, -7.0f);
            continue;
          }
          const double err = std::fabs(static_cast<double>(got) - exact[j * nr + r]);
          ASSERT_LE(err, bound[j * nr + r]) << "r=" << r << " j=" << j;
        }
      }
    }
  }
}

TEST(GemmF16F32, WithinDataDerivedBound) {
  std::mt19937 rng(9);
  const bool reduced = ktest::Reduced();
  for (int64_t k : {1, 7, 16, 33, 128, 1536}) {
    for (int64_t nr : {1, 2, 5, 64, 70}) {
      for (int64_t n : {1, 2, 3, 5, 72}) {
        if (n == 72 && (nr > 5 || reduced)) continue;
        CheckF16Gemm(k, nr, n, rng);
      }
    }
  }
}

TEST(GemmF16F32, ExactOnSmallIntegers) {
  // Integer-valued data has exact float sums in any order: every ISA must get them exactly.
  const int64_t k = 300, nr = 19, n = 4;
  std::vector<uint16_t> w(static_cast<size_t>(nr * k));
  std::vector<float> x(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < nr * k; ++i) {
    const float v = static_cast<float>(i % 7 - 3);
    Scalar().f32_to_f16(&v, 1, &w[i]);
  }
  for (int64_t i = 0; i < n * k; ++i) x[i] = static_cast<float>(i % 5 - 2);
  for (const KernelTable* t : AllTables()) {
    std::vector<float> out(static_cast<size_t>(n * nr));
    t->gemm_f16_f32(w.data(), k, k, 0, nr, x.data(), k, n, out.data(), nr);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = 0; r < nr; ++r) {
        int64_t d = 0;
        for (int64_t i = 0; i < k; ++i) d += ((r * k + i) % 7 - 3) * ((j * k + i) % 5 - 2);
        ASSERT_EQ(out[j * nr + r], static_cast<float>(d)) << IsaName(t->isa);
      }
    }
  }
}

TEST(WeightedRowsF16, SimdMatchesOracleBitExact) {
  std::mt19937 rng(10);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t heads : {1, 2, 5, 6, 7, 9, 12}) {
    for (int64_t n : {0, 1, 5, 8, 16, 31, 64, 128, 130}) {
      for (int64_t rows : {0, 1, 3, 40}) {
        const int64_t ldv = n + 3, ldp = rows + 2, ldo = n + 5;
        Guarded<uint16_t> v(static_cast<size_t>(std::max<int64_t>(1, rows * ldv)));
        for (int64_t i = 0; i < rows * ldv; ++i) {
          const float f = nd(rng);
          Scalar().f32_to_f16(&f, 1, &v[i]);
        }
        Guarded<float> p(static_cast<size_t>(heads * ldp));
        for (int64_t i = 0; i < heads * ldp; ++i) p[i] = nd(rng);
        std::vector<float> want(static_cast<size_t>(heads * ldo), -7.0f);
        Scalar().weighted_rows_f16(p.data(), ldp, heads, v.data(), ldv, rows, n, want.data(), ldo);
        // The oracle by hand: from 0, term by term in row order, multiply then add.
        for (int64_t h = 0; h < heads; ++h) {
          for (int64_t i = 0; i < n; ++i) {
            float o = 0.0f;
            for (int64_t j = 0; j < rows; ++j) {
              float vf;
              Scalar().f16_to_f32(&v[j * ldv + i], 1, &vf);
              const float term = p[h * ldp + j] * vf;
              o = o + term;
            }
            ASSERT_EQ(want[h * ldo + i], o);
          }
          for (int64_t i = n; i < ldo; ++i) ASSERT_EQ(want[h * ldo + i], -7.0f);  // untouched
        }
        for (const KernelTable* t : SimdTables()) {
          std::vector<float> got(static_cast<size_t>(heads * ldo), -7.0f);
          t->weighted_rows_f16(p.data(), ldp, heads, v.data(), ldv, rows, n, got.data(), ldo);
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << IsaName(t->isa) << " heads " << heads << " n " << n
                                       << " rows " << rows << " at " << i;
        }
      }
    }
  }
}

// silu_mul_f32: every ISA runs kernels/expf_poly.h's operations in the same order.
std::vector<float> SiluInputs(std::mt19937& rng, int64_t n) {
  static const float kSpecial[] = {0.0f,   -0.0f,   1e-30f, -1e-30f, 86.9f,  -86.9f, 87.0f,
                                   -87.0f, 87.1f,   -87.1f, 88.0f,   -88.0f, 88.1f,  -88.1f,
                                   200.0f, -200.0f, 1e6f,   -1e6f,   0.5f,   -0.5f};
  std::normal_distribution<float> nd(0.0f, 4.0f);
  std::uniform_real_distribution<float> ud(-100.0f, 100.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t pick = rng() % 8;
    v[i] = pick == 0 ? kSpecial[rng() % std::size(kSpecial)] : pick < 5 ? nd(rng) : ud(rng);
  }
  return v;
}

TEST(SiluMul, SimdMatchesOracleBitExact) {
  std::mt19937 rng(41);
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 40; ++n) lengths.push_back(n);
  lengths.push_back(8960);
  for (int64_t n : lengths) {
    const std::vector<float> g = SiluInputs(rng, n), u = SiluInputs(rng, n);
    std::vector<float> want(static_cast<size_t>(n));
    Scalar().silu_mul_f32(g.data(), u.data(), n, want.data());
    for (const KernelTable* t : SimdTables()) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n);
      Guarded<float> gg(static_cast<size_t>(n)), uu(static_cast<size_t>(n)),
          out(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) gg[i] = g[i], uu[i] = u[i];
      t->silu_mul_f32(gg.data(), uu.data(), n, out.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(Bits(out[i]), Bits(want[i])) << i;
      // In place over either input (the decoder writes over the gate rows).
      t->silu_mul_f32(gg.data(), uu.data(), n, gg.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(Bits(gg[i]), Bits(want[i])) << i;
      for (int64_t i = 0; i < n; ++i) gg[i] = g[i];
      t->silu_mul_f32(gg.data(), uu.data(), n, uu.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(Bits(uu[i]), Bits(want[i])) << i;
    }
  }
}

TEST(SiluMul, OracleWithinBoundOfTrueSilu) {
  // Error budget in units of u = 2^-24 relative: the exp polynomial and its range reduction
  // (Cephes: about 2), 1 + e, the division and the product (1 each), doubled for margin.
  // The exp's relative error reaches silu through e / (1 + e) <= 1. Below -87 the clamp
  // leaves silu at x u / (1 + e^88) instead of about x u e^x: both under 1e-38 |x u|.
  constexpr double kU = 0x1p-24;
  std::mt19937 rng(42);
  std::vector<float> g, u;
  for (float x = -120.0f; x <= 120.0f; x += 0.001953125f) g.push_back(x), u.push_back(1.0f);
  const std::vector<float> r = SiluInputs(rng, 100000), ru = SiluInputs(rng, 100000);
  g.insert(g.end(), r.begin(), r.end());
  u.insert(u.end(), ru.begin(), ru.end());
  std::vector<float> y(g.size());
  Scalar().silu_mul_f32(g.data(), u.data(), static_cast<int64_t>(g.size()), y.data());
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    const double ref = x / (1.0 + std::exp(-x)) * u[i];
    const double err = std::fabs(y[i] - ref);
    ASSERT_LE(err, 10 * kU * std::fabs(ref) + 1e-38 * std::fabs(x * u[i]) + 1e-44)
        << "x=" << g[i] << " u=" << u[i];
    if (std::fabs(ref) > 1e-30) worst = std::max(worst, err / std::fabs(ref) / kU);
  }
  EXPECT_LT(worst, 10.0);
  RecordProperty("worst_relative_error_ulps", std::to_string(worst));
}

}  // namespace
}  // namespace tern::kernels

namespace tern::kernels {
namespace {

// Ops split rows over threads (ThreadPool::Split on row_align); a row's result must not
// depend on which range, tile or thread computed it. Here: 1, 2, 3 and 4 aligned parts vs
// one call, compared byte for byte (float included: per-row reduction order is fixed).
template <typename Run>
void ExpectSplitInvariant(int64_t nr, int64_t align, size_t out_elems, size_t elem_bytes, Run run) {
  std::vector<uint8_t> whole(out_elems * elem_bytes, 0);
  run(0, nr, whole.data());
  for (int parts : {2, 3, 4}) {
    std::vector<uint8_t> split(out_elems * elem_bytes, 0);
    const int64_t blocks = (nr + align - 1) / align;
    for (int p = 0; p < parts; ++p) {
      const int64_t b = std::min(nr, blocks * p / parts * align);
      const int64_t e = std::min(nr, blocks * (p + 1) / parts * align);
      if (b < e) run(b, e, split.data());
    }
    ASSERT_EQ(whole, split) << parts << " parts";
  }
}

TEST(RowSplits, GiveIdenticalBytes) {
  std::mt19937 rng(12);
  const int64_t k = 1024, nr = 150, ldo = nr;
  std::vector<uint8_t> codes(static_cast<size_t>(nr * k));
  for (auto& c : codes) c = static_cast<uint8_t>(rng() % 3);
  const std::vector<uint8_t> canon = ktest::EncodeI2s(codes, k, nr);
  std::vector<int8_t> w8(static_cast<size_t>(nr * k));
  for (auto& v : w8) v = static_cast<int8_t>(rng() % 255 - 127);
  std::vector<uint16_t> w16(static_cast<size_t>(nr * k));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : w16) {
    const float f = nd(rng);
    Scalar().f32_to_f16(&f, 1, &v);
  }
  for (int64_t n : {1, 3, 13}) {
    std::vector<float> x(static_cast<size_t>(n * k));
    for (auto& v : x) v = nd(rng);
    std::vector<int8_t> q(x.size()), x8(x.size());
    for (auto& v : x8) v = static_cast<int8_t>(rng() % 255 - 127);
    std::vector<float> s(static_cast<size_t>(n));
    std::vector<int32_t> sums(static_cast<size_t>(n));
    Scalar().quantize_rows_i8(x.data(), n, k, k, q.data(), k, s.data(), sums.data());
    for (const KernelTable* t : AllTables()) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n);
      std::vector<uint8_t> p2(t->i2s_packed_bytes(k, nr)), p8(t->i8_packed_bytes(k, nr));
      t->pack_i2s(canon.data(), k, nr, p2.data());
      t->pack_i8(w8.data(), k, nr, p8.data());
      const size_t elems = static_cast<size_t>(n * ldo);
      ExpectSplitInvariant(nr, t->i2s_row_align, elems, 4, [&](int64_t b, int64_t e, uint8_t* o) {
        t->gemm_i2s_i8(p2.data(), k, nr, b, e, 0.25f, q.data(), k, s.data(), sums.data(), n,
                       reinterpret_cast<float*>(o), ldo);
      });
      ExpectSplitInvariant(nr, t->i8_row_align, elems, 4, [&](int64_t b, int64_t e, uint8_t* o) {
        t->gemm_i8_i8(p8.data(), k, nr, b, e, x8.data(), k, n, reinterpret_cast<int32_t*>(o), ldo);
      });
      ExpectSplitInvariant(nr, 1, elems, 4, [&](int64_t b, int64_t e, uint8_t* o) {
        t->gemm_f16_f32(w16.data(), k, k, b, e, x.data(), k, n, reinterpret_cast<float*>(o), ldo);
      });
    }
  }
}

}  // namespace
}  // namespace tern::kernels

namespace tern::kernels {
namespace {

// The encoder fills are one fixed float expression per element: every ISA must give the
// oracle's bits exactly, at every length (vector bodies and tails), reading nothing outside
// its operands (guarded buffers), with and without the optional bias / gamma.
TEST(EncoderFills, SimdMatchesOracleBitExact) {
  std::mt19937 rng(23);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto floats = [&](Guarded<float>& v, float scale) {
    for (size_t i = 0; i < v.n; ++i) v[i] = nd(rng) * scale;
  };
  auto int8s = [&](Guarded<int8_t>& v) {
    for (size_t i = 0; i < v.n; ++i) v[i] = static_cast<int8_t>(rng() % 255 - 127);
  };
  auto same = [](const float* a, const float* b, int64_t n) {
    return n == 0 || std::memcmp(a, b, static_cast<size_t>(n) * sizeof(float)) == 0;
  };
  const KernelTable& o = Scalar();
  for (const KernelTable* t : SimdTables()) {
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257}) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n);
      const size_t un = static_cast<size_t>(std::max<int64_t>(n, 1));
      Guarded<float> want(un), got(un);
      const float c = 0.0123f, s = 0.731f;
      {  // i32_affine_f32, separate output and in place
        Guarded<int32_t> acc(un);
        for (size_t i = 0; i < un; ++i) acc[i] = static_cast<int32_t>(rng() % 2000001) - 1000000;
        Guarded<float> bias(un);
        floats(bias, 2.0f);
        for (const float* b : {static_cast<const float*>(bias.data()), (const float*)nullptr}) {
          o.i32_affine_f32(acc.data(), n, c, b, want.data());
          t->i32_affine_f32(acc.data(), n, c, b, got.data());
          EXPECT_TRUE(same(want.data(), got.data(), n));
          Guarded<int32_t> inplace(un);
          std::memcpy(inplace.data(), acc.data(), un * sizeof(int32_t));
          float* io = reinterpret_cast<float*>(inplace.data());
          t->i32_affine_f32(inplace.data(), n, c, b, io);
          EXPECT_TRUE(same(want.data(), io, n));
        }
      }
      {  // i8_to_f32; i8_scale_mul_f32 and i8_add_scaled_f32 on one row and on three
        const size_t all = 3 * un;
        Guarded<int8_t> a(all), b(all);
        int8s(a);
        int8s(b);
        Guarded<float> g(un), rs(3), want3(all), got3(all);
        floats(g, 1.5f);
        floats(rs, 0.8f);
        o.i8_to_f32(a.data(), n, want.data());
        t->i8_to_f32(a.data(), n, got.data());
        EXPECT_TRUE(same(want.data(), got.data(), n));
        for (int64_t rows : {1, 3}) {
          o.i8_scale_mul_f32(a.data(), rows, n, rs.data(), g.data(), want3.data());
          t->i8_scale_mul_f32(a.data(), rows, n, rs.data(), g.data(), got3.data());
          EXPECT_TRUE(same(want3.data(), got3.data(), rows * n)) << rows << " rows";
          for (const float* gp : {static_cast<const float*>(g.data()), (const float*)nullptr}) {
            o.i8_add_scaled_f32(a.data(), s, gp, b.data(), c, rows, n, want3.data());
            t->i8_add_scaled_f32(a.data(), s, gp, b.data(), c, rows, n, got3.data());
            EXPECT_TRUE(same(want3.data(), got3.data(), rows * n)) << rows << " rows";
          }
        }
      }
    }
  }
}

// i8_fill_fused, where a table has it, is the oracle's fill followed by its absmax or its
// requant: the same float bits for the max, the same bytes for the requant (both roundings;
// an inv beyond 127/G as well, where the clamps act), for rows of lengths around the vector
// widths, including n % 16 == 0 lengths whose vectors run across rows.
TEST(EncoderFills, FusedFillMatchesFillThenReduce) {
  std::mt19937 rng(41);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const KernelTable& o = Scalar();
  for (const KernelTable* t : SimdTables()) {
    if (t->i8_fill_fused == nullptr) continue;
    for (int64_t n : {1, 7, 16, 17, 32, 33, 48, 64, 100, 2048}) {
      for (int64_t rows : {1, 2, 3, 5, 16}) {
        const size_t all = static_cast<size_t>(rows * n);
        Guarded<int8_t> a(all), b(all), want_q(all), got_q(all);
        for (size_t i = 0; i < all; ++i) {
          a[i] = static_cast<int8_t>(rng() % 255 - 127);
          b[i] = static_cast<int8_t>(rng() % 255 - 127);
        }
        Guarded<float> g(static_cast<size_t>(n)), rs(static_cast<size_t>(rows)), y(all);
        for (size_t i = 0; i < g.n; ++i) g[i] = nd(rng) * 1.5f;
        for (size_t i = 0; i < rs.n; ++i) rs[i] = 0.01f + std::abs(nd(rng));
        for (int kind = 0; kind < 3; ++kind) {
          SCOPED_TRACE(::testing::Message()
                       << IsaName(t->isa) << " n=" << n << " rows=" << rows << " kind=" << kind);
          I8Fill f;
          f.a = a.data();
          if (kind == 0) {  // RMSNorm
            f.s = rs.data();
            f.g = g.data();
            o.i8_scale_mul_f32(a.data(), rows, n, rs.data(), g.data(), y.data());
          } else {  // add_scaled, with and without gamma
            f.b = b.data();
            f.sa = 0.0173f;
            f.sb = 0.731f;
            f.g = kind == 1 ? g.data() : nullptr;
            o.i8_add_scaled_f32(a.data(), f.sa, f.g, b.data(), f.sb, rows, n, y.data());
          }
          const float want = o.absmax_f32(y.data(), rows * n);
          const float got = t->i8_fill_fused(f, rows, n, 0, Round::kHalfEven, nullptr);
          EXPECT_EQ(0, std::memcmp(&want, &got, sizeof want)) << want << " vs " << got;
          for (Round mode : {Round::kHalfEven, Round::kHalfAway}) {
            for (float inv : {127.0f / want, 3.0f * 127.0f / want}) {
              o.requant_f32_i8(y.data(), rows * n, inv, mode, want_q.data());
              t->i8_fill_fused(f, rows, n, inv, mode, got_q.data());
              EXPECT_EQ(0, std::memcmp(want_q.data(), got_q.data(), all)) << "inv " << inv;
            }
          }
        }
      }
    }
  }
}

// The integer depthwise sums: every ISA gives the oracle's int32, and those sums converted
// by the GEMM epilogue give the spec's float depthwise (8 float products summed pairwise,
// times c, plus bias) on the same values bit for bit (the claim the encoder's integer
// depthwise path rests on), including all-extreme operands.
TEST(EncoderFills, IntegerDepthwiseMatchesFloat) {
  std::mt19937 rng(31);
  const KernelTable& o = Scalar();
  std::vector<const KernelTable*> tables = SimdTables();
  tables.push_back(&o);
  for (const KernelTable* t : tables) {
    // Channel counts around the AVX-512 kernel's groups of 16 and 32, and one output row.
    for (auto [n, rows] : {std::pair<int64_t, int64_t>{1, 3},
                           {7, 3},
                           {15, 3},
                           {16, 3},
                           {17, 3},
                           {31, 3},
                           {32, 3},
                           {33, 3},
                           {64, 3},
                           {100, 3},
                           {257, 3},
                           {32, 64},
                           {17, 65},
                           {48, 130},
                           {33, 1}}) {
      for (int fill : {0, 1, 2}) {  // random; all +127; x +127 with w -127
        SCOPED_TRACE(::testing::Message()
                     << IsaName(t->isa) << " n=" << n << " rows=" << rows << " fill=" << fill);
        const int64_t ldx = n + 3, ldw = n + 5, ldo = n + 2;
        const size_t nx = static_cast<size_t>((rows + 6) * ldx + n), nw = 7 * ldw + n;
        Guarded<int8_t> x(nx), w(nw);
        for (size_t i = 0; i < nx; ++i)
          x[i] = fill == 0 ? static_cast<int8_t>(rng() % 255 - 127) : int8_t{127};
        for (size_t i = 0; i < nw; ++i)
          w[i] = fill == 0 ? static_cast<int8_t>(rng() % 255 - 127)
                           : static_cast<int8_t>(fill == 1 ? 127 : -127);
        const size_t no = static_cast<size_t>((rows - 1) * ldo + n);
        Guarded<int32_t> want(no), got(no);
        for (size_t i = 0; i < no; ++i) want[i] = got[i] = 0;
        o.dw8_i8_i32(x.data(), ldx, w.data(), ldw, rows, n, want.data(), ldo);
        t->dw8_i8_i32(x.data(), ldx, w.data(), ldw, rows, n, got.data(), ldo);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), no * sizeof(int32_t)));
        if (fill != 0) {
          EXPECT_EQ(got[0], fill == 1 ? 8 * 127 * 127 : -8 * 127 * 127);
        }
        std::vector<float> xf(nx), wf(nw), bias(static_cast<size_t>(n)), viaf(no), viai(no);
        for (size_t i = 0; i < nx; ++i) xf[i] = x[i];
        for (size_t i = 0; i < nw; ++i) wf[i] = w[i];
        for (auto& b : bias) b = static_cast<float>(rng() % 1000) / 77.0f;
        const float c = 0.000123f;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t i = 0; i < n; ++i) {
            float p[8];
            for (int64_t k = 0; k < 8; ++k) p[k] = wf[k * ldw + i] * xf[(r + k) * ldx + i];
            const float sum = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
            viaf[r * ldo + i] = sum * c + bias[i];
          }
        for (int64_t r = 0; r < rows; ++r)
          o.i32_affine_f32(got.data() + r * ldo, n, c, bias.data(), viai.data() + r * ldo);
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_EQ(0, std::memcmp(viaf.data() + r * ldo, viai.data() + r * ldo,
                                   static_cast<size_t>(n) * sizeof(float)));
      }
    }
  }
}

// dw8_i8_ep, where a table has it: the oracle's sums folded into per-channel bounds (into
// existing ones) and requantized by the scalar entries, in every variant (bias or none, ReLU
// or not, both roundings), into a strided q whose other bytes stay untouched.
TEST(EncoderFills, FusedDepthwiseEpilogueMatchesEntries) {
  std::mt19937 rng(37);
  const KernelTable& o = Scalar();
  for (const KernelTable* t : SimdTables()) {
    if (t->dw8_i8_ep == nullptr) continue;
    {  // no output rows: nothing read (one byte of input and weights) or written
      Guarded<int8_t> x(1), w(1), q(1);
      Guarded<int32_t> out(1), mn(1), mx(1);
      x[0] = w[0] = q[0] = 5;
      out[0] = mn[0] = mx[0] = 7;
      t->dw8_i8_i32(x.data(), 16, w.data(), 16, 0, 16, out.data(), 16);
      I8Epilogue ep;
      ep.mn = mn.data();
      ep.mx = mx.data();
      t->dw8_i8_ep(x.data(), 16, w.data(), 16, 0, 16, ep);
      I8Epilogue rq;
      rq.q = q.data();
      rq.ldq = 16;
      t->dw8_i8_ep(x.data(), 16, w.data(), 16, 0, 16, rq);
      EXPECT_EQ(out[0] + mn[0] + mx[0], 21);
      EXPECT_EQ(q[0], 5);
    }
    for (auto [n, rows] : {std::pair<int64_t, int64_t>{1, 3},
                           {15, 1},
                           {16, 4},
                           {17, 9},
                           {32, 128},
                           {33, 5},
                           {48, 2},
                           {100, 7},
                           {256, 16}}) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n << " rows=" << rows);
      const int64_t ldx = n + 3, ldw = n + 5;
      const size_t nx = static_cast<size_t>((rows + 6) * ldx + n), nw = 7 * ldw + n;
      Guarded<int8_t> x(nx), w(nw);
      for (size_t i = 0; i < nx; ++i) x[i] = static_cast<int8_t>(rng() % 255 - 127);
      for (size_t i = 0; i < nw; ++i) w[i] = static_cast<int8_t>(rng() % 255 - 127);
      std::vector<int32_t> sums(static_cast<size_t>(rows * n));
      o.dw8_i8_i32(x.data(), ldx, w.data(), ldw, rows, n, sums.data(), n);

      std::vector<int32_t> mn0(static_cast<size_t>(n)), mx0(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {  // bounds already holding something
        mn0[i] = static_cast<int32_t>(rng() % 4000) - 2000;
        mx0[i] = mn0[i] + 100;
      }
      Guarded<int32_t> mn1(static_cast<size_t>(n)), mx1(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        mn1[i] = mn0[i];
        mx1[i] = mx0[i];
      }
      o.i32_minmax(sums.data(), rows, n, n, mn0.data(), mx0.data());
      I8Epilogue ep;
      ep.mn = mn1.data();
      ep.mx = mx1.data();
      t->dw8_i8_ep(x.data(), ldx, w.data(), ldw, rows, n, ep);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(mn1[i], mn0[i]) << "channel " << i;
        ASSERT_EQ(mx1[i], mx0[i]) << "channel " << i;
      }

      std::vector<float> bias(static_cast<size_t>(n));
      for (auto& b : bias) b = static_cast<float>(rng() % 1000) / 250.0f - 2.0f;
      // Sums reach +-8 * 127^2: y spans about +-6, so q clamps for the largest.
      const float c = 1.0f / 20000.0f, inv = 127.0f / 3.0f;
      const int64_t ldq = n + 7;
      Guarded<int8_t> q1(static_cast<size_t>(rows * ldq));
      ForEachRequantEpilogue(q1.data(), ldq, c, inv, bias.data(), [&](const I8Epilogue& rq) {
        SCOPED_TRACE(::testing::Message() << "bias=" << (rq.bias != nullptr) << " relu=" << rq.relu
                                          << " even=" << (rq.mode == Round::kHalfEven));
        std::vector<int8_t> q0(q1.n, 99);
        for (size_t i = 0; i < q1.n; ++i) q1[i] = 99;
        for (int64_t j = 0; j < rows; ++j)
          o.i32_requant_i8(sums.data() + j * n, 1, n, rq.c, rq.bias, rq.inv, rq.mode, rq.relu,
                           q0.data() + j * ldq);
        t->dw8_i8_ep(x.data(), ldx, w.data(), ldw, rows, n, rq);
        ASSERT_EQ(0, std::memcmp(q0.data(), q1.data(), q0.size()));
      });
    }
  }
}

// The fused GEMM epilogue and the per-column bounds: every ISA gives the oracle's bytes at
// every row length (vector bodies and tails), rows in sequence, with and without bias and
// ReLU, in both rounding modes; nothing outside the operands is read or written.
TEST(GemmEpilogue, SimdMatchesOracleBitExact) {
  std::mt19937 rng(29);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const KernelTable& o = Scalar();
  const int64_t rows = 3;
  for (const KernelTable* t : SimdTables()) {
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257}) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n);
      const size_t un = static_cast<size_t>(std::max<int64_t>(n, 1));
      const size_t all = static_cast<size_t>(std::max<int64_t>(rows * n, 1));
      Guarded<int32_t> acc(all);
      for (size_t i = 0; i < all; ++i) acc[i] = static_cast<int32_t>(rng() % 2000001) - 1000000;
      Guarded<float> bias(un);
      for (size_t i = 0; i < un; ++i) bias[i] = nd(rng) * 3000.0f;
      // |y| reaches ~15000: inv = 127 / 9000 saturates some values and leaves most inside.
      const float c = 0.0123f, inv = 127.0f / 9000.0f;
      Guarded<int8_t> want(all), got(all);
      for (const float* b : {static_cast<const float*>(bias.data()), (const float*)nullptr})
        for (Round mode : {Round::kHalfEven, Round::kHalfAway})
          for (bool relu : {false, true}) {
            o.i32_requant_i8(acc.data(), rows, n, c, b, inv, mode, relu, want.data());
            t->i32_requant_i8(acc.data(), rows, n, c, b, inv, mode, relu, got.data());
            EXPECT_EQ(0, std::memcmp(want.data(), got.data(), static_cast<size_t>(rows * n)))
                << "bias " << (b != nullptr) << " relu " << relu;
          }
      const int64_t ld = n + 3;
      Guarded<int32_t> x(static_cast<size_t>((rows - 1) * ld + n + 1));
      for (size_t i = 0; i < x.n; ++i) x[i] = static_cast<int32_t>(rng());
      Guarded<int32_t> mn0(un), mx0(un), mn1(un), mx1(un);
      for (size_t i = 0; i < un; ++i) {
        mn0[i] = mn1[i] = static_cast<int32_t>(rng() % 1000);  // folded into, not overwritten
        mx0[i] = mx1[i] = -mn0[i];
      }
      o.i32_minmax(x.data(), rows, n, ld, mn0.data(), mx0.data());
      t->i32_minmax(x.data(), rows, n, ld, mn1.data(), mx1.data());
      const size_t nb = static_cast<size_t>(n) * sizeof(int32_t);
      EXPECT_EQ(0, std::memcmp(mn0.data(), mn1.data(), nb));
      EXPECT_EQ(0, std::memcmp(mx0.data(), mx1.data(), nb));
    }
  }
}

// The oracle by hand: ReLU applies to the rounded value; bounds fold into what was there.
TEST(GemmEpilogue, OracleByHand) {
  const KernelTable& o = Scalar();
  const int32_t acc[4] = {-3, -1, 1, 1000};
  const float bias[4] = {0.0f, 0.25f, 0.5f, 0.0f};
  int8_t q[4];
  // y = acc * 0.5 + bias = {-1.5, -0.25, 1, 500}; q = round(clamp(y * 1, -127, 127)).
  o.i32_requant_i8(acc, 1, 4, 0.5f, bias, 1.0f, Round::kHalfAway, false, q);
  EXPECT_EQ(q[0], -2);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[2], 1);
  EXPECT_EQ(q[3], 127);
  o.i32_requant_i8(acc, 1, 4, 0.5f, bias, 1.0f, Round::kHalfEven, true, q);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[3], 127);
  const int32_t x[6] = {5, -7, 2, 9, -1, 4};  // two rows of three, ld 3
  int32_t mn[3] = {0, 0, 100}, mx[3] = {0, 0, -100};
  o.i32_minmax(x, 2, 3, 3, mn, mx);
  EXPECT_EQ(mn[0], 0);
  EXPECT_EQ(mn[1], -7);
  EXPECT_EQ(mn[2], 2);
  EXPECT_EQ(mx[0], 9);
  EXPECT_EQ(mx[1], 0);
  EXPECT_EQ(mx[2], 4);
}

// The RMSNorm row factors: every ISA gives the oracle's bits for row counts around the
// vector widths and row lengths around the load widths, including rows of -128 (the widest
// square) and of zeros with eps 0 (an infinite factor, as the oracle's division gives).
TEST(EncoderFills, RmsFactorsMatchOracleBitExact) {
  std::mt19937 rng(37);
  const KernelTable& o = Scalar();
  for (const KernelTable* t : SimdTables()) {
    for (int64_t n : {1, 7, 15, 16, 17, 31, 32, 33, 64, 100, 2048}) {
      for (int64_t rows : {1, 7, 8, 9, 16, 17, 40}) {
        SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n << " rows=" << rows);
        Guarded<int8_t> q(static_cast<size_t>(rows * n));
        for (size_t i = 0; i < q.n; ++i) q[i] = static_cast<int8_t>(rng() % 256 - 128);
        for (int64_t i = 0; i < n; ++i) q[static_cast<size_t>(i)] = -128;  // row 0
        if (rows > 2)
          for (int64_t i = 0; i < n; ++i) q[static_cast<size_t>(2 * n + i)] = 0;  // row 2
        for (float eps : {1e-5f, 0.37f, 0.0f}) {
          Guarded<float> want(static_cast<size_t>(rows)), got(static_cast<size_t>(rows));
          o.i8_rms_factors(q.data(), rows, n, eps, want.data());
          t->i8_rms_factors(q.data(), rows, n, eps, got.data());
          EXPECT_EQ(0, std::memcmp(want.data(), got.data(), static_cast<size_t>(rows) * 4))
              << "eps " << eps;
        }
      }
    }
  }
  const int8_t q[4] = {3, -4, 0, 0};  // sum of squares 25 over n = 4, plus eps 0.0
  float s = 0;
  o.i8_rms_factors(q, 1, 4, 0.0f, &s);
  EXPECT_EQ(s, 1.0f / 2.5f);
}

// The oracle itself, on values whose float results are exact, against the spec expressions.
TEST(EncoderFills, OracleComputesTheSpecExpressions) {
  const KernelTable& o = Scalar();
  const int8_t a[3] = {-127, 3, 100}, b[3] = {5, -6, 127};
  const float g[3] = {0.5f, 2.0f, -1.0f};
  float out[3];
  o.i8_add_scaled_f32(a, 0.25f, g, b, 2.0f, 1, 3, out);  // (a*0.25)*g + b*2
  EXPECT_EQ(out[0], -127 * 0.25f * 0.5f + 10.0f);
  EXPECT_EQ(out[1], 3 * 0.25f * 2.0f - 12.0f);
  EXPECT_EQ(out[2], -25.0f + 254.0f);
  const float rs[3] = {0.5f, 4.0f, 1.0f};
  o.i8_scale_mul_f32(a, 1, 3, rs, g, out);  // one row: factor rs[0] throughout
  EXPECT_EQ(out[2], -50.0f);
  o.i8_scale_mul_f32(a, 3, 1, rs, g, out);  // three rows of one: factor rs[j], gamma g[0]
  EXPECT_EQ(out[0], -127 * 0.5f * 0.5f);
  EXPECT_EQ(out[1], 3 * 4.0f * 0.5f);
  EXPECT_EQ(out[2], 100 * 1.0f * 0.5f);
  const int32_t acc[2] = {-8, 1000};
  const float bias[2] = {1.0f, -2.0f};
  o.i32_affine_f32(acc, 2, 0.25f, bias, out);
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[1], 248.0f);
  int8_t x[9], w[8];
  for (int t = 0; t < 9; ++t) x[t] = static_cast<int8_t>(t + 1);
  for (int t = 0; t < 8; ++t) w[t] = static_cast<int8_t>(t % 2 == 0 ? 1 : -2);
  int32_t dw[2];
  o.dw8_i8_i32(x, 1, w, 1, 2, 1, dw, 1);  // 1 - 4 + 3 - 8 + 5 - 12 + 7 - 16, then from 2
  EXPECT_EQ(dw[0], -24);
  EXPECT_EQ(dw[1], -28);
}

}  // namespace
}  // namespace tern::kernels
