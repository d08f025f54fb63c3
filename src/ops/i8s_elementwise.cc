#include "ops/i8s_elementwise.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "ops/i8s_internal.h"

namespace tern::ops {

using i8s_detail::AbsF;
using i8s_detail::AtomicAbsMax;
using i8s_detail::InvScale;
using i8s_detail::OutScale;
using i8s_detail::RequantHalfAway;
using i8s_detail::RequantHalfEven;

namespace {
// Work below this many values runs on the calling thread (waking the pool costs more).
constexpr int64_t kMinParallel = 16 * 1024;

template <typename Fn>
void ForRows(ThreadPool& pool, int64_t rows, int64_t row_len, Fn&& fn) {
  if (pool.size() == 1 || rows * row_len < kMinParallel) {
    if (rows > 0) fn(int64_t{0}, rows);
    return;
  }
  pool.ParallelFor(rows, 1, fn);
}
}  // namespace

// ---- rms_norm_scaled --------------------------------------------------------------------------

void RmsNormScaled(ThreadPool& pool, const I8sTensor& x, const float* gamma, float eps,
                   float* row_scratch, I8sTensor* out) {
  const int64_t C = x.ne0, T = x.ne1;
  const int64_t n = x.size();
  out->ne0 = C;
  out->ne1 = T;
  if (x.scale == 0.0f) {  // all-zero input: eps' would be inf; the norm of zeros is zero
    std::fill(out->q, out->q + n, int8_t{0});
    out->scale = 0;
    return;
  }
  const double xs = x.scale;
  const float eps_q = static_cast<float>(static_cast<double>(eps) / (xs * xs));
  AtomicAbsMax gmax;
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    float m = 0;
    for (int64_t t = t0; t < t1; ++t) {
      const int8_t* q = x.q + t * C;
      int64_t ss = 0;
      for (int64_t i = 0; i < C; ++i) ss += int32_t{q[i]} * int32_t{q[i]};
      const float r =
          1.0f / std::sqrt(static_cast<float>(ss) / static_cast<float>(C) + eps_q);
      row_scratch[t] = r;
      for (int64_t i = 0; i < C; ++i)
        m = std::max(m, AbsF((static_cast<float>(q[i]) * r) * gamma[i]));
    }
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int8_t* q = x.q + t * C;
      int8_t* o = out->q + t * C;
      const float r = row_scratch[t];
      for (int64_t i = 0; i < C; ++i)
        o[i] = RequantHalfEven((static_cast<float>(q[i]) * r) * gamma[i], inv);
    }
  });
  out->scale = OutScale(g);
}

// ---- add_scaled -------------------------------------------------------------------------------

void AddScaled(ThreadPool& pool, const I8sTensor& a, const I8sTensor& b, const float* gamma,
               I8sTensor* out) {
  TERN_CHECK(a.ne0 == b.ne0 && a.ne1 == b.ne1);
  const int64_t C = a.ne0, T = a.ne1;
  const float sa = a.scale, sb = b.scale;
  auto value = [&](int64_t t, int64_t i) {
    const int64_t j = t * C + i;
    const float ga = static_cast<float>(a.q[j]) * sa;
    return (gamma ? ga * gamma[i] : ga) + static_cast<float>(b.q[j]) * sb;
  };
  AtomicAbsMax gmax;
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    float m = 0;
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t i = 0; i < C; ++i) m = std::max(m, AbsF(value(t, i)));
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t i = 0; i < C; ++i) out->q[t * C + i] = RequantHalfEven(value(t, i), inv);
  });
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g);
}

// ---- depthwise ----------------------------------------------------------------------------------

I8sDepthwise PackDepthwise(const int8_t* stored, int64_t kernel, int64_t channels, float scale) {
  I8sDepthwise d;
  d.kernel = kernel;
  d.channels = channels;
  d.scale = scale;
  d.w.resize(static_cast<size_t>(kernel * channels));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < kernel; ++k) d.w[k * channels + c] = stored[c * kernel + k];
  return d;
}

namespace {

// Outputs of time steps [t0, t1): kQuant false returns their absmax, true writes them.
template <bool kQuant>
float DepthwiseRange(const I8sDepthwise& w, const float* bias, const I8sTensor& x, float c,
                     float inv, int64_t t0, int64_t t1, int8_t* out) {
  const int64_t C = w.channels, K = w.kernel;
  constexpr int64_t kChunk = 256;
  int32_t acc[kChunk];
  float m = 0;
  for (int64_t t = t0; t < t1; ++t) {
    for (int64_t c0 = 0; c0 < C; c0 += kChunk) {
      const int64_t nc = std::min(kChunk, C - c0);
      std::fill(acc, acc + nc, 0);
      for (int64_t k = std::max<int64_t>(0, K - 1 - t); k < K; ++k) {
        const int16_t* wk = w.w.data() + k * C + c0;
        const int8_t* xi = x.q + (t + k - (K - 1)) * C + c0;
        for (int64_t j = 0; j < nc; ++j) acc[j] += int32_t{wk[j]} * int32_t{xi[j]};
      }
      const float* b = bias ? bias + c0 : nullptr;
      if constexpr (kQuant) {
        int8_t* o = out + t * C + c0;
        for (int64_t j = 0; j < nc; ++j)
          o[j] = RequantHalfAway(static_cast<float>(acc[j]) * c + (b ? b[j] : 0.0f), inv);
      } else {
        for (int64_t j = 0; j < nc; ++j)
          m = std::max(m, AbsF(static_cast<float>(acc[j]) * c + (b ? b[j] : 0.0f)));
      }
    }
  }
  return m;
}

}  // namespace

void DepthwiseConvAdd(ThreadPool& pool, const I8sDepthwise& w, const float* bias,
                      const I8sTensor& x, I8sTensor* out) {
  TERN_CHECK(x.ne0 == w.channels && out->q != x.q);
  const int64_t C = x.ne0, T = x.ne1;
  const float c = w.scale * x.scale;
  AtomicAbsMax gmax;
  ForRows(pool, T, C * w.kernel, [&](int64_t t0, int64_t t1) {
    gmax.Update(DepthwiseRange<false>(w, bias, x, c, 0, t0, t1, nullptr));
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C * w.kernel, [&](int64_t t0, int64_t t1) {
    DepthwiseRange<true>(w, bias, x, c, inv, t0, t1, out->q);
  });
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g);
}

}  // namespace tern::ops
