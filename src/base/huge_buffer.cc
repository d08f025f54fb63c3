#include "base/huge_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>

namespace tern {

HugeBuffer HugeBuffer::Allocate(size_t bytes) {
  HugeBuffer b;
  if (bytes == 0) return b;
  if (bytes < kHugePage) {
    b.data_ = static_cast<uint8_t*>(std::calloc(bytes, 1));
    if (b.data_ != nullptr) b.size_ = bytes;
    return b;
  }
  // Map enough to hold an aligned start, then give back the misaligned head and the tail.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = (bytes + page - 1) / page * page;
  if (len < bytes || len > SIZE_MAX - kHugePage) return b;
  void* p =
      ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return b;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
  const uintptr_t start = (raw + kHugePage - 1) / kHugePage * kHugePage;
  if (start > raw) ::munmap(p, start - raw);
  const uintptr_t end = raw + len + kHugePage;
  if (end > start + len) ::munmap(reinterpret_cast<void*>(start + len), end - (start + len));
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(start), bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  b.data_ = reinterpret_cast<uint8_t*>(start);
  b.size_ = bytes;
  b.mapped_ = len;
  return b;
}

void HugeBuffer::Release() {
  if (mapped_ != 0) {
    ::munmap(data_, mapped_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  size_ = mapped_ = 0;
}

HugeBuffer::~HugeBuffer() { Release(); }

HugeBuffer::HugeBuffer(HugeBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      mapped_(std::exchange(o.mapped_, 0)) {}

HugeBuffer& HugeBuffer::operator=(HugeBuffer&& o) noexcept {
  if (this != &o) {
    Release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, 0);
  }
  return *this;
}

}  // namespace tern
