// Tests of the reference formats. Layouts are checked against bytes worked out by hand in
// this file (not via the unpackers under test); error bounds are derived from each block's
// own stored step and checked from both sides (not too large, step not wasteful).
#include "tensor/quant_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/test_util.h"

namespace tern {
namespace {

using testutil::Bits;

std::vector<float> Gaussian(int64_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ---- F16 ----------------------------------------------------------------------------------

// Value of an f16 bit pattern from the IEEE definition, in double.
double F16Value(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return s ? -mag : mag;
}

TEST(F16Test, AllValuesDecodeAndRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 31 && m != 0) {
      EXPECT_TRUE(std::isnan(f)) << h;
    } else if (e == 31) {
      EXPECT_TRUE(std::isinf(f)) << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0);
    } else {
      EXPECT_EQ(static_cast<double>(f), F16Value(static_cast<uint16_t>(h))) << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;  // -0 stays -0
    }
    ASSERT_EQ(F32ToF16(f), h) << "round trip of f16 0x" << std::hex << h;
  }
}

// Every midpoint between neighbouring finite f16 values goes to the even one; one float ulp
// either side goes to the nearer one.
TEST(F16Test, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    const double lo = F16Value(h), hi = F16Value(h + 1);
    const float mid = static_cast<float>((lo + hi) / 2);  // 12 significant bits: exact
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const uint16_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(F32ToF16(mid), even) << h;
    ASSERT_EQ(F32ToF16(-mid), even | 0x8000) << h;
    ASSERT_EQ(F32ToF16(std::nextafter(mid, 1e9f)), h + 1) << h;
    ASSERT_EQ(F32ToF16(std::nextafter(mid, 0.0f)), h) << h;
  }
}

TEST(F16Test, OverflowUnderflowAndNaN) {
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // tie between 65504 (odd) and 2^16: to Inf
  EXPECT_EQ(F32ToF16(-1e10f), 0xfc00);
  EXPECT_EQ(F32ToF16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24: to 0
  EXPECT_EQ(F32ToF16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 * 2^-24: tie to even (2)
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -26)), 0x0001);  // 0.75 * 2^-24: nearest is 1
  EXPECT_EQ(F32ToF16(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(F32ToF16(std::ldexp(1023.5f, -24)), 0x0400);  // carries into the smallest normal
  // NaNs stay NaNs even when their payload is only in the bits f16 drops.
  float nan_low;
  const uint32_t nan_low_bits = 0x7f800001;
  std::memcpy(&nan_low, &nan_low_bits, 4);
  const uint16_t h = F32ToF16(nan_low);
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x3ff, 0);
  EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(std::nanf("")))));
}

// F16Nan::kQuiet (the kernels' rule) differs from kKeep only on NaNs, and there only by
// the quiet bit: every f16 pattern decodes the same otherwise, and a signalling NaN comes
// out quiet with its payload.
TEST(F16Test, QuietNaNModeSetsOnlyTheQuietBit) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t h16 = static_cast<uint16_t>(h);
    const uint32_t keep = Bits(F16ToF32(h16, F16Nan::kKeep));
    const uint32_t quiet = Bits(F16ToF32(h16, F16Nan::kQuiet));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    ASSERT_EQ(quiet, nan ? keep | 0x400000u : keep) << h;
    const float f = F16ToF32(h16);
    const uint16_t back_keep = F32ToF16(f, F16Nan::kKeep), back_quiet = F32ToF16(f, F16Nan::kQuiet);
    ASSERT_EQ(back_keep, h16) << h;
    ASSERT_EQ(back_quiet, nan ? h16 | 0x200 : h16) << h;
  }
  float snan;
  const uint32_t snan_bits = 0xff800001;  // payload only in the dropped bits
  std::memcpy(&snan, &snan_bits, 4);
  EXPECT_EQ(F32ToF16(snan, F16Nan::kQuiet), 0xfe00);
  EXPECT_EQ(F32ToF16(snan, F16Nan::kKeep), 0xfe00);
}

#if defined(__FLT16_MANT_DIG__) && !defined(__aarch64__)  // aarch64 g++ 12: no _Float16 in C++
// An independent oracle: the compiler's own float -> _Float16 conversion.
TEST(F16Test, MatchesCompilerConversionOnRandomBitPatterns) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    const _Float16 c = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &c, 2);
    ASSERT_EQ(F32ToF16(f), want) << std::hexfloat << f;
  }
}
#endif

// ---- BF16 ---------------------------------------------------------------------------------

TEST(BF16Test, AllValuesRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = BF16ToF32(static_cast<uint16_t>(h));
    EXPECT_EQ(Bits(f), h << 16);
    ASSERT_EQ(F32ToBF16(f), h) << h;
  }
}

TEST(BF16Test, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd).
  EXPECT_EQ(F32ToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(F32ToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // to even, upward
  EXPECT_EQ(F32ToBF16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3f81);
  EXPECT_EQ(F32ToBF16(3.4e38f), 0x7f80);  // above the largest bf16's midpoint: Inf
  float nan_low;
  const uint32_t bits = 0x7f800001;
  std::memcpy(&nan_low, &bits, 4);
  EXPECT_TRUE(std::isnan(BF16ToF32(F32ToBF16(nan_low))));
}

// ---- Rounding ------------------------------------------------------------------------------

TEST(RoundHalfEvenTest, MatchesNearbyintIncludingTiesSignsAndLargeValues) {
  EXPECT_EQ(RoundHalfEven(0.5f), 0.0f);
  EXPECT_EQ(RoundHalfEven(1.5f), 2.0f);
  EXPECT_EQ(RoundHalfEven(2.5f), 2.0f);
  EXPECT_EQ(RoundHalfEven(-2.5f), -2.0f);
  EXPECT_TRUE(std::signbit(RoundHalfEven(-0.25f)));
  EXPECT_EQ(RoundHalfEven(0x1.fffffep22f), std::nearbyint(0x1.fffffep22f));
  EXPECT_EQ(RoundHalfEven(1e30f), 1e30f);
  EXPECT_TRUE(std::isnan(RoundHalfEven(std::nanf(""))));
  std::mt19937 rng(11);
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    const float h = std::ldexp(static_cast<float>(static_cast<int>(rng() % 2001) - 1000), -1);
    for (float x : {f, h}) {
      ASSERT_EQ(Bits(RoundHalfEven(x)), Bits(std::nearbyint(x))) << std::hexfloat << x;
    }
  }
}

// ---- Q8_0 ---------------------------------------------------------------------------------

TEST(Q8_0Test, DequantizeLayoutByHand) {
  BlockQ8_0 b[2];
  b[0].d = 0x3c00;  // 1.0
  b[1].d = 0xc000;  // -2.0
  for (int i = 0; i < 32; ++i) b[0].qs[i] = b[1].qs[i] = static_cast<int8_t>(i - 16);
  float out[64];
  DequantizeQ8_0(b, 64, out);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(out[i], i - 16.0f);
    EXPECT_EQ(out[32 + i], -2.0f * (i - 16));
  }
}

TEST(Q8_0Test, RoundTripWithinHalfStep) {
  const int64_t n = 32 * 512;
  std::vector<float> x = Gaussian(n, 1.0f, 1);
  for (int64_t i = 0; i < n; ++i) x[i] *= std::ldexp(1.0f, static_cast<int>(i / 32 % 40) - 20);
  for (int i = 0; i < 32; ++i) x[64 + i] = 0;  // an all-zero block
  std::vector<BlockQ8_0> q(n / 32);
  QuantizeQ8_0(x.data(), n, q.data());
  std::vector<float> y(n);
  DequantizeQ8_0(q.data(), n, y.data());
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const double d = F16ToF32(q[b].d);
    ASSERT_GE(d, amax / 127.0) << b;  // every code is in range
    if (amax > 0) {  // and not wastefully large: at most one f16 spacing above amax/127
      ASSERT_LE(d, amax / 127.0 * (1 + std::ldexp(1.0, -10)) + std::ldexp(1.0, -24)) << b;
    }
    for (int i = 0; i < 32; ++i) {
      // q*d is exact (7 x 11 bits); only x/d is rounded, by at most 127 float ulps of 1.
      const double err = std::fabs(static_cast<double>(x[b * 32 + i]) - y[b * 32 + i]);
      ASSERT_LE(err, d * (0.5 + 127 * std::ldexp(1.0, -24))) << b << " " << i;
      ASSERT_LE(std::abs(q[b].qs[i]), 127);
    }
  }
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[64 + i], 0.0f);
}

// ---- Q6_K ---------------------------------------------------------------------------------

TEST(Q6_KTest, DequantizeLayoutByHand) {
  BlockQ6_K b;
  std::memset(&b, 0, sizeof(b));
  for (int j = 0; j < 16; ++j) b.scales[j] = 1;
  b.d = 0x3c00;  // 1.0
  // First half, l = 0: ql[0] low nibble -> value 0, high nibble -> value 64;
  // ql[32] low -> value 32, high -> value 96; qh[0] bit pairs 1:0,3:2,5:4,7:6 -> 0,32,64,96.
  b.ql[0] = 0x21;   // value 0 low 1, value 64 low 2
  b.ql[32] = 0x00;  // value 32 low 0, value 96 low 0
  b.qh[0] = 0xe4;   // 11 10 01 00: value 96 high 3, 64 high 2, 32 high 1, 0 high 0
  b.scales[4] = 2;  // values 64..79
  // Second half, l = 5: value 133 = ql[64+5] low nibble, qh[32+5] bits 1:0, scales[8].
  b.ql[69] = 0x07;
  b.qh[37] = 0x01;
  b.scales[8] = 3;
  b.scales[9] = -1;  // values 144..159
  float y[256];
  DequantizeQ6_K(&b, 256, y);
  EXPECT_EQ(y[0], 1 - 32);              // q = 1 | 0<<4
  EXPECT_EQ(y[32], 16 - 32);            // q = 0 | 1<<4
  EXPECT_EQ(y[64], 2.0f * (34 - 32));   // q = 2 | 2<<4, scale 2
  EXPECT_EQ(y[96], 48 - 32);            // q = 0 | 3<<4
  EXPECT_EQ(y[133], 3.0f * (23 - 32));  // q = 7 | 1<<4, scale 3
  EXPECT_EQ(y[1], -32.0f);              // untouched codes: q = 0
  EXPECT_EQ(y[65], 2.0f * -32);
  EXPECT_EQ(y[150], -1.0f * -32);
  EXPECT_EQ(y[255], -32.0f);
}

TEST(Q6_KTest, RoundTripWithinHalfStepAndStepNotWasteful) {
  const int64_t n = 256 * 64;
  std::vector<float> x = Gaussian(n, 1.0f, 2);
  for (int64_t i = 0; i < n; ++i) x[i] *= std::ldexp(1.0f, static_cast<int>(i / 16 % 13) - 6);
  for (int i = 0; i < 16; ++i) x[512 + 16 * 3 + i] = 0;  // an all-zero sub-block
  for (int i = 0; i < 256; ++i) x[1024 + i] = 0;         // an all-zero block
  std::vector<BlockQ6_K> q(n / 256);
  QuantizeQ6_K(x.data(), n, q.data());
  std::vector<float> y(n);
  DequantizeQ6_K(q.data(), n, y.data());
  for (int64_t b = 0; b < n / 256; ++b) {
    const double d = F16ToF32(q[b].d);
    for (int j = 0; j < 16; ++j) {
      float amax = 0;
      for (int i = 0; i < 16; ++i) amax = std::max(amax, std::fabs(x[b * 256 + 16 * j + i]));
      const double step = d * q[b].scales[j];
      ASSERT_GE(step * 31 * (1 + 1e-6), amax) << b << " " << j;  // codes never clipped
      if (amax > 0) {                                            // ceil() adds less than one d
        ASSERT_LE(step, amax / 31.0 * (1 + 1e-6) + d) << b << " " << j;
      }
      for (int i = 0; i < 16; ++i) {
        const int64_t k = b * 256 + 16 * j + i;
        // d*scale*(q-32) is exact (11+7+6 bits); only x/step was rounded.
        ASSERT_LE(std::fabs(static_cast<double>(x[k]) - y[k]), step * (0.5 + 32 * 1.2e-7)) << k;
      }
    }
  }
  for (int i = 0; i < 256; ++i) EXPECT_EQ(y[1024 + i], 0.0f);
}

// ---- I8_S ---------------------------------------------------------------------------------

TEST(I8STest, QuantizeWeightsLikeUpstream) {
  // max|w| = 127 gives s = 1: the codes are roundf(w), ties away from zero.
  const std::vector<float> w = {127.0f, 62.5f, -2.5f, 0.49f, -127.0f, 3.0f, 0.0f, -0.5f};
  const int64_t n = static_cast<int64_t>(w.size());
  std::vector<uint8_t> out(StoredBytes(DType::kI8_S, n), 0xAA);
  ASSERT_EQ(out.size(), static_cast<size_t>(n + 32));
  QuantizeI8S(w.data(), n, out.data());
  const int8_t want[] = {127, 63, -3, 0, -127, 3, 0, -1};
  for (int i = 0; i < n; ++i) EXPECT_EQ(static_cast<int8_t>(out[i]), want[i]) << i;
  float scale;
  std::memcpy(&scale, out.data() + n, 4);  // at byte n, little-endian f32
  EXPECT_EQ(scale, 1.0f);
  EXPECT_EQ(ReadI8SScale(out.data(), n), 1.0f);
  for (int i = 4; i < 32; ++i) EXPECT_EQ(out[n + i], 0) << "pad byte " << i;

  // Generic weights: stored scale = 1 / (127 / max|w|), a multiplier.
  const std::vector<float> g = Gaussian(1000, 0.02f, 3);
  std::vector<uint8_t> gq(StoredBytes(DType::kI8_S, 1000));
  QuantizeI8S(g.data(), 1000, gq.data());
  float m = 0;
  for (float v : g) m = std::max(m, std::fabs(v));
  const float s = 127.0f / m;
  EXPECT_EQ(ReadI8SScale(gq.data(), 1000), 1.0f / s);
  std::vector<float> back(1000);
  DequantizeI8S(gq.data(), 1000, back.data());
  const float step = 1.0f / s;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(back[i], static_cast<float>(static_cast<int8_t>(gq[i])) * step);
    EXPECT_LE(std::fabs(g[i] - back[i]), step * (0.5f + 1e-5f)) << i;
  }
}

TEST(I8STest, DegenerateScales) {
  std::vector<float> zeros(64, 0.0f);
  std::vector<uint8_t> q(StoredBytes(DType::kI8_S, 64), 0xAA);
  QuantizeI8S(zeros.data(), 64, q.data());
  EXPECT_EQ(ReadI8SScale(q.data(), 64), 1.0f);  // upstream: s = 1 when max|w| = 0
  std::vector<float> y(64, 5.0f);
  DequantizeI8S(q.data(), 64, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
  // A zero scale (tern's activation convention for an all-zero tensor) decodes to zeros.
  for (int i = 0; i < 64; ++i) q[i] = static_cast<uint8_t>(i * 37);
  WriteI8SScale(q.data(), 64, 0.0f);
  DequantizeI8S(q.data(), 64, y.data());
  for (float v : y) {
    EXPECT_FALSE(std::isnan(v));
    EXPECT_EQ(v, 0.0f);
  }
}

// ---- I2_S ---------------------------------------------------------------------------------

TEST(I2STest, PackLayoutByHand) {
  const int64_t n = 256;
  std::vector<uint8_t> codes(n, 1);  // all zeros (code 1)
  codes[0] = 2;                      // byte 0, bits 7:6
  codes[32] = 0;                     // byte 0, bits 5:4
  codes[64] = 0;                     // byte 0, bits 3:2
  codes[96] = 2;                     // byte 0, bits 1:0
  codes[31] = 0;                     // byte 31, bits 7:6
  codes[63] = 2;                     // byte 31, bits 5:4
  codes[95] = 2;                     // byte 31, bits 3:2
  codes[127] = 0;                    // byte 31, bits 1:0
  codes[128] = 2;                    // second group, byte 32, bits 7:6
  codes[255] = 0;                    // second group, byte 63, bits 1:0
  std::vector<uint8_t> packed(n / 4);
  PackI2SCodes(codes.data(), n, packed.data());
  for (int i = 0; i < n / 4; ++i) {
    uint8_t want = 0x55;       // 01 01 01 01
    if (i == 0) want = 0x82;   // 10 00 00 10
    if (i == 31) want = 0x28;  // 00 10 10 00
    if (i == 32) want = 0x95;  // 10 01 01 01
    if (i == 63) want = 0x54;  // 01 01 01 00
    EXPECT_EQ(packed[i], want) << "byte " << i;
  }
  // The same tensor as a stored I2_S with scale 0.25 dequantizes to -0.25/0/+0.25.
  std::vector<uint8_t> stored(StoredBytes(DType::kI2_S, n), 0xAA);
  ASSERT_EQ(stored.size(), static_cast<size_t>(n / 4 + 32));
  std::memcpy(stored.data(), packed.data(), packed.size());
  WriteI2SScale(stored.data(), n, 0.25f);
  for (int i = 4; i < 32; ++i) EXPECT_EQ(stored[n / 4 + i], 0);
  float scale;
  std::memcpy(&scale, stored.data() + n / 4, 4);
  EXPECT_EQ(scale, 0.25f);
  std::vector<float> y(n);
  DequantizeI2S(stored.data(), n, y.data());
  for (int j = 0; j < n; ++j) EXPECT_EQ(y[j], (codes[j] - 1) * 0.25f) << j;
}

TEST(I2STest, All81TritCombinationsOfOneByte) {
  const int64_t n = 128;
  for (int c = 0; c < 81; ++c) {
    const int a = c / 27, b = c / 9 % 3, e = c / 3 % 3, f = c % 3;
    std::vector<uint8_t> codes(n, 1);
    codes[5] = a;
    codes[37] = b;
    codes[69] = e;
    codes[101] = f;
    std::vector<uint8_t> stored(StoredBytes(DType::kI2_S, n));
    PackI2SCodes(codes.data(), n, stored.data());
    EXPECT_EQ(stored[5], (a << 6) | (b << 4) | (e << 2) | f) << c;
    std::vector<uint8_t> back(n);
    UnpackI2SCodes(stored.data(), n, back.data());
    EXPECT_EQ(back, codes) << c;
    WriteI2SScale(stored.data(), n, 2.0f);
    std::vector<float> y(n);
    DequantizeI2S(stored.data(), n, y.data());
    EXPECT_EQ(y[5], 2.0f * (a - 1));
    EXPECT_EQ(y[37], 2.0f * (b - 1));
    EXPECT_EQ(y[69], 2.0f * (e - 1));
    EXPECT_EQ(y[101], 2.0f * (f - 1));
  }
}

TEST(I2STest, Code3DecodesAsZero) {
  std::vector<uint8_t> stored(StoredBytes(DType::kI2_S, 128), 0xFF);  // every code 3
  WriteI2SScale(stored.data(), 128, 1.5f);
  std::vector<float> y(128, 9.0f);
  DequantizeI2S(stored.data(), 128, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(I2STest, QuantizerRoundsHalfToEvenAndStoresMeanAbs) {
  // mean|W| = 1 exactly, so s = 1 and the codes are round_half_even(W) clamped to [-1, 1]:
  // +-0.5 -> 0 (half-away rounding would give +-1), +-1.5 -> 2 -> clamped to +-1.
  const int64_t n = 128;
  std::vector<float> w(n);
  const float pattern[4] = {0.5f, -0.5f, 1.5f, -1.5f};
  for (int i = 0; i < n; ++i) w[i] = pattern[i % 4];
  std::vector<uint8_t> stored(StoredBytes(DType::kI2_S, n), 0xAA);
  QuantizeI2S(w.data(), n, stored.data());
  EXPECT_EQ(ReadI2SScale(stored.data(), n), 1.0f);
  for (int i = 4; i < 32; ++i) EXPECT_EQ(stored[n / 4 + i], 0);
  std::vector<uint8_t> codes(n);
  UnpackI2SCodes(stored.data(), n, codes.data());
  const uint8_t want[4] = {1, 1, 2, 0};
  for (int i = 0; i < n; ++i) EXPECT_EQ(codes[i], want[i % 4]) << i;
}

TEST(I2STest, QuantizerOnGaussianWeights) {
  const int64_t n = 128 * 512;
  const std::vector<float> w = Gaussian(n, 0.03f, 4);
  std::vector<uint8_t> stored(StoredBytes(DType::kI2_S, n));
  QuantizeI2S(w.data(), n, stored.data());
  double sum = 0;
  for (float v : w) sum += std::fabs(v);
  const float s = 1.0f / static_cast<float>(sum / n);
  EXPECT_EQ(ReadI2SScale(stored.data(), n), 1.0f / s);  // max|W'| = 1/s
  std::vector<uint8_t> codes(n);
  UnpackI2SCodes(stored.data(), n, codes.data());
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float t = std::nearbyint(w[i] * s);
    const int want = t > 0 ? 2 : (t < 0 ? 0 : 1);
    ASSERT_EQ(codes[i], want) << i;
    zeros += codes[i] == 1;
  }
  // |z| < 0.5 * mean|z| = 0.3989 for a Gaussian: P = 0.31.
  EXPECT_NEAR(static_cast<double>(zeros) / n, 0.31, 0.01);
}

TEST(I2STest, AllZeroTensorHasZeroScaleAndNoNaN) {
  std::vector<float> w(256, 0.0f);
  std::vector<uint8_t> stored(StoredBytes(DType::kI2_S, 256));
  QuantizeI2S(w.data(), 256, stored.data());
  EXPECT_EQ(ReadI2SScale(stored.data(), 256), 0.0f);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(stored[i], 0x55);  // every code 1
  std::vector<float> y(256, 3.0f);
  DequantizeI2S(stored.data(), 256, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

// ---- Sizes (spec 1.4) ---------------------------------------------------------------------

TEST(StoredSizeTest, PublishedByteCounts) {
  EXPECT_EQ(StoredBytes(DType::kI2_S, 1536 * 1536), 589856);
  EXPECT_EQ(StoredBytes(DType::kI2_S, 1536 * 256), 98336);
  EXPECT_EQ(StoredBytes(DType::kI2_S, 1536 * 8960), 3440672);
  EXPECT_EQ(StoredBytes(DType::kQ6_K, int64_t{1536} * 151936), 191439360);
  EXPECT_EQ(StoredBytes(DType::kF16, int64_t{1536} * 151936), 466747392);
  EXPECT_EQ(StoredBytes(DType::kF32, 1536), 6144);
  EXPECT_EQ(StoredBytes(DType::kI8_S, 8 * 1 * 32), 8 * 32 + 32);
  EXPECT_EQ(StoredBytes(DType::kI8_S, 2048 * 8192), 2048 * 8192 + 32);
  EXPECT_EQ(StoredBytes(DType::kQ8_0, 64), 68);
}

// ---- Any type -----------------------------------------------------------------------------

TEST(QuantizeRefTest, EveryTypeRoundTripsWithinItsPrecision) {
  const int64_t n = 1024;
  const std::vector<float> x = Gaussian(n, 0.5f, 5);
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  for (int t = 0; t < kNumDTypes; ++t) {
    const DType type = static_cast<DType>(t);
    std::vector<uint8_t> bytes(StoredBytes(type, n));
    QuantizeRef(type, x.data(), n, bytes.data());
    std::vector<float> y(n);
    DequantizeRef(type, bytes.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const float e = std::fabs(x[i] - y[i]);
      switch (type) {
        case DType::kF32:
          ASSERT_EQ(e, 0.0f);
          break;
        case DType::kF16:
          ASSERT_LE(e, std::fabs(x[i]) * 0x1p-11f + 0x1p-25f);
          break;
        case DType::kBF16:
          ASSERT_LE(e, std::fabs(x[i]) * 0x1p-8f);
          break;
        case DType::kQ8_0:
        case DType::kI8_S:
          ASSERT_LE(e, amax / 127 * 0.51f) << DTypeName(type);
          break;
        case DType::kQ6_K:
          ASSERT_LE(e, amax / 62 * 1.05f);
          break;              // 6 bits, 16-value steps
        case DType::kI2_S: {  // ternary: only -scale, 0, +scale (codes checked above)
          const float s = ReadI2SScale(bytes.data(), n);
          ASSERT_TRUE(y[i] == -s || y[i] == 0.0f || y[i] == s) << y[i];
          break;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tern
