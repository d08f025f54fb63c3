// Helpers shared by the I8_S ops (internal to src/ops): requantization rounding and an
// order-independent absmax reduction.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

namespace tern::ops::i8s_detail {

// Clamps v = y * inv to [-127, 127] and rounds half away from zero (roundf). Exact: the
// fraction v - trunc(v) of a float is representable, so the tie test is exact (the
// "add 0.5 and truncate" shortcut is wrong for 0.49999997).
inline int8_t RequantHalfAway(float y, float inv) {
  float v = y * inv;
  v = v < -127.0f ? -127.0f : (v > 127.0f ? 127.0f : v);
  int i = static_cast<int>(v);
  const float f = v - static_cast<float>(i);
  i += (f >= 0.5f) - (f <= -0.5f);
  return static_cast<int8_t>(i);
}

// Clamps to [-127, 127] and rounds half to even. Adding and subtracting 1.5 * 2^23 rounds
// to an integer in the default rounding mode for |v| < 2^22 (shared code is built with
// -ffp-contract=off and without -ffast-math, so the two operations stay separate).
inline int8_t RequantHalfEven(float y, float inv) {
  float v = y * inv;
  v = v < -127.0f ? -127.0f : (v > 127.0f ? 127.0f : v);
  const float r = (v + 12582912.0f) - 12582912.0f;
  return static_cast<int8_t>(static_cast<int>(r));
}

inline float AbsF(float x) { return x < 0 ? -x : x; }

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
