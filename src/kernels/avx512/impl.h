// AVX-512 (F, BW, VL, DQ, VNNI) kernels; 256-bit helpers may use AVX2.
#pragma once

#include "kernels/kernels.h"

namespace tern::kernels::avx512 {

#include "kernels/isa_entry_points.inc"

// gemm_i8_i8_ep (only this ISA fuses the epilogue; gemm_i8.cc).
void GemmI8I8Ep(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                const int8_t* x, int64_t ldx, int64_t n, const I8Epilogue& ep);

// gemm_u8_i8, gemm_u8_i8_ep, pack_u8_i8 (only this ISA has them; gemm_i8.cc).
void GemmU8I8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1, const int8_t* x,
              int64_t ldx, int64_t n, const int32_t* corr, int32_t* acc, int64_t ldo);
void GemmU8I8Ep(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1,
                const int8_t* x, int64_t ldx, int64_t n, const int32_t* corr, const I8Epilogue& ep);
void PackU8I8(const int8_t* canonical, int64_t k, int64_t n_rows, uint8_t* packed);

// dw8_i8_ep (only this ISA fuses the depthwise epilogue; elementwise.cc).
void Dw8I8Ep(const int8_t* x, int64_t ldx, const int8_t* w, int64_t ldw, int64_t rows, int64_t n,
             const I8Epilogue& ep);

// i8_fill_fused (only this ISA fuses the encoder fills; elementwise.cc).
float I8FillFused(const I8Fill& f, int64_t rows, int64_t n, float inv, Round mode, int8_t* q);

}  // namespace tern::kernels::avx512
