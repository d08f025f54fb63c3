#include "ops/i8s_elementwise.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "kernels/kernels.h"
#include "ops/i8s_internal.h"

namespace tern::ops {

using i8s_detail::AtomicAbsMax;
using i8s_detail::ForEachTile;
using i8s_detail::InvScale;
using i8s_detail::kTileFloats;
using i8s_detail::OutScale;

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
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t C = x.ne0, T = x.ne1;
  const int64_t n = x.size();
  TERN_CHECK(C < (int64_t{1} << 17));  // sum of squares fits int32
  out->ne0 = C;
  out->ne1 = T;
  if (x.scale == 0.0f) {  // all-zero input: eps' would be inf; the norm of zeros is zero
    std::fill(out->q, out->q + n, int8_t{0});
    out->scale = 0;
    return;
  }
  const double xs = x.scale;
  const float eps_q = static_cast<float>(static_cast<double>(eps) / (xs * xs));
  // The values of a tile: rows [r0, r1), channels [c0, c1).
  auto fill = [&](float* tile, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const int64_t w = c1 - c0;
    for (int64_t r = r0; r < r1; ++r) {
      const int8_t* q = x.q + r * C + c0;
      const float* g = gamma + c0;
      const float rr = row_scratch[r];
      float* o = tile + (r - r0) * w;
      for (int64_t i = 0; i < w; ++i) o[i] = (static_cast<float>(q[i]) * rr) * g[i];
    }
    return (r1 - r0) * w;
  };
  AtomicAbsMax gmax;
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int8_t* q = x.q + t * C;
      int32_t ss = 0;
      for (int64_t i = 0; i < C; ++i) ss += int32_t{q[i]} * int32_t{q[i]};
      row_scratch[t] = 1.0f / std::sqrt(static_cast<float>(ss) / static_cast<float>(C) + eps_q);
    }
    alignas(64) float tile[kTileFloats];
    float m = 0;
    ForEachTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      m = std::max(m, kt.absmax_f32(tile, fill(tile, r0, r1, c0, c1)));
    });
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kTileFloats];
    ForEachTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      const int64_t len = fill(tile, r0, r1, c0, c1);
      kt.requant_f32_i8(tile, len, inv, kernels::Round::kHalfEven, out->q + r0 * C + c0);
    });
  });
  out->scale = OutScale(g);
}

// ---- add_scaled -------------------------------------------------------------------------------

void AddScaled(ThreadPool& pool, const I8sTensor& a, const I8sTensor& b, const float* gamma,
               I8sTensor* out) {
  TERN_CHECK(a.ne0 == b.ne0 && a.ne1 == b.ne1);
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t C = a.ne0, T = a.ne1;
  const float sa = a.scale, sb = b.scale;
  auto fill = [&](float* tile, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const int64_t w = c1 - c0;
    for (int64_t r = r0; r < r1; ++r) {
      const int8_t* qa = a.q + r * C + c0;
      const int8_t* qb = b.q + r * C + c0;
      float* o = tile + (r - r0) * w;
      if (gamma) {
        const float* g = gamma + c0;
        for (int64_t i = 0; i < w; ++i)
          o[i] = (static_cast<float>(qa[i]) * sa) * g[i] + static_cast<float>(qb[i]) * sb;
      } else {
        for (int64_t i = 0; i < w; ++i)
          o[i] = static_cast<float>(qa[i]) * sa + static_cast<float>(qb[i]) * sb;
      }
    }
    return (r1 - r0) * w;
  };
  AtomicAbsMax gmax;
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kTileFloats];
    float m = 0;
    ForEachTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      m = std::max(m, kt.absmax_f32(tile, fill(tile, r0, r1, c0, c1)));
    });
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kTileFloats];
    ForEachTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      const int64_t len = fill(tile, r0, r1, c0, c1);
      kt.requant_f32_i8(tile, len, inv, kernels::Round::kHalfEven, out->q + r0 * C + c0);
    });
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

// The float outputs of time steps [r0, r1), channels [c0, c1), into `tile` (row stride
// c1 - c0). Vectorized over channels: the taps were transposed to [k][c] at load.
int64_t DepthwiseTile(const I8sDepthwise& w, const float* bias, const I8sTensor& x, float c,
                      int64_t r0, int64_t r1, int64_t c0, int64_t c1, float* tile) {
  const int64_t C = w.channels, K = w.kernel, nc = c1 - c0;
  alignas(64) int32_t acc[kTileFloats];
  for (int64_t t = r0; t < r1; ++t) {
    int32_t* a = acc + (t - r0) * nc;
    std::fill(a, a + nc, 0);
    for (int64_t k = std::max<int64_t>(0, K - 1 - t); k < K; ++k) {
      const int16_t* wk = w.w.data() + k * C + c0;
      const int8_t* xi = x.q + (t + k - (K - 1)) * C + c0;
      for (int64_t j = 0; j < nc; ++j) a[j] += int32_t{wk[j]} * int32_t{xi[j]};
    }
    float* o = tile + (t - r0) * nc;
    if (bias) {
      const float* b = bias + c0;
      for (int64_t j = 0; j < nc; ++j) o[j] = static_cast<float>(a[j]) * c + b[j];
    } else {
      for (int64_t j = 0; j < nc; ++j) o[j] = static_cast<float>(a[j]) * c;
    }
  }
  return (r1 - r0) * nc;
}

}  // namespace

void DepthwiseConvAdd(ThreadPool& pool, const I8sDepthwise& w, const float* bias,
                      const I8sTensor& x, I8sTensor* out) {
  TERN_CHECK(x.ne0 == w.channels && out->q != x.q);
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t C = x.ne0, T = x.ne1;
  const float c = w.scale * x.scale;
  AtomicAbsMax gmax;
  ForRows(pool, T, C * w.kernel, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kTileFloats];
    float m = 0;
    ForEachTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      m = std::max(m, kt.absmax_f32(tile, DepthwiseTile(w, bias, x, c, r0, r1, c0, c1, tile)));
    });
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C * w.kernel, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kTileFloats];
    ForEachTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      const int64_t len = DepthwiseTile(w, bias, x, c, r0, r1, c0, c1, tile);
      kt.requant_f32_i8(tile, len, inv, kernels::Round::kHalfAway, out->q + r0 * C + c0);
    });
  });
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g);
}

}  // namespace tern::ops
