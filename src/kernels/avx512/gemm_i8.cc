// AVX-512 VNNI int8 x int8 GEMM on the I8x16 packed layout (packing.h).
//
// vpdpbusd multiplies unsigned by signed bytes. gemm_i8_i8: the pack stores u = w + 128
// (flip 0x80) and the activations stay signed (broadcast 4 at a time straight from memory):
//   sum_k u*x = sum_k w*x + 128 * sum_k x   =>   acc = dot - 128 * xsum[j],
// xsum computed per activation row and call. gemm_u8_i8: the pack keeps w (flip 0) and the
// activations are the unsigned operand, either as they are (all >= 0) or flipped in the
// register they are broadcast to (x ^ 0x80 = x + 128: one vpxord per broadcast, which
// MG vpdpbusd then use), with the caller's per-row corr = 128 * sum_k w in place of xsum:
// no pass over x at all.
// Every term is exact in int32 (|dot| <= 255*128*K), so results match the scalar oracle.
// Register tile: MG row groups (16 rows per zmm) x RX activation rows.
// Not clang-formatted: TERN_UNROLL (a _Pragma before a loop) is laid out as an expression by
// clang-format 14, which then joins nested loops into one line; this file keeps its hand layout.
// clang-format off
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/avx512/impl.h"
#include "kernels/avx512/requant.h"
#include "kernels/packing.h"
#include "kernels/unroll.h"

namespace tern::kernels::avx512 {
namespace {

// 4 activation bytes at p, of which only `valid` (1..4) exist; the rest read as 0 (a masked
// load: no fault past them, and no memcpy call of a run-time length, which the stem conv's
// 7 taps paid on every column).
inline __m512i Bcast4(const int8_t* p, int64_t valid) {
  if (valid >= 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  }
  const auto m = static_cast<__mmask16>((1u << valid) - 1);
  return _mm512_broadcastd_epi32(_mm_maskz_loadu_epi8(m, p));
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

// Tile epilogues: what becomes of the corrected sums of one row group g (16 rows, lanes past
// the matrix masked off) for the tile's RX activation rows. Tile(j, r) rebases a call's
// epilogue to the tile at activation row j, weight row r (kernels.h, I8Epilogue). Tiles
// take it by value: a copy in registers, which the epilogue's own stores cannot alias (by
// reference, gcc reloads the pointers after every store).
struct StoreEp {
  int32_t* acc;
  int64_t ldo;
  StoreEp Tile(int64_t j, int64_t r) const { return {acc + j * ldo + r, ldo}; }
  template <int RX>
  void Put(int g, const __m512i (&s)[RX], __mmask16 m) const {
    TERN_UNROLL for (int j = 0; j < RX; ++j) {
      _mm512_mask_storeu_epi32(acc + j * ldo + g * 16, m, s[j]);
    }
  }
};

// Per-row bounds folded in registers: the sums never reach memory.
struct BoundsEp {
  int32_t* mn;  // of row r0
  int32_t* mx;
  int64_t r0;
  BoundsEp Tile(int64_t /*j*/, int64_t r) const { return {mn + (r - r0), mx + (r - r0), r}; }
  template <int RX>
  void Put(int g, const __m512i (&s)[RX], __mmask16 m) const {
    __m512i lo = s[0], hi = s[0];
    TERN_UNROLL for (int j = 1; j < RX; ++j) {
      lo = _mm512_min_epi32(lo, s[j]);
      hi = _mm512_max_epi32(hi, s[j]);
    }
    // Consecutive tiles fold into the same bounds: whole-vector accesses let the next
    // tile's load forward from this store (a masked store does not forward).
    int32_t* pn = mn + g * 16;
    int32_t* px = mx + g * 16;
    if (m == 0xffff) {
      _mm512_storeu_si512(pn, _mm512_min_epi32(lo, _mm512_loadu_si512(pn)));
      _mm512_storeu_si512(px, _mm512_max_epi32(hi, _mm512_loadu_si512(px)));
    } else {
      _mm512_mask_storeu_epi32(pn, m, _mm512_min_epi32(lo, _mm512_maskz_loadu_epi32(m, pn)));
      _mm512_mask_storeu_epi32(px, m, _mm512_max_epi32(hi, _mm512_maskz_loadu_epi32(m, px)));
    }
  }
};

// The requant epilogue, y = (float)s * c (+ bias) then ScaleRoundI32, as I32RequantI8.
template <Round kMode, bool kRelu>
struct RequantEp {
  const float* bias;  // may be null
  float c, inv;
  int8_t* q;
  int64_t ldq;
  RequantEp Tile(int64_t j, int64_t r) const {
    return {bias != nullptr ? bias + r : nullptr, c, inv, q + j * ldq + r, ldq};
  }
  template <int RX>
  void Put(int g, const __m512i (&s)[RX], __mmask16 m) const {
    const __m512 vc = _mm512_set1_ps(c), vinv = _mm512_set1_ps(inv);
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + g * 16) : __m512{};
    TERN_UNROLL for (int j = 0; j < RX; ++j) {
      __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(s[j]), vc);
      if (bias != nullptr) y = _mm512_add_ps(y, b);
      const __m512i v = ScaleRoundI32<kMode, kRelu>(y, vinv);
      _mm_mask_storeu_epi8(q + j * ldq + g * 16, m, _mm512_cvtepi32_epi8(v));
    }
  }
};

// The quad body is a macro, not a lambda: even with the loops unrolled (TERN_UNROLL), a
// lambda capturing the accumulators left gcc 12 copying them between registers every quad.
// How a tile reads its activations: signed against the flipped pack (`off`: the rows' sums,
// xsum[0..RX)); or as the unsigned operand against the unflipped pack, as they are (all
// >= 0, `off` null) or flipped in the register (`off`: the tile's first weight row's
// corr).
enum class XMode { kSigned, kUnsigned, kFlipped };

template <int MG, int RX, XMode kX, class Ep>
void I8Tile(const uint8_t* w, int64_t group_bytes, int64_t k, const int8_t* x, int64_t ldx,
            const int32_t* off, const Ep ep, int64_t rows_left, const uint8_t* pf,
            int pf_shift) {
  __m512i acc[MG][RX];
  TERN_UNROLL for (int g = 0; g < MG; ++g)
    TERN_UNROLL for (int j = 0; j < RX; ++j) acc[g][j] = _mm512_setzero_si512();
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
#define TERN_I8_QUAD(QD, VALID)                                                           \
  {                                                                                       \
    __m512i v[MG];                                                                        \
    TERN_UNROLL for (int g = 0; g < MG; ++g) {                                            \
      v[g] = _mm512_loadu_si512(w + g * group_bytes + (QD) * 64);                         \
    }                                                                                     \
    TERN_UNROLL for (int j = 0; j < RX; ++j) {                                            \
      __m512i xb = Bcast4(x + j * ldx + (QD) * 4, VALID);                                 \
      if (kX == XMode::kFlipped) xb = _mm512_xor_si512(xb, flip);                         \
      TERN_UNROLL for (int g = 0; g < MG; ++g) {                                          \
        acc[g][j] = kX == XMode::kSigned ? _mm512_dpbusd_epi32(acc[g][j], v[g], xb)       \
                                         : _mm512_dpbusd_epi32(acc[g][j], xb, v[g]);      \
      }                                                                                   \
    }                                                                                     \
  }
  // Integer sums: the partial last quad may as well go first.
  const int64_t full = k / 4;
  if (k % 4) TERN_I8_QUAD(full, k % 4)
  for (int64_t qd = 0; qd < full; ++qd) {
    if (pf != nullptr) {
      if ((qd & ((int64_t{1} << pf_shift) - 1)) == 0) {
        const int64_t line = (qd >> pf_shift) * 64;
        TERN_UNROLL for (int g = 0; g < MG; ++g)
          _mm_prefetch(reinterpret_cast<const char*>(pf + g * group_bytes + line), _MM_HINT_T0);
      }
    } else if (RX == 1) {  // decode head: the stream(s), well ahead (packing::StreamAhead)
      const int64_t ahead = packing::StreamAhead(qd * 64, group_bytes, MG);
      TERN_UNROLL for (int g = 0; g < MG; ++g)
        _mm_prefetch(reinterpret_cast<const char*>(w + g * group_bytes + ahead), _MM_HINT_T0);
    }
    TERN_I8_QUAD(qd, 4)
  }
#undef TERN_I8_QUAD
  TERN_UNROLL for (int g = 0; g < MG; ++g) {
    const int64_t left = rows_left - g * 16;
    if (left <= 0) break;
    const __mmask16 m = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    __m512i s[RX];
    if constexpr (kX == XMode::kSigned) {
      TERN_UNROLL for (int j = 0; j < RX; ++j)
        s[j] = _mm512_sub_epi32(acc[g][j], _mm512_set1_epi32(off[j] * 128));
    } else {
      // The pad lanes of a partial quad read 0x80 once flipped, against zero weights.
      // kUnsigned subtracts zeros rather than copying acc to s: gcc 12 then kept the
      // accumulators on the stack.
      const __m512i corr = off != nullptr ? _mm512_maskz_loadu_epi32(m, off + g * 16)
                                          : _mm512_setzero_si512();
      TERN_UNROLL for (int j = 0; j < RX; ++j) s[j] = _mm512_sub_epi32(acc[g][j], corr);
    }
    ep.Put(g, s, m);
  }
}

// 2 row groups x 8 activation rows: at 2 x 10 or 2 x 12 gcc 12 spills accumulators.
constexpr int kMaxRx = 8;

// The tile functions of one epilogue, by row groups (1, 2, 4) and activation rows (1-8).
template <XMode kX, class Ep>
struct Tiles {
  using Fn = void (*)(const uint8_t*, int64_t, int64_t, const int8_t*, int64_t, const int32_t*,
                      Ep, int64_t, const uint8_t*, int);
  // A plain struct, not std::array: nothing with external linkage gets instantiated in this
  // ISA-flagged TU (packing.h explains the hazard).
  struct Row {
    Fn fn[kMaxRx + 1];
  };
  template <int MG, int RX>
  static constexpr Fn Pick() {
    if constexpr (MG * RX <= 24) {
      return I8Tile<MG, RX, kX, Ep>;
    } else {
      return nullptr;
    }
  }
  template <int MG, int... RX>
  static constexpr Row MakeRow(std::integer_sequence<int, RX...>) {
    return {{nullptr, Pick<MG, RX + 1>()...}};
  }
  template <int MG>
  static constexpr Row kRow = MakeRow<MG>(std::make_integer_sequence<int, kMaxRx>());
  static Fn For(int mg, int rx) {
    return mg == 4 ? kRow<4>.fn[rx] : mg == 2 ? kRow<2>.fn[rx] : kRow<1>.fn[rx];
  }
};

// Activation rows are handled in chunks of about 256 KiB (L2-resident while the weight tiles
// sweep them), at most kChunk rows so their sums fit a stack array.
constexpr int64_t kChunk = 512;

// corr: the per-weight-row correction of kFlipped (unused otherwise).
template <XMode kX, class Ep>
void Gemm(const uint8_t* w, int64_t k, int64_t r0, int64_t r1, const int8_t* x, int64_t ldx,
          int64_t n, const int32_t* corr, const Ep& ep) {
  const int64_t group_bytes = packing::kRowGroup * packing::I8K4(k);
  int32_t xsum[kChunk];
  const int64_t rows = packing::ChunkRows(k, kMaxRx);
  const int64_t chunk = rows < kChunk ? rows : kChunk;
  for (int64_t j0 = 0; j0 < n; j0 += chunk) {
    const int64_t nj = n - j0 < chunk ? n - j0 : chunk;
    if constexpr (kX == XMode::kSigned)
      for (int64_t j = 0; j < nj; ++j) xsum[j] = RowSum(x + (j0 + j) * ldx, k);
    // GEMV (the decoder's int8 head): one row group at a time, so the weights are read as
    // one sequential stream, which the tile prefetches ahead itself (four groups at once
    // would read four interleaved streams, which DRAM serves worse).
    const int mg_wide = nj == 1 ? 1 : nj <= 3 ? 4 : 2;
    // GEMM (many columns): while the column tiles of a row block run, prefetch the next
    // block's weights: with few frames the weights stream from DRAM, which the hardware
    // prefetcher alone does not keep up with. The first 2^shift tiles (at most the tile
    // count) each fetch their share of the next block's lines, one every 2^shift quads:
    // all from the first tile would ask for lines faster than DRAM delivers them and leave
    // the other tiles fetching nothing.
    const bool prefetch = mg_wide == 2;
    const int64_t tiles = (nj + kMaxRx - 1) / kMaxRx;
    const int shift = tiles >= 8 ? 3 : tiles >= 4 ? 2 : tiles >= 2 ? 1 : 0;
    const int64_t share = (k / 4) >> shift;  // quads, i.e. lines per row group, per tile
    int64_t r = r0;
    while (r < r1) {
      const int mg = r1 - r >= mg_wide * packing::kRowGroup ? mg_wide : 1;
      const int64_t block_rows = mg * packing::kRowGroup;
      const uint8_t* wr = w + r / packing::kRowGroup * group_bytes;
      for (int64_t j = 0; j < nj; j += kMaxRx) {
        const int rx = static_cast<int>(nj - j < kMaxRx ? nj - j : kMaxRx);
        const int64_t tile = j / kMaxRx;
        // No pointer past the packed rows: the next block has this one's groups (r + 2 rows
        // <= r1), and every tile's lines stay below k/4 of them.
        const bool pf_next = prefetch && tile < (int64_t{1} << shift) && r + 2 * block_rows <= r1;
        const uint8_t* pf = pf_next ? wr + mg * group_bytes + tile * share * 64 : nullptr;
        const int32_t* off = kX == XMode::kSigned    ? xsum + j
                             : kX == XMode::kFlipped ? corr + r
                                                     : nullptr;
        Tiles<kX, Ep>::For(mg, rx)(wr, group_bytes, k, x + (j0 + j) * ldx, ldx, off,
                                   ep.Tile(j0 + j, r), r1 - r, pf, shift);
      }
      r += block_rows;
    }
  }
}

template <XMode kX, Round kMode, bool kRelu>
void GemmRequant(const uint8_t* w, int64_t k, int64_t r0, int64_t r1, const int8_t* x,
                 int64_t ldx, int64_t n, const int32_t* corr, const I8Epilogue& ep) {
  Gemm<kX>(w, k, r0, r1, x, ldx, n, corr,
           RequantEp<kMode, kRelu>{ep.bias, ep.c, ep.inv, ep.q, ep.ldq});
}

template <XMode kX>
void GemmEp(const uint8_t* w, int64_t k, int64_t r0, int64_t r1, const int8_t* x, int64_t ldx,
            int64_t n, const int32_t* corr, const I8Epilogue& ep) {
  if (ep.q != nullptr) {
    const bool even = ep.mode == Round::kHalfEven;
    (ep.relu ? (even ? GemmRequant<kX, Round::kHalfEven, true>
                     : GemmRequant<kX, Round::kHalfAway, true>)
             : (even ? GemmRequant<kX, Round::kHalfEven, false>
                     : GemmRequant<kX, Round::kHalfAway, false>))(w, k, r0, r1, x, ldx, n, corr,
                                                                  ep);
  } else {
    Gemm<kX>(w, k, r0, r1, x, ldx, n, corr, BoundsEp{ep.mn, ep.mx, r0});
  }
}

}  // namespace

void GemmI8I8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo) {
  Gemm<XMode::kSigned>(w, k, r0, r1, x, ldx, n, nullptr, StoreEp{acc, ldo});
}

void GemmI8I8Ep(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
                const int8_t* x, int64_t ldx, int64_t n, const I8Epilogue& ep) {
  GemmEp<XMode::kSigned>(w, k, r0, r1, x, ldx, n, nullptr, ep);
}

void GemmU8I8(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, const int32_t* corr, int32_t* acc,
              int64_t ldo) {
  if (corr != nullptr)
    Gemm<XMode::kFlipped>(w, k, r0, r1, x, ldx, n, corr, StoreEp{acc, ldo});
  else
    Gemm<XMode::kUnsigned>(w, k, r0, r1, x, ldx, n, nullptr, StoreEp{acc, ldo});
}

void GemmU8I8Ep(const uint8_t* w, int64_t k, int64_t /*n_rows*/, int64_t r0, int64_t r1,
                const int8_t* x, int64_t ldx, int64_t n, const int32_t* corr,
                const I8Epilogue& ep) {
  if (corr != nullptr)
    GemmEp<XMode::kFlipped>(w, k, r0, r1, x, ldx, n, corr, ep);
  else
    GemmEp<XMode::kUnsigned>(w, k, r0, r1, x, ldx, n, nullptr, ep);
}

size_t I8PackedBytes(int64_t k, int64_t n_rows) { return packing::I8x16Bytes(k, n_rows); }

void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  packing::PackI8x16(canonical, k, n_rows, 0x80, packed);
}

void PackU8I8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed) {
  packing::PackI8x16(canonical, k, n_rows, 0x00, packed);
}

}  // namespace tern::kernels::avx512
