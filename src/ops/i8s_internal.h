// Helpers shared by the I8_S ops (internal to src/ops): tiling for the kernel table's
// absmax/requant entries and an order-independent absmax reduction across threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"

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

// Per-row bounds of the int32 sums a thread has produced, and the output absmax they give.
// The epilogue y = (float)acc * c + bias[r] is monotone in acc for a fixed row: int-to-float
// conversion, the product by c (one sign for the whole tensor) and the sum with bias[r] each
// round a monotone function monotonically. So over sums in [mn, mx], |y| peaks at one of
// the two ends, and max |y| of a whole product is exact from two conversions per row
// instead of one per sum (the kernels' own i32_affine_f32 computes those two). Every row
// must have been folded at least once before AbsMax.
class RowBounds {
 public:
  explicit RowBounds(int64_t rows)
      : mn_(static_cast<size_t>(rows), INT32_MAX), mx_(static_cast<size_t>(rows), INT32_MIN) {}

  // Folds n_cols columns of rows [first, first + count) (all rows by default); column t's
  // values start at acc + t * ld.
  void Fold(const kernels::KernelTable& kt, const int32_t* acc, int64_t n_cols, int64_t ld,
            int64_t first = 0, int64_t count = -1) {
    if (count < 0) count = static_cast<int64_t>(mn_.size()) - first;
    kt.i32_minmax(acc, n_cols, count, ld, mn_.data() + first, mx_.data() + first);
    folded_ = folded_ || n_cols > 0;
  }

  // The bounds arrays, for a kernel that folds into them itself (gemm_i8_i8_ep), which must
  // then be given at least one column.
  int32_t* mn() {
    folded_ = true;
    return mn_.data();
  }
  int32_t* mx() { return mx_.data(); }

  // max |y| over every folded sum; 0 if none was folded. `bias` starts at this block's row.
  float AbsMax(const kernels::KernelTable& kt, float c, const float* bias) const {
    if (!folded_) return 0.0f;
    constexpr int64_t kChunk = 256;
    float y[kChunk];
    float m = 0;
    const int64_t n = static_cast<int64_t>(mn_.size());
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t len = std::min(kChunk, n - i);
      for (const std::vector<int32_t>* end : {&mn_, &mx_}) {
        kt.i32_affine_f32(end->data() + i, len, c, bias ? bias + i : nullptr, y);
        m = std::max(m, kt.absmax_f32(y, len));
      }
    }
    return m;
  }

 private:
  std::vector<int32_t> mn_, mx_;
  bool folded_ = false;
};

}  // namespace tern::ops::i8s_detail
