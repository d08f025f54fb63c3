// The I8_S ops against plain-loop references written here from the spec equations (3.3, 3.4)
// in ggml's own layouts (im2col on {T, C}, permutes), sharing no code with src/ops. Every
// case runs at 1, 2 and 4 threads and must give identical bytes and scales.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/i8s_elementwise.h"
#include "kernels/kernels.h"
#include "ops/i8s_matmul.h"
#include "ops/i8s_tensor.h"

namespace tern::ops {
namespace {

constexpr int kThreadCounts[] = {1, 2, 4};

// A reference I8_S tensor: values plus multiplier.
struct RefT {
  std::vector<int8_t> q;
  float scale = 0;
};

std::vector<int8_t> RandI8(std::mt19937& rng, size_t n, int lo = -127, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}
std::vector<float> RandF(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Requantization of a whole float tensor, as spec 2.4 / 3.4 state it.
RefT RefRequant(const std::vector<float>& y, bool half_even, bool relu) {
  float g = 0;
  for (float v : y) g = std::max(g, std::fabs(v));
  const float inv = g != 0 ? 127.0f / g : 0.0f;
  RefT r;
  r.q.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    float v = std::min(127.0f, std::max(-127.0f, y[i] * inv));
    float rv = half_even ? std::nearbyint(v) : std::roundf(v);
    int q = static_cast<int>(rv);
    if (relu && q < 0) q = 0;
    r.q[i] = static_cast<int8_t>(q);
  }
  r.scale = g / 127.0f;
  return r;
}

void ExpectSame(const RefT& ref, const I8sTensor& got, const char* what, int nth) {
  ASSERT_EQ(static_cast<int64_t>(ref.q.size()), got.size()) << what << " nth=" << nth;
  EXPECT_EQ(std::memcmp(ref.q.data(), got.q, ref.q.size()), 0) << what << " nth=" << nth;
  EXPECT_EQ(ref.scale, got.scale) << what << " nth=" << nth;
}

// y[t][n] = (float)(sum_k W[n][k] x[t][k]) * c + bias[n]   (x columns of K)
std::vector<float> RefMatmul(const std::vector<int8_t>& w, float ws, const std::vector<int8_t>& x,
                             float xs, const float* bias, int64_t K, int64_t N, int64_t T) {
  std::vector<float> y(static_cast<size_t>(N * T));
  const float c = ws * xs;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += int32_t{w[n * K + k]} * int32_t{x[t * K + k]};
      y[t * N + n] = static_cast<float>(acc) * c + (bias ? bias[n] : 0.0f);
    }
  return y;
}

TEST(I8sOps, QuantizeSignalMatchesSpec) {
  std::mt19937 rng(1);
  for (int64_t n : {1, 7, 5000}) {
    std::vector<float> a = RandF(rng, static_cast<size_t>(n), -0.7f, 0.9f);
    float amax = 0.00001f;
    for (float v : a) amax = std::max(amax, std::fabs(v));
    const float s = 127.0f / amax;
    RefT ref;
    for (float v : a)
      ref.q.push_back(static_cast<int8_t>(std::clamp((int)std::roundf(v * s), -128, 127)));
    ref.scale = 1.0f / s;
    for (int nth : kThreadCounts) {
      ThreadPool pool(nth);
      std::vector<int8_t> q(static_cast<size_t>(n));
      I8sTensor out{q.data()};
      QuantizeSignal(pool, a.data(), n, &out);
      ExpectSame(ref, out, "quantize", nth);
    }
  }
  // Silence: the 1e-5 floor keeps the scale finite; every value is 0.
  std::vector<float> z(100, 0.0f);
  std::vector<int8_t> q(100, 5);
  ThreadPool pool(2);
  I8sTensor out{q.data()};
  QuantizeSignal(pool, z.data(), 100, &out);
  EXPECT_EQ(out.scale, 1.0f / (127.0f / 0.00001f));
  for (int8_t v : q) EXPECT_EQ(v, 0);
}

struct MmCase {
  int64_t k, n, t;
};

TEST(I8sOps, MulMatAddAndReluMatchReference) {
  std::mt19937 rng(2);
  for (MmCase c : {MmCase{8, 32, 1}, MmCase{32, 128, 37}, MmCase{64, 33, 100}, MmCase{128, 64, 300},
                   MmCase{256, 200, 5}, MmCase{40, 7, 513}}) {
    auto w = RandI8(rng, static_cast<size_t>(c.k * c.n));
    auto x = RandI8(rng, static_cast<size_t>(c.k * c.t));
    auto bias = RandF(rng, static_cast<size_t>(c.n), -3, 3);
    const float ws = 0.0123f, xs = 0.071f;
    const I8sMatrix m = PackI8sMatrix(w.data(), c.k, c.n, ws);
    const auto y = RefMatmul(w, ws, x, xs, bias.data(), c.k, c.n, c.t);
    for (bool relu : {false, true}) {
      const RefT ref = RefRequant(y, /*half_even=*/false, relu);
      for (int nth : kThreadCounts) {
        ThreadPool pool(nth);
        std::vector<float> scratch(y.size());
        std::vector<int8_t> q(y.size());
        I8sTensor in{x.data(), c.k, c.t, xs}, out{q.data()};
        MulMatAdd(pool, m, bias.data(), in, relu, scratch.data(), &out);
        EXPECT_EQ(out.ne0, c.n);
        EXPECT_EQ(out.ne1, c.t);
        ExpectSame(ref, out, relu ? "mul_mat_add_relu" : "mul_mat_add", nth);
      }
    }
  }
}

TEST(I8sOps, ReluAbsmaxIsTakenBeforeRelu) {
  // One large negative pre-activation sets G; the positives must be scaled by it.
  std::vector<int8_t> w = {1, -100};  // K=1, N=2
  std::vector<int8_t> x = {100};
  const I8sMatrix m = PackI8sMatrix(w.data(), 1, 2, 1.0f);
  ThreadPool pool(1);
  std::vector<float> scratch(2);
  std::vector<int8_t> q(2);
  I8sTensor in{x.data(), 1, 1, 1.0f}, out{q.data()};
  MulMatAdd(pool, m, nullptr, in, /*relu=*/true, scratch.data(), &out);
  EXPECT_EQ(out.scale, 10000.0f / 127.0f);
  EXPECT_EQ(q[0], 1);  // 100 * 127/10000 = 1.27 -> 1
  EXPECT_EQ(q[1], 0);
}

// Exact ties: the random cases above almost never land on .5, so pin the rounding of each
// op with inputs whose scaled values are k + 0.5 (G = 127 makes 127/G = 1).
TEST(I8sOps, TiesRoundAsPublished) {
  ThreadPool pool(2);
  {  // mul_mat_add: half away from zero. K = 2, W = {2, 1}, c = 0.5.
    std::vector<int8_t> w = {2, 1};
    std::vector<int8_t> x = {127, 0, 2, 1, -2, -1, 3, 1, 0, 1, 0, -1};
    const I8sMatrix m = PackI8sMatrix(w.data(), 2, 1, 0.5f);
    std::vector<float> scratch(6);
    std::vector<int8_t> q(6);
    I8sTensor in{x.data(), 2, 6, 1.0f}, out{q.data()};
    MulMatAdd(pool, m, nullptr, in, false, scratch.data(), &out);
    EXPECT_EQ(q, (std::vector<int8_t>{127, 3, -3, 4, 1, -1}));
  }
  {  // add_scaled: half to even. y = a + 0.5 b.
    std::vector<int8_t> a = {127, 2, -2, 3, 0, 0}, b = {0, 1, -1, 1, 1, -1}, q(6);
    I8sTensor ta{a.data(), 6, 1, 1.0f}, tb{b.data(), 6, 1, 0.5f}, out{q.data()};
    AddScaled(pool, ta, tb, nullptr, &out);
    EXPECT_EQ(q, (std::vector<int8_t>{127, 2, -2, 4, 0, 0}));
  }
  {  // depthwise: half away (it is mul_mat_add's depthwise branch). K = 1, c = 0.5.
    std::vector<int8_t> w = {2, 1}, x = {127, 0, 0, 5, 0, -5, 0, 3}, q(8);
    const I8sDepthwise dw = PackDepthwise(w.data(), 1, 2, 0.5f);
    I8sTensor in{x.data(), 2, 4, 1.0f}, out{q.data()};
    DepthwiseConvAdd(pool, dw, nullptr, in, &out);
    EXPECT_EQ(q, (std::vector<int8_t>{127, 0, 0, 3, 0, -3, 0, 2}));
  }
}

// The ops requantize through the kernel table; pin that it rounds as they assume.
TEST(I8sOps, KernelRequantMatchesRoundfAndNearbyint) {
  std::vector<float> vs;
  for (int i = -133120; i <= 133120; ++i) {  // every multiple of 1/1024 in [-130, 130]
    const float v = static_cast<float>(i) / 1024.0f;
    vs.push_back(v);
    vs.push_back(std::nextafter(v, 1000.0f));
    vs.push_back(std::nextafter(v, -1000.0f));
  }
  vs.push_back(0.49999997f);
  vs.push_back(-0.49999997f);
  const kernels::KernelTable& kt = kernels::Kernels();
  std::vector<int8_t> away(vs.size()), even(vs.size());
  kt.requant_f32_i8(vs.data(), static_cast<int64_t>(vs.size()), 1.0f, kernels::Round::kHalfAway,
                    away.data());
  kt.requant_f32_i8(vs.data(), static_cast<int64_t>(vs.size()), 1.0f, kernels::Round::kHalfEven,
                    even.data());
  for (size_t i = 0; i < vs.size(); ++i) {
    const float c = std::min(127.0f, std::max(-127.0f, vs[i]));
    ASSERT_EQ(away[i], static_cast<int8_t>(std::roundf(c))) << vs[i];
    ASSERT_EQ(even[i], static_cast<int8_t>(std::nearbyint(c))) << vs[i];
  }
}

TEST(I8sOps, DegenerateScalesGiveZerosNotNaN) {
  std::mt19937 rng(3);
  const int64_t K = 16, N = 8, T = 10;
  auto w = RandI8(rng, K * N);
  std::vector<int8_t> x(K * T, 0);
  const I8sMatrix m = PackI8sMatrix(w.data(), K, N, 0.5f);
  for (int nth : kThreadCounts) {
    ThreadPool pool(nth);
    std::vector<float> scratch(N * T);
    std::vector<int8_t> q(N * T, 9);
    I8sTensor in{x.data(), K, T, 0.0f}, out{q.data()};
    MulMatAdd(pool, m, nullptr, in, false, scratch.data(), &out);
    EXPECT_EQ(out.scale, 0.0f);
    for (int8_t v : q) EXPECT_EQ(v, 0);
    // With a bias, W*0 + b = b: the output is the bias, quantized.
    std::vector<float> bias(N);
    for (int64_t i = 0; i < N; ++i) bias[i] = static_cast<float>(i) - 3.5f;
    MulMatAdd(pool, m, bias.data(), in, false, scratch.data(), &out);
    std::vector<float> yb;
    for (int64_t t = 0; t < T; ++t) yb.insert(yb.end(), bias.begin(), bias.end());
    ExpectSame(RefRequant(yb, false, false), out, "zero input + bias", nth);
    // RMSNorm and add_scaled of zero tensors.
    std::vector<float> gamma(K, 1.0f), rows(T);
    std::vector<int8_t> o2(K * T, 9);
    I8sTensor r{o2.data()};
    RmsNormScaled(pool, in, gamma.data(), 1e-5f, rows.data(), &r);
    EXPECT_EQ(r.scale, 0.0f);
    for (int8_t v : o2) EXPECT_EQ(v, 0);
    std::fill(o2.begin(), o2.end(), 9);
    AddScaled(pool, in, in, gamma.data(), &r);
    EXPECT_EQ(r.scale, 0.0f);
    for (int8_t v : o2) EXPECT_EQ(v, 0);
    std::vector<float> deq(K * T, 1.0f);
    DequantizeI8s(r, deq.data());
    for (float v : deq) EXPECT_EQ(v, 0.0f);
  }
}

// ggml's im2col_asym on x{IW, C} (time contiguous): column t, element c*K + k.
std::vector<int8_t> RefIm2col(const std::vector<int8_t>& x, int64_t iw, int64_t ch, int64_t K,
                              int64_t s, int64_t lp, int64_t rp, int64_t* ow_out) {
  const int64_t ow = (iw + lp + rp - K) / s + 1;
  *ow_out = ow > 0 ? ow : 0;
  std::vector<int8_t> col(static_cast<size_t>(std::max<int64_t>(0, ow) * ch * K), 0);
  for (int64_t t = 0; t < ow; ++t)
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t i = t * s - lp + k;
        if (i >= 0 && i < iw) col[(t * ch + c) * K + k] = x[c * iw + i];
      }
  return col;
}

TEST(I8sOps, Im2colAsymMatchesReference) {
  std::mt19937 rng(4);
  struct C {
    int64_t iw, ch, k, s, lp, rp;
  };
  for (C c : {C{20, 3, 8, 1, 7, 0}, C{21, 2, 4, 2, 2, 0}, C{9, 4, 16, 5, 11, 0},
              C{3, 2, 16, 8, 8, 0}, C{17, 1, 5, 3, 1, 4}}) {
    auto x = RandI8(rng, c.iw * c.ch);
    int64_t ow;
    RefT ref{RefIm2col(x, c.iw, c.ch, c.k, c.s, c.lp, c.rp, &ow), 0.25f};
    EXPECT_EQ(ow, Conv1dOutLen(c.iw, c.k, c.s, c.lp, c.rp));
    for (int nth : kThreadCounts) {
      ThreadPool pool(nth);
      std::vector<int8_t> q(ref.q.size() + 1);
      I8sTensor in{x.data(), c.iw, c.ch, 0.25f}, out{q.data()};
      Im2colAsym(pool, in, c.k, c.s, c.lp, c.rp, &out);
      EXPECT_EQ(out.ne0, c.ch * c.k);
      EXPECT_EQ(out.ne1, ow);
      ExpectSame(ref, out, "im2col_asym", nth);
    }
  }
}

TEST(I8sOps, OutputLengthFollowsGgmlTruncation) {
  // lp = K - s, rp = 0: floor(IW/s) for IW >= s, 1 for 0 < IW < s, 0 for IW = 0.
  for (int64_t s : {1, 2, 4, 5, 8})
    for (int64_t iw = 0; iw < 50; ++iw) {
      const int64_t k = s == 1 ? 8 : 2 * s;
      const int64_t want = iw == 0 ? 0 : (iw < s ? 1 : iw / s);
      EXPECT_EQ(Conv1dOutLen(iw, k, s, k - s, 0), want) << "s=" << s << " iw=" << iw;
    }
}

TEST(I8sOps, TransposeCarriesTheScale) {
  std::mt19937 rng(5);
  for (auto [n0, n1] : {std::pair<int64_t, int64_t>{1, 1}, {3, 70}, {65, 33}, {128, 2}}) {
    auto x = RandI8(rng, n0 * n1);
    for (int nth : kThreadCounts) {
      ThreadPool pool(nth);
      std::vector<int8_t> a(n0 * n1), b(n0 * n1);
      I8sTensor in{x.data(), n0, n1, 0.037f}, mid{a.data()}, back{b.data()};
      TransposeI8s(pool, in, &mid);
      EXPECT_EQ(mid.ne0, n1);
      EXPECT_EQ(mid.ne1, n0);
      EXPECT_EQ(mid.scale, 0.037f);
      for (int64_t i = 0; i < n1; ++i)
        for (int64_t j = 0; j < n0; ++j) ASSERT_EQ(a[j * n1 + i], x[i * n0 + j]);
      TransposeI8s(pool, mid, &back);
      EXPECT_EQ(back.scale, 0.037f);
      EXPECT_EQ(b, x);
      // Dequantized values survive the round trip too (the scale was not dropped).
      std::vector<float> d0(x.size()), d1(x.size());
      DequantizeI8s(in, d0.data());
      DequantizeI8s(back, d1.data());
      EXPECT_EQ(d0, d1);
    }
  }
}

TEST(I8sOps, Conv1dMatchesIm2colThenMatmul) {
  std::mt19937 rng(6);
  // zero: leading taps zeroed as the published stride-5 convs store them (10 taps padded
  // to 16); PackConv1d drops them, up to the left padding, and must give the same bytes.
  // Products of at most 32 taps x channels (the first, sixth and last cases) are computed
  // twice instead of stored where the ISA fuses the epilogue (AVX-512): same bytes. Both
  // packings (u8: the input flipped in the kernel, the padding columns too).
  struct C {
    int64_t k, ic, oc, s, zero;
  };
  for (C c : {C{8, 1, 32, 1, 0}, C{4, 32, 64, 2, 0}, C{16, 8, 16, 5, 0}, C{16, 8, 16, 5, 6},
              C{8, 16, 8, 4, 0}, C{16, 4, 8, 8, 0}, C{16, 4, 8, 8, 8}, C{4, 3, 5, 2, 3}}) {
    for (int64_t iw : {int64_t{1}, c.s - 1, c.s, c.s + 1, int64_t{37}, int64_t{203}}) {
      if (iw < 1) continue;
      const int64_t lp = c.k - c.s;
      auto w = RandI8(rng, c.k * c.ic * c.oc);  // stored {K, IC, OC}
      for (size_t i = 0; i < w.size(); ++i)
        if (static_cast<int64_t>(i) % c.k < c.zero) w[i] = 0;
      auto x_tc = RandI8(rng, iw * c.ic);  // ggml layout {IW, IC}
      auto bias = RandF(rng, c.oc, -1, 1);
      const float ws = 0.02f, xs = 0.3f;
      int64_t ow;
      auto col = RefIm2col(x_tc, iw, c.ic, c.k, c.s, lp, 0, &ow);
      auto y = RefMatmul(w, ws, col, xs, bias.data(), c.k * c.ic, c.oc, ow);
      const RefT ref = RefRequant(y, false, false);
      // tern keeps activations channel-major {IC, IW}.
      std::vector<int8_t> x_ct(x_tc.size());
      for (int64_t i = 0; i < iw; ++i)
        for (int64_t ch = 0; ch < c.ic; ++ch) x_ct[i * c.ic + ch] = x_tc[ch * iw + i];
      for (bool u8 : {false, true}) {
        const I8sConv1d conv = PackConv1d(w.data(), c.k, c.ic, c.oc, ws, c.s, lp, 0, u8);
        const int64_t dropped = std::min({c.zero, lp, c.k - 1});
        EXPECT_EQ(conv.kernel, c.k - dropped);
        EXPECT_EQ(conv.lp, lp - dropped);
        EXPECT_EQ(conv.w.u8, u8 && kernels::Kernels().gemm_u8_i8 != nullptr);
        const Conv1dScratch sb = Conv1dScratchBytes(conv, iw);
        for (int nth : kThreadCounts) {
          ThreadPool pool(nth);
          std::vector<float> ys(sb.y_bytes / sizeof(float));
          std::vector<int8_t> cols(sb.col_bytes + 1), q(y.size());
          I8sTensor in{x_ct.data(), c.ic, iw, xs}, out{q.data()};
          Conv1dAdd(pool, conv, bias.data(), in, ys.data(), cols.data(), &out);
          EXPECT_EQ(out.ne0, c.oc);
          EXPECT_EQ(out.ne1, ow);
          ExpectSame(ref, out, u8 ? "conv1d u8" : "conv1d", nth);
        }
      }
    }
  }
}

TEST(I8sOps, RmsNormScaledMatchesReference) {
  std::mt19937 rng(7);
  for (auto [C, T] : {std::pair<int64_t, int64_t>{8, 1}, {32, 45}, {40, 300}, {512, 9}}) {
    auto x = RandI8(rng, C * T);
    auto gamma = RandF(rng, C, 0.2f, 2.0f);
    const float xs = 0.013f, eps = 1e-5f;
    const float eps_q = (float)(eps / ((double)xs * (double)xs));
    std::vector<float> y(C * T);
    for (int64_t t = 0; t < T; ++t) {
      int64_t ss = 0;
      for (int64_t i = 0; i < C; ++i) ss += x[t * C + i] * x[t * C + i];
      const float r = 1.0f / sqrtf((float)ss / (float)C + eps_q);
      for (int64_t i = 0; i < C; ++i) y[t * C + i] = ((float)x[t * C + i] * r) * gamma[i];
    }
    const RefT ref = RefRequant(y, /*half_even=*/true, false);
    for (int nth : kThreadCounts) {
      ThreadPool pool(nth);
      for (bool stored : {false, true}) {
        std::vector<float> rows(T), ys(stored ? C * T : 0);
        float* y_out = stored ? ys.data() : nullptr;
        std::vector<int8_t> q(C * T);
        I8sTensor in{x.data(), C, T, xs}, out{q.data()};
        RmsNormScaled(pool, in, gamma.data(), eps, rows.data(), &out, y_out);
        ExpectSame(ref, out, stored ? "rms_norm_scaled stored" : "rms_norm_scaled", nth);
        std::vector<int8_t> inplace = x;  // out aliasing x
        I8sTensor io{inplace.data(), C, T, xs};
        RmsNormScaled(pool, io, gamma.data(), eps, rows.data(), &io, y_out);
        ExpectSame(ref, io, "rms_norm_scaled in place", nth);
      }
    }
  }
}

TEST(I8sOps, AddScaledMatchesReferenceAtAnyThreadCount) {
  std::mt19937 rng(8);
  for (auto [C, T] : {std::pair<int64_t, int64_t>{8, 1}, {32, 45}, {24, 333}, {1024, 7}}) {
    auto a = RandI8(rng, C * T), b = RandI8(rng, C * T);
    auto gamma = RandF(rng, C, -0.5f, 0.5f);
    const float sa = 0.011f, sb = 0.093f;
    for (bool use_gamma : {true, false}) {
      std::vector<float> y(C * T);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < C; ++i) {
          const float ga = (float)a[t * C + i] * sa;
          y[t * C + i] = (use_gamma ? ga * gamma[i] : ga) + (float)b[t * C + i] * sb;
        }
      const RefT ref = RefRequant(y, true, false);
      for (int nth : kThreadCounts) {
        ThreadPool pool(nth);
        for (bool stored : {false, true}) {
          std::vector<float> ys(stored ? C * T : 0);
          float* y_out = stored ? ys.data() : nullptr;
          std::vector<int8_t> q(C * T);
          I8sTensor ta{a.data(), C, T, sa}, tb{b.data(), C, T, sb}, out{q.data()};
          const float* g = use_gamma ? gamma.data() : nullptr;
          AddScaled(pool, ta, tb, g, &out, y_out);
          ExpectSame(ref, out, stored ? "add_scaled stored" : "add_scaled", nth);
          std::vector<int8_t> bb = b;  // the residual updated in place
          I8sTensor tio{bb.data(), C, T, sb};
          AddScaled(pool, ta, tio, g, &tio, y_out);
          ExpectSame(ref, tio, "add_scaled in place", nth);
        }
      }
    }
  }
}

TEST(I8sOps, DepthwiseMatchesPermuteIm2colReference) {
  std::mt19937 rng(9);
  for (auto [C, T, K] : {std::tuple<int64_t, int64_t, int64_t>{8, 1, 8},
                         {32, 50, 8},
                         {300, 17, 8},
                         {16, 5, 4},
                         {64, 260, 8},
                         {600, 9, 3},
                         {24, 1100, 8},
                         {520, 300, 8}}) {
    auto x_ct = RandI8(rng, C * T);  // tern layout {C, T}
    auto w = RandI8(rng, K * C);     // stored {K, 1, C}
    auto bias = RandF(rng, C, -2, 2);
    const float ws = 0.004f, xs = 0.08f;
    // Spec route: permute to {T, C}, im2col per channel (K taps, lp = K-1), dot per channel,
    // then back to {C, T}.
    std::vector<int8_t> x_tc(C * T);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) x_tc[c * T + t] = x_ct[t * C + c];
    std::vector<float> y(C * T);
    for (int64_t c = 0; c < C; ++c) {
      std::vector<int8_t> one(x_tc.begin() + c * T, x_tc.begin() + (c + 1) * T);
      int64_t ow;
      auto col = RefIm2col(one, T, 1, K, 1, K - 1, 0, &ow);
      ASSERT_EQ(ow, T);
      for (int64_t t = 0; t < T; ++t) {
        int32_t acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += int32_t{w[c * K + k]} * int32_t{col[t * K + k]};
        y[t * C + c] = (float)acc * (ws * xs) + bias[c];
      }
    }
    const RefT ref = RefRequant(y, false, false);
    const I8sDepthwise dw = PackDepthwise(w.data(), K, C, ws);
    for (int nth : kThreadCounts) {
      ThreadPool pool(nth);
      for (bool stored : {false, true}) {
        std::vector<float> ys(stored ? C * T : 0);
        std::vector<int8_t> q(C * T);
        I8sTensor in{x_ct.data(), C, T, xs}, out{q.data()};
        DepthwiseConvAdd(pool, dw, bias.data(), in, &out, stored ? ys.data() : nullptr);
        ExpectSame(ref, out, stored ? "depthwise stored" : "depthwise", nth);
      }
    }
  }
}

// Both packings (u8: for unsigned activations, where the ISA has gemm_u8_i8: FC1's input
// flipped in the kernel, FC2's ReLU hidden read as it is).
TEST(I8sOps, MlpStoredAndRecomputedMatchTheTwoOps) {
  std::mt19937 rng(10);
  // C = 10: FC1's K ends in a partial quad, whose missing bytes the kernel's flip reads as
  // 0x80 (against zero weights).
  for (auto [C, T] : {std::pair<int64_t, int64_t>{8, 3}, {32, 70}, {16, 257}, {10, 40}}) {
    const int64_t H = 4 * C;
    auto w1 = RandI8(rng, C * H), w2 = RandI8(rng, H * C), x = RandI8(rng, C * T);
    auto b1 = RandF(rng, H, -1, 1), b2 = RandF(rng, C, -1, 1);
    const float s1 = 0.01f, s2 = 0.02f, xs = 0.05f;
    const RefT h = RefRequant(RefMatmul(w1, s1, x, xs, b1.data(), C, H, T), false, true);
    const RefT ref = RefRequant(RefMatmul(w2, s2, h.q, h.scale, b2.data(), H, C, T), false, false);
    for (bool u8 : {false, true}) {
      const I8sMatrix m1 = PackI8sMatrix(w1.data(), C, H, s1, u8);
      const I8sMatrix m2 = PackI8sMatrix(w2.data(), H, C, s2, u8);
      EXPECT_EQ(m1.u8, u8 && kernels::Kernels().gemm_u8_i8 != nullptr);
      for (size_t budget : {size_t{0}, size_t{1} << 30}) {
        for (int nth : kThreadCounts) {
          ThreadPool pool(nth);
          const MlpScratch sb = MlpScratchBytes(T, C, H, nth, budget);
          EXPECT_EQ(sb.store, budget != 0);
          std::vector<uint8_t> scratch(sb.bytes);
          std::vector<int8_t> q(C * T);
          I8sTensor in{x.data(), C, T, xs}, out{q.data()};
          MlpReluI8s(pool, m1, b1.data(), m2, b2.data(), in, budget, scratch.data(), sb.bytes,
                     &out);
          const std::string what =
              std::string(budget ? "mlp stored" : "mlp recomputed") + (u8 ? " u8" : "");
          ExpectSame(ref, out, what.c_str(), nth);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tern::ops
