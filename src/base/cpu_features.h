// What the CPU can run, read once (cpuid + xgetbv on x86, HWCAP on aarch64).
#pragma once

#include <string>

namespace tern {

struct CpuFeatures {
  // x86: each flag requires both the cpuid bit and OS support of the register state (XCR0).
  bool sse42 = false;
  bool avx2 = false;  // AVX2 + FMA + F16C (the tern "avx2" tier needs all three)
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  // aarch64
  bool neon = false;
  bool dotprod = false;

  bool HasAvx2Tier() const { return avx2 && fma && f16c; }
  bool HasAvx512Tier() const {
    return HasAvx2Tier() && avx512f && avx512bw && avx512vl && avx512dq && avx512vnni;
  }
  // "avx2 fma f16c avx512f ..." : the features present, space separated.
  std::string ToString() const;
};

// Detected once on first call; thread-safe.
const CpuFeatures& GetCpuFeatures();

}  // namespace tern
