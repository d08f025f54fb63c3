// RMSNorm, NEOX RoPE, softmax, SiLU/SwiGLU and the residual add vs double-precision
// references, with tolerances from the float error of each formula (u = 2^-24 per rounding);
// every threaded op byte-identical at 1, 2 and 4 threads.
#include <gtest/gtest.h>

#include "base/test_util.h"
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ops/activation.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace tern::ops {
namespace {

using testutil::RandomFloats;

const double kU = std::ldexp(1.0, -24);

// Runs fn(pool, out) at 1, 2 and 4 threads and checks the outputs are byte-identical.
template <typename Fn>
std::vector<float> SameAtAllThreadCounts(size_t n_out, Fn fn) {
  std::vector<float> first;
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    std::vector<float> out(n_out, -3.0f);
    fn(pool, out);
    if (first.empty()) {
      first = out;
    } else {
      EXPECT_EQ(std::memcmp(first.data(), out.data(), n_out * 4), 0) << "nth=" << nth;
    }
  }
  return first;
}

TEST(RmsNormTest, MatchesDoubleReference) {
  const int64_t rows = 37, n = 1536, ld = n + 5;
  const auto x = RandomFloats(static_cast<size_t>(rows * ld), 1, 3.0f);
  const auto w = RandomFloats(static_cast<size_t>(n), 2, 1.0f);
  const float eps = 1e-6f;
  const auto y = SameAtAllThreadCounts(
      static_cast<size_t>(rows * n), [&](ThreadPool& p, std::vector<float>& o) {
        RmsNorm(p, x.data(), rows, n, ld, w.data(), eps, o.data(), n);
      });
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[r * ld + i]) * x[r * ld + i];
    const double rr = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i) {
      const double ref = x[r * ld + i] * rr * w[i];
      // square, mean, +eps, sqrt, divide, two products: about 8 roundings.
      ASSERT_LE(std::fabs(y[r * n + i] - ref), 8 * kU * std::fabs(ref) + 1e-30)
          << "r=" << r << " i=" << i;
    }
  }
}

TEST(RopeTest, AnglesMatchClosedFormWithinIterationBound) {
  for (int64_t d : {32, 128}) {
    for (int32_t pos : {0, 1, 17, 1000, 65535}) {
      std::vector<float> c(d / 2), s(d / 2);
      RopeAngles(pos, d, 1e6f, c.data(), s.data());
      for (int64_t i = 0; i < d / 2; ++i) {
        const double theta = pos * std::pow(1e6, -2.0 * i / d);
        // theta_i is i float products of a rounded theta_scale (powf: <= 1 ulp): relative
        // error <= (2i + 2) u; cos/sin add their own few ulps.
        const double dtheta = std::fabs(theta) * (2 * i + 2) * kU + 1e-7;
        ASSERT_LE(std::fabs(c[i] - std::cos(theta)), dtheta + 4e-7) << pos << " " << i;
        ASSERT_LE(std::fabs(s[i] - std::sin(theta)), dtheta + 4e-7) << pos << " " << i;
      }
    }
  }
}

TEST(RopeTest, NeoxRotatesPairsHalfAHeadApart) {
  const int64_t rows = 5, heads = 3, d = 64, ld = heads * d + 4;
  const auto x = RandomFloats(static_cast<size_t>(rows * ld), 3, 1.0f);
  const std::vector<int32_t> pos = {0, 3, 3, 100, 7000};
  const auto y = SameAtAllThreadCounts(x.size(), [&](ThreadPool& p, std::vector<float>& o) {
    o = x;
    RopeNeox(p, o.data(), rows, heads, d, ld, pos.data(), 10000.0f);
  });
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> c(d / 2), s(d / 2);
    RopeAngles(pos[r], d, 10000.0f, c.data(), s.data());
    for (int64_t h = 0; h < heads; ++h) {
      const float* a = x.data() + r * ld + h * d;
      const float* b = y.data() + r * ld + h * d;
      double n_in = 0, n_out = 0;
      for (int64_t i = 0; i < d / 2; ++i) {
        const double e0 =
            static_cast<double>(a[i]) * c[i] - static_cast<double>(a[i + d / 2]) * s[i];
        const double e1 =
            static_cast<double>(a[i]) * s[i] + static_cast<double>(a[i + d / 2]) * c[i];
        const double mag = std::fabs(a[i]) + std::fabs(a[i + d / 2]);
        ASSERT_LE(std::fabs(b[i] - e0), 3 * kU * mag);
        ASSERT_LE(std::fabs(b[i + d / 2] - e1), 3 * kU * mag);
        n_in += a[i] * a[i] + a[i + d / 2] * a[i + d / 2];
        n_out += b[i] * b[i] + b[i + d / 2] * b[i + d / 2];
      }
      EXPECT_NEAR(n_in, n_out, 1e-5 * n_in);  // a rotation keeps the norm
    }
    // Position 0 is the identity.
    if (pos[r] == 0) {
      EXPECT_EQ(std::memcmp(x.data() + r * ld, y.data() + r * ld, heads * d * 4), 0);
    }
  }
}

TEST(SoftmaxTest, MatchesDoubleReference) {
  const int64_t rows = 9, n = 777;
  auto x = RandomFloats(static_cast<size_t>(rows * n), 4, 5.0f);
  x[3] = 80.0f;  // a large value: the max subtraction must keep exp finite
  const auto y = SameAtAllThreadCounts(x.size(), [&](ThreadPool& p, std::vector<float>& o) {
    o = x;
    Softmax(p, o.data(), rows, n, n);
  });
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<double>(x[r * n + i]));
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - mx);
    for (int64_t i = 0; i < n; ++i) {
      const double ref = std::exp(x[r * n + i] - mx) / sum;
      // x - max exact (Sterbenz) or 1 rounding; expf ~1 ulp; 1/sum and the product: 2.
      // An absolute error e in (x - max) is a relative error e in exp.
      const double arg_err = std::fabs(x[r * n + i] - mx) * kU;
      ASSERT_LE(std::fabs(y[r * n + i] - ref), (6 * kU + arg_err) * ref + 1e-38);
    }
  }
}

TEST(SwiGluTest, MatchesDoubleReferenceForOneAndManyRows) {
  for (int64_t rows : {1, 6}) {
    const int64_t n = 8960;
    const auto g = RandomFloats(static_cast<size_t>(rows * n), 5, 4.0f);
    const auto u = RandomFloats(static_cast<size_t>(rows * n), 6, 1.0f);
    const auto y = SameAtAllThreadCounts(g.size(), [&](ThreadPool& p, std::vector<float>& o) {
      SwiGlu(p, g.data(), n, u.data(), n, rows, n, o.data(), n);
    });
    for (size_t i = 0; i < g.size(); ++i) {
      const double ref = g[i] / (1.0 + std::exp(-static_cast<double>(g[i]))) * u[i];
      // -x exact, expf ~1 ulp and its argument, 1 + e, divide, product: ~6 roundings plus
      // the expf argument's own magnitude times u (which shifts e^-x by |x| u).
      const double tol = (6 * kU + std::fabs(g[i]) * kU) * std::fabs(ref) + 1e-37;
      ASSERT_LE(std::fabs(y[i] - ref), tol) << i;
    }
  }
}

TEST(AddInPlaceTest, AddsRowsWithStrides) {
  const int64_t rows = 4, n = 10000;
  const auto a = RandomFloats(static_cast<size_t>(rows * n), 7, 1.0f);
  const auto b = RandomFloats(static_cast<size_t>(rows * n), 8, 1.0f);
  const auto y = SameAtAllThreadCounts(a.size(), [&](ThreadPool& p, std::vector<float>& o) {
    o = a;
    AddInPlace(p, o.data(), n, b.data(), n, rows, n);
  });
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(y[i], a[i] + b[i]);
}

}  // namespace
}  // namespace tern::ops
