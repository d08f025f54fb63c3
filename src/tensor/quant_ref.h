// Reference quantize / dequantize for every tensor type tern reads: the executable format
// spec (docs/spec.md section 2). Plain loops, written for clarity: these are the
// oracle the SIMD kernels are tested against, not a fast path.
//
// SCALE CONVENTION (one for all of tern):
//   Every in-band scale tern holds is a DEQUANTIZING MULTIPLIER:  value = q * scale.
//   The published VibeASR file uses this for I8_S weights (amax/127) and I2_S weights
//   (~mean|W|). Upstream's I8_S *activations* store the reciprocal (127/amax, a divisor);
//   tern never does: its activation tensors store amax/127 like the weights, so an all-zero
//   tensor has scale 0 and dequantizes to zeros instead of dividing by zero.
//
// Byte layouts (n = number of values in the whole tensor, ggml order, ne[0] contiguous):
//
//   F32   n little-endian IEEE binary32.
//   F16   n IEEE binary16; conversions round to nearest even, keep NaN (quiet or not, with
//         its top payload bits), Inf and subnormals.
//   BF16  n bfloat16 (the top half of a binary32); F32 -> BF16 rounds to nearest even.
//   Q8_0  blocks of 32 values: { f16 d; int8 qs[32]; } = 34 bytes;  value = d * qs[i].
//   Q6_K  blocks of 256 values: { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d; } = 210
//         bytes. Value j of a block: half h = j/128, r = j%128, quarter g = r/32, l = r%32:
//           low 4 bits  = ql[64h + l + 32(g&1)] >> (4(g>>1))  & 0xF
//           high 2 bits = qh[32h + l] >> (2g) & 3
//           q = low | high << 4   (0..63)
//           value = (d * scales[8h + l/16 + 2g]) * (q - 32)       (float, in this order)
//   I8_S  n int8 (q in [-127, 127]), then the f32 scale at byte n, then 28 zero bytes
//         (stored size n + 32). value = q * scale.
//   I2_S  n/4 bytes of 2-bit codes (n % 128 == 0): each 128 values form a 32-byte group;
//         byte p of a group holds group positions p, p+32, p+64, p+96 in bit pairs
//         7:6, 5:4, 3:2, 1:0. Codes 0, 1, 2 mean -1, 0, +1; code 3 never appears in a valid
//         file and decodes as 0. Then the f32 scale at byte n/4, then 28 zero bytes
//         (stored size n/4 + 32). value = (code - 1) * scale.
//
// Sizes passed here are trusted (TERN_CHECK): callers validate shapes against the file
// first (gguf/ does, with a Status naming the tensor).
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/blocks.h"
#include "tensor/dtype.h"

namespace tern {

// ---- F16 / BF16 scalars --------------------------------------------------------------------
// What a conversion does with a NaN's payload. kKeep: the bits that fit, as they are (a
// signalling NaN stays signalling; the file format's rule). kQuiet: also the quiet bit, as
// F16C (vcvtps2ph / vcvtph2ps) and NEON's fcvt do, so that the scalar kernels agree with the
// SIMD ones bit for bit. Every other value converts the same either way.
enum class F16Nan { kKeep, kQuiet };
uint16_t F32ToF16(float f, F16Nan nan = F16Nan::kKeep);
float F16ToF32(uint16_t h, F16Nan nan = F16Nan::kKeep);
uint16_t F32ToBF16(float f);
float BF16ToF32(uint16_t h);

// Round half to even of a float under the default rounding mode (torch.round, nearest_int).
float RoundHalfEven(float x);

// ---- Block formats (structs in tensor/blocks.h) ----------------------------------------
// Q8_0: d = the smallest f16 >= amax/127 (the stored value), q = roundf(x / d) (ties away),
// so that |q| <= 127 and |x - d*q| <= d/2 (up to float rounding). n % 32 == 0. ggml rounds d
// to nearest and derives q from the unrounded d; rounding up keeps the half-step bound
// exact. Dequantization is ggml's: value = q * d.
void QuantizeQ8_0(const float* x, int64_t n, BlockQ8_0* out);
void DequantizeQ8_0(const BlockQ8_0* in, int64_t n, float* out);

// Q6_K: dequantization is ggml's exactly. The quantizer is a simple one (not ggml's RMSE
// search): per 16 values step_j >= amax_j/31 so every code is in range, giving
// |x - value| <= (d * scales[j]) / 2. n % 256 == 0.
void QuantizeQ6_K(const float* x, int64_t n, BlockQ6_K* out);
void DequantizeQ6_K(const BlockQ6_K* in, int64_t n, float* out);

// ---- I8_S ---------------------------------------------------------------------------------
// In-band scale helpers. `data` points at the start of the tensor (StoredBytes(kI8_S, n)).
float ReadI8SScale(const uint8_t* data, int64_t n);
// Writes the scale and zeroes the 28 pad bytes.
void WriteI8SScale(uint8_t* data, int64_t n, float scale);

// Weights-style quantization (upstream quantize_i8_s, spec 2.1): m = max|w|;
// s = 127/m (1 if m == 0); q = clamp(roundf(w*s), -127, 127) (ties away from zero);
// stored scale = 1/s. `out` holds StoredBytes(kI8_S, n) = n + 32 bytes.
void QuantizeI8S(const float* w, int64_t n, uint8_t* out);
// value = q * scale.
void DequantizeI8S(const uint8_t* in, int64_t n, float* out);

// ---- I2_S ---------------------------------------------------------------------------------
float ReadI2SScale(const uint8_t* data, int64_t n);
void WriteI2SScale(uint8_t* data, int64_t n, float scale);  // also zeroes the pad

// Codes (one byte each, 0..3) <-> packed payload (n/4 bytes). n % 128 == 0.
void PackI2SCodes(const uint8_t* codes, int64_t n, uint8_t* packed);
void UnpackI2SCodes(const uint8_t* packed, int64_t n, uint8_t* codes);

// The published converter (spec 2.2.3 then 2.2.2), in float32:
//   m = max(mean|W|, 1e-5) (the mean summed in double, then rounded to float);
//   s = 1/m;  t = clamp(round_half_even(W*s), -1, 1);  W' = t/s;
//   scale = max|W'| (0 when every t is 0);  code = t + 1 (|W'| >= 1e-6 always holds for
//   t != 0 because 1/s >= 1e-5).
// `out` holds StoredBytes(kI2_S, n) = n/4 + 32 bytes.
void QuantizeI2S(const float* w, int64_t n, uint8_t* out);
// value = (code - 1) * scale; code 3 -> 0.
void DequantizeI2S(const uint8_t* in, int64_t n, float* out);

// ---- Any type -----------------------------------------------------------------------------
// `src`/`dst` hold StoredBytes(t, n) bytes. For I8_S/I2_S, n is the whole tensor (one
// scale); for the others any whole number of blocks.
void QuantizeRef(DType t, const float* src, int64_t n, uint8_t* dst);
void DequantizeRef(DType t, const uint8_t* src, int64_t n, float* dst);

}  // namespace tern
