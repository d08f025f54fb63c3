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
  TERN_CHECK(kernel >= 1 && kernel <= kMaxDepthwiseKernel);
  I8sDepthwise d;
  d.kernel = kernel;
  d.channels = channels;
  d.scale = scale;
  d.w.resize(static_cast<size_t>(kernel * channels));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < kernel; ++k) d.w[k * channels + c] = static_cast<float>(stored[c * kernel + k]);
  return d;
}

namespace {

constexpr int64_t kDwChunk = 256;  // channels per tile (wide enough to vectorize)

// The float outputs of time steps [r0, r1), channels [c0, c1) (c1 - c0 <= kDwChunk), into
// `tile` (row stride c1 - c0). The input rows the tile needs are converted to float once.
int64_t DepthwiseTile(const I8sDepthwise& w, const float* bias, const I8sTensor& x, float c,
                      int64_t r0, int64_t r1, int64_t c0, int64_t c1, float* tile) {
  const int64_t C = w.channels, K = w.kernel, nc = c1 - c0;
  const int64_t in0 = r0 - (K - 1);  // first input row (may be negative: zero padding)
  alignas(64) float xf[kTileFloats + (kMaxDepthwiseKernel - 1) * kDwChunk];
  for (int64_t i = in0; i < r1; ++i) {
    float* d = xf + (i - in0) * nc;
    if (i < 0) {
      std::fill(d, d + nc, 0.0f);
    } else {
      const int8_t* s = x.q + i * C + c0;
      for (int64_t j = 0; j < nc; ++j) d[j] = static_cast<float>(s[j]);
    }
  }
  const float* wv = w.w.data();
  for (int64_t t = r0; t < r1; ++t) {
    float* o = tile + (t - r0) * nc;
    std::fill(o, o + nc, 0.0f);
    for (int64_t k = 0; k < K; ++k) {
      const float* wk = wv + k * C + c0;
      const float* xi = xf + (t + k - (K - 1) - in0) * nc;
      for (int64_t j = 0; j < nc; ++j) o[j] += wk[j] * xi[j];
    }
    if (bias) {
      const float* b = bias + c0;
      for (int64_t j = 0; j < nc; ++j) o[j] = o[j] * c + b[j];
    } else {
      for (int64_t j = 0; j < nc; ++j) o[j] = o[j] * c;
    }
  }
  return (r1 - r0) * nc;
}

// Tiles of whole rows when C fits a chunk (contiguous output), else one row per chunk.
template <typename Fn>
void ForEachDwTile(int64_t t0, int64_t t1, int64_t C, Fn&& fn) {
  const int64_t nc_max = std::min(C, kDwChunk);
  const int64_t rows = kTileFloats / nc_max;
  if (C <= kDwChunk) {
    for (int64_t r = t0; r < t1; r += rows) fn(r, std::min(t1, r + rows), int64_t{0}, C);
  } else {
    for (int64_t r = t0; r < t1; ++r)
      for (int64_t c = 0; c < C; c += kDwChunk) fn(r, r + 1, c, std::min(C, c + kDwChunk));
  }
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
    ForEachDwTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      m = std::max(m, kt.absmax_f32(tile, DepthwiseTile(w, bias, x, c, r0, r1, c0, c1, tile)));
    });
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C * w.kernel, [&](int64_t t0, int64_t t1) {
    alignas(64) float tile[kTileFloats];
    ForEachDwTile(t0, t1, C, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      const int64_t len = DepthwiseTile(w, bias, x, c, r0, r1, c0, c1, tile);
      kt.requant_f32_i8(tile, len, inv, kernels::Round::kHalfAway, out->q + r0 * C + c0);
    });
  });
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g);
}

}  // namespace tern::ops
