// Linear ops vs plain-loop references: I2_S and W8A8 bit-exact (integer math with a fixed
// float epilogue), F16 within the float-accumulation error bound; every op byte-identical at
// 1, 2 and 4 threads.
#include "ops/linear.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "ops/activation.h"
#include "base/test_util.h"
#include "tensor/quant_ref.h"

namespace tern::ops {
namespace {

using testutil::RandomFloats;

// Reference per-row activation quantization (spec 2.3 item 1).
void RefQuantizeRow(const float* x, int64_t k, int8_t* q, float* s, int32_t* sum) {
  double amax = 1e-5;
  for (int64_t i = 0; i < k; ++i) amax = std::max(amax, static_cast<double>(std::fabs(x[i])));
  *s = static_cast<float>(127.0 / amax);
  int32_t acc = 0;
  for (int64_t i = 0; i < k; ++i) {
    const float v = std::nearbyint(x[i] * *s);
    q[i] = static_cast<int8_t>(std::clamp(v, -128.0f, 127.0f));
    acc += q[i];
  }
  *sum = acc;
}

struct Acts {
  std::vector<int8_t> q;
  std::vector<float> s;
  std::vector<int32_t> sums;
  QuantizedRows rows;
};

Acts Quantize(ThreadPool& pool, const std::vector<float>& x, int64_t rows, int64_t k) {
  Acts a;
  a.q.assign(static_cast<size_t>(rows * (k + 16)), 0);
  a.s.assign(static_cast<size_t>(rows), 0);
  a.sums.assign(static_cast<size_t>(rows), 0);
  a.rows = {a.q.data(), k + 16, a.s.data(), a.sums.data()};
  QuantizeRows(pool, x.data(), rows, k, k, &a.rows);
  return a;
}

TEST(QuantizeRowsTest, MatchesReferenceBitExact) {
  for (int64_t k : {128, 300, 1536}) {
    const int64_t rows = 9;
    auto x = RandomFloats(static_cast<size_t>(rows * k), 1 + k, 2.0f);
    // One all-zero row (amax floor) and one row with an exact .5 product.
    std::fill(x.begin(), x.begin() + k, 0.0f);
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      Acts a = Quantize(pool, x, rows, k);
      EXPECT_EQ(a.rows.rows, rows);
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int8_t> q(static_cast<size_t>(k));
        float s;
        int32_t sum;
        RefQuantizeRow(x.data() + r * k, k, q.data(), &s, &sum);
        ASSERT_EQ(std::memcmp(&s, &a.s[r], sizeof s), 0) << "row " << r;
        ASSERT_EQ(sum, a.sums[r]);
        ASSERT_EQ(std::memcmp(q.data(), a.q.data() + r * (k + 16), k), 0) << "row " << r;
      }
    }
  }
}

// A random I2_S matrix: codes in {0,1,2}, canonical packing from the reference packer.
struct TernaryMatrix {
  std::vector<uint8_t> codes;
  std::vector<uint8_t> canonical;
  std::vector<uint8_t> packed;
  I2SMatrix m;
};

TernaryMatrix RandomTernary(int64_t k, int64_t n, uint32_t seed, float scale) {
  TernaryMatrix t;
  std::mt19937 rng(seed);
  t.codes.resize(static_cast<size_t>(k * n));
  for (auto& c : t.codes) c = static_cast<uint8_t>(rng() % 3);
  t.canonical.resize(static_cast<size_t>(k * n / 4));
  PackI2SCodes(t.codes.data(), k * n, t.canonical.data());
  t.packed.resize(I2SPackedBytes(k, n));
  PackI2S(t.canonical.data(), k, n, t.packed.data());
  t.m = {t.packed.data(), k, n, scale};
  return t;
}

// Plain-loop reference: out = ((float)(sum (code-1)*q) / s) * scale (+ bias).
std::vector<float> RefI2S(const TernaryMatrix& t, const Acts& a, int64_t rows, const float* bias) {
  const int64_t k = t.m.k, n = t.m.n;
  std::vector<float> out(static_cast<size_t>(rows * n));
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t r = 0; r < n; ++r) {
      int32_t d = 0;
      for (int64_t i = 0; i < k; ++i) {
        d += (t.codes[r * k + i] - 1) * a.q[j * a.rows.ldq + i];
      }
      float y = (static_cast<float>(d) / a.s[j]) * t.m.scale;
      if (bias) y += bias[r];
      out[j * n + r] = y;
    }
  }
  return out;
}

TEST(LinearI2STest, SingleProjectionBitExactAtAllThreadCounts) {
  struct Case {
    int64_t k, n, rows;
  };
  for (const Case& c : {Case{128, 1, 1}, Case{128, 70, 3}, Case{384, 257, 1}, Case{1152, 64, 5},
                        Case{256, 2, 17}}) {
    const TernaryMatrix t = RandomTernary(c.k, c.n, static_cast<uint32_t>(c.k * 7 + c.n), 0.037f);
    const auto x = RandomFloats(static_cast<size_t>(c.rows * c.k), 5, 1.0f);
    const auto bias = RandomFloats(static_cast<size_t>(c.n), 6, 0.1f);
    std::vector<float> first;
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      const Acts a = Quantize(pool, x, c.rows, c.k);
      std::vector<float> out(static_cast<size_t>(c.rows * c.n), -1.0f);
      LinearI2S(pool, a.rows, {&t.m, bias.data(), out.data(), c.n});
      if (first.empty()) {
        const auto ref = RefI2S(t, a, c.rows, bias.data());
        ASSERT_EQ(std::memcmp(ref.data(), out.data(), out.size() * 4), 0)
            << "k=" << c.k << " n=" << c.n << " rows=" << c.rows;
        first = out;
      } else {
        ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0) << "nth=" << nth;
      }
    }
  }
}

TEST(LinearI2STest, SharedActivationsFeedThreeProjections) {
  const int64_t k = 256, rows = 4;
  const int64_t ns[3] = {256, 67, 64};  // q, k, v-like; 67 is not a multiple of any row block
  TernaryMatrix t[3];
  std::vector<float> bias[3], out[3];
  for (int p = 0; p < 3; ++p) {
    t[p] = RandomTernary(k, ns[p], 40 + p, 0.02f * (p + 1));
    bias[p] = RandomFloats(static_cast<size_t>(ns[p]), 50 + p, 0.05f);
  }
  const auto x = RandomFloats(static_cast<size_t>(rows * k), 7, 3.0f);
  std::vector<float> first[3];
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    const Acts a = Quantize(pool, x, rows, k);
    I2SProjection proj[3];
    for (int p = 0; p < 3; ++p) {
      out[p].assign(static_cast<size_t>(rows * ns[p]), 0.0f);
      proj[p] = {&t[p].m, p == 1 ? nullptr : bias[p].data(), out[p].data(), ns[p]};
    }
    LinearI2S(pool, a.rows, proj, 3);
    for (int p = 0; p < 3; ++p) {
      if (nth == 1) {
        const auto ref = RefI2S(t[p], a, rows, p == 1 ? nullptr : bias[p].data());
        ASSERT_EQ(std::memcmp(ref.data(), out[p].data(), ref.size() * 4), 0) << "proj " << p;
        first[p] = out[p];
      } else {
        ASSERT_EQ(std::memcmp(first[p].data(), out[p].data(), out[p].size() * 4), 0);
      }
    }
  }
}

TEST(LinearI2STest, FusedSwiGluEqualsTwoProjectionsThenSwiGlu) {
  for (int64_t rows : {1, 5}) {
    const int64_t k = 384, n = 200;
    const TernaryMatrix g = RandomTernary(k, n, 60, 0.05f), u = RandomTernary(k, n, 61, 0.04f);
    const auto x = RandomFloats(static_cast<size_t>(rows * k), 62, 1.0f);
    std::vector<float> first;
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      const Acts a = Quantize(pool, x, rows, k);
      std::vector<float> out(static_cast<size_t>(rows * n)), scratch(out.size());
      LinearI2SSwiGlu(pool, a.rows, g.m, u.m, out.data(), scratch.data(), n);
      if (nth == 1) {
        const auto rg = RefI2S(g, a, rows, nullptr), ru = RefI2S(u, a, rows, nullptr);
        std::vector<float> ref(rg.size());
        SwiGlu(pool, rg.data(), n, ru.data(), n, rows, n, ref.data(), n);
        ASSERT_EQ(std::memcmp(ref.data(), out.data(), out.size() * 4), 0) << rows;
        first = out;
      } else {
        ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0) << "nth=" << nth;
      }
    }
  }
}

// Reference weight quantization of seed 003 (per output row, amax/127, RNE, clamp 127).
void RefQuantizeWeights(const std::vector<float>& w, int64_t k, int64_t n, std::vector<int8_t>* q,
                        std::vector<float>* scale) {
  q->resize(static_cast<size_t>(k * n));
  scale->resize(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    float amax = 0;
    for (int64_t i = 0; i < k; ++i) amax = std::max(amax, std::fabs(w[r * k + i]));
    const float s = amax / 127.0f;
    (*scale)[r] = s;
    for (int64_t i = 0; i < k; ++i) {
      const float v = s > 0 ? std::nearbyint(w[r * k + i] / s) : 0.0f;
      (*q)[r * k + i] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  }
}

// Decodes the weights as stored (so the reference sees what the op sees).
std::vector<float> Stored(DType type, const std::vector<float>& w, int64_t k, int64_t n,
                          std::vector<uint8_t>* bytes) {
  bytes->assign(static_cast<size_t>(RowBytes(type, k) * n), 0);
  std::vector<float> back(w.size());
  for (int64_t r = 0; r < n; ++r) {
    uint8_t* row = bytes->data() + r * RowBytes(type, k);
    if (type == DType::kF32) {
      std::memcpy(row, w.data() + r * k, static_cast<size_t>(k) * 4);
    } else if (type == DType::kF16) {
      for (int64_t i = 0; i < k; ++i) {
        const uint16_t h = F32ToF16(w[r * k + i]);
        std::memcpy(row + 2 * i, &h, 2);
      }
    } else {
      QuantizeRef(type, w.data() + r * k, k, row);
    }
    DequantizeRef(type == DType::kF32 ? DType::kF32 : type, row, k, back.data() + r * k);
  }
  return back;
}

TEST(LinearW8A8Test, BitExactVsReferenceAndWithinQuantizationBound) {
  struct Case {
    DType type;
    int64_t k, n, rows;
  };
  for (const Case& c : {Case{DType::kF32, 64, 33, 1}, Case{DType::kF16, 256, 130, 3},
                        Case{DType::kQ8_0, 512, 77, 2}, Case{DType::kQ6_K, 256, 40, 1},
                        Case{DType::kF16, 128, 5000, 1}}) {
    auto w = RandomFloats(static_cast<size_t>(c.k * c.n), 11, 0.05f);
    std::fill(w.begin(), w.begin() + c.k, 0.0f);  // an all-zero row: scale 0, output 0
    std::vector<uint8_t> bytes;
    const auto stored = Stored(c.type, w, c.k, c.n, &bytes);
    std::vector<int8_t> qw;
    std::vector<float> ws;
    RefQuantizeWeights(stored, c.k, c.n, &qw, &ws);
    const auto x = RandomFloats(static_cast<size_t>(c.rows * c.k), 12, 1.5f);

    std::vector<float> first;
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      Result<I8Matrix> m = QuantizeWeightsI8(c.type, bytes.data(), c.k, c.n, &pool);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ASSERT_EQ(std::memcmp(m->scale.data(), ws.data(), ws.size() * 4), 0);
      const Acts a = Quantize(pool, x, c.rows, c.k);
      std::vector<float> out(static_cast<size_t>(c.rows * c.n), -7.0f);
      LinearW8A8(pool, *m, a.rows, out.data(), c.n);
      if (!first.empty()) {
        ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0) << "nth=" << nth;
        continue;
      }
      first = out;
      for (int64_t j = 0; j < c.rows; ++j) {
        for (int64_t r = 0; r < c.n; ++r) {
          int32_t acc = 0;
          double exact = 0, abs_x = 0, abs_w = 0;
          for (int64_t i = 0; i < c.k; ++i) {
            acc += qw[r * c.k + i] * a.q[j * a.rows.ldq + i];
            exact += static_cast<double>(stored[r * c.k + i]) * x[j * c.k + i];
            abs_x += std::fabs(x[j * c.k + i]);
            abs_w += std::fabs(stored[r * c.k + i]);
          }
          const float ref = (static_cast<float>(acc) / a.s[j]) * ws[r];
          ASSERT_EQ(std::memcmp(&ref, &out[j * c.n + r], 4), 0) << "row " << r;
          // |w - qw*ws| <= ws/2 and |x - q/s| <= 1/(2s): the W8A8 error bound.
          const double dw = ws[r] / 2.0, dx = 0.5 / a.s[j];
          const double bound = dw * abs_x + dx * abs_w + dw * dx * c.k + 1e-5 * std::fabs(exact);
          ASSERT_LE(std::fabs(out[j * c.n + r] - exact), bound + 1e-6) << "row " << r;
        }
      }
    }
  }
}

TEST(LinearW8A8Test, ReportsEverySourceRowConsumedOnce) {
  const int64_t k = 64, n = 1000;  // several blocks and a partial last one
  const auto w = RandomFloats(static_cast<size_t>(k * n), 5, 0.05f);
  std::vector<uint8_t> bytes(static_cast<size_t>(k * n) * 4);
  std::memcpy(bytes.data(), w.data(), bytes.size());
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    std::mutex mu;
    std::vector<int> seen(static_cast<size_t>(n), 0);
    Result<I8Matrix> m =
        QuantizeWeightsI8(DType::kF32, bytes.data(), k, n, &pool, [&](int64_t r0, int64_t r1) {
          std::lock_guard<std::mutex> lock(mu);
          for (int64_t r = r0; r < r1; ++r) ++seen[r];
        });
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n) << "nth=" << nth;
  }
}

TEST(LinearW8A8Test, RejectsUndecodableType) {
  std::vector<uint8_t> bytes(1024);
  Result<I8Matrix> m = QuantizeWeightsI8(DType::kI8_S, bytes.data(), 128, 2, nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(m.status().message().find("I8_S"), std::string::npos);
}

TEST(LinearF16Test, WithinFloatAccumulationBoundAndThreadInvariant) {
  for (int64_t k : {64, 1536}) {
    const int64_t n = 523, rows = 2, ldw = k + 8;
    const auto wf = RandomFloats(static_cast<size_t>(n * ldw), 21, 0.1f);
    std::vector<uint16_t> w(wf.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = F32ToF16(wf[i]);
    const auto x = RandomFloats(static_cast<size_t>(rows * k), 22, 1.0f);
    std::vector<float> first;
    for (int nth : {1, 2, 4}) {
      ThreadPool pool(nth);
      std::vector<float> out(static_cast<size_t>(rows * n));
      LinearF16(pool, w.data(), k, ldw, n, x.data(), rows, k, out.data(), n);
      if (!first.empty()) {
        ASSERT_EQ(std::memcmp(first.data(), out.data(), out.size() * 4), 0) << "nth=" << nth;
        continue;
      }
      first = out;
      // Float summation of k products: |err| <= gamma_k * sum|w x|, gamma_k = k*u/(1-k*u).
      const double u = std::ldexp(1.0, -24), gamma = (k + 1) * u / (1 - (k + 1) * u);
      for (int64_t j = 0; j < rows; ++j) {
        for (int64_t r = 0; r < n; ++r) {
          double exact = 0, mag = 0;
          for (int64_t i = 0; i < k; ++i) {
            const double p = static_cast<double>(F16ToF32(w[r * ldw + i])) * x[j * k + i];
            exact += p;
            mag += std::fabs(p);
          }
          ASSERT_LE(std::fabs(out[j * n + r] - exact), gamma * mag) << "row " << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tern::ops
