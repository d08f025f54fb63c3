// The two NEON kernel tables. This TU is baseline (-march=armv8-a): naming the dotprod
// functions here executes none of them, so both tables can be built on any aarch64 CPU;
// dispatch hands out kNeonDotTable only when HWCAP_ASIMDDP is set.
#include "kernels/neon/dotprod/impl.h"
#include "kernels/neon/impl.h"
#include "kernels/scalar/impl.h"  // the encoder fills: plain loops, vectorized by the compiler
#include "kernels/tables.h"

namespace tern::kernels {

// Plain ARMv8.0 Advanced SIMD: int8 products through vmull_s8 + vpadalq_s16.
const KernelTable kNeonTable = {
    .isa = Isa::kNeon,
    .quantize_rows_i8 = neon::QuantizeRowsI8,
    .gemm_i2s_i8 = neon::GemmI2sI8,
    .i2s_row_align = 1,
    .i2s_packed_bytes = neon::I2sPackedBytes,
    .pack_i2s = neon::PackI2s,
    .gemm_i8_i8 = neon::GemmI8I8,
    .i8_row_align = 1,
    .gemm_i8_i8_ep = nullptr,
    .i8_packed_bytes = neon::I8PackedBytes,
    .pack_i8 = neon::PackI8,
    .gemm_u8_i8 = nullptr,
    .gemm_u8_i8_ep = nullptr,
    .pack_u8_i8 = nullptr,
    .gemm_f16_f32 = neon::GemmF16F32,
    .axpy_f16 = neon::AxpyF16,
    .f32_to_f16 = neon::F32ToF16,
    .f16_to_f32 = neon::F16ToF32,
    .dequant_row_q6k = neon::DequantRowQ6K,
    .absmax_f32 = neon::AbsmaxF32,
    .silu_mul_f32 = scalar::SiluMulF32,
    .requant_f32_i8 = neon::RequantF32I8,
    .i32_requant_i8 = scalar::I32RequantI8,
    .i32_minmax = scalar::I32MinMax,
    .i32_affine_f32 = scalar::I32AffineF32,
    .i8_to_f32 = scalar::I8ToF32,
    .i8_add_scaled_f32 = scalar::I8AddScaledF32,
    .i8_rms_factors = scalar::I8RmsFactors,
    .i8_scale_mul_f32 = scalar::I8ScaleMulF32,
    .i8_fill_fused = nullptr,
    .dw8_i8_i32 = scalar::Dw8I8I32,
    .dw8_i8_ep = nullptr,
};

// The same table with SDOT GEMMs; packed layouts are shared with kNeonTable.
const KernelTable kNeonDotTable = {
    .isa = Isa::kNeon,
    .quantize_rows_i8 = neon::QuantizeRowsI8,
    .gemm_i2s_i8 = neon_dotprod::GemmI2sI8,
    .i2s_row_align = 1,
    .i2s_packed_bytes = neon::I2sPackedBytes,
    .pack_i2s = neon::PackI2s,
    .gemm_i8_i8 = neon_dotprod::GemmI8I8,
    .i8_row_align = 1,
    .gemm_i8_i8_ep = nullptr,
    .i8_packed_bytes = neon::I8PackedBytes,
    .pack_i8 = neon::PackI8,
    .gemm_u8_i8 = nullptr,
    .gemm_u8_i8_ep = nullptr,
    .pack_u8_i8 = nullptr,
    .gemm_f16_f32 = neon::GemmF16F32,
    .axpy_f16 = neon::AxpyF16,
    .f32_to_f16 = neon::F32ToF16,
    .f16_to_f32 = neon::F16ToF32,
    .dequant_row_q6k = neon::DequantRowQ6K,
    .absmax_f32 = neon::AbsmaxF32,
    .silu_mul_f32 = scalar::SiluMulF32,
    .requant_f32_i8 = neon::RequantF32I8,
    .i32_requant_i8 = scalar::I32RequantI8,
    .i32_minmax = scalar::I32MinMax,
    .i32_affine_f32 = scalar::I32AffineF32,
    .i8_to_f32 = scalar::I8ToF32,
    .i8_add_scaled_f32 = scalar::I8AddScaledF32,
    .i8_rms_factors = scalar::I8RmsFactors,
    .i8_scale_mul_f32 = scalar::I8ScaleMulF32,
    .i8_fill_fused = nullptr,
    .dw8_i8_i32 = scalar::Dw8I8I32,
    .dw8_i8_ep = nullptr,
};

}  // namespace tern::kernels
