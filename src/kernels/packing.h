// Packed weight layouts for the x86 SIMD kernels (AVX2 and AVX-512 share them).
#pragma once
