// Entry points of the dotprod NEON translation unit, gathered into kNeonDotTable by
// kernels/neon/table.cc. Declarations only and no includes beyond <cstdint>: the dotprod
// TU must not instantiate any inline code that a baseline TU could end up sharing.
#pragma once

#include <cstdint>

namespace tern::kernels::neon_dotprod {

// Same contracts and canonical layouts as KernelTable::gemm_i2s_i8 / gemm_i8_i8.
void GemmI2sI8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1, float w_scale,
               const int8_t* q, int64_t ldq, const float* scale, const int32_t* sums, int64_t n,
               float* out, int64_t ldo);
void GemmI8I8(const uint8_t* w, int64_t k, int64_t n_rows, int64_t r0, int64_t r1, const int8_t* x,
              int64_t ldx, int64_t n, int32_t* acc, int64_t ldo);

}  // namespace tern::kernels::neon_dotprod
