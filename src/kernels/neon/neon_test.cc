// NEON-specific kernel tests (aarch64 builds): both NEON tables (baseline ARMv8.0, and
// dotprod when the CPU has it) against the scalar oracle, on the cases where the two NEON
// code paths can go wrong differently: int16 headroom of the vmull/vpadal fallback, the
// 4-row activation tiles and their remainders, the code-3 rewrite of the packing, and
// dispatch choosing the dotprod table only on a CPU with asimddp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "base/cpu_features.h"
#include "base/test_util.h"
#include "kernels/kernels.h"
#include "kernels/tables.h"
#include "kernels/test_util.h"

namespace tern::kernels {
namespace {

using ktest::Bits;
using ktest::Guarded;
using ktest::GuardedBuffer;
using ktest::Scalar;

struct Named {
  const KernelTable* table;
  const char* name;
};

// The baseline table always (it runs on every aarch64 CPU), the dotprod one only where it
// can run: under qemu -cpu cortex-a53 calling it would be SIGILL, not a test failure.
std::vector<Named> NeonTables() {
  std::vector<Named> out = {{&kNeonTable, "neon"}};
  if (GetCpuFeatures().dotprod) out.push_back({&kNeonDotTable, "neon+dotprod"});
  return out;
}

TEST(NeonDispatch, DotprodTableOnlyWithAsimddp) {
  const CpuFeatures& f = GetCpuFeatures();
  ASSERT_TRUE(f.neon) << "every aarch64 Linux CPU has ASIMD";
  Result<const KernelTable*> t = TableFor(Isa::kNeon);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, f.dotprod ? &kNeonDotTable : &kNeonTable) << f.ToString();
  EXPECT_EQ(BestIsa(), Isa::kNeon);
  // Both tables are "neon" to the rest of the program and share packed layouts, so weights
  // packed once are valid whichever GEMM runs.
  EXPECT_EQ(kNeonTable.isa, Isa::kNeon);
  EXPECT_EQ(kNeonDotTable.isa, Isa::kNeon);
  EXPECT_EQ(kNeonDotTable.pack_i2s, kNeonTable.pack_i2s);
  EXPECT_EQ(kNeonDotTable.i2s_packed_bytes, kNeonTable.i2s_packed_bytes);
  EXPECT_EQ(kNeonDotTable.pack_i8, kNeonTable.pack_i8);
  EXPECT_EQ(kNeonDotTable.i8_packed_bytes, kNeonTable.i8_packed_bytes);
  EXPECT_EQ(kNeonDotTable.i2s_row_align, kNeonTable.i2s_row_align);
  EXPECT_EQ(kNeonDotTable.i8_row_align, kNeonTable.i8_row_align);
  // Only the two GEMMs differ, so kernels_test (which checks the table dispatch picks) covers
  // every other entry of both tables, and this file checks both GEMMs of both.
  EXPECT_NE(kNeonDotTable.gemm_i2s_i8, kNeonTable.gemm_i2s_i8);
  EXPECT_NE(kNeonDotTable.gemm_i8_i8, kNeonTable.gemm_i8_i8);
  EXPECT_EQ(kNeonDotTable.quantize_rows_i8, kNeonTable.quantize_rows_i8);
  EXPECT_EQ(kNeonDotTable.gemm_f16_f32, kNeonTable.gemm_f16_f32);
  EXPECT_EQ(kNeonDotTable.weighted_rows_f16, kNeonTable.weighted_rows_f16);
  EXPECT_EQ(kNeonDotTable.f32_to_f16, kNeonTable.f32_to_f16);
  EXPECT_EQ(kNeonDotTable.f16_to_f32, kNeonTable.f16_to_f32);
  EXPECT_EQ(kNeonDotTable.dequant_row_q6k, kNeonTable.dequant_row_q6k);
  EXPECT_EQ(kNeonDotTable.absmax_f32, kNeonTable.absmax_f32);
  EXPECT_EQ(kNeonDotTable.requant_f32_i8, kNeonTable.requant_f32_i8);
}

// scripts/test-isas states which CPU model qemu emulates, so a run meant to cover the SDOT
// kernels cannot silently fall back to the baseline ones (or the reverse).
TEST(NeonDispatch, EmulatedCpuAsExpected) {
  const char* want = std::getenv("TERN_NEON_TEST_EXPECT_DOTPROD");
  if (want == nullptr || want[0] == '\0') GTEST_SKIP() << "TERN_NEON_TEST_EXPECT_DOTPROD unset";
  const bool dot = want[0] == '1';
  EXPECT_EQ(GetCpuFeatures().dotprod, dot) << GetCpuFeatures().ToString();
  Result<const KernelTable*> t = TableFor(Isa::kNeon);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, dot ? &kNeonDotTable : &kNeonTable);
}

// ---- I2_S x int8 ---------------------------------------------------------------------------

// Runs t's I2_S GEMM on rows [r0, r1) of canonical codes; out has stride ldo = n_rows + 2,
// pre-filled with a sentinel so writes outside [r0, r1) are caught.
std::vector<float> RunI2s(const KernelTable& t, const std::vector<uint8_t>& canonical, int64_t k,
                          int64_t n_rows, int64_t r0, int64_t r1, float w_scale, Guarded<int8_t>& q,
                          int64_t ldq, Guarded<float>& scale, Guarded<int32_t>& sums, int64_t n) {
  std::unique_ptr<GuardedBuffer> packed(ktest::PackI2s(t, canonical.data(), k, n_rows));
  const int64_t ldo = n_rows + 2;
  std::vector<float> out(static_cast<size_t>(n * ldo), -12345.0f);
  t.gemm_i2s_i8(packed->as<uint8_t>(), k, n_rows, r0, r1, w_scale, q.data(), ldq, scale.data(),
                sums.data(), n, out.data(), ldo);
  return out;
}

TEST(NeonI2s, MatchesScalarOverTilesAndCodeThree) {
  std::mt19937 rng(5);
  for (int64_t k : {128, 384, 1536}) {
    for (int64_t n : {1, 2, 3, 4, 5, 8, 9}) {
      const int64_t n_rows = 7, ldq = k + 16;
      std::vector<uint8_t> codes(static_cast<size_t>(n_rows * k));
      for (auto& c : codes) c = static_cast<uint8_t>(rng() % 4);  // 3 included: read as 0
      const std::vector<uint8_t> canonical = ktest::EncodeI2s(codes, k, n_rows);
      std::vector<float> x(static_cast<size_t>(n * ldq));
      std::normal_distribution<float> nd(0.0f, 2.0f);
      for (auto& v : x) v = nd(rng);
      Guarded<int8_t> q(static_cast<size_t>(n * ldq));
      Guarded<float> scale(static_cast<size_t>(n));
      Guarded<int32_t> sums(static_cast<size_t>(n));
      Scalar().quantize_rows_i8(x.data(), n, k, ldq, q.data(), ldq, scale.data(), sums.data());
      const std::vector<float> want =
          RunI2s(Scalar(), canonical, k, n_rows, 1, 6, 0.75f, q, ldq, scale, sums, n);
      for (const Named& t : NeonTables()) {
        SCOPED_TRACE(::testing::Message() << t.name << " k=" << k << " n=" << n);
        const std::vector<float> got =
            RunI2s(*t.table, canonical, k, n_rows, 1, 6, 0.75f, q, ldq, scale, sums, n);
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(Bits(got[i]), Bits(want[i])) << i;
      }
    }
  }
}

// The vmull/vpadal fallback keeps at most 8 products per int16 lane; a full-scale row
// (every weight +1 or every weight -1, every activation at an int8 extreme) is where a
// longer int16 run would wrap. Checked against the closed form, not only against scalar.
TEST(NeonI2s, FullScaleRowsAreExact) {
  const int64_t k = 8960, n_rows = 2, n = 2;  // the Qwen2-1.5B FFN width
  std::vector<uint8_t> codes(static_cast<size_t>(n_rows * k));
  for (int64_t i = 0; i < k; ++i) {
    codes[static_cast<size_t>(i)] = 2;      // row 0: all +1
    codes[static_cast<size_t>(k + i)] = 0;  // row 1: all -1
  }
  const std::vector<uint8_t> canonical = ktest::EncodeI2s(codes, k, n_rows);
  Guarded<int8_t> q(static_cast<size_t>(n * k));
  Guarded<float> scale(2);
  Guarded<int32_t> sums(2);
  for (int64_t i = 0; i < k; ++i) {
    q[static_cast<size_t>(i)] = 127;
    q[static_cast<size_t>(k + i)] = -128;
  }
  scale[0] = 1.0f;
  scale[1] = 0.5f;
  sums[0] = static_cast<int32_t>(127 * k);
  sums[1] = static_cast<int32_t>(-128 * k);
  const float w_scale = 0.25f;
  // out = ((float)(sum_k w*q) / s) * w_scale: +-127k or +-128k, exact in float here.
  const float want[2][2] = {{(127.0f * k / 1.0f) * w_scale, (-128.0f * k / 0.5f) * w_scale},
                            {(-127.0f * k / 1.0f) * w_scale, (128.0f * k / 0.5f) * w_scale}};
  for (const Named& t : NeonTables()) {
    SCOPED_TRACE(t.name);
    const std::vector<float> got =
        RunI2s(*t.table, canonical, k, n_rows, 0, n_rows, w_scale, q, k, scale, sums, n);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = 0; r < n_rows; ++r) {
        EXPECT_EQ(got[static_cast<size_t>(j * (n_rows + 2) + r)], want[r][j]) << r << " " << j;
      }
    }
  }
}

// ---- int8 x int8 ---------------------------------------------------------------------------

std::vector<int32_t> RunI8(const KernelTable& t, const std::vector<int8_t>& w, int64_t k,
                           int64_t n_rows, int64_t r0, int64_t r1, Guarded<int8_t>& x, int64_t ldx,
                           int64_t n) {
  std::unique_ptr<GuardedBuffer> packed(ktest::PackI8(t, w.data(), k, n_rows));
  const int64_t ldo = n_rows + 1;
  std::vector<int32_t> acc(static_cast<size_t>(n * ldo), -777);
  t.gemm_i8_i8(packed->as<uint8_t>(), k, n_rows, r0, r1, x.data(), ldx, n, acc.data(), ldo);
  return acc;
}

TEST(NeonI8, MatchesScalarOverTailsAndTiles) {
  std::mt19937 rng(9);
  for (int64_t k : {1, 15, 16, 17, 33, 100, 1000}) {
    for (int64_t n : {1, 3, 4, 5, 9}) {
      const int64_t n_rows = 6, ldx = k + 3;
      std::vector<int8_t> w(static_cast<size_t>(n_rows * k));
      for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
      Guarded<int8_t> x(static_cast<size_t>(n * ldx));
      for (size_t i = 0; i < x.n; ++i)
        x[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      const std::vector<int32_t> want = RunI8(Scalar(), w, k, n_rows, 2, 6, x, ldx, n);
      for (const Named& t : NeonTables()) {
        SCOPED_TRACE(::testing::Message() << t.name << " k=" << k << " n=" << n);
        EXPECT_EQ(RunI8(*t.table, w, k, n_rows, 2, 6, x, ldx, n), want);
      }
    }
  }
}

// Extremes: every product 128*127 (the contract's worst case) or even 128*128 (outside the
// contract, x = -128): the fallback widens every single product, so both stay exact.
TEST(NeonI8, ExtremeProductsAreExact) {
  const int64_t k = 4099, n_rows = 1, n = 3;
  const std::vector<int8_t> w(static_cast<size_t>(k), -128);
  Guarded<int8_t> x(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < k; ++i) {
    x[static_cast<size_t>(i)] = -127;
    x[static_cast<size_t>(k + i)] = 127;
    x[static_cast<size_t>(2 * k + i)] = -128;
  }
  for (const Named& t : NeonTables()) {
    SCOPED_TRACE(t.name);
    const std::vector<int32_t> acc = RunI8(*t.table, w, k, n_rows, 0, 1, x, k, n);
    EXPECT_EQ(acc[0], 16256 * k);
    EXPECT_EQ(acc[2], -16256 * k);
    EXPECT_EQ(acc[4], 16384 * k);
  }
}

// ---- Splitting rows must not change a byte (ops hand row ranges to threads) ----------------

TEST(NeonGemm, RowSplitsGiveIdenticalBytes) {
  std::mt19937 rng(3);
  const int64_t k = 256, n_rows = 13, n = 6;
  std::vector<uint8_t> codes(static_cast<size_t>(n_rows * k));
  for (auto& c : codes) c = static_cast<uint8_t>(rng() % 3);
  const std::vector<uint8_t> canonical = ktest::EncodeI2s(codes, k, n_rows);
  std::vector<uint16_t> wf(static_cast<size_t>(n_rows * k));
  std::vector<float> x(static_cast<size_t>(n * k));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : x) v = nd(rng);
  std::vector<float> wff(wf.size());
  for (auto& v : wff) v = nd(rng);
  Scalar().f32_to_f16(wff.data(), static_cast<int64_t>(wff.size()), wf.data());
  Guarded<int8_t> q(static_cast<size_t>(n * k));
  Guarded<float> scale(n);
  Guarded<int32_t> sums(n);
  Scalar().quantize_rows_i8(x.data(), n, k, k, q.data(), k, scale.data(), sums.data());
  for (const Named& t : NeonTables()) {
    SCOPED_TRACE(t.name);
    std::unique_ptr<GuardedBuffer> packed(ktest::PackI2s(*t.table, canonical.data(), k, n_rows));
    std::vector<float> whole(n * n_rows), split(n * n_rows);
    std::vector<float> fwhole(n * n_rows), fsplit(n * n_rows);
    t.table->gemm_i2s_i8(packed->as<uint8_t>(), k, n_rows, 0, n_rows, 1.5f, q.data(), k,
                         scale.data(), sums.data(), n, whole.data(), n_rows);
    t.table->gemm_f16_f32(wf.data(), k, k, 0, n_rows, x.data(), k, n, fwhole.data(), n_rows);
    const int64_t cuts[] = {0, 1, 5, 12, n_rows};
    for (int c = 0; c + 1 < 5; ++c) {
      const int64_t r0 = cuts[c], r1 = cuts[c + 1];
      t.table->gemm_i2s_i8(packed->as<uint8_t>(), k, n_rows, r0, r1, 1.5f, q.data(), k,
                           scale.data(), sums.data(), n, split.data(), n_rows);
      t.table->gemm_f16_f32(wf.data(), k, k, r0, r1, x.data(), k, n, fsplit.data(), n_rows);
    }
    EXPECT_EQ(0, std::memcmp(whole.data(), split.data(), whole.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(fwhole.data(), fsplit.data(), fwhole.size() * sizeof(float)));
  }
}

// ---- F16 x F32: within the forward error bound of a k-term float dot product ---------------

TEST(NeonF16, GemmWithinDerivedBound) {
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t k : {1, 7, 8, 9, 100, 1536}) {
    const int64_t n_rows = 5, n = 6, ldw = k + 1, ldx = k + 2;
    Guarded<uint16_t> w(static_cast<size_t>(n_rows * ldw));
    std::vector<float> wf(w.n);
    for (auto& v : wf) v = nd(rng);
    Scalar().f32_to_f16(wf.data(), static_cast<int64_t>(w.n), w.data());
    Scalar().f16_to_f32(w.data(), static_cast<int64_t>(w.n), wf.data());  // exact values
    Guarded<float> x(static_cast<size_t>(n * ldx));
    for (size_t i = 0; i < x.n; ++i) x[i] = nd(rng);
    // gamma_k = k u / (1 - k u) bounds |computed - exact| / sum|w x| for any summation order,
    // with or without fused multiply-add (u = 2^-24).
    const double u = std::ldexp(1.0, -24), gamma = k * u / (1 - k * u);
    for (const Named& t : NeonTables()) {
      SCOPED_TRACE(::testing::Message() << t.name << " k=" << k);
      std::vector<float> out(static_cast<size_t>(n * n_rows));
      t.table->gemm_f16_f32(w.data(), k, ldw, 0, n_rows, x.data(), ldx, n, out.data(), n_rows);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < n_rows; ++r) {
          double exact = 0, mag = 0;
          for (int64_t i = 0; i < k; ++i) {
            const double p = static_cast<double>(wf[r * ldw + i]) * x[j * ldx + i];
            exact += p;
            mag += std::fabs(p);
          }
          EXPECT_LE(std::fabs(out[j * n_rows + r] - exact), gamma * mag) << r << " " << j;
        }
      }
    }
  }
}

// ---- Elementwise kernels: bit-exact, every tail length ------------------------------------

TEST(NeonElementwise, MatchScalarBitExact) {
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  for (int64_t n = 0; n <= 41; ++n) {
    Guarded<float> x(n), xnan(n);
    Guarded<uint16_t> h(n);
    for (int64_t i = 0; i < n; ++i) x[i] = nd(rng);
    // Ties for both rounding modes: inv = 1 makes x * inv = m + 0.5 exactly.
    for (int64_t i = 0; i < n; i += 3) x[i] = std::floor(x[i] * 40.0f) + 0.5f;
    for (int64_t i = 0; i < n; ++i) xnan[i] = i % 5 == 1 ? NAN : x[i];  // absmax skips NaN
    Scalar().f32_to_f16(x.data(), n, h.data());
    for (const Named& t : NeonTables()) {
      SCOPED_TRACE(::testing::Message() << t.name << " n=" << n);
      EXPECT_EQ(Bits(t.table->absmax_f32(x.data(), n)), Bits(Scalar().absmax_f32(x.data(), n)));
      EXPECT_EQ(Bits(t.table->absmax_f32(xnan.data(), n)),
                Bits(Scalar().absmax_f32(xnan.data(), n)));
      for (Round mode : {Round::kHalfEven, Round::kHalfAway}) {
        for (float inv : {1.0f, 37.3f}) {
          std::vector<int8_t> want(n + 1, 99), got(n + 1, 99);
          Scalar().requant_f32_i8(x.data(), n, inv, mode, want.data());
          t.table->requant_f32_i8(x.data(), n, inv, mode, got.data());
          EXPECT_EQ(got, want) << inv;
        }
      }
      // Two heads over one row of n values (kernels_test covers several rows); the slot past
      // each head's n outputs must stay untouched.
      std::vector<float> want(2 * (n + 1), 1.0f), got(2 * (n + 1), 1.0f);
      const float p[2] = {-0.37f, 0.8f};
      Scalar().weighted_rows_f16(p, 1, 2, h.data(), n, 1, n, want.data(), n + 1);
      t.table->weighted_rows_f16(p, 1, 2, h.data(), n, 1, n, got.data(), n + 1);
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(Bits(got[i]), Bits(want[i])) << i;
    }
  }
}

TEST(NeonElementwise, RequantTieDirection) {
  // Independent of scalar: 2.5 -> 2 / 3, -2.5 -> -2 / -3, 127.5 clamps to 127 first.
  const float x[6] = {2.5f, -2.5f, 3.5f, -0.5f, 127.5f, -200.0f};
  const int8_t even[6] = {2, -2, 4, 0, 127, -127}, away[6] = {3, -3, 4, -1, 127, -127};
  for (const Named& t : NeonTables()) {
    SCOPED_TRACE(t.name);
    int8_t q[6];
    t.table->requant_f32_i8(x, 6, 1.0f, Round::kHalfEven, q);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(q[i], even[i]) << i;
    t.table->requant_f32_i8(x, 6, 1.0f, Round::kHalfAway, q);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(q[i], away[i]) << i;
  }
}

}  // namespace
}  // namespace tern::kernels
