// Kernel test fixtures: buffers that fault on any over- or under-read, random data, and the
// list of tables to check against the scalar oracle. Helpers shared with the other layers'
// tests are in base/test_util.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/test_util.h"
#include "kernels/kernels.h"

namespace tern::kernels::ktest {

// `bytes` of memory whose last byte sits right before a PROT_NONE page (and whose first byte
// is preceded by one), so a kernel reading past either end crashes instead of passing.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }
  size_t size() const { return bytes_; }

 private:
  uint8_t* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

// A typed guarded array of n elements, filled by the caller.
template <typename T>
struct Guarded {
  explicit Guarded(size_t count) : buf(count * sizeof(T)), n(count) {}
  T* data() { return buf.as<T>(); }
  T& operator[](size_t i) { return data()[i]; }
  GuardedBuffer buf;
  size_t n;
};

// True when TERN_KERNELS_TEST_REDUCED is set (used under qemu, where full sizes are slow).
bool Reduced();

// Every available table other than scalar ("avx512", "avx2", ...), for oracle comparisons.
std::vector<const KernelTable*> SimdTables();
const KernelTable& Scalar();

// Packs canonical weights with `t`'s packer into a guarded buffer of exactly the packed size.
GuardedBuffer* PackI2s(const KernelTable& t, const uint8_t* canonical, int64_t k, int64_t n);
// PackI8 with pack_u8_i8 when `u8` (for gemm_u8_i8; the table must have it).
GuardedBuffer* PackI8(const KernelTable& t, const int8_t* canonical, int64_t k, int64_t n,
                      bool u8 = false);

// Every requant variant a fused epilogue offers, as the epilogue that asks for it: no bias
// and `bias`, without and with ReLU, half away and half even; fn(ep) with ep.q, ep.ldq,
// ep.c and ep.inv as given.
template <typename Fn>
void ForEachRequantEpilogue(int8_t* q, int64_t ldq, float c, float inv, const float* bias,
                            Fn&& fn) {
  for (const float* b : {static_cast<const float*>(nullptr), bias})
    for (bool relu : {false, true})
      for (Round mode : {Round::kHalfAway, Round::kHalfEven}) {
        I8Epilogue ep;
        ep.q = q;
        ep.ldq = ldq;
        ep.c = c;
        ep.inv = inv;
        ep.bias = b;
        ep.mode = mode;
        ep.relu = relu;
        fn(ep);
      }
}

// The bit pattern of a float, as every layer's tests compare them (base/test_util.h).
using testutil::Bits;

// Canonical I2_S bytes for a row-major matrix of codes (each 0..3).
std::vector<uint8_t> EncodeI2s(const std::vector<uint8_t>& codes, int64_t k, int64_t n);

}  // namespace tern::kernels::ktest
