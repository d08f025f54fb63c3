// Baseline NEON (ARMv8.0 Advanced SIMD, -march=armv8-a) kernels, gathered into kNeonTable
// and kNeonDotTable by table.cc. Declarations only: no inline code, so nothing here can be
// compiled with one TU's ISA flags and linked into another.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace tern::kernels::neon {

// quantize.cc
void QuantizeRowsI8(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q, int64_t ldq,
                    float* scale, int32_t* sums);
float AbsmaxF32(const float* x, int64_t n);
void RequantF32I8(const float* x, int64_t n, float inv, Round mode, int8_t* q);

// gemm_i2s.cc (vmlal_s8 + vpadalq_s16). Packed layout = canonical with the unused code 3
// rewritten to 1 (weight 0, as scalar reads it), so the kernels never see a 3.
void GemmI2sI8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1, float w_scale,
               const int8_t* q, int64_t ldq, const float* scale, const int32_t* sums, int64_t n,
               float* out, int64_t ldo);
size_t I2sPackedBytes(int64_t k, int64_t n_rows);
void PackI2s(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);

// gemm_i8.cc (vmull_s8 + vpadalq_s16). Packed layout = canonical.
void GemmI8I8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1, const int8_t* x,
              int64_t ldx, int64_t n, int32_t* acc, int64_t ldo);
size_t I8PackedBytes(int64_t k, int64_t n_rows);
void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);

// gemm_f16.cc
void GemmF16F32(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1, const float* x,
                int64_t ldx, int64_t n, float* out, int64_t ldo);
void WeightedRowsF16(const float* p, int64_t ldp, int64_t heads, const uint16_t* v, int64_t ldv,
                     int64_t rows, int64_t n, float* out, int64_t ldo);

// convert.cc
void F32ToF16(const float* x, int64_t n, uint16_t* out);
void F16ToF32(const uint16_t* x, int64_t n, float* out);
void DequantRowQ6K(const void* blocks, int64_t k, float* out);

}  // namespace tern::kernels::neon
