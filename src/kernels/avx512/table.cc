// The AVX-512 kernel table.
#include "kernels/avx512/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {

const KernelTable kAvx512Table = {
    .isa = Isa::kAvx512,
    .quantize_rows_i8 = avx512::QuantizeRowsI8,
    .gemm_i2s_i8 = avx512::GemmI2sI8,
    .i2s_row_align = 16,
    .i2s_packed_bytes = avx512::I2sPackedBytes,
    .pack_i2s = avx512::PackI2s,
    .gemm_i8_i8 = avx512::GemmI8I8,
    .i8_row_align = 16,
    .gemm_i8_i8_ep = avx512::GemmI8I8Ep,
    .i8_packed_bytes = avx512::I8PackedBytes,
    .pack_i8 = avx512::PackI8,
    .gemm_u8_i8 = avx512::GemmU8I8,
    .gemm_u8_i8_ep = avx512::GemmU8I8Ep,
    .pack_u8_i8 = avx512::PackU8I8,
    .gemm_f16_f32 = avx512::GemmF16F32,
    .axpy_f16 = avx512::AxpyF16,
    .f32_to_f16 = avx512::F32ToF16,
    .f16_to_f32 = avx512::F16ToF32,
    .dequant_row_q6k = avx512::DequantRowQ6K,
    .absmax_f32 = avx512::AbsmaxF32,
    .silu_mul_f32 = avx512::SiluMulF32,
    .requant_f32_i8 = avx512::RequantF32I8,
    .i32_requant_i8 = avx512::I32RequantI8,
    .i32_minmax = avx512::I32MinMax,
    .i32_affine_f32 = avx512::I32AffineF32,
    .i8_to_f32 = avx512::I8ToF32,
    .i8_add_scaled_f32 = avx512::I8AddScaledF32,
    .i8_rms_factors = avx512::I8RmsFactors,
    .i8_scale_mul_f32 = avx512::I8ScaleMulF32,
    .i8_fill_fused = avx512::I8FillFused,
    .dw8_i8_i32 = avx512::Dw8I8I32,
    .dw8_i8_ep = avx512::Dw8I8Ep,
};

}  // namespace tern::kernels
