// AVX2 int8 x int8 GEMM on the I8x16 packed layout with flip 0 (signed weights; packing.h),
// read as two 8-row halves per 64-byte quad block.
//
// maddubs needs one unsigned operand: maddubs(|w|, sign(x, w)) = |w| * (+-x) pairs, each pair
// sum <= 2 * 128 * 127 = 32512 < 32767 (x is in [-127, 127], so sign() never negates -128),
// widened at once by madd(., 1) into exact int32: no int16 value is ever accumulated.
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/avx2/impl.h"
#include "kernels/packing.h"

namespace tern::kernels::avx2 {
namespace {

inline __m256i Bcast4(const int8_t* p, int64_t valid) {
  int32_t v = 0;
  std::memcpy(&v, p, valid >= 4 ? 4 : static_cast<size_t>(valid));
  return _mm256_set1_epi32(v);
}

inline __m256i MaskOf(int64_t left) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left < 8 ? left : 8)), idx);
}

template <int H, int RX>
void I8Tile(const uint8_t* w, int64_t group_bytes, int64_t k, const int8_t* x, int64_t ldx,
            int32_t* out, int64_t ldo, int64_t rows_left) {
  const __m256i ones = _mm256_set1_epi16(1);
  const uint8_t* wh[H];
  for (int h = 0; h < H; ++h) wh[h] = w + (h / 2) * group_bytes + (h % 2) * 32;
  __m256i acc[H][RX];
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < RX; ++j) acc[h][j] = _mm256_setzero_si256();
  auto step = [&](int64_t qd, int64_t valid) {
    __m256i wv[H], aw[H];
    for (int h = 0; h < H; ++h) {
      if (RX == 1 && h % 2 == 0) {  // decode: prefetch the DRAM stream well ahead
        const int64_t ahead = packing::StreamAhead(qd * 64, group_bytes, (H + 1) / 2);
        _mm_prefetch(reinterpret_cast<const char*>(wh[h] + ahead), _MM_HINT_T0);
      }
      wv[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wh[h] + qd * 64));
      aw[h] = _mm256_abs_epi8(wv[h]);
    }
    for (int j = 0; j < RX; ++j) {
      const __m256i xb = Bcast4(x + j * ldx + qd * 4, valid);
      for (int h = 0; h < H; ++h) {
        const __m256i p = _mm256_maddubs_epi16(aw[h], _mm256_sign_epi8(xb, wv[h]));
        acc[h][j] = _mm256_add_epi32(acc[h][j], _mm256_madd_epi16(p, ones));
      }
    }
  };
  const int64_t full = k / 4;
  for (int64_t qd = 0; qd < full; ++qd) step(qd, 4);
  if (k % 4) step(full, k % 4);
  for (int h = 0; h < H; ++h) {
    const int64_t left = rows_left - h * 8;
    if (left <= 0) break;
    const __m256i m = MaskOf(left);
    for (int j = 0; j < RX; ++j) {
      _mm256_maskstore_epi32(out + j * ldo + h * 8, m, acc[h][j]);
    }
  }
}

using TileFn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t, int32_t*, int64_t,
                        int64_t);

constexpr int kMaxRx = 8;

template <int H, int RX>
constexpr TileFn Pick() {
  if constexpr (H * RX <= 8) {
    return I8Tile<H, RX>;
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

TileFn TileFor(int h, int rx) { return h == 2 ? kRow<2>.fn[rx] : kRow<1>.fn[rx]; }

}  // namespace

void GemmI8I8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo) {
  const int64_t group_bytes = packing::kRowGroup * packing::I8K4(k);
  // Halves per tile as GemmI2sI8 (gemm_i2s.cc): the GEMV head reads one sequential stream.
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
        TileFor(h, rx)(wr, group_bytes, k, x + j * ldx, ldx, acc + j * ldo + r, ldo, r1 - r);
      }
      r += h * 8;
    }
  }
}

size_t I8PackedBytes(int64_t k, int64_t n_rows) { return packing::I8x16Bytes(k, n_rows); }

void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  packing::PackI8x16(canonical, k, n_rows, 0, packed);
}

}  // namespace tern::kernels::avx2
