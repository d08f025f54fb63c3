// Machine-limit probes for `tern-bench limits` (the method of the research limits.c): a
// streaming read and an int8 dot-product loop per ISA. Each ISA's probes live in a translation
// unit compiled with that ISA's flags only (CMakeLists.txt), like the kernels, and are called
// only after the CPU features say the ISA runs here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern::cli::bench::limits {

// Sums n int64 words (n a multiple of 64, p 64-byte aligned) with several independent
// accumulators, so the loop is bound by the loads alone.
using ReadSumFn = int64_t (*)(const int64_t* p, size_t n);
// `iters` iterations of a loop of independent int8 dot-product instructions on registers.
using DotFn = void (*)(long iters);

int64_t ReadSumScalar(const int64_t* p, size_t n);
void DotScalar(long iters);
// int8 operations (1 MAC = 2 ops) per DotScalar iteration.
inline constexpr double kDotScalarOps = 2.0 * 64;

#if defined(__x86_64__) || defined(_M_X64)
int64_t ReadSumAvx2(const int64_t* p, size_t n);
// vpmaddubsw + vpmaddwd + vpaddd, the AVX2 kernels' int8 path (6 chains of 32 MACs).
void DotAvx2(long iters);
inline constexpr double kDotAvx2Ops = 6.0 * 32 * 2;
int64_t ReadSumAvx512(const int64_t* p, size_t n);
// vpdpbusd zmm (AVX-512 VNNI): 12 independent instructions of 64 MACs.
void DotAvx512Vnni(long iters);
inline constexpr double kDotAvx512Ops = 12.0 * 64 * 2;
#endif

#if defined(__aarch64__)
int64_t ReadSumNeon(const int64_t* p, size_t n);
// sdot v.4s, v.16b, v.16b (ARMv8.2 dotprod): 12 independent instructions of 16 MACs.
void DotNeonSdot(long iters);
inline constexpr double kDotNeonSdotOps = 12.0 * 16 * 2;
#endif

}  // namespace tern::cli::bench::limits
