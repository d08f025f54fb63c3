// Helpers shared by the I8_S ops (internal to src/ops): tiling for the kernel table's
// absmax/requant entries and an order-independent absmax reduction across threads.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

namespace tern::ops::i8s_detail {

inline float AbsF(float x) { return x < 0 ? -x : x; }

// Floats per thread-local tile (16 KB, stays in L1). Ops that recompute their outputs write
// them into a tile with plain loops the compiler vectorizes, and leave the absmax and the
// requantization of the tile to the kernel table (one indirect call per tile).
inline constexpr int64_t kTileFloats = 4096;

// Splits rows x len values into tiles of at most kTileFloats: several whole rows when a row
// fits, else one row in column chunks. fn(row_begin, row_end, col_begin, col_end).
template <typename Fn>
void ForEachTile(int64_t row_begin, int64_t row_end, int64_t len, Fn&& fn) {
  if (len <= kTileFloats) {
    const int64_t per = kTileFloats / (len > 0 ? len : 1);
    for (int64_t r = row_begin; r < row_end; r += per)
      fn(r, r + per < row_end ? r + per : row_end, int64_t{0}, len);
  } else {
    for (int64_t r = row_begin; r < row_end; ++r)
      for (int64_t c = 0; c < len; c += kTileFloats)
        fn(r, r + 1, c, c + kTileFloats < len ? c + kTileFloats : len);
  }
}

// The requantization multiplier 127/G and the stored multiplier G/127 (0 when G == 0).
inline float InvScale(float g) { return g != 0.0f ? 127.0f / g : 0.0f; }
inline float OutScale(float g) { return g / 127.0f; }

// Max of non-negative floats from several threads. For non-negative floats the IEEE bit
// pattern orders like the value, so a CAS max on the bits is exact and order independent.
class AtomicAbsMax {
 public:
  void Update(float v) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    uint32_t cur = bits_.load(std::memory_order_relaxed);
    while (b > cur && !bits_.compare_exchange_weak(cur, b, std::memory_order_relaxed)) {
    }
  }
  float Get() const { return std::bit_cast<float>(bits_.load(std::memory_order_relaxed)); }

 private:
  std::atomic<uint32_t> bits_{0};
};

}  // namespace tern::ops::i8s_detail
