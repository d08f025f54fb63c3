// AVX2 F16 x F32 GEMM (vcvtph2ps + FMA, float accumulation) and weighted_rows_f16.
// Tile: R weight rows x RX activation rows, 8 k per step; the k tail goes through zero-padded
// copies so nothing is read past a row.
#include <immintrin.h>

#include <cstring>

#include "kernels/avx2/impl.h"
#include "kernels/unroll.h"

namespace tern::kernels::avx2 {
namespace {

inline float HSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256 LoadF16(const uint16_t* p, int64_t count) {
  if (count >= 8) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  uint16_t tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(uint16_t));
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tmp)));
}

inline __m256 LoadF32(const float* p, int64_t count) {
  if (count >= 8) return _mm256_loadu_ps(p);
  float tmp[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(float));
  return _mm256_loadu_ps(tmp);
}

template <int R, int RX>
void F16Tile(const uint16_t* w, int64_t k, int64_t ldw, const float* x, int64_t ldx, float* out,
             int64_t ldo) {
  __m256 acc[R][RX];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < RX; ++j) acc[r][j] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    __m256 wf[R];
    for (int r = 0; r < R; ++r) {
      if (RX == 1 && i % 32 == 0) {  // decode: one prefetch per row and cache line
        _mm_prefetch(reinterpret_cast<const char*>(w + r * ldw + i + 512), _MM_HINT_T0);
      }
      wf[r] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + r * ldw + i)));
    }
    for (int j = 0; j < RX; ++j) {
      const __m256 xv = _mm256_loadu_ps(x + j * ldx + i);
      for (int r = 0; r < R; ++r) acc[r][j] = _mm256_fmadd_ps(wf[r], xv, acc[r][j]);
    }
  }
  if (i < k) {
    __m256 wf[R];
    for (int r = 0; r < R; ++r) wf[r] = LoadF16(w + r * ldw + i, k - i);
    for (int j = 0; j < RX; ++j) {
      const __m256 xv = LoadF32(x + j * ldx + i, k - i);
      for (int r = 0; r < R; ++r) acc[r][j] = _mm256_fmadd_ps(wf[r], xv, acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < RX; ++j) out[j * ldo + r] = HSum(acc[r][j]);
}

using TileFn = void (*)(const uint16_t*, int64_t, int64_t, const float*, int64_t, float*, int64_t);
constexpr TileFn kTile4[3] = {nullptr, F16Tile<4, 1>, F16Tile<4, 2>};
constexpr TileFn kTile1[3] = {nullptr, F16Tile<1, 1>, F16Tile<1, 2>};

}  // namespace

void GemmF16F32(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1, const float* x,
                int64_t ldx, int64_t n, float* out, int64_t ldo) {
  int64_t r = r0;
  if (n == 1) {
    for (; r + 6 <= r1; r += 6) F16Tile<6, 1>(w + r * ldw, k, ldw, x, ldx, out + r, ldo);
  }
  for (; r < r1;) {
    const int rows = r1 - r >= 4 ? 4 : 1;
    for (int64_t j = 0; j < n; j += 2) {
      const int rx = static_cast<int>(n - j < 2 ? n - j : 2);
      (rows == 4 ? kTile4 : kTile1)[rx](w + r * ldw, k, ldw, x + j * ldx, ldx, out + j * ldo + r,
                                        ldo);
    }
    r += rows;
  }
}

namespace {

// H heads x C vectors of 8 columns from column i0 (all inside n), accumulated over all rows in
// registers: each row of values is loaded and converted once for the H heads.
template <int H, int C>
void WeightedBlock(const float* p, int64_t ldp, const uint16_t* v, int64_t ldv, int64_t rows,
                   int64_t i0, float* out, int64_t ldo) {
  __m256 acc[H][C];
  TERN_UNROLL for (int h = 0; h < H; ++h) TERN_UNROLL for (int c = 0; c < C; ++c) acc[h][c] =
      _mm256_setzero_ps();
  for (int64_t j = 0; j < rows; ++j) {
    __m256 f[C];
    TERN_UNROLL for (int c = 0; c < C; ++c) {
      f[c] = _mm256_cvtph_ps(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + j * ldv + i0 + 8 * c)));
    }
    TERN_UNROLL for (int h = 0; h < H; ++h) {
      const __m256 a = _mm256_set1_ps(p[h * ldp + j]);
      TERN_UNROLL for (int c = 0; c < C; ++c) acc[h][c] =
          _mm256_add_ps(acc[h][c], _mm256_mul_ps(a, f[c]));
    }
  }
  TERN_UNROLL for (int h = 0; h < H; ++h) TERN_UNROLL for (int c = 0; c < C; ++c)
      _mm256_storeu_ps(out + h * ldo + i0 + 8 * c, acc[h][c]);
}

template <int H>
void WeightedHeads(const float* p, int64_t ldp, const uint16_t* v, int64_t ldv, int64_t rows,
                   int64_t n, float* out, int64_t ldo) {
  constexpr int kC = H <= 2 ? 4 : H <= 4 ? 2 : 1;  // 16 ymm: accumulators + values + a
  int64_t i = 0;
  for (; i + 8 * kC <= n; i += 8 * kC) WeightedBlock<H, kC>(p, ldp, v, ldv, rows, i, out, ldo);
  for (; i + 8 <= n; i += 8) WeightedBlock<H, 1>(p, ldp, v, ldv, rows, i, out, ldo);
  for (int h = 0; h < H; ++h) {  // columns past the last 8
    for (int64_t c = i; c < n; ++c) out[h * ldo + c] = 0.0f;
    for (int64_t j = 0; j < rows; ++j) {
      const float a = p[h * ldp + j];
      for (int64_t c = i; c < n; ++c)
        out[h * ldo + c] = out[h * ldo + c] + a * _cvtsh_ss(v[j * ldv + c]);
    }
  }
}

}  // namespace

// Per term out = out + p * f32(v), multiply then add (not fused), as the oracle.
void WeightedRowsF16(const float* p, int64_t ldp, int64_t heads, const uint16_t* v, int64_t ldv,
                     int64_t rows, int64_t n, float* out, int64_t ldo) {
  using Fn =
      void (*)(const float*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*, int64_t);
  static constexpr Fn kHeads[] = {nullptr,          WeightedHeads<1>, WeightedHeads<2>,
                                  WeightedHeads<3>, WeightedHeads<4>, WeightedHeads<5>,
                                  WeightedHeads<6>};
  for (int64_t h = 0; h < heads; h += 6) {
    const int64_t hn = heads - h < 6 ? heads - h : 6;
    kHeads[hn](p + h * ldp, ldp, v, ldv, rows, n, out + h * ldo, ldo);
  }
}

}  // namespace tern::kernels::avx2
