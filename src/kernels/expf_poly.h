// The exp of the SwiGLU kernel (silu_mul_f32), one fixed sequence of float operations so
// that the scalar oracle and every SIMD version give the same bits (no FMA: kernel TUs are
// built with -ffp-contract=off). For x in [kExpMin, kExpMax]:
//   n  = (x * kLog2e + kRoundMagic) - kRoundMagic      round to nearest even, exactly
//   r  = (x - n * kLn2Hi) - n * kLn2Lo                  Cody-Waite: ln 2 in two parts
//   p  = ((((kP0 r + kP1) r + kP2) r + kP3) r + kP4) r + kP5
//   e  = (((p * (r * r)) + r) + 1) * 2^n                2^n built from exponent bits
// The polynomial is Cephes' expf (relative error about 2 ulp against the true exp); the
// clamp keeps 2^n a normal float (n in [-126, 127]), so no special values arise.
// Constants only: no code here for an ISA-flagged TU to instantiate.
#pragma once

namespace tern::kernels::expf_poly {

constexpr float kExpMin = -87.0f;
constexpr float kExpMax = 88.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;

}  // namespace tern::kernels::expf_poly
