// AVX-512 VNNI ternary I2_S x int8 GEMM on the I2S16 packed layout (kernels/packing.h).
//
// One 64-byte load holds 16 rows x 16 k of 2-bit codes; a shift and a mask give "quad s"
// (16 rows x 4 k, one row per 32-bit lane), and vpdpbusd multiplies those unsigned codes by
// 4 broadcast int8 activations, adding into the rows' int32 lanes. Register tile: MG row
// groups (16 rows each) x RX activation rows, each unpacked quad reused RX times; NACC = 2
// splits the accumulation chain (even/odd quads) when RX is too small to hide latency.
// Exact int32 throughout; epilogue ((float)(D - S) / s) * w_scale, as the scalar oracle.
// Not clang-formatted: TERN_UNROLL (a _Pragma before a loop) is laid out as an expression by
// clang-format 14, which then joins nested loops into one line; this file keeps its hand layout.
// clang-format off
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/avx512/impl.h"
#include "kernels/avx512/vnni.h"
#include "kernels/packing.h"
#include "kernels/unroll.h"

namespace tern::kernels::avx512 {
namespace {

inline __m512i Bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

template <int MG, int RX, int NACC>
void I2sTile(const uint8_t* w, int64_t group_bytes, int64_t k, const int8_t* q, int64_t ldq,
             float w_scale, const float* scale, const int32_t* sums, float* out, int64_t ldo,
             int64_t rows_left) {
  const __m512i mask = _mm512_set1_epi8(3);
  __m512i acc[NACC][MG][RX];
  TERN_UNROLL for (int a = 0; a < NACC; ++a)
    TERN_UNROLL for (int g = 0; g < MG; ++g)
      TERN_UNROLL for (int j = 0; j < RX; ++j) acc[a][g][j] = _mm512_setzero_si512();
  const int64_t chunks = k / 16;
  for (int64_t c = 0; c < chunks; ++c) {
    __m512i v[MG];
    // Batched decode streams the weights from DRAM once per step: without this prefetch the
    // 8-row tile ran at 0.66 of the int8 peak, with it 0.95 (`tern-bench kernels`, cold).
    const int64_t ahead = packing::StreamAhead(c * 64, group_bytes, MG);
    TERN_UNROLL for (int g = 0; g < MG; ++g) {
      _mm_prefetch(reinterpret_cast<const char*>(w + g * group_bytes + ahead), _MM_HINT_T0);
      v[g] = _mm512_loadu_si512(w + g * group_bytes + c * 64);
    }
    const int8_t* qc = q + c * 16;
#define TERN_I2S_QUAD(S)                                                              \
  {                                                                                   \
    __m512i cs[MG];                                                                   \
    TERN_UNROLL for (int g = 0; g < MG; ++g) {                                        \
      cs[g] = _mm512_and_si512(_mm512_srli_epi16(v[g], 6 - 2 * (S)), mask);           \
    }                                                                                 \
    TERN_UNROLL for (int j = 0; j < RX; ++j) {                                        \
      const __m512i xb = Bcast4(qc + j * ldq + 4 * (S));                              \
      TERN_UNROLL for (int g = 0; g < MG; ++g) {                                      \
        Dpbusd(acc[(S) % NACC][g][j], cs[g], xb);                                     \
      }                                                                               \
    }                                                                                 \
  }
    TERN_I2S_QUAD(0)
    TERN_I2S_QUAD(1)
    TERN_I2S_QUAD(2)
    TERN_I2S_QUAD(3)
#undef TERN_I2S_QUAD
  }
  const __m512 ws = _mm512_set1_ps(w_scale);
  TERN_UNROLL for (int g = 0; g < MG; ++g) {
    const int64_t left = rows_left - g * 16;
    const __mmask16 m = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    TERN_UNROLL for (int j = 0; j < RX; ++j) {
      __m512i d = acc[0][g][j];
      if (NACC == 2) d = _mm512_add_epi32(d, acc[NACC - 1][g][j]);
      const __m512i ds = _mm512_sub_epi32(d, _mm512_set1_epi32(sums[j]));
      __m512 f = _mm512_div_ps(_mm512_cvtepi32_ps(ds), _mm512_set1_ps(scale[j]));
      f = _mm512_mul_ps(f, ws);
      _mm512_mask_storeu_ps(out + j * ldo + g * 16, m, f);
    }
  }
}

// Decode (one activation row): no shifts at all. Quad s is masked in place (v & (0xc0 >> 2s)),
// so its codes arrive multiplied by 4^(3-s); each quad keeps its own accumulator and the
// exact int32 sums are scaled back with arithmetic shifts at the end:
//   D = acc3 + (acc2 >> 2) + (acc1 >> 4) + (acc0 >> 6).
// Largest lane: 64 * 2 * 128 * K/4, inside int32 for K < 2^19.
// One row group per call: consecutive groups are adjacent in the pack, so a sweep over the
// rows reads the weights as one sequential stream, prefetched kStreamPrefetch ahead across
// the group boundaries. (Tiles of four groups would read four interleaved streams, which
// DRAM serves worse.)
void I2sGemvGroup(const uint8_t* w, int64_t k, const int8_t* q, float w_scale,
                  const float* scale, const int32_t* sums, float* out, int64_t rows_left) {
  const __m512i m0 = _mm512_set1_epi8(static_cast<char>(0xc0)), m1 = _mm512_set1_epi8(0x30),
                m2 = _mm512_set1_epi8(0x0c), m3 = _mm512_set1_epi8(0x03);
  __m512i acc[4];
  TERN_UNROLL for (int s = 0; s < 4; ++s) acc[s] = _mm512_setzero_si512();
  const int64_t chunks = k / 16;
  for (int64_t c = 0; c < chunks; ++c) {
    const __m512i x0 = Bcast4(q + c * 16), x1 = Bcast4(q + c * 16 + 4),
                  x2 = Bcast4(q + c * 16 + 8), x3 = Bcast4(q + c * 16 + 12);
    _mm_prefetch(reinterpret_cast<const char*>(w + c * 64 + packing::kStreamPrefetch),
                 _MM_HINT_T0);
    const __m512i v = _mm512_loadu_si512(w + c * 64);
    Dpbusd(acc[0], _mm512_and_si512(v, m0), x0);
    Dpbusd(acc[1], _mm512_and_si512(v, m1), x1);
    Dpbusd(acc[2], _mm512_and_si512(v, m2), x2);
    Dpbusd(acc[3], _mm512_and_si512(v, m3), x3);
  }
  const __mmask16 m = rows_left >= 16 ? __mmask16(0xffff) : __mmask16((1u << rows_left) - 1);
  __m512i d = _mm512_add_epi32(acc[3], _mm512_srai_epi32(acc[2], 2));
  d = _mm512_add_epi32(d, _mm512_srai_epi32(acc[1], 4));
  d = _mm512_add_epi32(d, _mm512_srai_epi32(acc[0], 6));
  const __m512i ds = _mm512_sub_epi32(d, _mm512_set1_epi32(sums[0]));
  const __m512 f = _mm512_div_ps(_mm512_cvtepi32_ps(ds), _mm512_set1_ps(scale[0]));
  _mm512_mask_storeu_ps(out, m, _mm512_mul_ps(f, _mm512_set1_ps(w_scale)));
}

using TileFn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t, float,
                        const float*, const int32_t*, float*, int64_t, int64_t);

// 2 row groups x 10 activation rows = 20 accumulators: at 12 (24) gcc 12 spills inside the
// loop and the tile is slower.
constexpr int kMaxRx = 10;

// Small RX (decode) splits each accumulator chain in two to hide the vpdpbusd latency.
template <int MG, int RX>
constexpr TileFn Pick() {
  constexpr int nacc = RX <= 3 ? 2 : 1;
  if constexpr (MG * RX * nacc <= 24) {
    return I2sTile<MG, RX, nacc>;
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

// The tile for `mg` row groups (1, 2 or 4) and `rx` activation rows.
TileFn TileFor(int mg, int rx) {
  return mg == 4 ? kRow<4>.fn[rx] : mg == 2 ? kRow<2>.fn[rx] : kRow<1>.fn[rx];
}

}  // namespace

void GemmI2sI8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
               float w_scale, const int8_t* q, int64_t ldq, const float* scale,
               const int32_t* sums, int64_t n, float* out, int64_t ldo) {
  const int64_t group_bytes = packing::kRowGroup * k / 4;
  if (n == 1) {  // decode: one row group after another (I2sGemvGroup)
    for (int64_t r = r0; r < r1; r += packing::kRowGroup) {
      I2sGemvGroup(w + r / packing::kRowGroup * group_bytes, k, q, w_scale, scale, sums,
                   out + r, r1 - r);
    }
    return;
  }
  // Weight rows in tiles of 4 row groups when activation blocks are small, else 2; the row
  // tail goes one group at a time. Each tile sweeps the activation blocks of a chunk while
  // its codes sit in L1.
  // Activation rows go in chunks of about 256 KiB (L2-resident while every weight tile of
  // the range sweeps over them); weights are re-read once per chunk.
  const int64_t chunk = packing::ChunkRows(k, kMaxRx);
  const int mg_wide = n <= 3 ? 4 : 2;
  for (int64_t j0 = 0; j0 < n; j0 += chunk) {
    const int64_t nj = n - j0 < chunk ? n - j0 : chunk;
    // Activation rows split evenly over the fewest tiles (16 rows as 8 + 8, not 10 + 6): a
    // narrow tile pays the same unpacking per quad for fewer multiply-adds.
    const int64_t tiles = (nj + kMaxRx - 1) / kMaxRx, per_tile = (nj + tiles - 1) / tiles;
    int64_t r = r0;
    while (r < r1) {
      const int mg = r1 - r >= mg_wide * packing::kRowGroup ? mg_wide : 1;
      const uint8_t* wr = w + r / packing::kRowGroup * group_bytes;
      for (int64_t j = j0; j < j0 + nj; j += per_tile) {
        const int rx = static_cast<int>(j0 + nj - j < per_tile ? j0 + nj - j : per_tile);
        TileFor(mg, rx)(wr, group_bytes, k, q + j * ldq, ldq, w_scale, scale + j, sums + j,
                        out + j * ldo + r, ldo, r1 - r);
      }
      r += mg * packing::kRowGroup;
    }
  }
}

size_t I2sPackedBytes(int64_t k, int64_t n_rows) { return packing::I2s16Bytes(k, n_rows); }

void PackI2s(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  packing::PackI2s16(canonical, k, n_rows, packed);
}

}  // namespace tern::kernels::avx512
