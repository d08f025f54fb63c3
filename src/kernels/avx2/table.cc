// The AVX2 kernel table.
#include "kernels/avx2/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {

const KernelTable kAvx2Table = {
    .isa = Isa::kAvx2,
    .quantize_rows_i8 = avx2::QuantizeRowsI8,
    .gemm_i2s_i8 = avx2::GemmI2sI8,
    .i2s_row_align = 16,
    .i2s_packed_bytes = avx2::I2sPackedBytes,
    .pack_i2s = avx2::PackI2s,
    .gemm_i8_i8 = avx2::GemmI8I8,
    .i8_row_align = 16,
    .gemm_i8_i8_ep = nullptr,
    .i8_packed_bytes = avx2::I8PackedBytes,
    .pack_i8 = avx2::PackI8,
    .gemm_u8_i8 = nullptr,
    .gemm_u8_i8_ep = nullptr,
    .pack_u8_i8 = nullptr,
    .gemm_f16_f32 = avx2::GemmF16F32,
    .axpy_f16 = avx2::AxpyF16,
    .f32_to_f16 = avx2::F32ToF16,
    .f16_to_f32 = avx2::F16ToF32,
    .dequant_row_q6k = avx2::DequantRowQ6K,
    .absmax_f32 = avx2::AbsmaxF32,
    .silu_mul_f32 = avx2::SiluMulF32,
    .requant_f32_i8 = avx2::RequantF32I8,
    .i32_requant_i8 = avx2::I32RequantI8,
    .i32_minmax = avx2::I32MinMax,
    .i32_affine_f32 = avx2::I32AffineF32,
    .i8_to_f32 = avx2::I8ToF32,
    .i8_add_scaled_f32 = avx2::I8AddScaledF32,
    .i8_rms_factors = avx2::I8RmsFactors,
    .i8_scale_mul_f32 = avx2::I8ScaleMulF32,
    .i8_fill_fused = nullptr,
    .dw8_i8_i32 = avx2::Dw8I8I32,
    .dw8_i8_ep = nullptr,
};

}  // namespace tern::kernels
