// AVX-512 F16 x F32 GEMM (vcvtph2ps + FMA, float accumulation) and weighted_rows_f16.
// GEMM tile: R weight rows x RX activation rows, 16 k per step, k tail by masked loads; one
// horizontal sum per output. n == 1 (decode head) uses R = 8 to keep 8 loads in flight.
#include <immintrin.h>

#include "kernels/avx512/impl.h"
#include "kernels/unroll.h"

namespace tern::kernels::avx512 {
namespace {

inline __mmask16 TailMask(int64_t left) {
  return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

template <int R, int RX>
void F16Tile(const uint16_t* w, int64_t k, int64_t ldw, const float* x, int64_t ldx, float* out,
             int64_t ldo) {
  __m512 acc[R][RX];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < RX; ++j) acc[r][j] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    __m512 wf[R];
    for (int r = 0; r < R; ++r) {
      // Decode streams R rows at once from DRAM: prefetch each row ahead of the loads.
      if (RX == 1) {
        _mm_prefetch(reinterpret_cast<const char*>(w + r * ldw + i + 1024), _MM_HINT_T0);
      }
      wf[r] =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * ldw + i)));
    }
    for (int j = 0; j < RX; ++j) {
      const __m512 xv = _mm512_loadu_ps(x + j * ldx + i);
      for (int r = 0; r < R; ++r) acc[r][j] = _mm512_fmadd_ps(wf[r], xv, acc[r][j]);
    }
  }
  if (i < k) {
    const __mmask16 m = TailMask(k - i);
    __m512 wf[R];
    for (int r = 0; r < R; ++r) {
      wf[r] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, w + r * ldw + i));
    }
    for (int j = 0; j < RX; ++j) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + j * ldx + i);
      for (int r = 0; r < R; ++r) acc[r][j] = _mm512_fmadd_ps(wf[r], xv, acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < RX; ++j) out[j * ldo + r] = _mm512_reduce_add_ps(acc[r][j]);
}

using TileFn = void (*)(const uint16_t*, int64_t, int64_t, const float*, int64_t, float*, int64_t);

// [rx] for 4-row tiles, and 1-row tiles for the row tail.
constexpr TileFn kTile4[5] = {nullptr, F16Tile<4, 1>, F16Tile<4, 2>, F16Tile<4, 3>, F16Tile<4, 4>};
constexpr TileFn kTile1[5] = {nullptr, F16Tile<1, 1>, F16Tile<1, 2>, F16Tile<1, 3>, F16Tile<1, 4>};

}  // namespace

void GemmF16F32(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1, const float* x,
                int64_t ldx, int64_t n, float* out, int64_t ldo) {
  int64_t r = r0;
  if (n == 1) {
    for (; r + 8 <= r1; r += 8) F16Tile<8, 1>(w + r * ldw, k, ldw, x, ldx, out + r, ldo);
  }
  for (; r < r1;) {
    const int rows = r1 - r >= 4 ? 4 : 1;
    for (int64_t j = 0; j < n; j += 4) {
      const int rx = static_cast<int>(n - j < 4 ? n - j : 4);
      (rows == 4 ? kTile4 : kTile1)[rx](w + r * ldw, k, ldw, x + j * ldx, ldx, out + j * ldo + r,
                                        ldo);
    }
    r += rows;
  }
}

namespace {

// H heads x C vectors of 16 columns from column i0 (masked past n), accumulated over all rows
// in registers: each row of values is loaded and converted once for the H heads, where an
// axpy per head and row re-read the values and loaded and stored the output every time.
template <int H, int C>
void WeightedBlock(const float* p, int64_t ldp, const uint16_t* v, int64_t ldv, int64_t rows,
                   int64_t i0, int64_t n, float* out, int64_t ldo) {
  __mmask16 m[C];
  TERN_UNROLL for (int c = 0; c < C; ++c) m[c] = TailMask(n - i0 - 16 * c);
  __m512 acc[H][C];
  TERN_UNROLL for (int h = 0; h < H; ++h) TERN_UNROLL for (int c = 0; c < C; ++c) acc[h][c] =
      _mm512_setzero_ps();
  for (int64_t j = 0; j < rows; ++j) {
    __m512 f[C];
    TERN_UNROLL for (int c = 0; c < C; ++c) f[c] =
        _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[c], v + j * ldv + i0 + 16 * c));
    TERN_UNROLL for (int h = 0; h < H; ++h) {
      const __m512 a = _mm512_set1_ps(p[h * ldp + j]);
      TERN_UNROLL for (int c = 0; c < C; ++c) acc[h][c] =
          _mm512_add_ps(acc[h][c], _mm512_mul_ps(a, f[c]));
    }
  }
  TERN_UNROLL for (int h = 0; h < H; ++h) TERN_UNROLL for (int c = 0; c < C; ++c)
      _mm512_mask_storeu_ps(out + h * ldo + i0 + 16 * c, m[c], acc[h][c]);
}

template <int H>
void WeightedHeads(const float* p, int64_t ldp, const uint16_t* v, int64_t ldv, int64_t rows,
                   int64_t n, float* out, int64_t ldo) {
  constexpr int kC = H <= 4 ? 4 : 2;  // at most 16 accumulators
  int64_t i = 0;
  for (; i + 16 * kC <= n; i += 16 * kC) WeightedBlock<H, kC>(p, ldp, v, ldv, rows, i, n, out, ldo);
  for (; i < n; i += 16) WeightedBlock<H, 1>(p, ldp, v, ldv, rows, i, n, out, ldo);
}

}  // namespace

// Per term out = out + p * f32(v), multiply then add (not fused), as the oracle.
void WeightedRowsF16(const float* p, int64_t ldp, int64_t heads, const uint16_t* v, int64_t ldv,
                     int64_t rows, int64_t n, float* out, int64_t ldo) {
  using Fn =
      void (*)(const float*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*, int64_t);
  static constexpr Fn kHeads[] = {nullptr,          WeightedHeads<1>, WeightedHeads<2>,
                                  WeightedHeads<3>, WeightedHeads<4>, WeightedHeads<5>,
                                  WeightedHeads<6>, WeightedHeads<7>, WeightedHeads<8>};
  for (int64_t h = 0; h < heads; h += 8) {
    const int64_t hn = heads - h < 8 ? heads - h : 8;
    kHeads[hn](p + h * ldp, ldp, v, ldv, rows, n, out + h * ldo, ldo);
  }
}

}  // namespace tern::kernels::avx512
