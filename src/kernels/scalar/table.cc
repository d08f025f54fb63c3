// The scalar kernel table.
#include "kernels/scalar/impl.h"
#include "kernels/tables.h"

namespace tern::kernels {

const KernelTable kScalarTable = {
    .isa = Isa::kScalar,
    .quantize_rows_i8 = scalar::QuantizeRowsI8,
    .gemm_i2s_i8 = scalar::GemmI2sI8,
    .i2s_row_align = 1,
    .i2s_packed_bytes = scalar::I2sPackedBytes,
    .pack_i2s = scalar::PackI2s,
    .gemm_i8_i8 = scalar::GemmI8I8,
    .i8_row_align = 1,
    .gemm_i8_i8_ep = nullptr,
    .i8_packed_bytes = scalar::I8PackedBytes,
    .pack_i8 = scalar::PackI8,
    .gemm_u8_i8 = nullptr,
    .gemm_u8_i8_ep = nullptr,
    .pack_u8_i8 = nullptr,
    .gemm_f16_f32 = scalar::GemmF16F32,
    .axpy_f16 = scalar::AxpyF16,
    .f32_to_f16 = scalar::F32ToF16,
    .f16_to_f32 = scalar::F16ToF32,
    .dequant_row_q6k = scalar::DequantRowQ6K,
    .absmax_f32 = scalar::AbsmaxF32,
    .silu_mul_f32 = scalar::SiluMulF32,
    .requant_f32_i8 = scalar::RequantF32I8,
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
