// Integer kernels: activation quantization, I2_S x int8 and int8 x int8 GEMMs, requant and
// absmax. Every ISA must match the scalar oracle bit for bit; the oracle itself is checked
// against references written here from the spec text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/test_util.h"

namespace tern::kernels {
namespace {

using ktest::Bits;
using ktest::ForEachRequantEpilogue;
using ktest::Guarded;
using ktest::GuardedBuffer;
using ktest::Scalar;
using ktest::SimdTables;

// Quantized activation rows (n rows of k, stride ldq) in guarded memory.
struct QRows {
  QRows(int64_t n, int64_t /*k*/, int64_t ld) : q(n * ld), scale(n), sums(n), ldq(ld) {}
  Guarded<int8_t> q;
  Guarded<float> scale;
  Guarded<int32_t> sums;
  int64_t ldq;
};

std::vector<float> RandomActivations(std::mt19937& rng, int64_t n, int64_t ld, float spread) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * ld));
  for (auto& v : x) v = nd(rng) * spread;
  // Some rows carry an outlier (typical of LLM activations) so most q are small.
  for (int64_t j = 0; j < n; j += 3) x[static_cast<size_t>(j * ld)] = 40.0f * spread;
  return x;
}

// ---- quantize_rows_i8 ---------------------------------------------------------------------

TEST(QuantizeRowsI8, OracleFollowsSpecFormula) {
  // Hand cases: amax = 2 -> s = 63.5; 1.0 * 63.5 = 63.5 -> 64 (half to even); 0.5*63.5 =
  // 31.75 -> 32; -2 -> -127; an all-zero row uses the 1e-5 floor and gives q = 0.
  const float x[8] = {1.0f, 0.5f, -2.0f, 2.0f / 127.0f * 2.5f, 0, 0, 0, 0};
  int8_t q[8];
  float s[2];
  int32_t sums[2];
  Scalar().quantize_rows_i8(x, 2, 4, 4, q, 4, s, sums);
  EXPECT_EQ(s[0], 63.5f);
  EXPECT_EQ(q[0], 64);
  EXPECT_EQ(q[1], 32);
  EXPECT_EQ(q[2], -127);
  EXPECT_EQ(q[3], static_cast<int8_t>(std::nearbyint((2.0f / 127.0f * 2.5f) * 63.5f)));
  EXPECT_EQ(sums[0], q[0] + q[1] + q[2] + q[3]);
  EXPECT_EQ(s[1], static_cast<float>(127.0 / 1e-5));
  for (int i = 4; i < 8; ++i) EXPECT_EQ(q[i], 0);
  EXPECT_EQ(sums[1], 0);
}

TEST(QuantizeRowsI8, SimdMatchesOracle) {
  std::mt19937 rng(1);
  for (int64_t k : {1, 3, 16, 17, 63, 128, 1024, 1155, 1536, 8960}) {
    for (int64_t rows : {1, 2, 5}) {
      const int64_t ldx = k + 3, ldq = k + 5;
      // Row values include exact .5 ties of x * s: with amax = 127 (s = 1), x = m + 0.5.
      std::vector<float> x = RandomActivations(rng, rows, ldx, 1.0f);
      if (k >= 4) {
        x[0] = 127.0f;
        x[1] = 2.5f;
        x[2] = -3.5f;
        x[3] = 0.5f;
      }
      Guarded<float> gx(static_cast<size_t>((rows - 1) * ldx + k));
      std::memcpy(gx.data(), x.data(), gx.n * sizeof(float));
      QRows want(rows, k, ldq);
      Scalar().quantize_rows_i8(gx.data(), rows, k, ldx, want.q.data(), ldq, want.scale.data(),
                                want.sums.data());
      if (k >= 4) {
        EXPECT_EQ(want.q[1], 2);
        EXPECT_EQ(want.q[2], -4);
        EXPECT_EQ(want.q[3], 0);
      }
      for (const KernelTable* t : SimdTables()) {
        SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " k=" << k << " rows=" << rows);
        QRows got(rows, k, ldq);
        std::memset(got.q.data(), 0x5a, got.q.n);
        t->quantize_rows_i8(gx.data(), rows, k, ldx, got.q.data(), ldq, got.scale.data(),
                            got.sums.data());
        for (int64_t j = 0; j < rows; ++j) {
          ASSERT_EQ(Bits(got.scale[j]), Bits(want.scale[j]));
          ASSERT_EQ(got.sums[j], want.sums[j]);
          for (int64_t i = 0; i < k; ++i) ASSERT_EQ(got.q[j * ldq + i], want.q[j * ldq + i]) << i;
          for (int64_t i = k; i < ldq && j + 1 < rows; ++i)
            ASSERT_EQ(got.q[j * ldq + i], 0x5a) << "wrote past k";
        }
      }
    }
  }
}

// ---- I2_S x int8 ----------------------------------------------------------------------------

// out for one (row, token) straight from the codes (3 counts as weight 0) and the spec formula.
float I2sReference(const uint8_t* codes, int64_t k, const int8_t* q, float s, float w_scale) {
  int32_t dot = 0;
  for (int64_t i = 0; i < k; ++i) dot += (codes[i] == 3 ? 0 : codes[i] - 1) * q[i];
  return (static_cast<float>(dot) / s) * w_scale;
}

// Runs every SIMD table on [r0, r1) and compares with the scalar oracle; also checks the oracle
// against I2sReference, and that nothing outside [r0, r1) x n is written.
void CheckI2s(const std::vector<uint8_t>& codes, int64_t k, int64_t nr, const QRows& in_c,
              int64_t n, float w_scale, bool check_reference) {
  QRows& in = const_cast<QRows&>(in_c);
  const std::vector<uint8_t> canon = ktest::EncodeI2s(codes, k, nr);
  const int64_t ldo = nr + 3;
  std::vector<float> want(static_cast<size_t>(n * ldo), -7.0f);
  Scalar().gemm_i2s_i8(canon.data(), k, nr, 0, nr, w_scale, in.q.data(), in.ldq, in.scale.data(),
                       in.sums.data(), n, want.data(), ldo);
  if (check_reference) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = 0; r < nr; ++r) {
        const float ref =
            I2sReference(codes.data() + r * k, k, in.q.data() + j * in.ldq, in.scale[j], w_scale);
        ASSERT_EQ(Bits(want[j * ldo + r]), Bits(ref)) << "oracle r=" << r << " j=" << j;
      }
    }
  }
  for (const KernelTable* t : SimdTables()) {
    std::unique_ptr<GuardedBuffer> packed(ktest::PackI2s(*t, canon.data(), k, nr));
    const int64_t a = t->i2s_row_align;
    // Whole range, then a range starting at an aligned row > 0 and ending inside (or at N).
    std::vector<std::pair<int64_t, int64_t>> ranges = {{0, nr}};
    if (nr > a) ranges.push_back({a, nr});
    if (nr > 2 * a) ranges.push_back({a, 2 * a});
    for (auto [r0, r1] : ranges) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " k=" << k << " N=" << nr
                                        << " n=" << n << " rows " << r0 << ".." << r1);
      Guarded<float> got(static_cast<size_t>((n - 1) * ldo + nr));
      for (size_t i = 0; i < got.n; ++i) got[i] = -7.0f;
      t->gemm_i2s_i8(packed->as<uint8_t>(), k, nr, r0, r1, w_scale, in.q.data(), in.ldq,
                     in.scale.data(), in.sums.data(), n, got.data(), ldo);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < nr; ++r) {
          const float w = (r >= r0 && r < r1) ? want[j * ldo + r] : -7.0f;
          ASSERT_EQ(Bits(got[j * ldo + r]), Bits(w)) << "r=" << r << " j=" << j;
        }
      }
    }
  }
}

std::vector<uint8_t> RandomCodes(std::mt19937& rng, int64_t count) {
  std::vector<uint8_t> c(static_cast<size_t>(count));
  for (auto& v : c) {
    const uint32_t u = rng() % 64;
    v = u == 0 ? 3 : static_cast<uint8_t>(u % 3);  // mostly 0/1/2, the unused 3 now and then
  }
  return c;
}

std::unique_ptr<QRows> Quantized(std::mt19937& rng, int64_t n, int64_t k) {
  const int64_t ldq = k + 16;
  std::vector<float> x = RandomActivations(rng, n, k, 0.5f);
  auto q = std::make_unique<QRows>(n, k, ldq);
  Scalar().quantize_rows_i8(x.data(), n, k, k, q->q.data(), ldq, q->scale.data(), q->sums.data());
  return q;
}

TEST(GemmI2sI8, PackLayoutDecodedByHand) {
  // One row of 256 codes: element e holds e % 3 except element 77 holds 2 and element 200
  // holds 0. Check the bytes the spec layout predicts, not via any decoder.
  std::vector<uint8_t> codes(256);
  for (int e = 0; e < 256; ++e) codes[e] = static_cast<uint8_t>(e % 3);
  codes[77] = 2;
  codes[200] = 0;
  const std::vector<uint8_t> b = ktest::EncodeI2s(codes, 256, 1);
  // Byte 13 of block 0 holds elements 13, 45, 77, 109 -> codes 1, 0, 2, 1.
  EXPECT_EQ(b[13], (1 << 6) | (0 << 4) | (2 << 2) | 1);
  // Byte 32 + 8 holds elements 136, 168, 200, 232 -> codes 1, 0, 0, 1.
  EXPECT_EQ(b[40], (1 << 6) | (0 << 4) | (0 << 2) | 1);
  // The oracle reads exactly that layout: a one-hot activation at element e gives code-1.
  for (int e : {0, 13, 45, 77, 109, 127, 128, 200, 255}) {
    QRows in(1, 256, 256);
    std::memset(in.q.data(), 0, 256);
    in.q[e] = 1;
    in.sums[0] = 1;
    in.scale[0] = 1.0f;
    float out = 0;
    Scalar().gemm_i2s_i8(b.data(), 256, 1, 0, 1, 1.0f, in.q.data(), 256, in.scale.data(),
                         in.sums.data(), 1, &out, 1);
    EXPECT_EQ(out, static_cast<float>(codes[e] - 1)) << e;
  }
}

TEST(GemmI2sI8, RandomShapesMatchOracle) {
  std::mt19937 rng(2);
  const bool reduced = ktest::Reduced();
  for (int64_t k : {128, 1024, 1152, 8960}) {
    if (reduced && k == 8960) continue;
    for (int64_t nr : {1, 2, 64, 70, 100}) {
      std::vector<uint8_t> codes = RandomCodes(rng, nr * k);
      for (int64_t n : {1, 2, 3, 5, 13, 16, 21, 72}) {
        // Batched-decode widths, split over several activation tiles (AVX-512: 7 + 6, 8 + 8,
        // 7 + 7 + 7; AVX2: 6 + 6 + 1, ...).
        if ((n == 13 || n == 16 || n == 21) && (k > 1024 || nr < 64)) continue;
        if (n == 72 && (nr == 1 || nr == 100 || k > 1152 || reduced)) continue;
        std::unique_ptr<QRows> in = Quantized(rng, n, k);
        CheckI2s(codes, k, nr, *in, n, 0.0371f, /*check_reference=*/nr <= 70 && n <= 5);
      }
    }
  }
}

TEST(GemmI2sI8, SeveralActivationChunks) {
  // The SIMD kernels split activation rows into chunks of max(64, 256 KiB / K) rows (170 at
  // K = 1536, 64 at K = 8960); the chunk seams must not show.
  std::mt19937 rng(13);
  for (auto [k, n] : {std::pair<int64_t, int64_t>{8960, 71}, {1536, 173}}) {
    if (ktest::Reduced() && k == 8960) continue;
    const int64_t nr = 40;
    std::vector<uint8_t> codes = RandomCodes(rng, nr * k);
    std::unique_ptr<QRows> in = Quantized(rng, n, k);
    CheckI2s(codes, k, nr, *in, n, 0.125f, /*check_reference=*/false);
  }
}

TEST(GemmI2sI8, AccumulatorHeadroom) {
  // Every code 2 against every activation +127, and against -128 (possible in q only through
  // the clamp, so set directly): the int16-partial-sum bug of upstream kernels wraps here.
  const int64_t k = 8960, nr = 33, n = 2;
  std::vector<uint8_t> codes(static_cast<size_t>(nr * k), 2);
  QRows in(n, k, k);
  for (int64_t i = 0; i < k; ++i) {
    in.q[i] = 127;
    in.q[k + i] = -128;
  }
  in.sums[0] = 127 * static_cast<int32_t>(k);
  in.sums[1] = -128 * static_cast<int32_t>(k);
  in.scale[0] = 1.0f;
  in.scale[1] = 2.0f;
  const std::vector<uint8_t> canon = ktest::EncodeI2s(codes, k, nr);
  std::vector<float> out(static_cast<size_t>(n * nr));
  Scalar().gemm_i2s_i8(canon.data(), k, nr, 0, nr, 1.0f, in.q.data(), k, in.scale.data(),
                       in.sums.data(), n, out.data(), nr);
  EXPECT_EQ(out[0], 127.0f * k);  // D - S = 2*127k - 127k
  EXPECT_EQ(out[nr], -128.0f * k / 2.0f);
  CheckI2s(codes, k, nr, in, n, 1.0f, true);
}

TEST(GemmI2sI8, DegenerateScalesGiveZerosNotNaN) {
  std::mt19937 rng(3);
  const int64_t k = 1024, nr = 40, n = 3;
  // All-zero weights: codes 1 and a tensor scale of 0.
  std::vector<uint8_t> zero_w(static_cast<size_t>(nr * k), 1);
  // An all-zero activation row in the middle of random ones.
  std::vector<float> x = RandomActivations(rng, n, k, 1.0f);
  for (int64_t i = 0; i < k; ++i) x[k + i] = 0.0f;
  QRows in(n, k, k);
  Scalar().quantize_rows_i8(x.data(), n, k, k, in.q.data(), k, in.scale.data(), in.sums.data());
  EXPECT_TRUE(std::isfinite(in.scale[1]));
  EXPECT_EQ(in.sums[1], 0);
  std::vector<uint8_t> rand_w = RandomCodes(rng, nr * k);
  for (const auto* codes : {&zero_w, &rand_w}) {
    const float w_scale = codes == &zero_w ? 0.0f : 0.5f;
    const std::vector<uint8_t> canon = ktest::EncodeI2s(*codes, k, nr);
    for (const KernelTable* t : [] {
           auto v = SimdTables();
           v.push_back(&Scalar());
           return v;
         }()) {
      std::unique_ptr<GuardedBuffer> packed(ktest::PackI2s(*t, canon.data(), k, nr));
      std::vector<float> out(static_cast<size_t>(n * nr), -1.0f);
      t->gemm_i2s_i8(packed->as<uint8_t>(), k, nr, 0, nr, w_scale, in.q.data(), k, in.scale.data(),
                     in.sums.data(), n, out.data(), nr);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < nr; ++r) {
          const float v = out[j * nr + r];
          ASSERT_FALSE(std::isnan(v));
          if (codes == &zero_w || j == 1) {
            ASSERT_EQ(v, 0.0f) << IsaName(t->isa);
          }
        }
      }
    }
  }
  CheckI2s(rand_w, k, nr, in, n, 0.5f, true);
}

// ---- int8 x int8 ----------------------------------------------------------------------------

// A fused epilogue (run(ep) calls the kernel) against the oracle's sums `want` (row stride
// ldo) folded / requantized by the scalar entries: bounds of rows [r0, r1), and every
// requant variant (bias or none, ReLU or not, both roundings) into a strided q whose other
// bytes must stay untouched.
template <typename Run>
void CheckI8Epilogue(Run&& run, int64_t k, int64_t nr, int64_t r0, int64_t r1, int64_t n,
                     const std::vector<int32_t>& want, int64_t ldo) {
  const int64_t rows = r1 - r0;
  std::vector<int32_t> mn0(static_cast<size_t>(rows), 5), mx0(static_cast<size_t>(rows), -5);
  std::vector<int32_t> mn1 = mn0, mx1 = mx0;
  Scalar().i32_minmax(want.data() + r0, n, rows, ldo, mn0.data(), mx0.data());
  I8Epilogue ep;
  ep.mn = mn1.data();
  ep.mx = mx1.data();
  run(ep);
  ASSERT_EQ(mn1, mn0);
  ASSERT_EQ(mx1, mx0);

  std::vector<float> bias(static_cast<size_t>(nr));
  for (int64_t r = 0; r < nr; ++r) bias[r] = static_cast<float>(r % 7) * 0.75f - 2.0f;
  // Sums reach +-(127*128*k): y spans about +-4 and q clamps for the largest ones.
  const float c = 1.0f / (1024.0f * static_cast<float>(k)), inv = 127.0f / 2.5f;
  const int64_t ldq = nr + 3;
  std::vector<int8_t> q1(static_cast<size_t>(n * ldq));
  ForEachRequantEpilogue(q1.data(), ldq, c, inv, bias.data(), [&](const I8Epilogue& rq) {
    SCOPED_TRACE(::testing::Message() << "requant bias=" << (rq.bias != nullptr) << " relu="
                                      << rq.relu << " even=" << (rq.mode == Round::kHalfEven));
    std::vector<int8_t> q0(q1.size(), 99);
    std::fill(q1.begin(), q1.end(), int8_t{99});
    for (int64_t j = 0; j < n; ++j)
      Scalar().i32_requant_i8(want.data() + j * ldo + r0, 1, rows, c,
                              rq.bias != nullptr ? rq.bias + r0 : nullptr, inv, rq.mode, rq.relu,
                              q0.data() + j * ldq + r0);
    run(rq);
    ASSERT_EQ(q1, q0);
  });
}

// gemm_u8_i8 and its epilogue on the same products: with the weights' row sums as the
// correction (x flipped in the kernel: the FFN's input), and, for x >= 0 (the FFN's ReLU
// hidden), also without (x's bytes read as they are). Each must give the oracle's sums.
void CheckU8(const KernelTable& t, const std::vector<int8_t>& w, int64_t k, int64_t nr, int64_t r0,
             int64_t r1, const int8_t* x, int64_t ldx, int64_t n, const std::vector<int32_t>& want,
             int64_t ldo) {
  std::unique_ptr<GuardedBuffer> packed(ktest::PackI8(t, w.data(), k, nr, /*u8=*/true));
  bool nonneg = true;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) nonneg = nonneg && x[j * ldx + i] >= 0;
  std::vector<int32_t> corr(static_cast<size_t>(nr), 0);
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t i = 0; i < k; ++i) corr[r] += 128 * int32_t{w[r * k + i]};
  for (const int32_t* cp : {corr.data(), nonneg ? nullptr : corr.data()}) {
    SCOPED_TRACE(cp != nullptr ? "gemm_u8_i8, x flipped" : "gemm_u8_i8, x >= 0 as it is");
    Guarded<int32_t> got(static_cast<size_t>((n - 1) * ldo + nr));
    for (size_t i = 0; i < got.n; ++i) got[i] = -7;
    t.gemm_u8_i8(packed->as<uint8_t>(), k, nr, r0, r1, x, ldx, n, cp, got.data(), ldo);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < nr; ++r)
        ASSERT_EQ(got[j * ldo + r], (r >= r0 && r < r1) ? want[j * ldo + r] : -7)
            << "r=" << r << " j=" << j;
    CheckI8Epilogue(
        [&](const I8Epilogue& ep) {
          t.gemm_u8_i8_ep(packed->as<uint8_t>(), k, nr, r0, r1, x, ldx, n, cp, ep);
        },
        k, nr, r0, r1, n, want, ldo);
  }
}

void CheckI8(const std::vector<int8_t>& w, int64_t k, int64_t nr, const Guarded<int8_t>& xc,
             int64_t ldx, int64_t n) {
  Guarded<int8_t>& x = const_cast<Guarded<int8_t>&>(xc);
  const int64_t ldo = nr + 1;
  // Reference from the canonical matrix, also checking the oracle.
  std::vector<int32_t> want(static_cast<size_t>(n * ldo), -7);
  Scalar().gemm_i8_i8(reinterpret_cast<const uint8_t*>(w.data()), k, nr, 0, nr, x.data(), ldx, n,
                      want.data(), ldo);
  for (int64_t j = 0; j < n && nr <= 70; ++j) {
    for (int64_t r = 0; r < nr; ++r) {
      int64_t d = 0;
      for (int64_t i = 0; i < k; ++i) d += int64_t{w[r * k + i]} * x[j * ldx + i];
      ASSERT_EQ(want[j * ldo + r], d);
    }
  }
  for (const KernelTable* t : SimdTables()) {
    std::unique_ptr<GuardedBuffer> packed(ktest::PackI8(*t, w.data(), k, nr));
    const int64_t a = t->i8_row_align;
    std::vector<std::pair<int64_t, int64_t>> ranges = {{0, nr}};
    if (nr > a) ranges.push_back({a, nr});
    if (nr > 2 * a) ranges.push_back({a, 2 * a});
    for (auto [r0, r1] : ranges) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " k=" << k << " N=" << nr
                                        << " n=" << n << " rows " << r0 << ".." << r1);
      Guarded<int32_t> got(static_cast<size_t>((n - 1) * ldo + nr));
      for (size_t i = 0; i < got.n; ++i) got[i] = -7;
      t->gemm_i8_i8(packed->as<uint8_t>(), k, nr, r0, r1, x.data(), ldx, n, got.data(), ldo);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < nr; ++r) {
          const int32_t wv = (r >= r0 && r < r1) ? want[j * ldo + r] : -7;
          ASSERT_EQ(got[j * ldo + r], wv) << "r=" << r << " j=" << j;
        }
      }
      if (t->gemm_i8_i8_ep != nullptr)
        CheckI8Epilogue(
            [&](const I8Epilogue& ep) {
              t->gemm_i8_i8_ep(packed->as<uint8_t>(), k, nr, r0, r1, x.data(), ldx, n, ep);
            },
            k, nr, r0, r1, n, want, ldo);
      if (t->gemm_u8_i8 != nullptr) CheckU8(*t, w, k, nr, r0, r1, x.data(), ldx, n, want, ldo);
    }
  }
}

TEST(GemmI8I8, RandomShapesMatchOracle) {
  std::mt19937 rng(4);
  const bool reduced = ktest::Reduced();
  for (int64_t k : {1, 3, 7, 32, 33, 64, 127, 128, 129, 1024, 1155, 8960}) {
    if (reduced && k == 8960) continue;
    for (int64_t nr : {1, 2, 64, 70, 100}) {
      std::vector<int8_t> w(static_cast<size_t>(nr * k));
      for (auto& v : w) v = static_cast<int8_t>(rng() % 256 - 128);  // -128 included
      for (int64_t n : {1, 2, 3, 5, 9, 13, 72}) {
        if ((n == 9 || n == 13) && (k > 1024 || nr < 64)) continue;  // tails after 8 / 12
        if (n == 72 && (k > 1155 || reduced)) continue;
        const int64_t ldx = k + (n % 2 ? 0 : 5);
        Guarded<int8_t> x(static_cast<size_t>((n - 1) * ldx + k));  // last row ends at a guard
        for (size_t i = 0; i < x.n; ++i) x[i] = static_cast<int8_t>(rng() % 255 - 127);
        CheckI8(w, k, nr, x, ldx, n);
      }
    }
  }
}

// The FFN's hidden after its ReLU (0..127) goes to gemm_u8_i8 as it is: CheckU8 tries that
// too whenever every activation is >= 0.
TEST(GemmI8I8, NonNegativeActivations) {
  std::mt19937 rng(24);
  for (int64_t k : {5, 32, 128, 131, 512}) {
    for (int64_t nr : {16, 40, 64}) {
      std::vector<int8_t> w(static_cast<size_t>(nr * k));
      for (auto& v : w) v = static_cast<int8_t>(rng() % 256 - 128);
      for (int64_t n : {1, 7, 33}) {
        Guarded<int8_t> x(static_cast<size_t>(n * k));
        for (size_t i = 0; i < x.n; ++i) x[i] = static_cast<int8_t>(rng() % 4 ? rng() % 128 : 0);
        CheckI8(w, k, nr, x, k, n);
      }
    }
  }
}

TEST(GemmI8I8, SeveralActivationChunks) {
  std::mt19937 rng(14);
  for (auto [k, n] : {std::pair<int64_t, int64_t>{8960, 67}, {1155, 230}}) {
    if (ktest::Reduced() && k == 8960) continue;
    const int64_t nr = 36;
    std::vector<int8_t> w(static_cast<size_t>(nr * k));
    for (auto& v : w) v = static_cast<int8_t>(rng() % 256 - 128);
    Guarded<int8_t> x(static_cast<size_t>(n * k));
    for (size_t i = 0; i < x.n; ++i) x[i] = static_cast<int8_t>(rng() % 255 - 127);
    CheckI8(w, k, nr, x, k, n);
  }
}

TEST(GemmI8I8, AccumulatorHeadroom) {
  // Full-scale products everywhere: sums of 8960 terms of +-127*128 need exact int32 lanes.
  const int64_t k = 8960, nr = 35, n = 3;
  std::vector<int8_t> w(static_cast<size_t>(nr * k));
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t i = 0; i < k; ++i) w[r * k + i] = r % 2 ? -128 : 127;
  Guarded<int8_t> x(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < k; ++i) {
    x[i] = 127;
    x[k + i] = -127;
    x[2 * k + i] = static_cast<int8_t>(i % 2 ? 127 : -127);
  }
  std::vector<int32_t> out(static_cast<size_t>(n * nr));
  Scalar().gemm_i8_i8(reinterpret_cast<const uint8_t*>(w.data()), k, nr, 0, nr, x.data(), k, n,
                      out.data(), nr);
  EXPECT_EQ(out[0], 127 * 127 * k);
  EXPECT_EQ(out[1], -128 * 127 * k);
  EXPECT_EQ(out[nr + 1], 128 * 127 * k);
  EXPECT_EQ(out[2 * nr], 0);
  CheckI8(w, k, nr, x, k, n);
}

TEST(GemmI8I8, ZeroWeightsAndRows) {
  const int64_t k = 129, nr = 20, n = 2;
  std::vector<int8_t> w(static_cast<size_t>(nr * k), 0);
  Guarded<int8_t> x(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n * k; ++i) x[i] = static_cast<int8_t>(i % 200 - 100);
  CheckI8(w, k, nr, x, k, n);
  for (int64_t i = 0; i < nr * k; ++i) w[i] = static_cast<int8_t>(i % 255 - 127);
  for (int64_t i = 0; i < k; ++i) x[i] = 0;
  CheckI8(w, k, nr, x, k, n);
}

// ---- absmax / requant -----------------------------------------------------------------------

TEST(Requant, RoundingModesByHand) {
  const float x[] = {2.5f, -2.5f, 3.5f, 126.5f, -126.5f, 200.0f, -200.0f, 0.49999997f, -0.5f};
  const int8_t even[] = {2, -2, 4, 126, -126, 127, -127, 0, 0};
  const int8_t away[] = {3, -3, 4, 127, -127, 127, -127, 0, -1};
  const int n = sizeof(x) / sizeof(x[0]);
  std::vector<const KernelTable*> tables = SimdTables();
  tables.push_back(&Scalar());
  for (const KernelTable* t : tables) {
    int8_t q[n];
    t->requant_f32_i8(x, n, 1.0f, Round::kHalfEven, q);
    for (int i = 0; i < n; ++i) EXPECT_EQ(q[i], even[i]) << IsaName(t->isa) << " " << x[i];
    t->requant_f32_i8(x, n, 1.0f, Round::kHalfAway, q);
    for (int i = 0; i < n; ++i) EXPECT_EQ(q[i], away[i]) << IsaName(t->isa) << " " << x[i];
  }
}

// Every float within 64 ulps of each integer k and of k + 0.5 in [-128, 128], both modes:
// the SIMD half-away rounds with one add and a truncation (kBelowHalf), exact only by the
// argument there, and these are the values where such shortcuts break.
TEST(Requant, NearTiesMatchOracle) {
  std::vector<float> x;
  for (int k = -128; k <= 128; ++k) {
    for (float c : {static_cast<float>(k), k + 0.5f}) {
      float lo = c, hi = c;
      for (int u = 0; u < 64; ++u) {
        lo = std::nextafter(lo, -1000.0f);
        hi = std::nextafter(hi, 1000.0f);
        x.push_back(lo);
        x.push_back(hi);
      }
      x.push_back(c);
    }
  }
  const int64_t n = static_cast<int64_t>(x.size());
  for (Round mode : {Round::kHalfEven, Round::kHalfAway}) {
    std::vector<int8_t> want(x.size());
    Scalar().requant_f32_i8(x.data(), n, 1.0f, mode, want.data());
    for (const KernelTable* t : SimdTables()) {
      SCOPED_TRACE(IsaName(t->isa));
      Guarded<int8_t> got(x.size());
      t->requant_f32_i8(x.data(), n, 1.0f, mode, got.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << x[i];
    }
  }
}

TEST(Requant, SimdMatchesOracle) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 30.0f);
  for (int64_t n : {0, 1, 7, 16, 31, 64, 1000, 4099}) {
    Guarded<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = i % 5 == 0 ? std::round(nd(rng)) + 0.5f : nd(rng);
    const float amax = Scalar().absmax_f32(x.data(), n);
    float ref = 0;
    for (int64_t i = 0; i < n; ++i) ref = std::max(ref, std::fabs(x[i]));
    ASSERT_EQ(amax, ref);
    for (const KernelTable* t : SimdTables()) {
      SCOPED_TRACE(::testing::Message() << IsaName(t->isa) << " n=" << n);
      ASSERT_EQ(Bits(t->absmax_f32(x.data(), n)), Bits(amax));
      for (Round mode : {Round::kHalfEven, Round::kHalfAway}) {
        for (float inv : {1.0f, 0.37f, 5.0f}) {
          std::vector<int8_t> want(static_cast<size_t>(n));
          Guarded<int8_t> got(static_cast<size_t>(n));
          Scalar().requant_f32_i8(x.data(), n, inv, mode, want.data());
          t->requant_f32_i8(x.data(), n, inv, mode, got.data());
          for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tern::kernels

namespace tern::kernels {
namespace {

// kernels.h promises that a pack is separable by aligned row blocks (large matrices are packed
// block by block at load): pack whole and pack in pieces must give the same bytes.
TEST(Packing, SeparableByAlignedRowBlocks) {
  std::mt19937 rng(17);
  std::vector<const KernelTable*> tables = SimdTables();
  tables.push_back(&Scalar());
  for (const KernelTable* t : tables) {
    SCOPED_TRACE(IsaName(t->isa));
    {
      const int64_t a = t->i2s_row_align, k = 256, n = 5 * a + 7;
      std::vector<uint8_t> canon(static_cast<size_t>(n * k / 4));
      for (auto& b : canon) b = static_cast<uint8_t>(rng());
      std::vector<uint8_t> whole(t->i2s_packed_bytes(k, n)), parts(whole.size(), 0xee);
      t->pack_i2s(canon.data(), k, n, whole.data());
      for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, a}, {a, 3 * a}, {3 * a, n}}) {
        ASSERT_EQ(t->i2s_packed_bytes(k, r1 - r0),
                  t->i2s_packed_bytes(k, r1) - t->i2s_packed_bytes(k, r0))
            << r0;
        t->pack_i2s(canon.data() + r0 * k / 4, k, r1 - r0,
                    parts.data() + t->i2s_packed_bytes(k, r0));
      }
      EXPECT_EQ(parts, whole);
    }
    {
      const int64_t a = t->i8_row_align, k = 37, n = 5 * a + 7;
      std::vector<int8_t> canon(static_cast<size_t>(n * k));
      for (auto& v : canon) v = static_cast<int8_t>(rng() % 255 - 127);
      std::vector<uint8_t> whole(t->i8_packed_bytes(k, n)), parts(whole.size(), 0xee);
      t->pack_i8(canon.data(), k, n, whole.data());
      for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, a}, {a, 3 * a}, {3 * a, n}}) {
        t->pack_i8(canon.data() + r0 * k, k, r1 - r0, parts.data() + t->i8_packed_bytes(k, r0));
      }
      EXPECT_EQ(parts, whole);
    }
  }
}

}  // namespace
}  // namespace tern::kernels
