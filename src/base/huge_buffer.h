// Owned, zero-filled bytes for large data that kernels stream: packed weights and the
// encoder's run buffers.
//
// Why not std::vector: a decode step streams ~560 MB of packed weights (published
// geometry, int8 head). In 4 KB pages that is ~137 000 pages per token, each a TLB miss and
// a boundary the hardware prefetchers stop at. A buffer of 2 MB or more is mapped 2 MB
// aligned and its whole 2 MB pages are advised for transparent huge pages, which cuts the
// decode step's time per token. The advice is only advice: where
// THP is off the buffer is ordinary memory. The tail past the last whole 2 MB page is not
// advised and a smaller buffer comes from the heap, so a small tensor never costs 2 MB.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern {

class HugeBuffer {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugeBuffer() = default;
  // `bytes` zero-filled bytes, or an empty buffer (data() null) if the memory cannot be had.
  static HugeBuffer Allocate(size_t bytes);

  ~HugeBuffer();
  HugeBuffer(HugeBuffer&& o) noexcept;
  HugeBuffer& operator=(HugeBuffer&& o) noexcept;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  void Release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes mapped at data_ (0: heap memory)
};

}  // namespace tern
