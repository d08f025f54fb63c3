// AVX-512 VNNI int8 x int8 GEMM on the I8x16 packed layout with flip 0x80 (packing.h).
//
// vpdpbusd multiplies unsigned by signed bytes, so the pack stores u = w + 128 and the
// activations stay signed (broadcast 4 at a time straight from memory):
//   sum_k u*x = sum_k w*x + 128 * sum_k x   =>   acc = dot - 128 * xsum[j].
// Every term is exact in int32 (|dot| <= 255*128*K), so results match the scalar oracle.
// Register tile: MG row groups (16 rows per zmm) x RX activation rows.
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/avx512/impl.h"
#include "kernels/packing.h"
#include "kernels/unroll.h"

namespace tern::kernels::avx512 {
namespace {

// 4 activation bytes at p, of which only `valid` (1..4) exist; the rest read as 0.
inline __m512i Bcast4(const int8_t* p, int64_t valid) {
  int32_t v = 0;
  std::memcpy(&v, p, valid >= 4 ? 4 : static_cast<size_t>(valid));
  return _mm512_set1_epi32(v);
}

int32_t RowSum(const int8_t* x, int64_t k) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i acc = _mm512_setzero_si512();
  int64_t i = 0;
  for (; i + 64 <= k; i += 64) {
    acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512(x + i));
  }
  if (i < k) {
    const __mmask64 m = (~uint64_t{0}) >> (64 - (k - i));
    acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(m, x + i));
  }
  return _mm512_reduce_add_epi32(acc);
}

// The quad body is a macro, not a lambda: even with the loops unrolled (TERN_UNROLL), a
// lambda capturing the accumulators left gcc 12 copying them between registers every quad.
template <int MG, int RX>
void I8Tile(const uint8_t* w, int64_t group_bytes, int64_t k, const int8_t* x, int64_t ldx,
            const int32_t* xsum, int32_t* out, int64_t ldo, int64_t rows_left,
            const uint8_t* pf) {
  __m512i acc[MG][RX];
  TERN_UNROLL for (int g = 0; g < MG; ++g)
    TERN_UNROLL for (int j = 0; j < RX; ++j) acc[g][j] = _mm512_setzero_si512();
#define TERN_I8_QUAD(QD, VALID)                                                           \
  {                                                                                       \
    __m512i v[MG];                                                                        \
    TERN_UNROLL for (int g = 0; g < MG; ++g) {                                            \
      v[g] = _mm512_loadu_si512(w + g * group_bytes + (QD) * 64);                         \
    }                                                                                     \
    TERN_UNROLL for (int j = 0; j < RX; ++j) {                                            \
      const __m512i xb = Bcast4(x + j * ldx + (QD) * 4, VALID);                           \
      TERN_UNROLL for (int g = 0; g < MG; ++g) {                                          \
        acc[g][j] = _mm512_dpbusd_epi32(acc[g][j], v[g], xb);                             \
      }                                                                                   \
    }                                                                                     \
  }
  // Integer sums: the partial last quad may as well go first.
  const int64_t full = k / 4;
  if (k % 4) TERN_I8_QUAD(full, k % 4)
  for (int64_t qd = 0; qd < full; ++qd) {
    if (pf != nullptr) {
      TERN_UNROLL for (int g = 0; g < MG; ++g)
        _mm_prefetch(reinterpret_cast<const char*>(pf + g * group_bytes + qd * 64), _MM_HINT_T0);
    } else if (RX == 1) {  // decode head: the streams, well ahead (packing::StreamAhead)
      const int64_t ahead = packing::StreamAhead(qd * 64, group_bytes, MG);
      TERN_UNROLL for (int g = 0; g < MG; ++g)
        _mm_prefetch(reinterpret_cast<const char*>(w + g * group_bytes + ahead), _MM_HINT_T0);
    }
    TERN_I8_QUAD(qd, 4)
  }
#undef TERN_I8_QUAD
  TERN_UNROLL for (int g = 0; g < MG; ++g) {
    const int64_t left = rows_left - g * 16;
    const __mmask16 m = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    TERN_UNROLL for (int j = 0; j < RX; ++j) {
      const __m512i r = _mm512_sub_epi32(acc[g][j], _mm512_set1_epi32(xsum[j] * 128));
      _mm512_mask_storeu_epi32(out + j * ldo + g * 16, m, r);
    }
  }
}

using TileFn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t,
                        const int32_t*, int32_t*, int64_t, int64_t, const uint8_t*);

// 2 row groups x 8 activation rows: measured faster than 2 x 10 or 2 x 12 (gcc 12 spills).
constexpr int kMaxRx = 8;

template <int MG, int RX>
constexpr TileFn Pick() {
  if constexpr (MG * RX <= 24) {
    return I8Tile<MG, RX>;
  } else {
    return nullptr;
  }
}

// A plain struct, not std::array: nothing with external linkage gets instantiated in this
// ISA-flagged TU (packing.h explains the hazard).
struct TileRow {
  TileFn fn[kMaxRx + 1];
};
template <int MG, int... RX>
constexpr TileRow MakeRow(std::integer_sequence<int, RX...>) {
  return {{nullptr, Pick<MG, RX + 1>()...}};
}
template <int MG>
constexpr TileRow kRow = MakeRow<MG>(std::make_integer_sequence<int, kMaxRx>());

TileFn TileFor(int mg, int rx) {
  return mg == 4 ? kRow<4>.fn[rx] : mg == 2 ? kRow<2>.fn[rx] : kRow<1>.fn[rx];
}

// Activation rows are handled in chunks of about 256 KiB (L2-resident while the weight tiles
// sweep them), at most kChunk rows so their sums fit a stack array.
constexpr int64_t kChunk = 512;

}  // namespace

void GemmI8I8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo) {
  const int64_t group_bytes = packing::kRowGroup * packing::I8K4(k);
  int32_t xsum[kChunk];
  const int64_t rows = packing::ChunkRows(k, kMaxRx);
  const int64_t chunk = rows < kChunk ? rows : kChunk;
  for (int64_t j0 = 0; j0 < n; j0 += chunk) {
    const int64_t nj = n - j0 < chunk ? n - j0 : chunk;
    for (int64_t j = 0; j < nj; ++j) xsum[j] = RowSum(x + (j0 + j) * ldx, k);
    const int mg_wide = nj <= 3 ? 4 : 2;
    // GEMM (many columns): while the first column tile of a row block runs, prefetch the
    // next block's weights. With few frames (stage 6: 26 for 3.5 s) the weights stream from
    // DRAM and the hardware prefetcher alone left them half as fast as from L3. GEMV
    // (decoder head) prefetches its own streams ahead instead.
    const bool prefetch = mg_wide == 2;
    int64_t r = r0;
    while (r < r1) {
      const int mg = r1 - r >= mg_wide * packing::kRowGroup ? mg_wide : 1;
      const int64_t rows = mg * packing::kRowGroup;
      const uint8_t* wr = w + r / packing::kRowGroup * group_bytes;
      for (int64_t j = 0; j < nj; j += kMaxRx) {
        const int rx = static_cast<int>(nj - j < kMaxRx ? nj - j : kMaxRx);
        const TileFn fn = TileFor(mg, rx);
        const bool pf_next = prefetch && j == 0 && r + rows < r1;
        const uint8_t* pf = pf_next ? wr + mg * group_bytes : nullptr;  // no fault past the end
        fn(wr, group_bytes, k, x + (j0 + j) * ldx, ldx, xsum + j, acc + (j0 + j) * ldo + r,
           ldo, r1 - r, pf);
      }
      r += rows;
    }
  }
}

size_t I8PackedBytes(int64_t k, int64_t n_rows) { return packing::I8x16Bytes(k, n_rows); }

void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  packing::PackI8x16(canonical, k, n_rows, 0x80, packed);
}

}  // namespace tern::kernels::avx512
