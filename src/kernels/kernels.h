// Per-ISA compute kernels behind one dispatch table.
//
// Kernels know bytes, shapes and row ranges; never tensor names, models or threads. Callers
// (src/ops) split work into row ranges across threads and call one table entry per range,
// so the cost of the indirect call is paid once per row block, never per dot product.
//
// Conventions for every GEMM-like entry below:
//   * The weight matrix W has N rows ("output features") of K values each. A call computes
//     output rows [r0, r1) of W against `n` activation rows ("tokens" / "columns") X[j], j<n.
//   * out[j * ldo + r] receives the result for activation row j and weight row r.
//   * Integer accumulation is exact int32 in every ISA (no int16 partial sums that can wrap),
//     so integer results, and float results computed from them by a fixed epilogue, are
//     bit-identical across ISAs and thread counts. Float-input kernels (F16 x F32) may differ
//     between ISAs by reduction order but are deterministic for a given ISA.
//   * Weights stay in the canonical on-disk layout unless an ISA declares a packed layout:
//     ops call Pack*() once at load and pass the packed bytes. Row ranges passed to a kernel
//     on packed weights must be multiples of that kernel's `row_align` (except at N).
//
// Scalar kernels (kernels/scalar/) are plain loops and the oracle for every other ISA.
//
// Notes for callers:
//   * Row alignment: scalar 1; AVX2 and AVX-512 16 for both I2_S and int8 (their packs
//     interleave 16 rows, kernels/packing.h). Split rows with ThreadPool::Split(N, align, ...).
//     Packed sizes round N up to 16 rows (and int8 K up to 4): always allocate
//     i2s_packed_bytes / i8_packed_bytes, never N*K/4 or N*K.
//   * Packs are separable by row blocks: packing rows [r, r + m) of a matrix on their own
//     (r a multiple of the row alignment) writes exactly the bytes
//     [packed_bytes(k, r), packed_bytes(k, r) + packed_bytes(k, m)) of the whole matrix's pack,
//     so large matrices are packed block by block (kernels_test checks it on every ISA).
//   * I2_S code 3 (never written by the format) is weight 0 in every ISA, as the dequantizer.
//   * quantize_rows_i8 rounds the float product fl(x*s) (spec 2.3 as written; the audit's
//     gcc+FMA variant that rounds the exact product is not emulated).
//   * Limits for exact int32: I2_S K < 2^19; int8 K < 2^16 (AVX-512 adds 128*sum(x)).
//   * Kernels() aborts (message on stderr) when TERN_ISA is unknown or unavailable: tools
//     call SelectIsa() first and report its Status (tern --system-info, tern bench do).
//   * Float kernels assume finite inputs (NaN handling of max/clamp differs between ISAs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace tern::kernels {

enum class Isa : uint8_t { kScalar, kAvx2, kAvx512, kNeon };

const char* IsaName(Isa isa);                    // "scalar", "avx2", "avx512", "neon"
Result<Isa> IsaFromName(std::string_view name);  // error names the accepted values

// Rounding used when a float is turned into int8.
enum class Round : uint8_t {
  kHalfEven,  // round half to even (nearbyint under the default FP environment)
  kHalfAway,  // round half away from zero (roundf)
};

// What gemm_i8_i8_ep does with the sum s of weight row r and activation row j, instead of
// storing it (the encoder's GEMMs whose sums are needed only through these):
//   bounds (mn != null):   mn[r-r0] = min(mn[r-r0], s), mx[r-r0] = max(mx[r-r0], s)
//                          (as i32_minmax; the bounds of the call's rows, from its r0)
//   requant (q != null):   q[j*ldq + r] = the i32_requant_i8 byte of s (c, bias[r], inv,
//                          mode, relu; bias may be null), indexed like acc in gemm_i8_i8
// Exactly one of the two.
struct I8Epilogue {
  int32_t* mn = nullptr;
  int32_t* mx = nullptr;
  int8_t* q = nullptr;
  int64_t ldq = 0;
  float c = 0, inv = 0;
  const float* bias = nullptr;
  Round mode = Round::kHalfAway;
  bool relu = false;
};

// For |v| <= 127, roundf(v) == truncate(v + copysign(kBelowHalf, v)) in float arithmetic,
// kBelowHalf being the float below 0.5; SIMD requantization uses it (one add and a truncating
// conversion). Why, for 0 <= v = n + f (n integer): if f >= 0.5 the exact sum is at least
// n + 1 - 2^-25 and rounds to >= n + 1 (at n = 0 it is the midpoint of 1 - 2^-24 and 1 and
// goes to the even 1); if f < 0.5 then f <= 0.5 - ulp(v), the sum is at most
// n + 1 - ulp(v) - 2^-25 and rounds to at most the float below n + 1. Negative v mirror
// this. Requant.NearTiesMatchOracle checks every float within 64 ulps of each k and k + 0.5.
inline constexpr float kBelowHalf = 0.49999997f;
static_assert(0.5f - kBelowHalf == 0x1p-25f, "kBelowHalf is the float just below 0.5");

// The operands of one encoder fill (below, "Encoder fills"): RMSNorm's values
//   y[j][i] = ((float)a[j][i] * s[j]) * g[i]                       (s set; i8_scale_mul_f32)
// or add_scaled's
//   y[j][i] = ((float)a[j][i] * sa) * g[i] + (float)b[j][i] * sb   (b set; i8_add_scaled_f32,
//                                                                   g null: a*sa + b*sb)
// rows n apart. Exactly one of s and b.
struct I8Fill {
  const int8_t* a = nullptr;
  const int8_t* b = nullptr;
  float sa = 0, sb = 0;
  const float* s = nullptr;
  const float* g = nullptr;
};

struct KernelTable {
  Isa isa;

  // ---- Activation quantization (decoder: per row, spec 2.3) ------------------------------
  // For each of `rows` rows of x (stride ldx floats, length k):
  //   amax = max(1e-5, max|x|) computed in double; s = (float)(127 / amax);
  //   q = clamp(round_half_even(x * s), -128, 127); sum = sum(q).
  // s is stored in scale[row] (a quantizing multiplier: x ~= q / s), sum in sums[row].
  void (*quantize_rows_i8)(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q,
                           int64_t ldq, float* scale, int32_t* sums);

  // ---- Ternary I2_S x int8 (decoder projections) ------------------------------------------
  // W: I2_S codes for N rows of K values (K % 128 == 0), in this ISA's packed layout
  // (see PackI2S). q/scale/sums from quantize_rows_i8. For each j < n and r in [r0, r1):
  //   D = sum_k code[r][k] * q[j][k]   (exact int32; code in {0,1,2})
  //   out[j*ldo + r] = ((float)(D - sums[j]) / scale[j]) * w_scale
  void (*gemm_i2s_i8)(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                      float w_scale, const int8_t* q, int64_t ldq, const float* scale,
                      const int32_t* sums, int64_t n, float* out, int64_t ldo);
  int64_t i2s_row_align;
  // Bytes of the packed form of an N x K I2_S matrix, and the packing itself (canonical
  // on-disk codes, N*K/4 bytes, in; packed out). Scalar: identity.
  size_t (*i2s_packed_bytes)(int64_t k, int64_t n_rows);
  void (*pack_i2s)(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);

  // ---- int8 x int8 (encoder I8_S and the W8A8 head) ---------------------------------------
  // W: N rows of K int8 in this ISA's packed layout (see PackI8); x: n rows of K int8 values
  // in [-127, 127] (stride ldx). acc[j*ldo + r] = sum_k W[r][k] * x[j][k], exact int32.
  void (*gemm_i8_i8)(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                     const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo);
  int64_t i8_row_align;
  // gemm_i8_i8 with the encoder's epilogue fused: each sum leaves the registers only as
  // `ep` asks (I8Epilogue). Null in tables without it: ops then run gemm_i8_i8 on a tile and
  // apply i32_minmax / i32_requant_i8, which gives the same bytes.
  void (*gemm_i8_i8_ep)(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                        const int8_t* x, int64_t ldx, int64_t n, const I8Epilogue& ep);
  size_t (*i8_packed_bytes)(int64_t k, int64_t n_rows);
  void (*pack_i8)(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);
  // The same products on weights packed by pack_u8_i8 (i8_packed_bytes of them), with the
  // activations as vpdpbusd's unsigned operand: with corr null every x must be >= 0 and its
  // bytes are read as they are; else each is read as x + 128 (x ^ 0x80) and corr[r] =
  // 128 * sum_k W[r][k] (the caller's, from load time) is taken back out. Exact int32
  // sums, stored to acc (gemm_u8_i8) or through `ep` (gemm_u8_i8_ep). gemm_i8_i8 takes its
  // unsigned operand's offset out with x's row sums instead, a pass over x per call, which
  // costs most where K is small: the encoder's linear and conv matrices are packed for
  // these. Null in tables without them; ops then pack with pack_i8 and run gemm_i8_i8.
  void (*gemm_u8_i8)(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                     const int8_t* x, int64_t ldx, int64_t n, const int32_t* corr, int32_t* acc,
                     int64_t ldo);
  void (*gemm_u8_i8_ep)(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                        const int8_t* x, int64_t ldx, int64_t n, const int32_t* corr,
                        const I8Epilogue& ep);
  void (*pack_u8_i8)(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);

  // ---- F16 x F32 (the stored F16 output head; attention over the F16 KV cache) ------------
  // W: N rows of K F16 values, row stride ldw elements (canonical; no packing).
  // out[j*ldo + r] = sum_k f32(W[r][k]) * x[j][k] with float accumulation.
  void (*gemm_f16_f32)(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1,
                       const float* x, int64_t ldx, int64_t n, float* out, int64_t ldo);
  // out[h*ldo + i] = sum over j < rows of p[h*ldp + j] * f32(v[j*ldv + i]), for h < heads and
  // i < n, each term added in j order as out = out + p * v (a multiply, then an add: never
  // fused) from 0. Attention: the probabilities of the query heads that share a KV head times
  // the F16 values they share (read once for the whole group).
  void (*weighted_rows_f16)(const float* p, int64_t ldp, int64_t heads, const uint16_t* v,
                            int64_t ldv, int64_t rows, int64_t n, float* out, int64_t ldo);

  // ---- Conversions and elementwise helpers ------------------------------------------------
  void (*f32_to_f16)(const float* x, int64_t n, uint16_t* out);  // round to nearest even
  void (*f16_to_f32)(const uint16_t* x, int64_t n, float* out);
  // One Q6_K row (k % 256 == 0) to float, exactly as spec 2.5.
  void (*dequant_row_q6k)(const void* blocks, int64_t k, float* out);
  // max_i |x[i]| (0 for n == 0).
  float (*absmax_f32)(const float* x, int64_t n);
  // The SwiGLU of the decoder's FFN: out[i] = (g[i] / (1 + e)) * u[i] with
  // e = exp(clamp(-g[i], -87, 88)) computed by the fixed sequence of kernels/expf_poly.h
  // (about 2 ulp from the true exp), so every ISA gives the same bits. out may alias g or u.
  void (*silu_mul_f32)(const float* g, const float* u, int64_t n, float* out);
  // q[i] = round(clamp(x[i] * inv, -127, 127)) with the given rounding.
  void (*requant_f32_i8)(const float* x, int64_t n, float inv, Round mode, int8_t* q);
  // The GEMM epilogue fused (encoder): for `rows` rows of n int32 sums (row j at acc + j*n,
  // its output at q + j*n), y = (float)acc * c + bias[i] exactly as i32_affine_f32 (bias may
  // be null), then q = round(clamp(y * inv, -127, 127)) as requant_f32_i8, and with `relu`
  // q = max(q, 0). Bit-identical to those two entries in sequence; the float y never leaves
  // the registers.
  void (*i32_requant_i8)(const int32_t* acc, int64_t rows, int64_t n, float c, const float* bias,
                         float inv, Round mode, bool relu, int8_t* q);
  // Folds `rows` rows of n int32 (row j at x + j*ld) into per-column bounds:
  // mn[i] = min(mn[i], x[j][i]), mx[i] = max(mx[i], x[j][i]). The encoder's GEMMs learn
  // their output absmax this way (the epilogue is monotone in the sum; i8s_matmul.cc).
  void (*i32_minmax)(const int32_t* x, int64_t rows, int64_t n, int64_t ld, int32_t* mn,
                     int32_t* mx);

  // ---- Encoder fills: int8 / int32 operands to float tiles (spec 3.4's expressions) ------
  // One fixed expression per element, two roundings per product-sum (no FMA), so every ISA
  // gives the same bits. A null `bias` / `g` drops that term.
  // out[i] = (float)acc[i] * c + bias[i]. out may alias acc (the GEMM epilogue, in place).
  void (*i32_affine_f32)(const int32_t* acc, int64_t n, float c, const float* bias, float* out);
  // out[i] = (float)q[i].
  void (*i8_to_f32)(const int8_t* q, int64_t n, float* out);
  // The next two work on `rows` rows at once (one call per tile, not per row: at C = 32 a
  // call per row cost as much as the arithmetic); rows of a, b, q and out are n apart.
  // out[j][i] = ((float)a[j][i] * sa) * g[i] + (float)b[j][i] * sb   (add_scaled; g null:
  // a*sa + b*sb).
  void (*i8_add_scaled_f32)(const int8_t* a, float sa, const float* g, const int8_t* b, float sb,
                            int64_t rows, int64_t n, float* out);
  // The factors of rms_norm_scaled for `rows` rows of n int8 (row j at q + j*n): with
  // ss = sum_i q[j][i]^2 (exact int32), s[j] = 1 / sqrt((float)ss / (float)n + eps), each
  // operation one IEEE rounding (correctly rounded division and square root on every ISA).
  void (*i8_rms_factors)(const int8_t* q, int64_t rows, int64_t n, float eps, float* s);
  // out[j][i] = ((float)q[j][i] * s[j]) * g[i]   (rms_norm_scaled, row j's factor s[j]).
  void (*i8_scale_mul_f32)(const int8_t* q, int64_t rows, int64_t n, const float* s, const float* g,
                           float* out);
  // One fill fused with the pass that consumes it, its float values never stored: with q
  // null, returns max |y| over the rows x n values (as absmax_f32); else writes
  // q[j*n + i] = requant_f32_i8's byte of y[j][i] (inv, mode) and returns 0. Bit-identical to
  // the fill entry and those in sequence, which is what ops do where this is null (every
  // ISA but AVX-512: there a fill pass over C = 32 values a row cost as much as its
  // arithmetic again in stores and reloads of the float tile).
  float (*i8_fill_fused)(const I8Fill& f, int64_t rows, int64_t n, float inv, Round mode,
                         int8_t* q);
  // Depthwise conv, 8 taps (the published mixer), on int8 operands, exact in int32 (x and w
  // in [-127, 127]): output row j < rows at out + j*ldo, consecutive outputs reading
  // consecutive input rows:
  //   out[j*ldo + i] = sum_t w[t*ldw + i] * x[(j + t)*ldx + i].
  // Every product and partial sum of the spec's float depthwise on such values is an integer
  // below 2^24, so (float)out * c + bias gives its bits in any summation order; SIMD may
  // group the products in any way that stays exact (pairs in int16, |pair| <= 2 * 127^2 <
  // 2^15; quads in int32 with vpdpbusd).
  void (*dw8_i8_i32)(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
                     int64_t n, int32_t* out, int64_t ldo);
  // dw8_i8_i32 with the epilogue fused, as gemm_i8_i8_ep with channels for weight rows: the
  // sum of output row j, channel i folds into mn[i] / mx[i], or becomes q[j*ldq + i] with
  // bias[i]. Null in tables without it (the depthwise op then stores a tile of sums and
  // applies i32_minmax / i32_requant_i8: the same bytes).
  void (*dw8_i8_ep)(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows,
                    int64_t n, const I8Epilogue& ep);
};

// The table for the ISA chosen once for this process: TERN_ISA if set (an unavailable or
// unknown value is a fatal configuration error reported by SelectIsa), else the best the
// CPU runs.
const KernelTable& Kernels();

// Resolves the ISA for this process: `TERN_ISA` or the best available. Returns an error
// naming the ISA when TERN_ISA asks for one this CPU cannot run or this build lacks.
Result<Isa> SelectIsa();

// Every ISA this binary contains AND this CPU can run, best first (scalar always last).
const Isa* AvailableIsas(size_t* count);
// The table of a specific ISA; an error if the CPU or the build cannot run it.
Result<const KernelTable*> TableFor(Isa isa);
// The best ISA the CPU and build support (ignores TERN_ISA).
Isa BestIsa();

}  // namespace tern::kernels
