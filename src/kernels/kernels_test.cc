// Dispatch (TERN_ISA, AvailableIsas) and conversion kernels (F16, Q6_K) against the oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "base/cpu_features.h"
#include "kernels/kernels.h"
#include "tensor/blocks.h"
#include "kernels/test_util.h"

namespace tern::kernels {
namespace {

using ktest::Guarded;
using ktest::Scalar;
using ktest::SimdTables;

// TERN_ISA as the process started (the env tests below change it and restore it).
const std::string kStartIsa = [] {
  const char* v = std::getenv("TERN_ISA");
  return std::string(v ? v : "");
}();

class ScopedIsaEnv {
 public:
  explicit ScopedIsaEnv(const char* value) {
    if (value) {
      setenv("TERN_ISA", value, 1);
    } else {
      unsetenv("TERN_ISA");
    }
  }
  ~ScopedIsaEnv() {
    if (kStartIsa.empty()) {
      unsetenv("TERN_ISA");
    } else {
      setenv("TERN_ISA", kStartIsa.c_str(), 1);
    }
  }
};

bool Listed(Isa isa) {
  size_t n = 0;
  const Isa* isas = AvailableIsas(&n);
  for (size_t i = 0; i < n; ++i) {
    if (isas[i] == isa) return true;
  }
  return false;
}

TEST(IsaEnv, NamesRoundTrip) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    Result<Isa> back = IsaFromName(IsaName(isa));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, isa);
  }
  Result<Isa> bad = IsaFromName("sse9");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("sse9"), std::string::npos);
  EXPECT_NE(bad.status().message().find("avx512"), std::string::npos);  // lists the choices
}

TEST(IsaEnv, AvailableMatchesCpu) {
  size_t n = 0;
  const Isa* isas = AvailableIsas(&n);
  ASSERT_GE(n, 1u);
  EXPECT_EQ(isas[n - 1], Isa::kScalar);
  EXPECT_EQ(isas[0], BestIsa());
  [[maybe_unused]] const CpuFeatures& f = GetCpuFeatures();
#if defined(TERN_KERNELS_HAVE_X86)  // the build contains the x86 tables
  EXPECT_EQ(Listed(Isa::kAvx512), f.HasAvx512Tier());
  EXPECT_EQ(Listed(Isa::kAvx2), f.HasAvx2Tier());
  EXPECT_FALSE(Listed(Isa::kNeon));
#endif
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    Result<const KernelTable*> t = TableFor(isa);
    EXPECT_EQ(t.ok(), Listed(isa)) << IsaName(isa);
    if (t.ok()) {
      EXPECT_EQ((*t)->isa, isa);
    }
  }
}

TEST(IsaEnv, UnknownValueIsAnError) {
  ScopedIsaEnv env("avx9000");
  Result<Isa> isa = SelectIsa();
  ASSERT_FALSE(isa.ok());
  EXPECT_EQ(isa.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(isa.status().message().find("TERN_ISA"), std::string::npos);
  EXPECT_NE(isa.status().message().find("avx9000"), std::string::npos);
}

TEST(IsaEnv, UnavailableValueIsAnError) {
  int checked = 0;
  for (Isa want : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    ScopedIsaEnv env(IsaName(want));
    Result<Isa> isa = SelectIsa();
    if (Listed(want)) {
      ASSERT_TRUE(isa.ok()) << isa.status().ToString();
      EXPECT_EQ(*isa, want);
    } else {
      ++checked;
      ASSERT_FALSE(isa.ok()) << IsaName(want);
      EXPECT_EQ(isa.status().code(), ErrorCode::kUnsupported);
      EXPECT_NE(isa.status().message().find(IsaName(want)), std::string::npos);
    }
  }
  EXPECT_GE(checked, 1);  // neon on x86, avx* on aarch64: something is always unavailable
}

TEST(IsaEnv, DefaultAndForcedChoice) {
  {
    ScopedIsaEnv env(nullptr);
    Result<Isa> isa = SelectIsa();
    ASSERT_TRUE(isa.ok());
    EXPECT_EQ(*isa, BestIsa());
  }
  // Kernels() was (or is now) resolved from the environment the process started with.
  Result<Isa> start = kStartIsa.empty() ? Result<Isa>(BestIsa()) : IsaFromName(kStartIsa);
  if (start.ok() && Listed(*start)) {
    EXPECT_EQ(Kernels().isa, *start);
  }
}

// ---- F16 conversions ---------------------------------------------------------------------

using ktest::Bits;
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(F16, ScalarKnownValues) {
  const KernelTable& s = Scalar();
  struct Case {
    float f;
    uint16_t h;
  } cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {65504.0f, 0x7bff},
      {65519.99f, 0x7bff},
      {65520.0f, 0x7c00},
      {1e9f, 0x7c00},
      {std::ldexp(1.0f, -24), 0x0001},
      {std::ldexp(1.0f, -25), 0x0000},  // tie -> even 0
      {std::ldexp(1.5f, -25), 0x0001},
      {std::ldexp(3.0f, -25), 0x0002},  // tie -> even 2
      {std::ldexp(1.0f, -14), 0x0400},
      {std::ldexp(1023.5f, -24), 0x0400},                              // carry to normal
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},                          // tie -> even
      {1.0f + std::ldexp(3.0f, -11), 0x3c02},                          // tie -> even
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3c01},  // above tie
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
  };
  for (const Case& c : cases) {
    uint16_t h = 0;
    s.f32_to_f16(&c.f, 1, &h);
    EXPECT_EQ(h, c.h) << c.f;
  }
  // Every non-NaN half survives f16 -> f32 -> f16, and f16 -> f32 is the exact value.
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t hh = static_cast<uint16_t>(h);
    float f;
    s.f16_to_f32(&hh, 1, &f);
    const uint32_t e = (h >> 10) & 31, m = h & 1023;
    if (e == 31 && m != 0) {
      EXPECT_TRUE(std::isnan(f));
      continue;
    }
    const double want = e == 31  ? INFINITY
                        : e == 0 ? std::ldexp(static_cast<double>(m), -24)
                                 : std::ldexp(1.0 + m / 1024.0, static_cast<int>(e) - 15);
    ASSERT_EQ(static_cast<double>(std::fabs(f)), want) << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0);
    uint16_t back;
    s.f32_to_f16(&f, 1, &back);
    ASSERT_EQ(back, hh);
  }
}

TEST(F16, SimdMatchesScalarBitExact) {
  const KernelTable& s = Scalar();
  // All halves, including NaNs (quieted the same way), in one guarded row.
  Guarded<uint16_t> h(65536 + 7);
  for (size_t i = 0; i < h.n; ++i) h[i] = static_cast<uint16_t>(i * 40503u);
  std::vector<float> want(h.n);
  s.f16_to_f32(h.data(), static_cast<int64_t>(h.n), want.data());
  // Floats: random bit patterns plus every f16 tie point and its neighbours.
  std::mt19937 rng(7);
  const size_t nf = ktest::Reduced() ? 50000 : 1000003;
  Guarded<float> f(nf);
  for (size_t i = 0; i < nf; ++i) {
    uint32_t u = rng();
    if (i % 3 == 0) u = (u & 0x8fffe000u) | 0x1000u | 0x38000000u;  // ties in f16 range
    if (i % 3 == 1) u = ((u & 0x81ffffffu) | 0x32000000u) + (rng() % 3) - 1;
    f[i] = FromBits(u);
  }
  std::vector<uint16_t> want16(nf);
  s.f32_to_f16(f.data(), static_cast<int64_t>(nf), want16.data());
  for (const KernelTable* t : SimdTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    for (int64_t len : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{17}, int64_t(h.n)}) {
      Guarded<float> got(static_cast<size_t>(len));
      t->f16_to_f32(h.data() + h.n - len, len, got.data());
      for (int64_t i = 0; i < len; ++i) {
        ASSERT_EQ(Bits(got[i]), Bits(want[h.n - len + i])) << i;
      }
    }
    for (int64_t len : {int64_t{1}, int64_t{15}, int64_t{33}, int64_t(nf)}) {
      Guarded<uint16_t> got(static_cast<size_t>(len));
      t->f32_to_f16(f.data() + nf - len, len, got.data());
      for (int64_t i = 0; i < len; ++i) ASSERT_EQ(got[i], want16[nf - len + i]) << i;
    }
  }
}

// ---- Q6_K --------------------------------------------------------------------------------

// Writes 6-bit code q (0..63) of element e into a block, following the layout text of
// spec 2.5 / tensor/quant_ref.h rather than the dequantizer.
void SetQ6(BlockQ6_K* b, int e, int q) {
  const int half = e / 128, l = e % 128, quad = l / 32, pos = l % 32;
  uint8_t* ql = b->ql + half * 64;
  uint8_t* qh = b->qh + half * 32;
  const int qli = pos + (quad & 1) * 32;
  const int nib = quad / 2;  // quads 0,1 use the low nibble; 2,3 the high nibble
  ql[qli] = static_cast<uint8_t>((ql[qli] & (nib ? 0x0f : 0xf0)) | ((q & 15) << (4 * nib)));
  qh[pos] = static_cast<uint8_t>((qh[pos] & ~(3 << (2 * quad))) | ((q >> 4) << (2 * quad)));
}

TEST(Q6K, DecodedByHandAndSimdMatches) {
  const int blocks = 3;
  Guarded<BlockQ6_K> b(blocks);
  std::memset(b.data(), 0, sizeof(BlockQ6_K) * blocks);
  std::mt19937 rng(11);
  std::vector<int> q(blocks * 256);
  for (int i = 0; i < blocks; ++i) {
    for (int s = 0; s < 16; ++s) b[i].scales[s] = static_cast<int8_t>(rng() % 255 - 127);
    float d = std::ldexp(1.0f + (rng() % 1000) / 1000.0f, -10);
    Scalar().f32_to_f16(&d, 1, &b[i].d);
    for (int e = 0; e < 256; ++e) {
      q[i * 256 + e] = static_cast<int>(rng() % 64);
      SetQ6(&b[i], e, q[i * 256 + e]);
    }
  }
  std::vector<float> want(blocks * 256);
  Scalar().dequant_row_q6k(b.data(), blocks * 256, want.data());
  for (int i = 0; i < blocks; ++i) {
    float d;
    Scalar().f16_to_f32(&b[i].d, 1, &d);
    for (int e = 0; e < 256; ++e) {
      // Element e of a block belongs to sub-block e / 16 (16 values per scale).
      const float y =
          d * static_cast<float>(b[i].scales[e / 16]) * static_cast<float>(q[i * 256 + e] - 32);
      ASSERT_EQ(Bits(want[i * 256 + e]), Bits(y)) << i << " " << e;
    }
  }
  for (const KernelTable* t : SimdTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    Guarded<float> got(blocks * 256);
    t->dequant_row_q6k(b.data(), blocks * 256, got.data());
    for (int i = 0; i < blocks * 256; ++i) ASSERT_EQ(Bits(got[i]), Bits(want[i])) << i;
  }
}

}  // namespace
}  // namespace tern::kernels
