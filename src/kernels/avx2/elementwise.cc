// AVX2 encoder fills: the scalar loops 8 lanes at a time, same expression and order per
// element (no FMA: -ffp-contract=off); tails go through the scalar oracle's loops.
#include <immintrin.h>

#include <cstring>

#include "kernels/avx2/impl.h"
#include "kernels/expf_poly.h"
#include "kernels/scalar/impl.h"

namespace tern::kernels::avx2 {
namespace {

inline __m256 LoadI8(const int8_t* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(v)));
}

}  // namespace

void I32AffineF32(const int32_t* acc, int64_t n, float c, const float* bias, float* out) {
  const __m256 vc = _mm256_set1_ps(c);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_mul_ps(
        _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i))), vc);
    if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + i));
    _mm256_storeu_ps(out + i, v);
  }
  scalar::I32AffineF32(acc + i, n - i, c, bias ? bias + i : nullptr, out + i);
}

void I32MinMax(const int32_t* x, int64_t rows, int64_t n, int64_t ld, int32_t* mn, int32_t* mx) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i lo[4], hi[4];
    for (int u = 0; u < 4; ++u) {
      lo[u] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mn + i + 8 * u));
      hi[u] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mx + i + 8 * u));
    }
    for (int64_t j = 0; j < rows; ++j)
      for (int u = 0; u < 4; ++u) {
        const __m256i v =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + j * ld + i + 8 * u));
        lo[u] = _mm256_min_epi32(lo[u], v);
        hi[u] = _mm256_max_epi32(hi[u], v);
      }
    for (int u = 0; u < 4; ++u) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(mn + i + 8 * u), lo[u]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(mx + i + 8 * u), hi[u]);
    }
  }
  if (i < n) scalar::I32MinMax(x + i, rows, n - i, ld, mn + i, mx + i);
}

void I8ToF32(const int8_t* q, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, LoadI8(q + i));
  scalar::I8ToF32(q + i, n - i, out + i);
}

void I8AddScaledF32(const int8_t* a, float sa, const float* g, const int8_t* b, float sb,
                    int64_t rows, int64_t n, float* out) {
  const __m256 va = _mm256_set1_ps(sa), vb = _mm256_set1_ps(sb);
  if (!g) {  // no per-channel factor: the rows are one contiguous run
    n *= rows;
    rows = 1;
  }
  for (int64_t j = 0; j < rows; ++j, a += n, b += n, out += n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      __m256 x = _mm256_mul_ps(LoadI8(a + i), va);
      if (g) x = _mm256_mul_ps(x, _mm256_loadu_ps(g + i));
      _mm256_storeu_ps(out + i, _mm256_add_ps(x, _mm256_mul_ps(LoadI8(b + i), vb)));
    }
    scalar::I8AddScaledF32(a + i, sa, g ? g + i : nullptr, b + i, sb, 1, n - i, out + i);
  }
}

// As the AVX-512 version: 16 values at a time per row (tails through plain loops), then
// the float steps for 8 rows at once.
void I8RmsFactors(const int8_t* q, int64_t rows, int64_t n, float eps, float* s) {
  alignas(32) int32_t ss[8];
  const __m256 vn = _mm256_set1_ps(static_cast<float>(n)), veps = _mm256_set1_ps(eps);
  int64_t j0 = 0;
  for (; j0 + 8 <= rows; j0 += 8) {
    for (int64_t r = 0; r < 8; ++r) {
      const int8_t* qr = q + (j0 + r) * n;
      __m256i acc = _mm256_setzero_si256();
      int64_t i = 0;
      for (; i + 16 <= n; i += 16) {
        const __m256i v =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qr + i)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(v, v));
      }
      __m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
      h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
      int32_t sum = _mm_cvtsi128_si32(h);
      for (; i < n; ++i) sum += int32_t{qr[i]} * int32_t{qr[i]};
      ss[r] = sum;
    }
    const __m256 ms = _mm256_add_ps(
        _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<__m256i*>(ss))), vn),
        veps);
    _mm256_storeu_ps(s + j0, _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(ms)));
  }
  scalar::I8RmsFactors(q + j0 * n, rows - j0, n, eps, s + j0);
}

void I8ScaleMulF32(const int8_t* q, int64_t rows, int64_t n, const float* s, const float* g,
                   float* out) {
  for (int64_t j = 0; j < rows; ++j, q += n, out += n) {
    const __m256 vs = _mm256_set1_ps(s[j]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i,
                       _mm256_mul_ps(_mm256_mul_ps(LoadI8(q + i), vs), _mm256_loadu_ps(g + i)));
    scalar::I8ScaleMulF32(q + i, 1, n - i, s + j, g + i, out + i);
  }
}

// 16 channels per step, as the AVX-512 version; the channel tail goes through the oracle.
void Dw8I8I32(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows, int64_t n,
              int32_t* out, int64_t ldo) {
  auto load16 = [](const int8_t* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i wv[8];
    for (int t = 0; t < 8; ++t) wv[t] = load16(w + t * ldw + i);
    for (int64_t r = 0; r < rows; ++r) {
      const int8_t* xr = x + r * ldx + i;
      __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
      for (int p = 0; p < 4; ++p) {
        const __m256i pair =
            _mm256_add_epi16(_mm256_mullo_epi16(load16(xr + 2 * p * ldx), wv[2 * p]),
                             _mm256_mullo_epi16(load16(xr + (2 * p + 1) * ldx), wv[2 * p + 1]));
        lo = _mm256_add_epi32(lo, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(pair)));
        hi = _mm256_add_epi32(hi, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(pair, 1)));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * ldo + i), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * ldo + i + 8), hi);
    }
  }
  if (i < n) scalar::Dw8I8I32(x + i, ldx, w + i, ldw, rows, n - i, out + i, ldo);
}

// kernels/expf_poly.h's sequence 8 lanes at a time; the tail through the oracle.
void SiluMulF32(const float* g, const float* u, int64_t n, float* out) {
  using namespace expf_poly;
  const __m256 lo = _mm256_set1_ps(kExpMin), hi = _mm256_set1_ps(kExpMax);
  const __m256 log2e = _mm256_set1_ps(kLog2e), magic = _mm256_set1_ps(kRoundMagic);
  const __m256 ln2hi = _mm256_set1_ps(kLn2Hi), ln2lo = _mm256_set1_ps(kLn2Lo);
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(g + i);
    const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)), lo), hi);
    const __m256 nf = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(t, log2e), magic), magic);
    const __m256 r =
        _mm256_sub_ps(_mm256_sub_ps(t, _mm256_mul_ps(nf, ln2hi)), _mm256_mul_ps(nf, ln2lo));
    __m256 p = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(kP0), r), _mm256_set1_ps(kP1));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP2));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP3));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP4));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP5));
    const __m256i bits =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(nf), _mm256_set1_epi32(127)), 23);
    const __m256 e =
        _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(p, _mm256_mul_ps(r, r)), r), one),
                      _mm256_castsi256_ps(bits));
    _mm256_storeu_ps(
        out + i, _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
  }
  scalar::SiluMulF32(g + i, u + i, n - i, out + i);
}

}  // namespace tern::kernels::avx2
