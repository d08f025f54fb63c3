#include "ops/i8s_matmul.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "base/check.h"
#include "base/huge_buffer.h"
#include "kernels/kernels.h"
#include "ops/i8s_internal.h"

namespace tern::ops {

using i8s_detail::AtomicAbsMax;
using i8s_detail::InvScale;
using i8s_detail::OutScale;
using i8s_detail::RowBounds;

namespace {

constexpr int64_t kTokenBlock = 32;  // columns per kernel call (the int32 tile height)

// The input columns of a product: n columns of k int8. Columns [mid_b, mid_e) start at
// mid + (t - mid_b) * mid_ld (windows into an activation tensor, possibly overlapping);
// the others sit k bytes apart in `edge`, in column order.
// `nonneg`: every value is >= 0 (the FFN's ReLU hidden), so a u8-packed matrix reads the
// bytes as they are.
struct Cols {
  int64_t n = 0, k = 0;
  const int8_t* mid = nullptr;
  int64_t mid_ld = 0, mid_b = 0, mid_e = 0;
  const int8_t* edge = nullptr;
  bool nonneg = false;
};

Cols DenseCols(const int8_t* q, int64_t n, int64_t k) {
  Cols c;
  c.n = n;
  c.k = k;
  c.mid = q;
  c.mid_ld = k;
  c.mid_b = 0;
  c.mid_e = n;
  return c;
}

// The run of columns from t (below t1) that sit at one stride: its first column *p, the
// stride *ld, and its end *e.
void ColSegment(const Cols& cols, int64_t t, int64_t t1, const int8_t** p, int64_t* ld,
                int64_t* e) {
  if (t >= cols.mid_b && t < cols.mid_e) {
    *e = std::min(t1, cols.mid_e);
    *p = cols.mid + (t - cols.mid_b) * cols.mid_ld;
    *ld = cols.mid_ld;
  } else if (t < cols.mid_b) {
    *e = std::min(t1, cols.mid_b);
    *p = cols.edge + t * cols.k;
    *ld = cols.k;
  } else {
    *e = t1;
    *p = cols.edge + (cols.mid_b + t - cols.mid_e) * cols.k;
    *ld = cols.k;
  }
}

// The correction gemm_u8_i8 takes for w and cols: none for non-negative columns (read as
// they are), else w's (the kernel flips them).
const int32_t* U8Corr(const I8sMatrix& w, const Cols& cols) {
  return cols.nonneg ? nullptr : w.corr.data();
}

// int32 products of weight rows [r0, r1) with columns [t0, t1); column t's row block
// lands at acc + (t - t0) * ldo + r (absolute row index, as the kernel defines it).
void GemmTile(const kernels::KernelTable& kt, const I8sMatrix& w, const Cols& cols, int64_t t0,
              int64_t t1, int64_t r0, int64_t r1, int32_t* acc, int64_t ldo) {
  int64_t t = t0;
  while (t < t1) {
    const int8_t* p;
    int64_t ld, e;
    ColSegment(cols, t, t1, &p, &ld, &e);
    int32_t* out = acc + (t - t0) * ldo;
    if (w.u8) {
      kt.gemm_u8_i8(w.packed.data(), w.k, w.n, r0, r1, p, ld, e - t, U8Corr(w, cols), out, ldo);
    } else {
      kt.gemm_i8_i8(w.packed.data(), w.k, w.n, r0, r1, p, ld, e - t, out, ldo);
    }
    t = e;
  }
}

// Where a product tile's sums go, in the columns' terms: column t of [t0, t1) at
// acc + (t - t0) * ldo and rq.q + (t - t0) * rq.ldq, rows absolute; bounds cover the rows
// from r0.
struct TileOut {
  int32_t* acc = nullptr;  // store the sums (else `tile` is scratch for them, (t1-t0) x ldo)
  int32_t* tile = nullptr;
  int64_t ldo = 0;
  RowBounds* bounds = nullptr;  // fold them
  kernels::I8Epilogue rq;       // or, with rq.q set, requantize them (kernels.h)
};

// One product tile. Sums needed only as bounds or as int8 go through the kernel's fused
// epilogue where the ISA has one; otherwise (or when they are stored anyway: the kernel's
// store, then one i32_minmax pass over the L1-resident tile, which beats folding in the
// epilogue) through gemm_i8_i8 and the separate entries. Same bytes either way.
void GemmTileOut(const kernels::KernelTable& kt, const I8sMatrix& w, const Cols& cols, int64_t t0,
                 int64_t t1, int64_t r0, int64_t r1, const TileOut& o) {
  const kernels::I8Epilogue& rq = o.rq;
  TERN_CHECK((o.bounds != nullptr) != (rq.q != nullptr));
  const bool fused = w.u8 ? kt.gemm_u8_i8_ep != nullptr : kt.gemm_i8_i8_ep != nullptr;
  if (!fused || o.acc != nullptr) {
    int32_t* acc = o.acc != nullptr ? o.acc : o.tile;
    GemmTile(kt, w, cols, t0, t1, r0, r1, acc, o.ldo);
    if (o.bounds != nullptr) o.bounds->Fold(kt, acc + r0, t1 - t0, o.ldo);
    if (rq.q != nullptr)
      for (int64_t t = 0; t < t1 - t0; ++t)
        kt.i32_requant_i8(acc + t * o.ldo + r0, 1, r1 - r0, rq.c, rq.bias ? rq.bias + r0 : nullptr,
                          rq.inv, rq.mode, rq.relu, rq.q + t * rq.ldq + r0);
    return;
  }
  kernels::I8Epilogue ep = rq;
  if (o.bounds != nullptr) {
    ep.mn = o.bounds->mn();
    ep.mx = o.bounds->mx();
  }
  // Column segments as GemmTile walks them (windows into x, or the edge copies).
  int64_t t = t0;
  while (t < t1) {
    const int8_t* p;
    int64_t ld, e;
    ColSegment(cols, t, t1, &p, &ld, &e);
    if (rq.q != nullptr) ep.q = rq.q + (t - t0) * rq.ldq;
    if (w.u8) {
      kt.gemm_u8_i8_ep(w.packed.data(), w.k, w.n, r0, r1, p, ld, e - t, U8Corr(w, cols), ep);
    } else {
      kt.gemm_i8_i8_ep(w.packed.data(), w.k, w.n, r0, r1, p, ld, e - t, ep);
    }
    t = e;
  }
}

// acc{N, T}: the int32 sums of all columns (row t = column t, stride N); returns G = max |y|
// of the epilogue y = (float)acc * c + bias without computing y.
float GemmBias(ThreadPool& pool, const I8sMatrix& w, const Cols& cols, float c, const float* bias,
               int32_t* acc) {
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t T = cols.n, N = w.n;
  AtomicAbsMax gmax;
  const int nth = pool.size();
  // Many columns: each thread owns a column range and all rows (weights stay in cache).
  // Few columns (deep stages): each thread owns a row range so the weights are read once.
  const bool by_cols = nth == 1 || T >= 4 * kTokenBlock * nth;
  const int64_t align = std::max<int64_t>(1, kt.i8_row_align);
  pool.Run([&](int tid, int nth_) {
    int64_t t_b = 0, t_e = T, r_b = 0, r_e = N;
    if (by_cols)
      ThreadPool::Split(T, kTokenBlock, tid, nth_, &t_b, &t_e);
    else
      ThreadPool::Split(N, align, tid, nth_, &r_b, &r_e);
    if (t_b >= t_e || r_b >= r_e) return;
    RowBounds bounds(r_e - r_b);
    TileOut o;
    o.ldo = N;
    o.bounds = &bounds;
    for (int64_t t0 = t_b; t0 < t_e; t0 += kTokenBlock) {
      o.acc = acc + t0 * N;
      GemmTileOut(kt, w, cols, t0, std::min(t_e, t0 + kTokenBlock), r_b, r_e, o);
    }
    gmax.Update(bounds.AbsMax(kt, c, bias ? bias + r_b : nullptr));
  });
  return gmax.Get();
}

// Products with few multiply-adds per sum (the stem conv: 7 taps of one channel) cost less
// computed twice than stored as int32 and read back (T x N x 4 bytes: 10.75 MB for the stem
// of a 3.5 s clip): pass 1 folds the bounds, pass 2 requantizes in the kernel's epilogue.
// Only where the ISA has that epilogue. Same bytes as GemmBias + RequantAll.
constexpr int64_t kRecomputeMaxK = 32;

bool RecomputeSums(const kernels::KernelTable& kt, int64_t k) {
  return kt.gemm_i8_i8_ep != nullptr && k <= kRecomputeMaxK;
}

// G = max |y| of y = (float)s * c + bias over the sums s of w with every column, from
// their bounds, no sum stored: through the kernel's fused epilogue, or where the ISA has
// none through an int32 tile per thread (kTokenBlock x N at tiles + tid * tile_stride;
// tiles may be null when it has one).
float RecomputedAbsMax(ThreadPool& pool, const I8sMatrix& w, const Cols& cols, float c,
                       const float* bias, uint8_t* tiles, size_t tile_stride) {
  const kernels::KernelTable& kt = kernels::Kernels();
  const int64_t T = cols.n, N = w.n;
  AtomicAbsMax gmax;
  pool.Run([&](int tid, int nth) {
    int64_t t_b, t_e;
    ThreadPool::Split(T, kTokenBlock, tid, nth, &t_b, &t_e);
    RowBounds bounds(N);
    TileOut o;
    o.bounds = &bounds;
    if (tiles != nullptr) o.tile = reinterpret_cast<int32_t*>(tiles + tile_stride * tid);
    o.ldo = N;
    for (int64_t t0 = t_b; t0 < t_e; t0 += kTokenBlock)
      GemmTileOut(kt, w, cols, t0, std::min(t_e, t0 + kTokenBlock), 0, N, o);
    gmax.Update(bounds.AbsMax(kt, c, bias));
  });
  return gmax.Get();
}

// Returns G, and the requantized int8 {N, T} in q. Only where RecomputeSums holds.
float GemmRecompute(ThreadPool& pool, const I8sMatrix& w, const Cols& cols, float c,
                    const float* bias, bool relu, int8_t* q) {
  const int64_t T = cols.n, N = w.n;
  const kernels::KernelTable& kt = kernels::Kernels();
  const float g = RecomputedAbsMax(pool, w, cols, c, bias, nullptr, 0);
  pool.Run([&](int tid, int nth) {
    int64_t t_b, t_e;
    ThreadPool::Split(T, kTokenBlock, tid, nth, &t_b, &t_e);
    if (t_b >= t_e) return;
    TileOut o;
    o.rq.q = q + t_b * N;
    o.rq.ldq = N;
    o.rq.c = c;
    o.rq.inv = InvScale(g);
    o.rq.bias = bias;
    o.rq.mode = kernels::Round::kHalfAway;
    o.rq.relu = relu;
    GemmTileOut(kt, w, cols, t_b, t_e, 0, N, o);
  });
  return g;
}

// q = requant((float)acc * c + bias) with G, half away from zero; ReLU after rounding
// (spec 3.4). One fused kernel call per token range: y never reaches memory.
void RequantAll(ThreadPool& pool, const int32_t* acc, int64_t T, int64_t N, float c,
                const float* bias, float g, bool relu, int8_t* q) {
  const kernels::KernelTable& kt = kernels::Kernels();
  const float inv = InvScale(g);
  pool.ParallelFor(T, 1, [&](int64_t b, int64_t e) {
    kt.i32_requant_i8(acc + b * N, e - b, N, c, bias, inv, kernels::Round::kHalfAway, relu,
                      q + b * N);
  });
}

}  // namespace

void MulMatAdd(ThreadPool& pool, const I8sMatrix& w, const float* bias, const I8sTensor& x,
               bool relu, float* y_scratch, I8sTensor* out) {
  TERN_CHECK(x.ne0 == w.k);
  const int64_t T = x.ne1, N = w.n;
  const float c = w.scale * x.scale;
  auto* acc = reinterpret_cast<int32_t*>(y_scratch);
  const float g = GemmBias(pool, w, DenseCols(x.q, T, w.k), c, bias, acc);
  RequantAll(pool, acc, T, N, c, bias, g, relu, out->q);
  out->ne0 = N;
  out->ne1 = T;
  out->scale = OutScale(g);
}

// ---- Conv1d ---------------------------------------------------------------------------------

I8sConv1d PackConv1d(const int8_t* stored, int64_t kernel, int64_t in_ch, int64_t out_ch,
                     float scale, int64_t stride, int64_t lp, int64_t rp, bool u8) {
  const int64_t kc = kernel * in_ch;
  // Leading taps that are zero for every channel pair (the published stride-5 convs store a
  // 10-tap kernel zero-padded to 16 at index 0) are dropped: the window then starts `zero`
  // samples later, i.e. with that much less left padding, and the same output length and
  // integer sums result, for 6/16 fewer multiply-adds. At most lp taps go, so the window
  // never starts right of where the padding would have ended.
  int64_t zero = 0;
  auto tap_is_zero = [&](int64_t k) {
    for (int64_t oc = 0; oc < out_ch; ++oc)
      for (int64_t ic = 0; ic < in_ch; ++ic)
        if (stored[oc * kc + ic * kernel + k] != 0) return false;
    return true;
  };
  while (zero < std::min(lp, kernel - 1) && tap_is_zero(zero)) ++zero;
  const int64_t taps = kernel - zero, tc = taps * in_ch;
  // The tap-major copy is temporary (33 MB for the published stage-6 conv): a HugeBuffer,
  // not a std::vector, whose zero fill and 4 KB page faults cost more than the copy itself.
  HugeBuffer rows = HugeBuffer::Allocate(static_cast<size_t>(tc * out_ch));
  if (rows.size() != static_cast<size_t>(tc * out_ch)) throw std::bad_alloc();
  auto* r = reinterpret_cast<int8_t*>(rows.data());
  for (int64_t oc = 0; oc < out_ch; ++oc)
    for (int64_t ic = 0; ic < in_ch; ++ic)
      for (int64_t k = 0; k < taps; ++k)
        r[oc * tc + k * in_ch + ic] = stored[oc * kc + ic * kernel + zero + k];
  I8sConv1d c;
  c.w = PackI8sMatrix(r, tc, out_ch, scale, u8);
  c.kernel = taps;
  c.in_ch = in_ch;
  c.out_ch = out_ch;
  c.stride = stride;
  c.lp = lp - zero;
  c.rp = rp;
  return c;
}

namespace {

// The columns read in place from x: [mid_b, mid_e) of [0, OW), the whole column tiles
// (kTokenBlock from 0, as every product walks them) whose windows lie inside [0, IW). A tile
// with an edge column is copied whole: split, it would be two kernel calls, each streaming
// all the weights (the stage-6 conv, 26 columns, read its 33 MB twice, once for its one
// edge column).
void InteriorRange(const I8sConv1d& cv, int64_t iw, int64_t ow, int64_t* mid_b, int64_t* mid_e) {
  const int64_t s = cv.stride;
  int64_t b = (cv.lp + s - 1) / s;  // first t with t*s - lp >= 0
  b = std::min(b, ow);
  const int64_t last_num = iw + cv.lp - cv.kernel;  // last t: t*s <= iw + lp - K
  int64_t e = last_num < 0 ? b : last_num / s + 1;
  e = std::clamp(e, b, ow);
  b = std::min(ow, (b + kTokenBlock - 1) / kTokenBlock * kTokenBlock);
  if (e < ow) e = e / kTokenBlock * kTokenBlock;
  *mid_b = b;
  *mid_e = std::max(b, e);
}

}  // namespace

Conv1dScratch Conv1dScratchBytes(const I8sConv1d& conv, int64_t in_len) {
  const int64_t ow = Conv1dOutLen(in_len, conv.kernel, conv.stride, conv.lp, conv.rp);
  int64_t b, e;
  InteriorRange(conv, in_len, ow, &b, &e);
  Conv1dScratch s;
  s.y_bytes = static_cast<size_t>(ow * conv.out_ch) * sizeof(float);
  s.col_bytes = static_cast<size_t>((ow - (e - b)) * conv.kernel * conv.in_ch);
  return s;
}

void Conv1dAdd(ThreadPool& pool, const I8sConv1d& cv, const float* bias, const I8sTensor& x,
               float* y_scratch, int8_t* col_scratch, I8sTensor* out) {
  const int64_t ic = cv.in_ch, K = cv.kernel, s = cv.stride;
  TERN_CHECK(x.ne0 == ic || (ic == 1 && x.ne1 == 1));
  const int64_t iw = x.size() / ic;
  const int64_t ow = Conv1dOutLen(iw, K, s, cv.lp, cv.rp);
  int64_t mid_b, mid_e;
  InteriorRange(cv, iw, ow, &mid_b, &mid_e);
  // Edge columns (they reach into the zero padding): tap-major, like the packed weight.
  int64_t e_i = 0;
  for (int64_t t = 0; t < ow; ++t) {
    if (t >= mid_b && t < mid_e) continue;
    int8_t* col = col_scratch + (e_i++) * K * ic;
    for (int64_t k = 0; k < K; ++k) {
      const int64_t i = t * s - cv.lp + k;
      if (i >= 0 && i < iw)
        std::memcpy(col + k * ic, x.q + i * ic, static_cast<size_t>(ic));
      else
        std::memset(col + k * ic, 0, static_cast<size_t>(ic));
    }
  }
  Cols cols;
  cols.n = ow;
  cols.k = K * ic;
  cols.mid_b = mid_b;
  cols.mid_e = mid_e;
  cols.mid = mid_e > mid_b ? x.q + (mid_b * s - cv.lp) * ic : nullptr;
  cols.mid_ld = s * ic;
  cols.edge = col_scratch;
  const float c = cv.w.scale * x.scale;
  float g;
  if (RecomputeSums(kernels::Kernels(), cols.k)) {
    g = GemmRecompute(pool, cv.w, cols, c, bias, /*relu=*/false, out->q);
  } else {
    auto* acc = reinterpret_cast<int32_t*>(y_scratch);
    g = GemmBias(pool, cv.w, cols, c, bias, acc);
    RequantAll(pool, acc, ow, cv.out_ch, c, bias, g, /*relu=*/false, out->q);
  }
  out->ne0 = cv.out_ch;
  out->ne1 = ow;
  out->scale = OutScale(g);
}

// ---- MLP ------------------------------------------------------------------------------------

namespace {
size_t AlignUp(size_t n) { return (n + 63) & ~size_t{63}; }
}  // namespace

MlpScratch MlpScratchBytes(int64_t tokens, int64_t c, int64_t h, int n_threads,
                           size_t store_budget) {
  MlpScratch s;
  const size_t y1 = static_cast<size_t>(tokens * h) * sizeof(int32_t);
  const size_t y2 = AlignUp(static_cast<size_t>(tokens * c) * sizeof(int32_t));
  s.store = y1 <= store_budget;
  // Per thread: an int8 hidden tile, and (recomputing) the int32 tile it comes from.
  size_t per_thread = AlignUp(static_cast<size_t>(kTokenBlock * h));
  if (!s.store) per_thread += AlignUp(static_cast<size_t>(kTokenBlock * h) * sizeof(int32_t));
  s.bytes =
      (s.store ? AlignUp(y1) : 0) + y2 + per_thread * static_cast<size_t>(std::max(1, n_threads));
  return s;
}

void MlpReluI8s(ThreadPool& pool, const I8sMatrix& w1, const float* b1, const I8sMatrix& w2,
                const float* b2, const I8sTensor& x, size_t store_budget, void* scratch,
                size_t scratch_bytes, I8sTensor* out) {
  const int64_t T = x.ne1, C = x.ne0, H = w1.n;
  TERN_CHECK(w1.k == C && w2.k == H && w2.n == C);
  const MlpScratch need = MlpScratchBytes(T, C, H, pool.size(), store_budget);
  TERN_CHECK(scratch_bytes >= need.bytes);
  const kernels::KernelTable& kt = kernels::Kernels();
  auto* base = static_cast<uint8_t*>(scratch);
  int32_t* acc1 = nullptr;  // W1's sums, when stored
  if (need.store) {
    acc1 = reinterpret_cast<int32_t*>(base);
    base += AlignUp(static_cast<size_t>(T * H) * sizeof(int32_t));
  }
  auto* acc2 = reinterpret_cast<int32_t*>(base);
  uint8_t* per_thread = base + AlignUp(static_cast<size_t>(T * C) * sizeof(int32_t));
  const size_t q_bytes = AlignUp(static_cast<size_t>(kTokenBlock * H));
  const size_t pt_bytes =
      q_bytes + (need.store ? 0 : AlignUp(static_cast<size_t>(kTokenBlock * H) * sizeof(int32_t)));
  const Cols xcols = DenseCols(x.q, T, C);
  const float c1 = w1.scale * x.scale;

  // Pass A: G1 = max |y1| from the bounds of W1's sums, stored or not.
  float g1;
  if (need.store) {
    g1 = GemmBias(pool, w1, xcols, c1, b1, acc1);
  } else {
    g1 = RecomputedAbsMax(pool, w1, xcols, c1, b1, per_thread + q_bytes, pt_bytes);
  }
  const float inv1 = InvScale(g1);
  const float c2 = w2.scale * OutScale(g1);

  // Pass B, a token block at a time: the hidden activations requantized (ReLU; half away
  // from zero, spec 3.4) from the stored sums or from W1's sums recomputed, and multiplied
  // by W2 at once while they are in L1.
  AtomicAbsMax g2max;
  pool.Run([&](int tid, int nth) {
    int64_t t_b, t_e;
    ThreadPool::Split(T, kTokenBlock, tid, nth, &t_b, &t_e);
    int8_t* q1 = reinterpret_cast<int8_t*>(per_thread + pt_bytes * tid);
    RowBounds bounds(C);
    TileOut hidden;  // recomputing: W1's sums straight to int8
    hidden.rq.q = q1;
    hidden.rq.ldq = H;
    hidden.rq.c = c1;
    hidden.rq.inv = inv1;
    hidden.rq.bias = b1;
    hidden.rq.mode = kernels::Round::kHalfAway;
    hidden.rq.relu = true;
    hidden.tile = reinterpret_cast<int32_t*>(per_thread + pt_bytes * tid + q_bytes);
    hidden.ldo = H;
    TileOut sums;  // W2's sums, kept for the output's requant
    sums.bounds = &bounds;
    sums.ldo = C;
    for (int64_t t0 = t_b; t0 < t_e; t0 += kTokenBlock) {
      const int64_t t1 = std::min(t_e, t0 + kTokenBlock), nt = t1 - t0;
      if (need.store)
        kt.i32_requant_i8(acc1 + t0 * H, nt, H, c1, b1, inv1, kernels::Round::kHalfAway,
                          /*relu=*/true, q1);
      else
        GemmTileOut(kt, w1, xcols, t0, t1, 0, H, hidden);
      sums.acc = acc2 + t0 * C;
      Cols hcols = DenseCols(q1, nt, H);
      hcols.nonneg = true;  // after the ReLU
      GemmTileOut(kt, w2, hcols, 0, nt, 0, C, sums);
    }
    g2max.Update(bounds.AbsMax(kt, c2, b2));
  });
  const float g2 = g2max.Get();
  RequantAll(pool, acc2, T, C, c2, b2, g2, /*relu=*/false, out->q);
  out->ne0 = C;
  out->ne1 = T;
  out->scale = OutScale(g2);
}

}  // namespace tern::ops
