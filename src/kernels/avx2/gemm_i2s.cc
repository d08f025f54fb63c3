// AVX2 ternary I2_S x int8 GEMM on the I2S16 packed layout (kernels/packing.h), read as two
// 8-row halves per 64-byte chunk (bytes 0..31 = rows 0..7, 32..63 = rows 8..15).
//
// Per chunk and half: one 32-byte load, shifts + masks give quads 0..3 (8 rows x 4 k each);
// maddubs(codes, broadcast x) gives int16 pairs <= 2*2*128 = 512 in magnitude; the four quads
// are added in int16 (<= 2048, no wrap: the sum never spans more than one chunk) and widened
// by madd(., 1) into the exact int32 row accumulators. Tile: H halves x RX activation rows.
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/avx2/impl.h"
#include "kernels/packing.h"

namespace tern::kernels::avx2 {
namespace {

inline __m256i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256i MaskOf(int64_t left) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left < 8 ? left : 8)), idx);
}

template <int H, int RX>
void I2sTile(const uint8_t* w, int64_t group_bytes, int64_t k, const int8_t* q, int64_t ldq,
             float w_scale, const float* scale, const int32_t* sums, float* out, int64_t ldo,
             int64_t rows_left) {
  const __m256i mask = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
  const uint8_t* wh[H];
  for (int h = 0; h < H; ++h) wh[h] = w + (h / 2) * group_bytes + (h % 2) * 32;
  __m256i acc[H][RX];
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < RX; ++j) acc[h][j] = _mm256_setzero_si256();
  for (int64_t c = 0; c < k / 16; ++c) {
    const int8_t* qc = q + c * 16;
    for (int h = 0; h < H; ++h) {
      // Decode, single or batched, streams the weights from DRAM: prefetch well ahead (one
      // line per chunk).
      if (h % 2 == 0) {
        const int64_t ahead = packing::StreamAhead(c * 64, group_bytes, (H + 1) / 2);
        _mm_prefetch(reinterpret_cast<const char*>(wh[h] + ahead), _MM_HINT_T0);
      }
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wh[h] + c * 64));
      const __m256i c0 = _mm256_and_si256(_mm256_srli_epi16(v, 6), mask);
      const __m256i c1 = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
      const __m256i c2 = _mm256_and_si256(_mm256_srli_epi16(v, 2), mask);
      const __m256i c3 = _mm256_and_si256(v, mask);
      for (int j = 0; j < RX; ++j) {
        const int8_t* qj = qc + j * ldq;
        const __m256i t01 = _mm256_add_epi16(_mm256_maddubs_epi16(c0, Bcast4(qj)),
                                             _mm256_maddubs_epi16(c1, Bcast4(qj + 4)));
        const __m256i t23 = _mm256_add_epi16(_mm256_maddubs_epi16(c2, Bcast4(qj + 8)),
                                             _mm256_maddubs_epi16(c3, Bcast4(qj + 12)));
        acc[h][j] =
            _mm256_add_epi32(acc[h][j], _mm256_madd_epi16(_mm256_add_epi16(t01, t23), ones));
      }
    }
  }
  const __m256 ws = _mm256_set1_ps(w_scale);
  for (int h = 0; h < H; ++h) {
    const int64_t left = rows_left - h * 8;
    if (left <= 0) break;
    const __m256i m = MaskOf(left);
    for (int j = 0; j < RX; ++j) {
      const __m256i ds = _mm256_sub_epi32(acc[h][j], _mm256_set1_epi32(sums[j]));
      __m256 f = _mm256_div_ps(_mm256_cvtepi32_ps(ds), _mm256_set1_ps(scale[j]));
      f = _mm256_mul_ps(f, ws);
      _mm256_maskstore_ps(out + j * ldo + h * 8, m, f);
    }
  }
}

using TileFn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t, float,
                        const float*, const int32_t*, float*, int64_t, int64_t);

constexpr int kMaxRx = 6;  // 6 accumulators + 4 code vectors + temps fit 16 ymm (8 spilled)

template <int H, int RX>
constexpr TileFn Pick() {
  if constexpr (H * RX <= 8) {
    return I2sTile<H, RX>;
  } else {
    return nullptr;
  }
}

// A plain struct, not std::array: nothing with external linkage gets instantiated in this
// ISA-flagged TU (packing.h explains the hazard).
struct TileRow {
  TileFn fn[kMaxRx + 1];
};
template <int H, int... RX>
constexpr TileRow MakeRow(std::integer_sequence<int, RX...>) {
  return {{nullptr, Pick<H, RX + 1>()...}};
}
template <int H>
constexpr TileRow kRow = MakeRow<H>(std::make_integer_sequence<int, kMaxRx>());

// The tile for `h` 8-row halves (1 or 2) and `rx` activation rows.
TileFn TileFor(int h, int rx) { return h == 2 ? kRow<2>.fn[rx] : kRow<1>.fn[rx]; }

}  // namespace

void GemmI2sI8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
               float w_scale, const int8_t* q, int64_t ldq, const float* scale, const int32_t* sums,
               int64_t n, float* out, int64_t ldo) {
  const int64_t group_bytes = packing::kRowGroup * k / 4;
  // Halves per tile: 2 for n <= 4, else 1 (then RX up to 6). A tile of 2 halves starts on a
  // 16-row group; the tail goes one half at a time. Decode (n == 1) thus reads one group
  // after another, one sequential stream (4 halves would read two streams, which DRAM
  // serves worse).
  const int h_wide = n <= 4 ? 2 : 1;
  // Activation rows in L2-sized chunks (packing::ChunkRows), each swept by every weight tile.
  const int64_t chunk = packing::ChunkRows(k, kMaxRx);
  for (int64_t j0 = 0; j0 < n; j0 += chunk) {
    const int64_t j1 = n - j0 < chunk ? n : j0 + chunk;
    int64_t r = r0;  // a multiple of 8 throughout (r0 is a multiple of 16)
    while (r < r1) {
      const int h = (r1 - r >= h_wide * 8 && r % 16 == 0) ? h_wide : 1;
      const uint8_t* wr = w + r / 16 * group_bytes + (r / 8 % 2) * 32;
      for (int64_t j = j0; j < j1; j += kMaxRx) {
        const int rx = static_cast<int>(j1 - j < kMaxRx ? j1 - j : kMaxRx);
        TileFor(h, rx)(wr, group_bytes, k, q + j * ldq, ldq, w_scale, scale + j, sums + j,
                       out + j * ldo + r, ldo, r1 - r);
      }
      r += h * 8;
    }
  }
}

size_t I2sPackedBytes(int64_t k, int64_t n_rows) { return packing::I2s16Bytes(k, n_rows); }

void PackI2s(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  packing::PackI2s16(canonical, k, n_rows, packed);
}

}  // namespace tern::kernels::avx2
