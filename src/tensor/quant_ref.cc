// Reference quantizers: see quant_ref.h for the byte layouts these loops implement.
#include "tensor/quant_ref.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace tern {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The smallest f16 (positive, finite) whose value is >= x (x >= 0, finite, <= 65504).
// Block quantizers store this as their step so no value can land outside the code range.
uint16_t F16RoundUp(float x) {
  uint16_t h = F32ToF16(x);
  if (F16ToF32(h) < x) ++h;  // next representable magnitude (bits are monotonic)
  return h;
}

}  // namespace

// ---- F16 / BF16 ----------------------------------------------------------------------------

uint16_t F32ToF16(float f, F16Nan nan) {
  const uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffff;
  if (ax >= 0x7f800000) {  // Inf or NaN
    if (ax == 0x7f800000) return sign | 0x7c00;
    uint32_t payload = (ax >> 13) & 0x3ff;
    if (nan == F16Nan::kQuiet) payload |= 0x200;
    // A NaN whose payload lives only in the dropped low bits must stay a NaN.
    return static_cast<uint16_t>(sign | 0x7c00 | (payload != 0 ? payload : 0x200));
  }
  // 65520 is halfway between 65504 (max f16, odd mantissa) and 65536: ties go to Inf.
  if (ax >= 0x477ff000) return sign | 0x7c00;
  if (ax < 0x38800000) {  // |f| < 2^-14: an f16 subnormal (or zero), in units of 2^-24
    const int e = static_cast<int>(ax >> 23);
    if (e < 102) return sign;                       // |f| < 2^-25 rounds to zero
    const uint32_t m = (ax & 0x7fffff) | 0x800000;  // |f| = m * 2^(e-150)
    const int shift = 126 - e;                      // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;  // may carry into the smallest normal
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
  const uint32_t r = ax - 0x38000000;
  uint32_t h = r >> 13;
  const uint32_t rem = r & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // carries into the exponent correctly
  return static_cast<uint16_t>(sign | h);
}

float F16ToF32(uint16_t h, F16Nan nan) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t e = (h >> 10) & 0x1f;
  const uint32_t m = h & 0x3ff;
  if (e == 0x1f) {
    const uint32_t quiet = nan == F16Nan::kQuiet && m != 0 ? 0x400000 : 0;
    return BitsFloat(sign | 0x7f800000 | quiet | (m << 13));
  }
  if (e == 0) {
    // Subnormal: m * 2^-24, exact in float.
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return BitsFloat(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t F32ToBF16(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) {  // NaN: truncate, but never into Inf
    uint16_t h = static_cast<uint16_t>(x >> 16);
    if ((h & 0x7f) == 0) h |= 0x40;
    return h;
  }
  const uint32_t rounding = 0x7fff + ((x >> 16) & 1);  // nearest, ties to even
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float BF16ToF32(uint16_t h) { return BitsFloat(static_cast<uint32_t>(h) << 16); }

float RoundHalfEven(float x) {
  // Adding 1.5 * 2^23 leaves no fraction bits, so the FPU's default rounding (to nearest,
  // ties to even) does the work; exact for |x| < 2^22. (nearbyint is a slow libm call on
  // baseline x86-64.) copysign keeps -0.0 for small negatives, as nearbyint does.
  if (!(std::fabs(x) < 0x1p22f)) return std::nearbyint(x);  // large, Inf or NaN
  return std::copysign((x + 0x1.8p23f) - 0x1.8p23f, x);
}

// ---- Q8_0 ----------------------------------------------------------------------------------

void QuantizeQ8_0(const float* x, int64_t n, BlockQ8_0* out) {
  TERN_CHECK(n % kQ8_0BlockElems == 0);
  for (int64_t b = 0; b < n / kQ8_0BlockElems; ++b) {
    const float* xb = x + b * kQ8_0BlockElems;
    float amax = 0;
    for (int i = 0; i < kQ8_0BlockElems; ++i) amax = std::max(amax, std::fabs(xb[i]));
    const uint16_t d16 = F16RoundUp(amax / 127.0f);
    const float d = F16ToF32(d16);
    out[b].d = d16;
    for (int i = 0; i < kQ8_0BlockElems; ++i) {
      const float v = d > 0 ? std::round(xb[i] / d) : 0.0f;
      out[b].qs[i] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  }
}

void DequantizeQ8_0(const BlockQ8_0* in, int64_t n, float* out) {
  TERN_CHECK(n % kQ8_0BlockElems == 0);
  for (int64_t b = 0; b < n / kQ8_0BlockElems; ++b) {
    const float d = F16ToF32(in[b].d);
    for (int i = 0; i < kQ8_0BlockElems; ++i) {
      out[b * kQ8_0BlockElems + i] = static_cast<float>(in[b].qs[i]) * d;
    }
  }
}

// ---- Q6_K ----------------------------------------------------------------------------------

void QuantizeQ6_K(const float* x, int64_t n, BlockQ6_K* out) {
  TERN_CHECK(n % kQ6_KBlockElems == 0);
  for (int64_t b = 0; b < n / kQ6_KBlockElems; ++b) {
    const float* xb = x + b * kQ6_KBlockElems;
    BlockQ6_K& blk = out[b];
    std::memset(&blk, 0, sizeof(blk));
    // Per 16 values the step must be >= amax/31 so that round(x/step) stays in [-31, 31].
    float need[16];
    float max_need = 0;
    for (int j = 0; j < 16; ++j) {
      float amax = 0;
      for (int i = 0; i < 16; ++i) amax = std::max(amax, std::fabs(xb[16 * j + i]));
      need[j] = amax / 31.0f;
      max_need = std::max(max_need, need[j]);
    }
    const uint16_t d16 = F16RoundUp(max_need / 127.0f);
    const float d = F16ToF32(d16);
    blk.d = d16;
    for (int j = 0; j < 16; ++j) {
      const float sc = d > 0 ? std::min(std::ceil(need[j] / d), 127.0f) : 0.0f;
      blk.scales[j] = static_cast<int8_t>(sc);
    }
    for (int k = 0; k < kQ6_KBlockElems; ++k) {
      const float step = d * static_cast<float>(blk.scales[k / 16]);
      const float v = step > 0 ? std::round(xb[k] / step) : 0.0f;
      const int q = static_cast<int>(std::clamp(v, -32.0f, 31.0f)) + 32;  // 0..63
      const int h = k / 128, r = k % 128, g = r / 32, l = r % 32;
      blk.ql[64 * h + l + 32 * (g & 1)] |= static_cast<uint8_t>((q & 0xF) << (4 * (g >> 1)));
      blk.qh[32 * h + l] |= static_cast<uint8_t>((q >> 4) << (2 * g));
    }
  }
}

void DequantizeQ6_K(const BlockQ6_K* in, int64_t n, float* out) {
  TERN_CHECK(n % kQ6_KBlockElems == 0);
  for (int64_t b = 0; b < n / kQ6_KBlockElems; ++b) {
    const float d = F16ToF32(in[b].d);
    const uint8_t* ql = in[b].ql;
    const uint8_t* qh = in[b].qh;
    const int8_t* sc = in[b].scales;
    float* y = out + b * kQ6_KBlockElems;
    // Two halves of 128 values; in each, l < 32 decodes positions l, l+32, l+64, l+96.
    for (int half = 0; half < 2; ++half) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

// ---- I8_S ----------------------------------------------------------------------------------

float ReadI8SScale(const uint8_t* data, int64_t n) {
  float s;
  std::memcpy(&s, data + InBandScaleOffset(DType::kI8_S, n), 4);
  return s;
}

void WriteI8SScale(uint8_t* data, int64_t n, float scale) {
  uint8_t* tail = data + InBandScaleOffset(DType::kI8_S, n);
  std::memset(tail, 0, Traits(DType::kI8_S).tensor_tail);
  std::memcpy(tail, &scale, 4);
}

void QuantizeI8S(const float* w, int64_t n, uint8_t* out) {
  float m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(w[i]));
  const float s = m > 0 ? 127.0f / m : 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::clamp(std::round(w[i] * s), -127.0f, 127.0f);  // roundf: ties away
    out[i] = static_cast<uint8_t>(static_cast<int8_t>(v));
  }
  WriteI8SScale(out, n, 1.0f / s);
}

void DequantizeI8S(const uint8_t* in, int64_t n, float* out) {
  const float scale = ReadI8SScale(in, n);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(static_cast<int8_t>(in[i])) * scale;
  }
}

// ---- I2_S ----------------------------------------------------------------------------------

float ReadI2SScale(const uint8_t* data, int64_t n) {
  TERN_CHECK(n % 128 == 0);
  float s;
  std::memcpy(&s, data + InBandScaleOffset(DType::kI2_S, n), 4);
  return s;
}

void WriteI2SScale(uint8_t* data, int64_t n, float scale) {
  TERN_CHECK(n % 128 == 0);
  uint8_t* tail = data + InBandScaleOffset(DType::kI2_S, n);
  std::memset(tail, 0, Traits(DType::kI2_S).tensor_tail);
  std::memcpy(tail, &scale, 4);
}

void PackI2SCodes(const uint8_t* codes, int64_t n, uint8_t* packed) {
  TERN_CHECK(n % 128 == 0);
  std::memset(packed, 0, static_cast<size_t>(n / 4));
  for (int64_t j = 0; j < n; ++j) {
    const int64_t block = j / 128;
    const int g = static_cast<int>(j % 128) / 32;  // which bit pair
    const int p = static_cast<int>(j % 32);        // which byte of the group
    packed[block * 32 + p] |= static_cast<uint8_t>((codes[j] & 3) << (6 - 2 * g));
  }
}

void UnpackI2SCodes(const uint8_t* packed, int64_t n, uint8_t* codes) {
  TERN_CHECK(n % 128 == 0);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t block = j / 128;
    const int g = static_cast<int>(j % 128) / 32;
    const int p = static_cast<int>(j % 32);
    codes[j] = (packed[block * 32 + p] >> (6 - 2 * g)) & 3;
  }
}

void QuantizeI2S(const float* w, int64_t n, uint8_t* out) {
  TERN_CHECK(n % 128 == 0 && n > 0);
  // convert_lm_to_gguf.py: s = 1/clamp(mean|W|, 1e-5); W' = round(W*s).clamp(-1,1)/s.
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(w[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float s = 1.0f / std::max(mean, 1e-5f);
  // quantize_i2_s then takes scale = max|W'| and code 1 if |W'| < 1e-6, else 2 if
  // W'*scale > 0, else 0. With t = round(W*s) in {-1,0,1}, |W'| = |t|/s and 1/s >= 1e-5,
  // so that is: scale = 1/s if any t != 0 (else 0), code = t + 1.
  bool any_nonzero = false;
  std::memset(out, 0, static_cast<size_t>(n / 4));
  for (int64_t j = 0; j < n; ++j) {
    const float t = std::clamp(RoundHalfEven(w[j] * s), -1.0f, 1.0f);
    any_nonzero |= t != 0.0f;
    const uint8_t code = static_cast<uint8_t>(static_cast<int>(t) + 1);
    const int g = static_cast<int>(j % 128) / 32;
    out[(j / 128) * 32 + j % 32] |= static_cast<uint8_t>(code << (6 - 2 * g));
  }
  WriteI2SScale(out, n, any_nonzero ? 1.0f / s : 0.0f);
}

void DequantizeI2S(const uint8_t* in, int64_t n, float* out) {
  const float scale = ReadI2SScale(in, n);
  static constexpr float kValue[4] = {-1.0f, 0.0f, 1.0f, 0.0f};  // code 3 is invalid -> 0
  for (int64_t j = 0; j < n; ++j) {
    const int g = static_cast<int>(j % 128) / 32;
    const int code = (in[(j / 128) * 32 + j % 32] >> (6 - 2 * g)) & 3;
    out[j] = kValue[code] * scale;
  }
}

// ---- Any type ------------------------------------------------------------------------------

void QuantizeRef(DType t, const float* src, int64_t n, uint8_t* dst) {
  TERN_CHECK(RowLengthValid(t, n));
  switch (t) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = t == DType::kF16 ? F32ToF16(src[i]) : F32ToBF16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case DType::kQ8_0:
      QuantizeQ8_0(src, n, reinterpret_cast<BlockQ8_0*>(dst));
      return;
    case DType::kQ6_K:
      QuantizeQ6_K(src, n, reinterpret_cast<BlockQ6_K*>(dst));
      return;
    case DType::kI8_S:
      QuantizeI8S(src, n, dst);
      return;
    case DType::kI2_S:
      QuantizeI2S(src, n, dst);
      return;
  }
  TERN_CHECK(false && "unknown DType");
}

void DequantizeRef(DType t, const uint8_t* src, int64_t n, float* dst) {
  TERN_CHECK(RowLengthValid(t, n));
  switch (t) {
    case DType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = t == DType::kF16 ? F16ToF32(h) : BF16ToF32(h);
      }
      return;
    case DType::kQ8_0:
      DequantizeQ8_0(reinterpret_cast<const BlockQ8_0*>(src), n, dst);
      return;
    case DType::kQ6_K:
      DequantizeQ6_K(reinterpret_cast<const BlockQ6_K*>(src), n, dst);
      return;
    case DType::kI8_S:
      DequantizeI8S(src, n, dst);
      return;
    case DType::kI2_S:
      DequantizeI2S(src, n, dst);
      return;
  }
  TERN_CHECK(false && "unknown DType");
}

}  // namespace tern
