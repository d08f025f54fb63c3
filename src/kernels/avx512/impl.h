// AVX-512 (F, BW, VL, DQ, VNNI) kernels; 256-bit helpers may use AVX2.
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels::avx512 {

void QuantizeRowsI8(const float* x, int64_t rows, int64_t k, int64_t ldx, int8_t* q, int64_t ldq,
                    float* scale, int32_t* sums);
void GemmI2sI8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
               float w_scale, const int8_t* q, int64_t ldq, const float* scale,
               const int32_t* sums, int64_t n, float* out, int64_t ldo);
size_t I2sPackedBytes(int64_t k, int64_t n_rows);
void PackI2s(const uint8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);
void GemmI8I8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
              const int8_t* x, int64_t ldx, int64_t n, int32_t* acc, int64_t ldo);
size_t I8PackedBytes(int64_t k, int64_t n_rows);
void PackI8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);
void GemmF16F32(const uint16_t* w, int64_t k, int64_t ldw, int64_t r0, int64_t r1,
                const float* x, int64_t ldx, int64_t n, float* out, int64_t ldo);
void AxpyF16(float a, const uint16_t* v, int64_t n, float* out);
void F32ToF16(const float* x, int64_t n, uint16_t* out);
void F16ToF32(const uint16_t* x, int64_t n, float* out);
void DequantRowQ6K(const void* blocks, int64_t k, float* out);
float AbsmaxF32(const float* x, int64_t n);
void RequantF32I8(const float* x, int64_t n, float inv, Round mode, int8_t* q);

// Encoder fills (kernels.h): elementwise.cc.
void I32AffineF32(const int32_t* acc, int64_t n, float c, const float* bias, float* out);
void I8ToF32(const int8_t* q, int64_t n, float* out);
void I8AddScaledF32(const int8_t* a, float sa, const float* g, const int8_t* b, float sb,
                    int64_t n, float* out);
void I8ScaleMulF32(const int8_t* q, float s, const float* g, int64_t n, float* out);
void Dw8F32(const float* x, int64_t ldx, const float* w, int64_t ldw, int64_t n, float c,
            const float* bias, float* out);


}  // namespace tern::kernels::avx512
