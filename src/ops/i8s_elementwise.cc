#include "ops/i8s_elementwise.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>

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

// The two passes every op here shares, over T rows of C values.
//   tiles(t0, t1, fn): calls fn(r0, r1, c0, c1) for tiles that are whole rows or one row's
//                      column chunk (so each tile is contiguous in a {C, T} tensor);
//   fill(dst, ld, r0, r1, c0, c1): writes the float values of a tile, row stride ld;
//   fused (or nullptr): the tile's I8Fill (kernels.h) when the kernel table fuses fills;
//   prepass(t0, t1): per-range work before pass 1 (RMSNorm's row factors).
// Pass 1 writes the values (into y_scratch when given, else an L1 tile) and reduces the
// absmax; pass 2 requantizes them: straight from y_scratch through the kernel table, or by
// recomputing each tile. With no y_scratch and a fusing kernel table, both passes go through
// i8_fill_fused and no float is stored. Returns G.
template <typename Tiles, typename Fill, typename Fused, typename Pre>
float TwoPass(ThreadPool& pool, int64_t T, int64_t C, int64_t work_per_row, Tiles&& tiles,
              Fill&& fill, Fused&& fused, Pre&& prepass, float* y_scratch, kernels::Round mode,
              int8_t* out) {
  const kernels::KernelTable& kt = kernels::Kernels();
  constexpr bool kFusable = !std::is_same_v<std::decay_t<Fused>, std::nullptr_t>;
  const bool fuse = kFusable && y_scratch == nullptr && kt.i8_fill_fused != nullptr;
  AtomicAbsMax gmax;
  ForRows(pool, T, work_per_row, [&](int64_t t0, int64_t t1) {
    prepass(t0, t1);
    alignas(64) float tile[kTileFloats];
    float m = 0;
    tiles(t0, t1, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      if constexpr (kFusable) {
        if (fuse) {
          m = std::max(m, kt.i8_fill_fused(fused(r0, c0), r1 - r0, c1 - c0, 0, mode, nullptr));
          return;
        }
      }
      float* dst = y_scratch ? y_scratch + r0 * C + c0 : tile;
      fill(dst, y_scratch ? C : c1 - c0, r0, r1, c0, c1);
      m = std::max(m, kt.absmax_f32(dst, (r1 - r0) * (c1 - c0)));
    });
    gmax.Update(m);
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, work_per_row, [&](int64_t t0, int64_t t1) {
    if (y_scratch) {
      kt.requant_f32_i8(y_scratch + t0 * C, (t1 - t0) * C, inv, mode, out + t0 * C);
      return;
    }
    alignas(64) float tile[kTileFloats];
    tiles(t0, t1, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      if constexpr (kFusable) {
        if (fuse) {
          kt.i8_fill_fused(fused(r0, c0), r1 - r0, c1 - c0, inv, mode, out + r0 * C + c0);
          return;
        }
      }
      fill(tile, c1 - c0, r0, r1, c0, c1);
      kt.requant_f32_i8(tile, (r1 - r0) * (c1 - c0), inv, mode, out + r0 * C + c0);
    });
  });
  return g;
}

auto RowTiles(int64_t C) {
  return [C](int64_t t0, int64_t t1, auto&& fn) { ForEachTile(t0, t1, C, fn); };
}
auto NoPrepass() {
  return [](int64_t, int64_t) {};
}
}  // namespace

// ---- rms_norm_scaled --------------------------------------------------------------------------

void RmsNormScaled(ThreadPool& pool, const I8sTensor& x, const float* gamma, float eps,
                   float* row_scratch, I8sTensor* out, float* y_scratch) {
  const int64_t C = x.ne0, T = x.ne1;
  TERN_CHECK(C < (int64_t{1} << 17));  // sum of squares fits int32
  out->ne0 = C;
  out->ne1 = T;
  if (x.scale == 0.0f) {  // all-zero input: eps' would be inf; the norm of zeros is zero
    std::fill(out->q, out->q + x.size(), int8_t{0});
    out->scale = 0;
    return;
  }
  const double xs = x.scale;
  const float eps_q = static_cast<float>(static_cast<double>(eps) / (xs * xs));
  const kernels::KernelTable& kt = kernels::Kernels();
  auto prepass = [&](int64_t t0, int64_t t1) {
    kt.i8_rms_factors(x.q + t0 * C, t1 - t0, C, eps_q, row_scratch + t0);
  };
  auto fill = [&](float* dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    TERN_CHECK(r1 - r0 == 1 || (c0 == 0 && c1 == C && ld == C));  // whole rows, or one
    // ((float)q * rr) * gamma
    kt.i8_scale_mul_f32(x.q + r0 * C + c0, r1 - r0, c1 - c0, row_scratch + r0, gamma + c0, dst);
  };
  auto fused = [&](int64_t r0, int64_t c0) {
    kernels::I8Fill f;
    f.a = x.q + r0 * C + c0;
    f.s = row_scratch + r0;
    f.g = gamma + c0;
    return f;
  };
  const float g = TwoPass(pool, T, C, C, RowTiles(C), fill, fused, prepass, y_scratch,
                          kernels::Round::kHalfEven, out->q);
  out->scale = OutScale(g);
}

// ---- add_scaled -------------------------------------------------------------------------------

void AddScaled(ThreadPool& pool, const I8sTensor& a, const I8sTensor& b, const float* gamma,
               I8sTensor* out, float* y_scratch) {
  TERN_CHECK(a.ne0 == b.ne0 && a.ne1 == b.ne1);
  const int64_t C = a.ne0, T = a.ne1;
  const float sa = a.scale, sb = b.scale;
  const kernels::KernelTable& kt = kernels::Kernels();
  auto fill = [&](float* dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    TERN_CHECK(r1 - r0 == 1 || (c0 == 0 && c1 == C && ld == C));  // whole rows, or one
    // (a * sa) * gamma + b * sb
    kt.i8_add_scaled_f32(a.q + r0 * C + c0, sa, gamma ? gamma + c0 : nullptr, b.q + r0 * C + c0, sb,
                         r1 - r0, c1 - c0, dst);
  };
  auto fused = [&](int64_t r0, int64_t c0) {
    kernels::I8Fill f;
    f.a = a.q + r0 * C + c0;
    f.b = b.q + r0 * C + c0;
    f.sa = sa;
    f.sb = sb;
    f.g = gamma ? gamma + c0 : nullptr;
    return f;
  };
  const float g = TwoPass(pool, T, C, C, RowTiles(C), fill, fused, NoPrepass(), y_scratch,
                          kernels::Round::kHalfEven, out->q);
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
    for (int64_t k = 0; k < kernel; ++k) d.w[k * channels + c] = stored[c * kernel + k];
  return d;
}

namespace {

constexpr int64_t kDwChunk = 256;  // channels per tile (wide enough to vectorize)

// The float outputs of time steps [r0, r1), channels [c0, c1) (c1 - c0 <= kDwChunk), into
// dst (row stride ld). The input rows and the taps the tile needs are converted to float
// once.
void DepthwiseTile(const I8sDepthwise& w, const float* bias, const I8sTensor& x, float c,
                   float* dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t C = w.channels, K = w.kernel, nc = c1 - c0;
  const int64_t in0 = r0 - (K - 1);  // first input row (may be negative: zero padding)
  alignas(64) float xf[kTileFloats + (kMaxDepthwiseKernel - 1) * kDwChunk];
  const int64_t first = std::max<int64_t>(in0, 0);  // rows before it are the zero padding
  std::fill(xf, xf + (first - in0) * nc, 0.0f);
  if (nc == C) {  // whole rows: contiguous in x, one conversion
    kt.i8_to_f32(x.q + first * C, (r1 - first) * C, xf + (first - in0) * nc);
  } else {
    for (int64_t i = first; i < r1; ++i) kt.i8_to_f32(x.q + i * C + c0, nc, xf + (i - in0) * nc);
  }
  alignas(64) float wv[kMaxDepthwiseKernel * kDwChunk];  // tap k of the tile at wv + k*nc
  for (int64_t k = 0; k < K; ++k) kt.i8_to_f32(w.w.data() + k * C + c0, nc, wv + k * nc);
  const float* b = bias ? bias + c0 : nullptr;
  for (int64_t t = r0; t < r1; ++t) {
    float* o = dst + (t - r0) * ld;
    const float* xt = xf + (t - (K - 1) - in0) * nc;  // tap k reads row xt + k*nc
    std::fill(o, o + nc, 0.0f);
    for (int64_t k = 0; k < K; ++k) {
      const float* wk = wv + k * nc;
      const float* xi = xt + k * nc;
      for (int64_t j = 0; j < nc; ++j) o[j] += wk[j] * xi[j];
    }
    if (b) {
      for (int64_t j = 0; j < nc; ++j) o[j] = o[j] * c + b[j];
    } else {
      for (int64_t j = 0; j < nc; ++j) o[j] = o[j] * c;
    }
  }
}

// Tiles of whole rows when C fits a chunk, else one row per chunk.
auto DwTiles(int64_t C) {
  return [C](int64_t t0, int64_t t1, auto&& fn) {
    if (C <= kDwChunk) {
      const int64_t rows = kTileFloats / C;
      for (int64_t r = t0; r < t1; r += rows) fn(r, std::min(t1, r + rows), int64_t{0}, C);
    } else {
      for (int64_t r = t0; r < t1; ++r)
        for (int64_t c0 = 0; c0 < C; c0 += kDwChunk) fn(r, r + 1, c0, std::min(C, c0 + kDwChunk));
    }
  };
}

// The published 8-tap mixer on integers. Its float sums are exact integers (kernels.h,
// dw8_i8_i32), so the int32 sums with the GEMM epilogue give the same bytes: G from
// per-channel bounds, then each tile recomputed and requantized. Where the ISA fuses the
// epilogue (dw8_i8_ep) no sum leaves the registers; else a tile of them goes through
// i32_minmax / i32_requant_i8. No float tensor is stored, the input is never converted.
void DepthwiseInt8(ThreadPool& pool, const I8sDepthwise& w, const float* bias, const I8sTensor& x,
                   I8sTensor* out) {
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t C = x.ne0, T = x.ne1, K = 8;
  const float c = w.scale * x.scale;
  const bool fused = kt.dw8_i8_ep != nullptr;
  // The sums of nr output rows of channels [c0, c0 + nc), from input rows at src (stride
  // ld), through ep (its pointers at channel c0, q at the first row). Unfused, through a
  // tile of at most kTileFloats sums.
  auto run = [&](const int8_t* src, int64_t ld, int64_t nr, int64_t c0, int64_t nc,
                 const kernels::I8Epilogue& ep) {
    if (fused) return kt.dw8_i8_ep(src, ld, w.w.data() + c0, C, nr, nc, ep);
    TERN_CHECK(nr * nc <= kTileFloats);
    alignas(64) int32_t acc[kTileFloats];
    kt.dw8_i8_i32(src, ld, w.w.data() + c0, C, nr, nc, acc, nc);
    if (ep.q == nullptr) return kt.i32_minmax(acc, nr, nc, nc, ep.mn, ep.mx);
    const bool rows_whole = ep.ldq == nc;  // one call for the tile, else one per row
    for (int64_t j = 0; j < nr; j += rows_whole ? nr : 1)
      kt.i32_requant_i8(acc + j * nc, rows_whole ? nr : 1, nc, ep.c, ep.bias, ep.inv, ep.mode,
                        ep.relu, ep.q + j * ep.ldq);
  };
  // Output rows [r0, r1), channels [c0, c1). The first K - 1 rows reach into the causal
  // zero padding: they read a padded copy.
  auto tile = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1, kernels::I8Epilogue ep) {
    const int64_t nc = c1 - c0;
    if (r0 < K - 1) {
      const int64_t nr = std::min(r1, K - 1) - r0;
      alignas(64) int8_t pad[2 * (K - 1) * kDwChunk];
      for (int64_t i = 0; i < nr + K - 1; ++i) {
        const int64_t row = r0 - (K - 1) + i;
        if (row < 0)
          std::fill(pad + i * nc, pad + (i + 1) * nc, int8_t{0});
        else
          std::copy(x.q + row * C + c0, x.q + row * C + c1, pad + i * nc);
      }
      run(pad, nc, nr, c0, nc, ep);
      r0 += nr;
      if (ep.q != nullptr) ep.q += nr * ep.ldq;
    }
    if (r0 < r1) run(x.q + (r0 - (K - 1)) * C + c0, C, r1 - r0, c0, nc, ep);
  };
  // Blocks of rows, in channel chunks of kDwChunk when C is wider (not one row per chunk as
  // DwTiles: each call starts by loading its window's first seven rows, and the mixers of
  // stages 4-6 spent most of their time there). Fused, no tile of sums bounds the block.
  const int64_t chunk = std::min(C, kDwChunk);
  const int64_t rows = fused ? std::max<int64_t>(256, kTileFloats / chunk) : kTileFloats / chunk;
  auto tiles = [&](int64_t t0, int64_t t1, auto&& fn) {
    for (int64_t r = t0; r < t1; r += rows)
      for (int64_t c0 = 0; c0 < C; c0 += chunk)
        fn(r, std::min(t1, r + rows), c0, std::min(C, c0 + chunk));
  };
  AtomicAbsMax gmax;
  ForRows(pool, T, C * K, [&](int64_t t0, int64_t t1) {
    i8s_detail::RowBounds bounds(C);  // one "row" per channel here
    tiles(t0, t1, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      kernels::I8Epilogue ep;
      ep.mn = bounds.mn() + c0;
      ep.mx = bounds.mx() + c0;
      tile(r0, r1, c0, c1, ep);
    });
    gmax.Update(bounds.AbsMax(kt, c, bias));
  });
  const float g = gmax.Get();
  const float inv = InvScale(g);
  ForRows(pool, T, C * K, [&](int64_t t0, int64_t t1) {
    tiles(t0, t1, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      kernels::I8Epilogue ep;
      ep.q = out->q + r0 * C + c0;
      ep.ldq = C;
      ep.c = c;
      ep.inv = inv;
      ep.bias = bias ? bias + c0 : nullptr;
      ep.mode = kernels::Round::kHalfAway;
      tile(r0, r1, c0, c1, ep);
    });
  });
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g);
}

}  // namespace

void DepthwiseConvAdd(ThreadPool& pool, const I8sDepthwise& w, const float* bias,
                      const I8sTensor& x, I8sTensor* out, float* y_scratch) {
  TERN_CHECK(x.ne0 == w.channels && out->q != x.q);
  if (w.kernel == 8) return DepthwiseInt8(pool, w, bias, x, out);
  const int64_t C = x.ne0, T = x.ne1;
  const float c = w.scale * x.scale;
  const auto tiles = DwTiles(C);
  auto fill = [&](float* dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    DepthwiseTile(w, bias, x, c, dst, ld, r0, r1, c0, c1);
  };
  const float g = TwoPass(pool, T, C, C * w.kernel, tiles, fill, nullptr, NoPrepass(), y_scratch,
                          kernels::Round::kHalfAway, out->q);
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g);
}

}  // namespace tern::ops
