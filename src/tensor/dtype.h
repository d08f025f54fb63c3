// Tensor element types tern reads and writes, and their storage traits.
//
// Block types (Q8_0, Q6_K) store `block_elems` values in `block_bytes`, row by row.
// The two VibeASR types carry ONE in-band float32 scale for the whole tensor:
//   I8_S: n int8 values, then a float32 scale at byte n, then 28 bytes of padding
//         (stored size n + 32).
//   I2_S: n/4 bytes of 2-bit codes (128 values per 32-byte group; byte p of a group holds
//         group positions p, p+32, p+64, p+96 in bit pairs 7:6, 5:4, 3:2, 1:0; codes 0,1,2
//         mean -1,0,+1), then a float32 scale at byte n/4, then 28 bytes of padding
//         (stored size n/4 + 32). n must be a multiple of 128.
// GGUF type ids live in gguf/, not here: a DType is what the bytes mean, not how a file
// numbers it (I2_S/I8_S appear as 36/37 in the published files and 42/43 after audio.cpp's
// remap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tern {

enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kQ8_0,
  kQ6_K,
  kI8_S,
  kI2_S,
};

inline constexpr int kNumDTypes = 7;

struct DTypeTraits {
  const char* name;     // "F32", "Q6_K", "I2_S", ...
  int64_t block_elems;  // values per block (1 for scalar types)
  int64_t block_bytes;  // bytes per block (for I2_S: 32 bytes per 128 values)
  int64_t tensor_tail;  // bytes after the payload for the in-band scale (32 for I8_S/I2_S)
};

const DTypeTraits& Traits(DType t);
inline const char* DTypeName(DType t) { return Traits(t).name; }
std::optional<DType> DTypeFromName(std::string_view name);

// Bytes of a row of `n` values; n must be a multiple of block_elems.
int64_t RowBytes(DType t, int64_t n);
// Bytes a whole tensor of `n` values occupies in a file, including the in-band tail.
int64_t StoredBytes(DType t, int64_t n);
// True when `n` values can form rows of this type (n % block_elems == 0).
bool RowLengthValid(DType t, int64_t n);

// The in-band scale of I8_S / I2_S tensors sits right after the payload.
inline int64_t InBandScaleOffset(DType t, int64_t n) { return RowBytes(t, n); }

}  // namespace tern
